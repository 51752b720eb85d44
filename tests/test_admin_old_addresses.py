"""The admin's pages of the models that moved out of the curation app answer at their old
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
