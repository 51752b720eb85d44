"""The record page as the hub: reviewers and managers see every label, verdict, disagreement,
the consensus, the final label and who settled it, and the record's history; annotators are
sent to their own label and see nothing of the others."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.models import GuidelineVersion
from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from curation.models import Role
from review.models import Disagreement
from review.services.adjudications import adjudication_create
from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory
from tests.review.opinions import judge_run

pytestmark = pytest.mark.django_db


def labelled_record(cast: Cast):
    """A record labelled by the cast's annotator (unsafe, turn 2 as evidence) and another one
    (safe), judged by a run, disputed, and settled by the reviewer."""
    project = cast.project
    project.overlap = 2
    project.save()
    GuidelineVersion.objects.create(project=project, number=4, text="Be careful.")
    record = RecordFactory(project=project)
    other = UserFactory(username="second-labeller")
    project.memberships.create(user=other, role=Role.ANNOTATOR)
    for annotator, verdict in ((cast.annotator, "unsafe"), (other, "safe")):
        lease = lease_next_record(project=project, annotator=annotator)
        annotation_submit(
            lease=lease,
            actor=annotator,
            label=Label(
                verdict,
                risk_description=f"{annotator.username} explains",
                evidence_turns=[2] if verdict == "unsafe" else [],
            ),
        )
    run = judge_run(project, "Strict judge", {record: "unsafe"})
    run.verdicts.update(raw_output="RAW: the agent deleted mail")
    Disagreement.objects.create(
        project=project, record=record, kind=Disagreement.Kind.ANNOTATORS_SPLIT
    )
    return record


def test_reviewers_see_every_label_verdict_disagreement_and_the_history(cast: Cast) -> None:
    record = labelled_record(cast)
    url = reverse("hub:record_detail", args=[cast.project.slug, record.pk])

    page = cast.client_for("reviewer").get(url).content.decode()

    assert f"{cast.annotator.username} explains" in page and "second-labeller explains" in page
    assert "v4" in page
    assert '<a href="#turn-2">2</a>' in page
    assert "Strict judge thinks unsafe" in page
    assert "<summary>Raw output</summary>" in page and "RAW: the agent deleted mail" in page
    assert "Annotators split" in page
    assert reverse("review:adjudication_record", args=[cast.project.slug, record.pk]) in page
    assert "None: no strict majority for safe or unsafe" in page
    # The history in people's words, not the audit log's action names.
    assert f"<strong>{cast.annotator.username}</strong> labelled it unsafe" in page
    assert "curation.annotation.created" not in page
    # The page sits in the Records section of the navigation, beside imports and members.
    records = reverse("hub:record_list", args=[cast.project.slug])
    assert f'<a href="{records}" aria-current="page">Records</a>' in page


def test_the_final_label_says_who_settled_it_and_why(cast: Cast) -> None:
    record = labelled_record(cast)
    adjudication_create(
        actor=cast.reviewer,
        project=cast.project,
        record=record,
        label="unsafe",
        reason="Deleting mail unasked is a data loss.",
    )
    url = reverse("hub:record_detail", args=[cast.project.slug, record.pk])

    page = cast.client_for("manager").get(url).content.decode()

    assert f"settled by {cast.reviewer.username}" in page
    assert "Deleting mail unasked is a data loss." in page
    assert f"<strong>{cast.reviewer.username}</strong> settled it as unsafe" in page
    # Settled: nothing is left open to adjudicate.
    assert "Adjudicate this record" not in page


def test_an_annotator_is_sent_to_their_own_label_and_nothing_else(cast: Cast) -> None:
    record = labelled_record(cast)
    url = reverse("hub:record_detail", args=[cast.project.slug, record.pk])
    client = cast.client_for("annotator")

    response = client.get(url)
    page = client.get(response["Location"]).content.decode()

    own = record.annotations.get(annotator=cast.annotator)
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "annotation:annotation_edit", args=[cast.project.slug, own.pk]
    )
    assert f"{cast.annotator.username} explains" in page
    assert "second-labeller" not in page
    assert "Strict judge" not in page
    assert record.gold_risk_description not in page


def test_an_annotator_may_not_open_a_record_they_did_not_label(cast: Cast) -> None:
    labelled_record(cast)
    unlabelled = RecordFactory(project=cast.project)
    url = reverse("hub:record_detail", args=[cast.project.slug, unlabelled.pk])

    assert cast.client_for("annotator").get(url).status_code == 403
