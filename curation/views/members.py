"""A project's members: added, invited by a link, removed after a confirmation."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from curation import selectors
from curation.access import MANAGERS, ProjectAccess, project_view
from curation.errors import DomainError
from curation.forms import InvitationForm, MembershipForm
from curation.requests import AuthenticatedRequest
from curation.services.invitations import invitation_create, invitation_withdraw
from curation.services.projects import membership_grant, membership_revoke


def members_page(
    request: AuthenticatedRequest,
    access: ProjectAccess,
    *,
    form: MembershipForm | None = None,
    invite_form: InvitationForm | None = None,
    invitation_link: str | None = None,
) -> HttpResponse:
    context = {
        "project": access.project,
        "access": access,
        "form": form or MembershipForm(),
        "invite_form": invite_form or InvitationForm(),
        "invitation_link": invitation_link,
        "memberships": selectors.memberships_of(access.project),
        "invitations": selectors.pending_invitations_of(access.project),
    }
    return render(request, "curation/members.html", context)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def members(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    form = MembershipForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user, role = form.cleaned_data["username"], form.cleaned_data["role"]
        membership_grant(actor=request.user, project=access.project, user=user, role=role)
        messages.success(request, f"{user.get_username()} is now {role} in this project.")
        return redirect("curation:members", access.project.slug)
    return members_page(request, access, form=form)


@require_POST
@project_view(MANAGERS)
def member_invite(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """Shows the invitation's link this once, on the members page: it is stored nowhere."""
    form = InvitationForm(request.POST)
    link = None
    if form.is_valid():
        try:
            _, token = invitation_create(
                actor=request.user, project=access.project, **form.cleaned_data
            )
        except DomainError as error:
            form.add_error("username", error.message)
        else:
            link = request.build_absolute_uri(reverse("invitation_accept", args=[token]))
            form = InvitationForm()
    return members_page(request, access, invite_form=form, invitation_link=link)


@require_POST
@project_view(MANAGERS)
def invitation_withdraw_view(
    request: AuthenticatedRequest, access: ProjectAccess, invitation_id: int
) -> HttpResponse:
    invitation = get_object_or_404(access.project.invitations, pk=invitation_id)
    try:
        invitation_withdraw(actor=request.user, invitation=invitation)
    except DomainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, f"The invitation of {invitation.username} is withdrawn.")
    return redirect("curation:members", access.project.slug)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def member_remove(
    request: AuthenticatedRequest, access: ProjectAccess, membership_id: int
) -> HttpResponse:
    """Asks first (GET), removes on the confirmation (POST)."""
    membership = get_object_or_404(
        access.project.memberships.select_related("user"), pk=membership_id
    )
    if membership.user_id == request.user.pk and membership.role == "manager":
        messages.error(request, "You cannot remove your own manager role.")
        return redirect("curation:members", access.project.slug)
    if request.method == "GET":
        context = {"project": access.project, "access": access, "membership": membership}
        return render(request, "curation/member_remove.html", context)
    membership_revoke(actor=request.user, membership=membership)
    messages.success(request, f"Removed {membership.user.get_username()} as {membership.role}.")
    return redirect("curation:members", access.project.slug)
