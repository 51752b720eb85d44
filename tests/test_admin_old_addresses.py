"""The admin's pages of the models that moved out of an app answer at their old
addresses too, sending the administrator to the new ones."""

from __future__ import annotations

from django.test import Client


def test_an_old_admin_address_leads_to_the_moved_models_page(cast) -> None:
    client = Client()
    client.force_login(cast.superuser)

    response = client.get("/admin/curation/task/?state__exact=draft")

    assert response.status_code == 302
    assert response["Location"] == "/admin/authoring/task/?state__exact=draft"
    assert client.get(response["Location"]).status_code == 200


def test_a_models_own_admin_address_in_curation_is_unchanged(cast) -> None:
    client = Client()
    client.force_login(cast.superuser)

    assert client.get("/admin/curation/record/").status_code == 200
    assert client.get("/admin/curation/lease/1/change/")["Location"] == (
        "/admin/annotation/lease/1/change/"
    )


def test_an_old_admin_address_of_a_model_that_left_judging_leads_to_review(cast) -> None:
    client = Client()
    client.force_login(cast.superuser)

    response = client.get("/admin/judging/disagreement/?state__exact=open")

    assert response.status_code == 302
    assert response["Location"] == "/admin/review/disagreement/?state__exact=open"
    assert client.get(response["Location"]).status_code == 200
