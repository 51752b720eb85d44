from __future__ import annotations

from typing import Any, cast

from django import forms
from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.forms import PasswordChangeForm, UserCreationForm, UsernameField
from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.http import HttpRequest

from curation.models import ApiToken, ImportFormat, Project, Role
from curation.search_text import search_reading, search_terms_of


class ProjectForm(forms.ModelForm):
    # Set by the page's script (static/js/project_new.js) while it fills the slug from the name,
    # cleared once the user edits the slug: a slug the page made is made unique like an empty
    # one, where a slug the user chose and another project has is refused.
    slug_from_name = forms.BooleanField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = Project
        fields = ["name", "slug", "description", "license"]
        help_texts = {
            "slug": "The project's name in its addresses. Left empty, it is made from the name."
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # project_create makes it from the name when it is left empty.
        self.fields["slug"].required = False

    def clean(self) -> dict[str, Any]:
        # ModelForm.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if data.pop("slug_from_name", False):
            # Empty, so that the uniqueness check (after clean) skips it.
            data["slug"] = ""
        return data


class ProjectSettingsForm(forms.ModelForm):
    """What a manager changes on the project's settings page; the slug stays, as addresses
    carry it."""

    class Meta:
        model = Project
        fields = ["name", "description", "license"]


class ProjectDeleteForm(forms.Form):
    name = forms.CharField(
        max_length=200, label="The project's name", help_text="Typed as it is, to confirm."
    )


class MembershipForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)

    def clean_username(self) -> User:
        username = self.cleaned_data["username"]
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise forms.ValidationError(f"There is no user called “{username}”.") from None


class InvitationForm(forms.Form):
    """Someone without an account: the link made for them creates it under this username."""

    # UsernameField reads it as a login does (NFKC: a fullwidth `admin` is `admin`).
    username = UsernameField(
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="The username their account will have.",
    )
    role = forms.ChoiceField(choices=Role.choices)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Beside MembershipForm on the members page: ids of its own, so that its labels name
        # its fields rather than the other form's.
        kwargs.setdefault("auto_id", "id_invite_%s")
        super().__init__(*args, **kwargs)


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
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Text",
        help_text=(
            "Finds records with every word, in any order, and other forms of it (deleting finds "
            'deleted); "quoted words" as a phrase; -word leaves out records with it. Punctuation '
            "only separates words. A record's id finds it."
        ),
    )

    def clean_q(self) -> str:
        query = self.cleaned_data["q"]
        terms = search_terms_of(query)
        if terms.excluded and not terms.required:
            raise forms.ValidationError(
                "Say what to look for too: -word only leaves out records among those found."
            )
        if query.strip() and not terms.required:
            # Listing every record would answer as if nothing had been asked.
            raise forms.ValidationError(
                "This query holds no word to search for: punctuation alone finds nothing."
            )
        return query if terms.required else ""

    def search_reading(self) -> str:
        """How the valid form's query was read, when it leaves words out (see search_reading)."""
        return search_reading(self.cleaned_data.get("q", "")) if self.is_valid() else ""


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What the token is for, e.g. “import script”.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Made here, not in the class body, so that it reads the setting of the moment.
        longest = settings.API_TOKEN_LIFETIME_DAYS
        self.fields["lifetime_days"] = forms.IntegerField(
            label="Expires in (days)", min_value=1, max_value=longest, initial=longest
        )


class ApiTokenRevokeForm(forms.Form):
    """Which of the user's own tokens to revoke: any other is not found."""

    token = forms.ModelChoiceField(queryset=ApiToken.objects.none())

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The field declared above; a form's fields are typed as any field.
        token = cast("forms.ModelChoiceField[ApiToken]", self.fields["token"])
        token.queryset = ApiToken.objects.filter(user=user)


class ThrottledPasswordChangeForm(PasswordChangeForm):
    """Django's form, whose old password is checked as a login is: a wrong one counts as a
    failed login, and while logins for the user from this address wait, it is not checked."""

    def __init__(self, user: User, *args: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request

    def clean_old_password(self) -> str:
        old_password = self.cleaned_data["old_password"]
        # django-axes' backend refuses while the login waits (its middleware then answers the
        # lock-out page); a wrong password is recorded by its failed-login signal.
        checked = authenticate(
            self.request, username=self.user.get_username(), password=old_password
        )
        if checked is None or checked.pk != self.user.pk:
            raise forms.ValidationError(
                self.error_messages["password_incorrect"], code="password_incorrect"
            )
        return old_password


class UserCreateForm(UserCreationForm):
    """A username and a password twice, checked by the password validators; the service saves."""


class UserSettingsForm(forms.Form):
    is_active = forms.BooleanField(
        required=False, label="Active", help_text="Inactive users cannot log in or use the API."
    )
    may_create_projects = forms.BooleanField(
        required=False, help_text="They then manage the projects they create."
    )


class ImportForm(forms.Form):
    file = forms.FileField(
        help_text=(
            "An R-Judge scenario file (.json), a zip of the data folder, JSONL, an Inspect eval "
            "log (.eval or .json) or OpenAI-style chat transcripts (.jsonl)."
        )
    )
    format = forms.ChoiceField(choices=ImportFormat.choices, initial=ImportFormat.AUTO)
    default_category = forms.CharField(
        required=False,
        max_length=100,
        help_text="For records that name no category and sit in no category folder.",
    )


class ChangesForm(forms.Form):
    decision = forms.ChoiceField(choices=[("take", "Take the new versions"), ("keep", "Keep")])
