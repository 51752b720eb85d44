"""Accounts, for site administrators: users made, allowed to create projects, unlocked, their
API tokens revoked."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST

from curation import selectors
from curation.access import superuser_view
from curation.errors import DomainError
from curation.forms import ApiTokenRevokeForm, UserCreateForm, UserSettingsForm
from curation.requests import AuthenticatedRequest
from curation.services.accounts import (
    api_token_revoke,
    login_lockout_reset,
    user_create,
    user_update,
)


@require_http_methods(["GET", "POST"])
@superuser_view
# The password an administrator gives never shows in an error report.
@sensitive_post_parameters("password1", "password2")
def user_list(request: AuthenticatedRequest) -> HttpResponse:
    form = UserCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_create(
                actor=request.user,
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
            )
        except DomainError as error:
            form.add_error("username", error.message)
        else:
            messages.success(request, f"Account “{user.get_username()}” created.")
            return redirect("curation:user_detail", user.pk)
    context = {"form": form, "users": selectors.users_overview()}
    return render(request, "curation/users.html", context)


@require_http_methods(["GET", "POST"])
@superuser_view
def user_detail(request: AuthenticatedRequest, user_id: int) -> HttpResponse:
    account = get_object_or_404(get_user_model(), pk=user_id)
    initial = {
        "is_active": account.is_active,
        "may_create_projects": selectors.user_may_create_projects(account),
    }
    # Bound on every POST: unticking both boxes posts nothing at all.
    form = UserSettingsForm(request.POST if request.method == "POST" else None, initial=initial)
    if request.method == "POST" and form.is_valid():
        if account == request.user and not form.cleaned_data["is_active"]:
            raise PermissionDenied("You cannot deactivate your own account.")
        user_update(actor=request.user, user=account, **form.cleaned_data)
        messages.success(request, f"Account “{account.get_username()}” saved.")
        return redirect("curation:user_detail", account.pk)
    context = {
        "account": account,
        "form": form,
        "lockouts": selectors.login_lockouts(account.get_username()),
        "tokens": account.api_tokens.all(),
    }
    return render(request, "curation/user_detail.html", context)


@require_POST
@superuser_view
def user_unlock(request: AuthenticatedRequest, user_id: int) -> HttpResponse:
    account = get_object_or_404(get_user_model(), pk=user_id)
    login_lockout_reset(actor=request.user, user=account)
    messages.success(request, f"“{account.get_username()}” may log in again from anywhere.")
    return redirect("curation:user_detail", account.pk)


@require_POST
@superuser_view
def user_token_revoke(request: AuthenticatedRequest, user_id: int) -> HttpResponse:
    """For a token its owner lost: revoked here without locking the whole account."""
    account = get_object_or_404(get_user_model(), pk=user_id)
    form = ApiTokenRevokeForm(request.POST, user=account)
    if form.is_valid():
        api_token_revoke(actor=request.user, token=form.cleaned_data["token"])
        messages.success(request, f"Token “{form.cleaned_data['token'].name}” revoked.")
    else:
        messages.error(request, f"“{account.get_username()}” has no such token.")
    return redirect("curation:user_detail", account.pk)
