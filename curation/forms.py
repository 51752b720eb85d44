from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from curation.models import Project, Role
from curation.search_text import search_terms_of


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "slug", "description", "license"]


class MembershipForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)

    def clean_username(self) -> object:
        username = self.cleaned_data["username"]
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise forms.ValidationError(f"There is no user called “{username}”.") from None


class RecordFilterForm(forms.Form):
    """The record list's filters, shared by the page and the API. Every field is optional."""

    category = forms.CharField(required=False, max_length=100)
    scenario = forms.CharField(required=False, max_length=200)
    gold_label = forms.ChoiceField(
        required=False,
        choices=[("", "Any"), ("unsafe", "Unsafe"), ("safe", "Safe"), ("none", "None")],
    )
    attack_type = forms.CharField(required=False, max_length=50)
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Text",
        help_text=(
            "Finds records with every word, in any order, and other forms of it (deleting finds "
            'deleted); "quoted words" as a phrase; -word leaves out records with it. Punctuation '
            "alone is ignored. A record's id finds it."
        ),
    )

    def clean_q(self) -> str:
        query = self.cleaned_data["q"]
        terms = search_terms_of(query)
        if terms.excluded and not terms.required:
            raise forms.ValidationError(
                "Say what to look for too: -word only leaves out records among those found."
            )
        # A query of punctuation asks for nothing: the list is not searched.
        return query if terms.required else ""
