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
from curation.usernames import account_lookalike, username_lookalike, username_normalise

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


class UsernameTaken(Conflict):
    """The invited username, or one that reads the same, has an account by now."""


@transaction.atomic
def invitation_create(
    *, actor: User, project: Project, username: str, role: Role
) -> tuple[Invitation, str]:
    """Invite `username` (no account yet) to `project` as `role`; returns the invitation and
    the token of its link, which the manager passes on (it is not stored).

    Whether an account of that name exists elsewhere is not checked here, so that the answer
    tells a manager nothing about other projects' people: the link then asks its holder for an
    invitation under another name. Names of this project's members and invitations, which the
    manager sees anyway, are refused, and so are their look-alikes.
    """
    username = username_normalise(username)
    members = list(project.memberships.values_list("user__username", flat=True))
    member = username_lookalike(username, members)
    if member is not None:
        raise Conflict(f"“{member}” is already a member of this project.")
    pending = project.invitations.filter(state=Invitation.State.PENDING)
    invited = username_lookalike(username, list(pending.values_list("username", flat=True)))
    if invited is not None:
        raise Conflict(f"“{invited}” is already invited: withdraw that invitation first.")
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
        taken = account_lookalike(invitation.username)
        if taken is not None:
            raise UsernameTaken(
                f"There is already an account “{taken}”, which reads as "
                f"“{invitation.username}”: ask whoever invited you for an invitation under "
                "another username."
            )
        now = timezone.now()
        claimed = Invitation.objects.filter(
            pk=invitation.pk, state=Invitation.State.PENDING, expires_at__gt=now
        ).update(state=Invitation.State.ACCEPTED, accepted_at=now, updated_at=now)
        if not claimed:
            raise Conflict("This invitation link was already used, withdrawn, or has expired.")
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
