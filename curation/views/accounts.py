"""Logging in, the user's own account, and the invited person's first visit."""

from __future__ import annotations

import math
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import PasswordChangeForm, SetPasswordForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST

from curation.errors import DomainError
from curation.forms import ApiTokenForm, ApiTokenRevokeForm, ThrottledPasswordChangeForm
from curation.login_throttle import request_login_wait
from curation.requests import AuthenticatedRequest
from curation.services.accounts import api_token_create, api_token_revoke, password_change
from curation.services.invitations import (
    UsernameTaken,
    invitation_accept,
    invitation_by_token,
)


def locked_out(
    request: HttpRequest, response: HttpResponse | None, credentials: Any
) -> HttpResponse:
    """What django-axes answers a login that must wait with: on the login page, the admin's,
    and the password change's old password.

    Failures are counted for any username, existing or not, and this page names none, so that
    it tells nobody which usernames exist.
    """
    seconds = max(1, math.ceil(request_login_wait(request, credentials).total_seconds()))
    wait = f"{seconds} second{pluralize(seconds)}"
    if seconds > 90:
        minutes = math.ceil(seconds / 60)
        wait = f"{minutes} minute{pluralize(minutes)}"
    response = render(request, "registration/locked_out.html", {"wait": wait}, status=429)
    response["Retry-After"] = str(seconds)
    return response


class PasswordChange(auth_views.PasswordChangeView):
    """Django's own form, which asks for the old password, checked as a login is (throttled
    with it); back to the account page after."""

    form_class = ThrottledPasswordChangeForm
    success_url = reverse_lazy("account")

    def get_form_kwargs(self) -> dict[str, Any]:
        return {**super().get_form_kwargs(), "request": self.request}

    def form_valid(self, form: PasswordChangeForm) -> HttpResponse:
        revoked = password_change(user=form.user, password=form.cleaned_data["new_password1"])
        # Other sessions of the user end (their hash no longer matches); this one goes on.
        update_session_auth_hash(self.request, form.user)
        message = "Your password is changed."
        if revoked:
            message += (
                f" Your API tokens ({revoked}) are revoked: make new ones where you need them."
            )
        messages.success(self.request, message)
        return redirect(self.get_success_url())


@require_http_methods(["GET", "POST"])
def account(request: AuthenticatedRequest) -> HttpResponse:
    """The user's API tokens: made here (the key shown this once), listed and revoked."""
    form = ApiTokenForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        created = api_token_create(user=request.user, **form.cleaned_data)
        form = ApiTokenForm()
    context = {"form": form, "tokens": request.user.api_tokens.all(), "created": created}
    return render(request, "curation/account.html", context)


@require_POST
def api_token_revoke_view(request: AuthenticatedRequest) -> HttpResponse:
    form = ApiTokenRevokeForm(request.POST, user=request.user)
    if form.is_valid():
        token = form.cleaned_data["token"]
        api_token_revoke(actor=request.user, token=token)
        messages.success(request, f"Token “{token.name}” revoked: it no longer opens the API.")
    else:
        messages.error(request, "You have no such token.")
    return redirect("account")


@require_http_methods(["GET", "POST"])
@login_not_required
@never_cache
# The password chosen never shows in an error report (Django's page with DEBUG on, or a mail).
@sensitive_post_parameters("new_password1", "new_password2")
def invitation_accept_view(request: HttpRequest, token: str) -> HttpResponse:
    """The invited person chooses their password; their account is made and logged in."""
    invitation = invitation_by_token(token)
    if invitation is None:
        return render(request, "registration/invitation_invalid.html", status=404)
    invited = get_user_model()(username=invitation.username)
    form = SetPasswordForm(invited, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            user = invitation_accept(
                invitation=invitation, password=form.cleaned_data["new_password1"]
            )
        except UsernameTaken as error:
            form.add_error(None, error.message)
            context = {"form": form, "invitation": invitation}
            return render(request, "registration/invitation_accept.html", context, status=409)
        except DomainError as error:
            reason = {"reason": error.message}
            return render(request, "registration/invitation_invalid.html", reason, status=409)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request, f"Welcome, {user.get_username()}: you are {invitation.role} here."
        )
        return redirect("curation:project", invitation.project.slug)
    context = {"form": form, "invitation": invitation}
    return render(request, "registration/invitation_accept.html", context)
