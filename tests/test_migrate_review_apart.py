"""A database made when disagreements and adjudications were judging's, and a record named its
SafePro task itself, keeps every row and its history through the migrations that moved them
(judging 0011 and review 0001; curation 0019 and authoring 0003)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from authoring.models import RecordTask, Task
from curation.models import AuditEvent, Record
from review.models import Adjudication, Disagreement, PendingCheck
from review.selectors import final_labels
from tests.old_layouts import old_leaves

# The last migrations before the move, and the app that did not exist then.
OLD_LAYOUT = [
    ("judging", "0010_merge_versions_workers_scores_and_record_list"),
    ("curation", "0018_record_filters_by_category_with_label_counts"),
    ("authoring", "0002_task_imports"),
    ("review", None),
]


def _populate(apps) -> dict[str, int]:
    """One of everything the move touches, written through the models as they were then."""
    model = apps.get_model
    user = model("auth", "User").objects.create(username="old-hand")
    project = model("curation", "Project").objects.create(name="Before", slug="before")
    category = model("curation", "Category").objects.create(project=project, name="Finance")
    scenario = model("curation", "Scenario").objects.create(category=category, name="bank")
    task = model("authoring", "Task").objects.create(
        project=project, author=user, external_id="t-1", sector="Finance", prompt="Pay."
    )
    records = [
        model("curation", "Record").objects.create(
            project=project,
            external_id=f"r-{number}",
            category=category,
            scenario=scenario,
            source_path="Finance/bank.json",
            source_position=number,
            content_hash=f"{number}" * 64,
            raw="{}",
            task=task if number == 1 else None,
        )
        for number in (1, 2)
    ]
    disagreement = model("judging", "Disagreement").objects.create(
        project=project,
        record=records[0],
        kind="annotators_split",
        labels=[{"source": "annotator", "name": "a", "label": "safe"}],
        weight=2,
    )
    adjudication = model("judging", "Adjudication").objects.create(
        project=project, record=records[0], label="unsafe", reason="It pays.", reviewer=user
    )
    model("judging", "PendingCheck").objects.create(
        record=records[1], project=project, marked_at=timezone.now()
    )
    model("curation", "AuditEvent").objects.create(
        project=project,
        action="judging.adjudication.created",
        object_type="judging.adjudication",
        object_id=str(adjudication.pk),
    )
    adjudication_type = model("contenttypes", "ContentType").objects.get_or_create(
        app_label="judging", model="adjudication"
    )[0]
    model("auth", "Permission").objects.create(
        content_type=adjudication_type, codename="settle_by_hand", name="Can settle by hand"
    )
    return {
        "task": task.pk,
        "linked": records[0].pk,
        "unlinked": records[1].pk,
        "disagreement": disagreement.pk,
        "adjudication": adjudication.pk,
        "adjudication_type": adjudication_type.pk,
    }


@pytest.mark.django_db(transaction=True)
def test_a_database_of_judgings_review_keeps_every_row_and_its_history() -> None:
    # The content types made for this suite's fresh database are those of the new layout; an
    # old database has the old ones instead.
    ContentType.objects.filter(app_label="review").delete()
    executor = MigrationExecutor(connection)
    executor.migrate(OLD_LAYOUT)
    ids = _populate(executor.loader.project_state(old_leaves(executor, OLD_LAYOUT)).apps)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    disagreement = Disagreement.objects.get(pk=ids["disagreement"])
    assert (disagreement.kind, disagreement.weight, disagreement.labels) == (
        "annotators_split",
        2,
        [{"source": "annotator", "name": "a", "label": "safe"}],
    )
    adjudication = Adjudication.objects.get(pk=ids["adjudication"])
    assert (adjudication.record_id, adjudication.label) == (ids["linked"], "unsafe")
    assert final_labels(adjudication.project) == {ids["linked"]: ("unsafe", "adjudicated")}
    assert list(PendingCheck.objects.values_list("record_id", flat=True)) == [ids["unlinked"]]
    # The adjudication's history is found under its new type, and the type kept its id and
    # its permissions.
    event = AuditEvent.objects.get(object_id=str(adjudication.pk))
    assert event.object_type == Adjudication._meta.label_lower == "review.adjudication"
    assert ContentType.objects.get_for_model(Adjudication).pk == ids["adjudication_type"]
    assert Permission.objects.filter(
        content_type_id=ids["adjudication_type"], codename="settle_by_hand"
    ).exists()
    # The record's task link is authoring's now, and still there.
    task = Task.objects.get(pk=ids["task"])
    assert Record.objects.get(pk=ids["linked"]).task_link.task == task
    assert RecordTask.objects.get(pk=ids["unlinked"]).task is None
    assert list(task.record_links.values_list("pk", flat=True)) == [ids["linked"]]
    # A task deleted leaves its agent runs as records of no task, as the link always did.
    task.delete()
    assert Record.objects.get(pk=ids["linked"]).task_link.task is None
