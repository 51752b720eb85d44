"""Managers act on the records chosen in the record list: a judge run on them, a trip to the
adjudication queue, more labels. Each is checked on the server and audited."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from curation.models import AuditEvent, Record
from judging.models import JudgeRun
from review.models import Disagreement
from review.services.adjudications import adjudication_create
from tests.annotation.annotators import add_annotator, make_records
from tests.conftest import Cast
from tests.factories import ProjectFactory, RecordFactory
from tests.judging.judge_runs import make_connection

pytestmark = pytest.mark.django_db


def bulk(cast: Cast, persona: str, action: str, records: list[Record], **fields):
    list_url = reverse("hub:record_list", args=[cast.project.slug]) + "?consensus=none"
    return cast.client_for(persona).post(
        reverse("hub:record_bulk", args=[cast.project.slug]),
        {"action": action, "records": [r.pk for r in records], "back": list_url, **fields},
        follow=True,
    )


def test_a_manager_starts_a_judge_run_on_the_chosen_records(cast: Cast) -> None:
    records = make_records(cast.project, 4)
    judge = cast.project.judges.create(
        name="Strict",
        protocol="rjudge",
        connection=make_connection("http://127.0.0.1:9/v1", model_names="m"),
        model="m",
    )

    response = bulk(cast, "manager", "judge", records[1:3], judge=judge.pk)

    run = JudgeRun.objects.get(project=cast.project)
    assert run.record_ids == [records[1].pk, records[2].pk]
    assert run.judge == judge and run.created_by == cast.manager
    page = reverse("judging:run_detail", args=[cast.project.slug, run.pk])
    assert f'Run <a href="{page}">“{run.name}”</a> started on 2 records.' in (
        response.content.decode()
    )
    assert response.redirect_chain[-1][0].endswith("?consensus=none")
    assert AuditEvent.objects.filter(action="judging.run.requested", actor=cast.manager).exists()


def test_the_announcement_links_the_run_and_escapes_its_name(cast: Cast) -> None:
    records = make_records(cast.project, 2)
    judge = cast.project.judges.create(
        name="<img src=x onerror=alert(1)>",
        protocol="rjudge",
        connection=make_connection("http://127.0.0.1:9/v1", model_names="m"),
        model="m",
    )

    page = bulk(cast, "manager", "judge", records, judge=judge.pk).content.decode()

    run = JudgeRun.objects.get(project=cast.project)
    assert f'<a href="{reverse("judging:run_detail", args=[cast.project.slug, run.pk])}">' in page
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_sent_records_wait_in_the_adjudication_queue_until_settled(cast: Cast) -> None:
    records = make_records(cast.project, 3)

    response = bulk(cast, "manager", "adjudicate", records[:2])
    queue = cast.client_for("reviewer").get(
        reverse("review:adjudication_queue", args=[cast.project.slug])
    )

    assert "2 records sent to adjudication." in response.content.decode()
    assert {r.pk for r in queue.context["page"].object_list} == {records[0].pk, records[1].pk}
    assert "Sent for adjudication by a manager" in queue.content.decode()
    assert AuditEvent.objects.filter(action="judging.record.sent_to_adjudication").count() == 2

    adjudication_create(
        actor=cast.reviewer, project=cast.project, record=records[0], label="safe", reason="Fine."
    )
    again = bulk(cast, "manager", "adjudicate", records[:2])

    # The settled one opens again; the one still waiting is not sent twice.
    assert "1 record sent to adjudication." in again.content.decode()
    assert (
        Disagreement.objects.filter(
            kind=Disagreement.Kind.REQUESTED, state=Disagreement.State.OPEN
        ).count()
        == 2
    )


def test_more_labels_put_a_full_record_back_in_the_queue(cast: Cast) -> None:
    project = cast.project
    project.overlap = 1
    project.save()
    (record,) = make_records(project, 1)
    lease = lease_next_record(project=project, annotator=cast.annotator)
    annotation_submit(lease=lease, actor=cast.annotator, label=Label("safe"))
    newcomer = add_annotator(project, "newcomer")
    assert lease_next_record(project=project, annotator=newcomer) is None

    response = bulk(cast, "manager", "more_labels", [record], more=1)

    assert "1 record will get 1 more label." in response.content.decode()
    record.refresh_from_db()
    assert record.extra_labels == 1
    assert lease_next_record(project=project, annotator=newcomer).record_id == record.pk
    event = AuditEvent.objects.get(action="annotation.record.labels_requested")
    assert event.after == {"extra_labels": 1, "labels_needed": 2}


@pytest.mark.parametrize("persona", ["reviewer", "annotator", "author"])
def test_only_managers_act_on_records(cast: Cast, persona: str) -> None:
    records = make_records(cast.project, 1)

    response = bulk(cast, persona, "adjudicate", records)

    assert response.status_code == 403
    assert not Disagreement.objects.exists()


def test_records_of_another_project_are_left_alone(cast: Cast) -> None:
    elsewhere = RecordFactory(project=ProjectFactory())

    response = bulk(cast, "manager", "more_labels", [elsewhere], more=2)

    assert "Choose the records that need more labels." in response.content.decode()
    elsewhere.refresh_from_db()
    assert elsewhere.extra_labels == 0


def test_a_run_without_a_judge_is_refused_in_words(cast: Cast) -> None:
    records = make_records(cast.project, 1)

    response = bulk(cast, "manager", "judge", records)

    assert "Choose the judge to run." in response.content.decode()
    assert not JudgeRun.objects.exists()
