"""Annotation settings: managers choose k, the lease time and the fields annotators give."""

from __future__ import annotations

from django.urls import reverse

from annotation.services.queue import lease_next_record
from curation.models import AuditEvent
from tests.annotation.annotators import make_records
from tests.conftest import Cast

SETTINGS = {
    "overlap": "3",
    "lease_minutes": "10",
    "ask_risk_description": "on",
    "ask_safety_score": "on",
    "ask_evidence_turns": "on",
    "consensus_rule": "majority",
}


def test_a_manager_changes_the_settings_and_the_change_is_audited(cast: Cast) -> None:
    response = cast.client_for("manager").post(
        reverse("annotation:annotation_settings", args=[cast.project.slug]), SETTINGS, follow=True
    )

    assert "Annotation settings saved." in response.content.decode()
    cast.project.refresh_from_db()
    assert (cast.project.overlap, cast.project.lease_minutes) == (3, 10)
    assert cast.project.ask_safety_score and not cast.project.ask_risk_types
    event = AuditEvent.objects.get(action="curation.project.annotation_settings_changed")
    assert event.before == {
        "overlap": 2,
        "lease_minutes": 30,
        "ask_risk_types": True,
        "ask_safety_score": False,
    }
    assert event.after["overlap"] == 3


def test_the_labelling_form_follows_the_settings(cast: Cast) -> None:
    cast.client_for("manager").post(
        reverse("annotation:annotation_settings", args=[cast.project.slug]), SETTINGS
    )
    make_records(cast.project, 1)
    lease_next_record(project=cast.project, annotator=cast.annotator)

    page = (
        cast.client_for("annotator")
        .get(reverse("annotation:annotate", args=[cast.project.slug]))
        .content.decode()
    )

    assert "Safety score" in page
    assert "Helpfulness score" not in page
    assert 'name="risk_types"' not in page


def test_an_overlap_of_zero_is_refused(cast: Cast) -> None:
    response = cast.client_for("manager").post(
        reverse("annotation:annotation_settings", args=[cast.project.slug]),
        {**SETTINGS, "overlap": "0"},
    )

    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 1." in response.content.decode()
    cast.project.refresh_from_db()
    assert cast.project.overlap == 2
