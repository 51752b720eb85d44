"""A database made when annotation and task authoring still lived in the curation app keeps
every row through the migrations that moved them (curation 0006 and the new apps' first)."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from annotation.models import Annotation, GuidelineVersion, Lease
from authoring.models import Review, RiskCategory, Task, TaskRevision
from curation.models import AuditEvent, Record
from releases.models import ReleaseTask
from tests.old_layouts import old_leaves

# The last migrations before the move, and the apps that did not exist then (nor review, which
# came later).
OLD_LAYOUT = [
    ("curation", "0005_record_filters_with_gold_label"),
    ("releases", "0001_initial"),
    ("annotation", None),
    ("authoring", None),
    ("review", None),
]


def _populate(apps) -> dict[str, int]:
    """One of everything the move touches, written through the models as they were then."""
    now = timezone.now()
    model = apps.get_model
    user = model("auth", "User").objects.create(username="old-hand")
    project = model("curation", "Project").objects.create(name="Before", slug="before")
    category = model("curation", "Category").objects.create(project=project, name="Finance")
    scenario = model("curation", "Scenario").objects.create(category=category, name="bank")
    risk_type = model("curation", "RiskType").objects.create(
        project=project, slug="financial-loss", name="Financial loss"
    )
    risk_category = model("curation", "RiskCategory").objects.create(
        project=project, slug="financial-harm", name="Financial harm"
    )
    task = model("curation", "Task").objects.create(
        project=project,
        author=user,
        external_id="t-1",
        sector="Finance",
        occupation="Accountant",
        prompt="Move the money.",
        risk_category=risk_category,
        state="approved",
    )
    revision = model("curation", "TaskRevision").objects.create(
        task=task, number=1, content={"prompt": "Move the money."}, created_by=user
    )
    model("curation", "Review").objects.create(
        task=task, revision=revision, reviewer=user, decision="approve"
    )
    record = model("curation", "Record").objects.create(
        project=project,
        external_id="r-1",
        category=category,
        scenario=scenario,
        source_path="Finance/bank.json",
        source_position=0,
        content_hash="0" * 64,
        raw='{"id": "r-1", "profile": "", "contents": []}',
        task=task,
    )
    guidelines = model("curation", "GuidelineVersion").objects.create(
        project=project, number=1, text="Label with care.", created_by=user
    )
    annotation = model("curation", "Annotation").objects.create(
        project=project,
        record=record,
        annotator=user,
        verdict="unsafe",
        guideline_version=guidelines,
    )
    annotation.risk_types.add(risk_type)
    model("curation", "Lease").objects.create(
        project=project, record=record, annotator=user, expires_at=now, opened_at=now
    )
    release = model("releases", "Release").objects.create(
        project=project, version="1.0.0", license="CC BY 4.0", label_basis="final"
    )
    model("releases", "ReleaseTask").objects.create(release=release, task=task, revision=revision)
    model("curation", "AuditEvent").objects.create(
        project=project,
        action="curation.task.created",
        object_type="curation.task",
        object_id=str(task.pk),
    )
    task_type = model("contenttypes", "ContentType").objects.get_or_create(
        app_label="curation", model="task"
    )[0]
    return {
        "task": task.pk,
        "record": record.pk,
        "annotation": annotation.pk,
        "task_type": task_type.pk,
    }


@pytest.mark.django_db(transaction=True)
def test_a_database_at_the_old_layout_keeps_every_row_and_its_history() -> None:
    # The content types made for this suite's fresh database are those of the new layout; an
    # old database has the old ones instead.
    ContentType.objects.filter(app_label__in=["annotation", "authoring"]).delete()
    executor = MigrationExecutor(connection)
    executor.migrate(OLD_LAYOUT)
    ids = _populate(executor.loader.project_state(old_leaves(executor, OLD_LAYOUT)).apps)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    task = Task.objects.get(pk=ids["task"])
    assert (task.external_id, task.state, task.risk_category.name) == (
        "t-1",
        "approved",
        "Financial harm",
    )
    assert TaskRevision.objects.get(task=task).number == 1
    assert Review.objects.get(task=task).decision == "approve"
    assert RiskCategory.objects.filter(project=task.project).count() == 1
    record = Record.objects.get(pk=ids["record"])
    assert record.task_link.task == task
    annotation = Annotation.objects.get(pk=ids["annotation"])
    assert (annotation.record, annotation.verdict) == (record, "unsafe")
    assert [risk.slug for risk in annotation.risk_types.all()] == ["financial-loss"]
    assert annotation.guideline_version == GuidelineVersion.objects.get(project=task.project)
    assert Lease.objects.get(record=record).annotator == annotation.annotator
    assert ReleaseTask.objects.get(task=task).revision.number == 1
    # The task's history is found under its new type, and the type kept its id (permissions
    # and the admin's log refer to it).
    assert AuditEvent.objects.get(object_id=str(task.pk)).object_type == Task._meta.label_lower
    assert ContentType.objects.get_for_model(Task).pk == ids["task_type"]
