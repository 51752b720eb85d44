from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from curation.models import Project, Role


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
    agent = forms.CharField(required=False, max_length=200, label="Source agent")
    q = forms.CharField(required=False, max_length=200, label="Text")
