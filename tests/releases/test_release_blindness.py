"""A release must not show annotators what they are about to label: a manager is told how many
records are still being annotated and may leave them out."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from releases.build import release_folder
from releases.models import LabelBasis
from releases.services import release_options
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record

pytestmark = pytest.mark.django_db


def project_half_labelled(cast: Cast):
    """k = 2: record 1 has its two labels, records 2 and 3 are still in the annotators' queue."""
    project = cast.project
    project.overlap = 2
    project.save()
    first, second = annotators(project, 2)
    done, *_ = (record(project, n, label=1) for n in range(1, 4))
    label(done, first, "unsafe")
    label(done, second, "unsafe")
    return project


def test_records_still_being_annotated_can_be_left_out(cast: Cast) -> None:
    project = project_half_labelled(cast)

    release = built_release(
        project,
        cast.manager,
        label_basis=LabelBasis.GOLD,
        options=release_options(leave_out_in_annotation=True),
    )

    lines = (release_folder(release) / "records.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["1"]
    assert release.summary["excluded"] == {"still being annotated": 2}
    assert release.summary["in_annotation"] == 0


def test_a_release_holding_them_says_so_where_it_is_made_public(cast: Cast) -> None:
    project = project_half_labelled(cast)

    release = built_release(project, cast.manager, label_basis=LabelBasis.GOLD)

    assert release.summary["in_annotation"] == 2
    page = cast.client_for("manager").get(
        reverse("releases:release_detail", args=[project.slug, release.pk])
    )
    assert "2 records in this release were still being annotated" in page.content.decode()


def test_the_new_release_page_counts_them_and_offers_to_leave_them_out(cast: Cast) -> None:
    project = project_half_labelled(cast)

    page = cast.client_for("manager").get(reverse("releases:release_new", args=[project.slug]))

    body = page.content.decode()
    assert "2 records of this project are still being annotated (fewer than 2 labels)" in body
    assert 'id="id_leave_out_in_annotation" checked' in body


def test_a_project_without_annotators_has_nothing_in_annotation(cast: Cast) -> None:
    cast.project.memberships.filter(role="annotator").delete()
    record(cast.project, 1, label=1)

    release = built_release(
        cast.project,
        cast.manager,
        label_basis=LabelBasis.GOLD,
        options=release_options(leave_out_in_annotation=True),
    )

    assert release.summary["records"] == 1
    assert release.summary["in_annotation"] == 0


def test_the_api_leaves_them_out_when_asked(cast: Cast) -> None:
    project = project_half_labelled(cast)

    response = cast.client_for("manager").post(
        reverse("releases_api:release_list", args=[project.slug]),
        {
            "version": "1.0.0",
            "license": "CC BY 4.0",
            "label_basis": "gold",
            "leave_out_in_annotation": True,
        },
        content_type="application/json",
    )

    assert response.status_code == 202, response.content
    assert response.json()["summary"]["excluded"] == {"still being annotated": 2}
