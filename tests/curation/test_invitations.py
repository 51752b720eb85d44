"""Managers invite people without an account by a link that sets their password, once; and
removing a member asks first."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import signing
from django.test import Client
from django.utils import timezone

from curation.models import AuditEvent, Invitation, Membership
from tests.conftest import Cast

PASSWORD = "a long and unusual passphrase"


def invite(cast: Cast, username: str = "newcomer", role: str = "reviewer"):
    return cast.client_for("manager").post(
        f"/p/{cast.project.slug}/members/invite/", {"username": username, "role": role}
    )


def link_of(page: str) -> str:
    """The path of the link the members page shows once."""
    url = page.split('<code class="token" id="invitation-link">')[1].split("</code>")[0]
    return url.removeprefix("http://testserver")


def accept(link: str, password: str = PASSWORD) -> tuple[Client, object]:
    client = Client()
    response = client.post(
        link, {"new_password1": password, "new_password2": password}, follow=True
    )
    return client, response


def test_the_invited_person_sets_their_password_and_gets_the_role(cast: Cast) -> None:
    link = link_of(invite(cast).text)

    form = Client().get(link)
    client, response = accept(link)

    assert "Join Agent Safety" in form.text and "newcomer" in form.text
    assert response.redirect_chain == [(f"/p/{cast.project.slug}/", 302)]
    assert "Welcome, newcomer: you are reviewer here." in response.text
    assert client.get(f"/p/{cast.project.slug}/records/").status_code == 200
    assert Membership.objects.filter(user__username="newcomer", role="reviewer").exists()
    fresh = Client()
    fresh.post("/login/", {"username": "newcomer", "password": PASSWORD})
    assert fresh.get("/").status_code == 200
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"curation.invitation.created", "curation.invitation.accepted"} <= actions


def test_an_error_report_never_shows_the_password_chosen(cast: Cast, settings, monkeypatch) -> None:
    link = link_of(invite(cast).text)
    settings.DEBUG = True

    def fails(**kwargs: object) -> None:
        raise RuntimeError("the database went away")

    # A failure inside the service, once the password is set.
    monkeypatch.setattr("curation.services.invitations.membership_grant", fails)
    response = Client(raise_request_exception=False).post(
        link, {"new_password1": PASSWORD, "new_password2": PASSWORD}
    )

    assert response.status_code == 500
    assert "the database went away" in response.text
    assert PASSWORD not in response.text


def test_the_link_is_shown_once_and_the_invitation_listed(cast: Cast) -> None:
    link = link_of(invite(cast).text)

    page = cast.client_for("manager").get(f"/p/{cast.project.slug}/members/").text

    assert link not in page
    assert "newcomer" in page and "Withdraw" in page


def test_the_link_works_once(cast: Cast) -> None:
    link = link_of(invite(cast).text)
    accept(link)

    again = Client().get(link)
    _, reused = accept(link, "another long passphrase")

    assert again.status_code == 404
    assert "This invitation link is not valid" in again.text
    assert reused.status_code == 404
    assert Invitation.objects.get().state == Invitation.State.ACCEPTED


def test_an_expired_link_is_refused(cast: Cast) -> None:
    link = link_of(invite(cast).text)
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    _, response = accept(link)

    assert response.status_code == 404
    assert not Membership.objects.filter(user__username="newcomer").exists()


def test_a_withdrawn_link_is_refused(cast: Cast) -> None:
    link = link_of(invite(cast).text)
    invitation = Invitation.objects.get()

    withdrawn = cast.client_for("manager").post(
        f"/p/{cast.project.slug}/members/invitations/{invitation.pk}/withdraw/", follow=True
    )
    _, response = accept(link)

    assert "The invitation of newcomer is withdrawn." in withdrawn.text
    assert response.status_code == 404
    assert AuditEvent.objects.filter(action="curation.invitation.withdrawn").exists()


def test_a_made_up_link_is_refused(cast: Cast) -> None:
    invite(cast)
    pk = Invitation.objects.get().pk

    for token in (signing.dumps(pk, salt="another purpose"), "1:abc:def", "garbage"):
        assert Client().get(f"/invitations/{token}/").status_code == 404


def test_the_invite_form_answers_alike_whether_or_not_the_username_exists_elsewhere(
    cast: Cast,
) -> None:
    # The outsider has an account but no part in this project: the manager learns nothing.
    answers = []
    for username in ("outsider", "nobody-yet"):
        response = invite(cast, username=username)
        main = response.text.split('<main id="main">')[1].replace(link_of(response.text), "")
        main = re.sub(r'value="\w+"|/invitations/\d+/', "", main.replace(username, "NAME"))
        answers.append((response.status_code, main))
        assert Invitation.objects.filter(username=username).exists()
        Invitation.objects.all().delete()

    assert answers[0] == answers[1]


@pytest.mark.parametrize(
    "username",
    ["outsider", "Outsider", "\uff4futsider", "\u043eutsider"],  # fullwidth o, Cyrillic o
    ids=["same", "case", "nfkc", "cyrillic"],
)
def test_a_link_for_a_name_that_reads_as_an_existing_account_asks_for_another_invitation(
    cast: Cast, username: str
) -> None:
    link = link_of(invite(cast, username=username).text)

    _, response = accept(link)

    assert response.status_code == 409
    assert "There is already an account “outsider”, which reads as" in response.text
    assert "ask whoever invited you for an invitation under another username" in response.text
    assert 'name="new_password1"' in response.text, "the form, not an error page"
    assert get_user_model().objects.filter(username__iexact="outsider").count() == 1
    assert Invitation.objects.get().state == Invitation.State.PENDING


def test_an_invitation_is_stored_under_the_name_a_login_reads(cast: Cast) -> None:
    invite(cast, username="\uff4eewcomer")  # a fullwidth n

    assert Invitation.objects.get().username == "newcomer"


# With a Cyrillic a, then a Cyrillic e.
@pytest.mark.parametrize("username", ["Manager", "m\u0430nager", "NEWCOMER", "n\u0435wcomer"])
def test_members_and_invited_people_of_the_project_are_not_invited_again_nor_look_alikes(
    cast: Cast, username: str
) -> None:
    invite(cast, username="newcomer")

    response = invite(cast, username=username)

    assert "is already a member of this project." in response.text or (
        "“newcomer” is already invited" in response.text
    )
    assert Invitation.objects.count() == 1


def test_a_weak_password_leaves_the_invitation_pending(cast: Cast) -> None:
    link = link_of(invite(cast).text)

    _, response = accept(link, "password")

    assert "This password is too common." in response.text
    assert Invitation.objects.get().state == Invitation.State.PENDING


def test_removing_a_member_asks_first(cast: Cast) -> None:
    manager = cast.client_for("manager")
    membership = Membership.objects.get(user=cast.annotator)
    url = f"/p/{cast.project.slug}/members/{membership.pk}/remove/"

    listed = manager.get(f"/p/{cast.project.slug}/members/")
    question = manager.get(url)

    assert f'href="{url}"' in listed.text
    assert "Remove annotator?" in question.text
    assert Membership.objects.filter(pk=membership.pk).exists()
    manager.post(url)
    assert not Membership.objects.filter(pk=membership.pk).exists()
