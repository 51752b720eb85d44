"""Before a version is used: what a release would hold, and a release of nothing refused."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from releases.models import Release
from tests.conftest import Cast
from tests.releases.helpers import record

pytestmark = pytest.mark.django_db


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_page_counts_what_the_release_would_hold_without_making_it(cast: Cast) -> None:
    record(cast.project, 1, label=1)
    record(cast.project, 2, label=0)
    url = reverse("releases:release_new", args=[cast.project.slug])

    final = cast.client_for("manager").post(
        url,
        {
            "preview": "1",
            "label_basis": "final",
            "license": "MIT",
            "pairs_by": "safety",
            "min_gap": "1",
            "min_chosen": "2",
        },
    )
    gold = cast.client_for("manager").post(
        url,
        {
            "preview": "1",
            "label_basis": "gold",
            "license": "MIT",
            "pairs_by": "safety",
            "min_gap": "1",
            "min_chosen": "2",
        },
    )

    assert final.status_code == gold.status_code == 200
    assert "would hold 0 records; left out: 2 " in final.content.decode()
    assert "A release with no records and no approved tasks is refused." in final.content.decode()
    assert "would hold 2 records." in gold.content.decode()
    assert not Release.objects.exists()


def test_creating_a_release_of_nothing_says_why_and_keeps_the_version_free(cast: Cast) -> None:
    record(cast.project, 1, label=1)
    url = reverse("releases_api:release_list", args=[cast.project.slug])

    refused = api(cast.manager).post(url, {"version": "0.1.0", "license": "MIT"}, format="json")
    made = api(cast.manager).post(
        url,
        {
            "version": "0.1.0",
            "license": "MIT",
            "label_basis": "gold",
            "leave_out_in_annotation": False,
        },
        format="json",
    )

    assert refused.status_code == 400, refused.content
    assert "Version 0.1.0 would hold no records and no approved tasks (1 " in str(refused.json())
    assert made.status_code == 202, made.content
    assert Release.objects.get().version == "0.1.0"


def test_the_api_counts_by_reason_for_managers_only(cast: Cast) -> None:
    record(cast.project, 1, label=1)
    record(cast.project, 2, label=1)
    url = reverse("releases_api:release_preview", args=[cast.project.slug])

    scores = api(cast.manager).post(url, {"label_basis": "scores"}, format="json")
    reviewer = api(cast.reviewer).post(url, {"label_basis": "gold"}, format="json")

    assert scores.status_code == 200, scores.content
    # Nobody has labelled them yet: the people's scores are still to come.
    assert scores.json() == {"records": 0, "excluded": {"still being annotated": 2}}
    assert reviewer.status_code == 403
