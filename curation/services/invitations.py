"""Managers invite people without an account to their project, by a link used once."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import transaction
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from curation.errors import Conflict
from curation.models import Invitation, Project, Role
from curation.services.audit import audit_log
from curation.services.projects import membership_grant

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Keeps an invitation's signature from being taken for any other signed value of the studio.
SALT = "curation.invitation"


def invitation_token(invitation: Invitation) -> str:
    """What the link carries: the invitation's id, signed with SECRET_KEY so that nobody can
    make one up. The row says whether it may still be used (pending, not expired)."""
    return signing.dumps(invitation.pk, salt=SALT)


def invitation_by_token(token: str) -> Invitation | None:
    """The pending, unexpired invitation behind a link, or None for any other link."""
    try:
        pk = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return None
    return (
        Invitation.objects.select_related("project")
        .filter(pk=pk, state=Invitation.State.PENDING, expires_at__gt=timezone.now())
        .first()
    )


def _username_taken(username: str) -> bool:
    return get_user_model().objects.filter(username__iexact=username).exists()


@transaction.atomic
def invitation_create(
    *, actor: User, project: Project, username: str, role: Role
) -> tuple[Invitation, str]:
    """Invite `username` (no account yet) to `project` as `role`; returns the invitation and
    the token of its link, which the manager passes on (it is not stored)."""
    if _username_taken(username):
        raise Conflict(f"There is already an account “{username}”: add it as a member instead.")
    if project.invitations.filter(username=username, state=Invitation.State.PENDING).exists():
        raise Conflict(f"“{username}” is already invited: withdraw that invitation first.")
    invitation = Invitation(
        project=project,
        username=username,
        role=role,
        invited_by=actor,
        expires_at=timezone.now() + timedelta(days=settings.INVITATION_LIFETIME_DAYS),
    )
    invitation.full_clean()
    invitation.save()
    audit_log(
        actor=actor,
        action="curation.invitation.created",
        project=project,
        obj=invitation,
        after={"username": username, "role": role, "expires_at": invitation.expires_at.isoformat()},
    )
    return invitation, invitation_token(invitation)


@transaction.atomic
def invitation_withdraw(*, actor: User, invitation: Invitation) -> None:
    withdrawn = Invitation.objects.filter(pk=invitation.pk, state=Invitation.State.PENDING).update(
        state=Invitation.State.WITHDRAWN, updated_at=timezone.now()
    )
    if not withdrawn:
        raise Conflict("This invitation was already used or withdrawn.")
    audit_log(
        actor=actor,
        action="curation.invitation.withdrawn",
        project=invitation.project,
        obj=invitation,
        before={"username": invitation.username, "role": invitation.role},
    )


# The password never shows in an error report's local variables.
@sensitive_variables("password")
def invitation_accept(*, invitation: Invitation, password: str) -> User:
    """Make the invited account with `password` and give it the role. The invitation is
    claimed by a conditional update first, so that a link used twice at once makes one account."""
    # Not as a decorator: the decorator's frame would show the password in an error report.
    with transaction.atomic():
        now = timezone.now()
        claimed = Invitation.objects.filter(
            pk=invitation.pk, state=Invitation.State.PENDING, expires_at__gt=now
        ).update(state=Invitation.State.ACCEPTED, accepted_at=now, updated_at=now)
        if not claimed:
            raise Conflict("This invitation link was already used, withdrawn, or has expired.")
        if _username_taken(invitation.username):
            raise Conflict(
                "Its username was taken meanwhile: ask the manager for a new invitation."
            )
        user = get_user_model()(username=invitation.username)
        user.set_password(password)
        user.full_clean()
        user.save()
        Invitation.objects.filter(pk=invitation.pk).update(user=user)
        membership_grant(
            actor=invitation.invited_by,
            project=invitation.project,
            user=user,
            role=Role(invitation.role),
        )
        audit_log(
            actor=user,
            action="curation.invitation.accepted",
            project=invitation.project,
            obj=invitation,
            after={"username": user.get_username(), "role": invitation.role},
        )
        return user
