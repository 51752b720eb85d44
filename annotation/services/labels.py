"""Labels: submitted from a lease, edited by their annotator with an optimistic lock.

Every label created or changed writes an audit event (before / after) and sends
`annotation.signals.annotation_saved`, which the review app listens to, in its transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypedDict, cast

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import F, Field, Model
from django.utils import timezone

from annotation.models import Annotation, GuidelineVersion, Lease
from annotation.services.queue import records_left_forget
from annotation.services.rows import instance_from_row
from annotation.signals import annotation_saved
from curation.choices import SafetyLabel
from curation.errors import Conflict
from curation.models import Project, Record, RiskType
from curation.services.audit import audit_log

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_stubs_ext import WithAnnotations

SCORE_FIELDS = ("safety_score", "helpfulness_score")
# The foreign keys an annotation gets from rows the service has just read and locked: checking
# that they exist would cost a query each for nothing.
TRUSTED_KEYS = ["project", "record", "annotator", "guideline_version"]


@dataclass(frozen=True)
class Label:
    """What an annotator says about a record, as forms and serializers hand it to services."""

    verdict: str
    risk_types: tuple[RiskType, ...] = ()
    risk_description: str = ""
    safety_score: int | None = None
    helpfulness_score: int | None = None
    # Turn numbers, 1..n as the labelling page numbers them.
    evidence_turns: tuple[int, ...] = ()

    def as_draft(self) -> dict[str, Any]:
        """The label in the shape of the labelling form's data, as drafts are kept."""
        return {
            "verdict": self.verdict,
            "risk_types": [risk_type.slug for risk_type in self.risk_types],
            "risk_description": self.risk_description,
            "safety_score": "" if self.safety_score is None else str(self.safety_score),
            "helpfulness_score": ""
            if self.helpfulness_score is None
            else str(self.helpfulness_score),
            "evidence_turns": [str(number) for number in self.evidence_turns],
        }


def label_errors(*, project: Project, label: Label, turn_count: int) -> dict[str, str]:
    """What is wrong with `label` for a record of `turn_count` turns in `project`, by field.

    The one place for the rules: the labelling form, the API and the services all ask it.
    """
    errors: dict[str, str] = {}
    if label.verdict not in SafetyLabel.values:
        errors["verdict"] = "Choose safe, unsafe or unsure."
    unasked = {
        "risk_types": not project.ask_risk_types and label.risk_types,
        "risk_description": not project.ask_risk_description and label.risk_description,
        "safety_score": not project.ask_safety_score and label.safety_score is not None,
        "helpfulness_score": not project.ask_helpfulness_score
        and label.helpfulness_score is not None,
        "evidence_turns": not project.ask_evidence_turns and label.evidence_turns,
    }
    errors.update(
        {name: "This project does not ask for it." for name, given in unasked.items() if given}
    )
    if any(risk_type.project_id != project.pk for risk_type in label.risk_types):
        errors["risk_types"] = "Choose risk types of this project."
    if (
        project.ask_risk_description
        and label.verdict == SafetyLabel.UNSAFE
        and not label.risk_description.strip()
    ):
        errors["risk_description"] = "Describe the risk: you labelled the record unsafe."
    for name in SCORE_FIELDS:
        score = getattr(label, name)
        if getattr(project, f"ask_{name}") and score is None:
            errors[name] = "Give a score from 0 to 3."
        elif score is not None and not 0 <= score <= 3:
            errors[name] = "Scores go from 0 to 3."
    if any(not 1 <= number <= turn_count for number in label.evidence_turns):
        errors["evidence_turns"] = f"Evidence turns are numbered 1 to {turn_count}."
    return errors


def annotation_submit(*, lease: Lease, actor: User, label: Label) -> Annotation:
    """Turn the annotator's lease into their label of the record.

    A lease that expired is still accepted while the record has a free slot (the label takes
    it). A label the record has no room for is refused and kept as the lease's draft: the
    expired lease's record was filled by others meanwhile, or the project's overlap was lowered
    below the labels the record has (the live lease then ends, so the record is not offered
    again).
    """
    with transaction.atomic():
        lease = _lease_to_submit(lease.pk)
        if lease.annotator_id != actor.pk:
            raise Conflict("This record is not yours to label.")
        if lease.state in (Lease.State.SUBMITTED, Lease.State.SKIPPED):
            raise Conflict(f"You have already {lease.state} this record.")
        _check(lease.project, lease.record, label)
        if _slot_for_label(lease, label.verdict):
            return _annotation_create(lease, actor, label)
        _label_refused(lease, label)
    raise Conflict(
        "This record has all the labels it needs now: your lease on it expired and other "
        "annotators took its places, or the project now asks for fewer labels per record. Your "
        "label was not saved; it is kept as a draft in case a place frees up."
    )


# The record's column that counts a verdict's votes ("unsure" has none: the rest of the labels).
VOTE_COLUMNS: dict[str, str] = {SafetyLabel.SAFE: "safe_votes", SafetyLabel.UNSAFE: "unsafe_votes"}


def _slot_for_label(lease: Lease, verdict: str) -> bool:
    """Move the record's counts from the lease to a label, with its vote, if the record has
    room for it (k and the extra labels asked of it): a live lease holds a slot, unless k was
    lowered below the record's labels since; an expired lease needs a free one."""
    if lease.state == Lease.State.ACTIVE:
        statement = (
            "UPDATE curation_record SET lease_count = lease_count - 1, "
            "annotation_count = annotation_count + 1, "
            "safe_votes = safe_votes + CASE WHEN %s = 'safe' THEN 1 ELSE 0 END, "
            "unsafe_votes = unsafe_votes + CASE WHEN %s = 'unsafe' THEN 1 ELSE 0 END "
            "WHERE id = %s AND annotation_count - extra_labels < %s"
        )
    else:
        statement = (
            "UPDATE curation_record SET annotation_count = annotation_count + 1, "
            "safe_votes = safe_votes + CASE WHEN %s = 'safe' THEN 1 ELSE 0 END, "
            "unsafe_votes = unsafe_votes + CASE WHEN %s = 'unsafe' THEN 1 ELSE 0 END "
            "WHERE id = %s AND annotation_count + lease_count - extra_labels < %s"
        )
    with connection.cursor() as cursor:
        cursor.execute(statement, [verdict, verdict, lease.record_id, lease.project.overlap])
        return cursor.rowcount == 1


def _votes_move(record_id: int, before: str, after: str) -> None:
    """Move the record's vote counts when an edit changes a label's verdict."""
    moves = {VOTE_COLUMNS.get(before): -1, VOTE_COLUMNS.get(after): 1}
    changes = {column: F(column) + step for column, step in moves.items() if column}
    if before != after and changes:
        Record.objects.filter(pk=record_id).update(**changes)


def _label_refused(lease: Lease, label: Label) -> None:
    """Keep the refused label as the lease's draft; a live lease ends, freeing its slot."""
    lease.draft = label.as_draft()
    if lease.state == Lease.State.ACTIVE:
        Record.objects.filter(pk=lease.record_id).update(lease_count=F("lease_count") - 1)
        lease.state = Lease.State.EXPIRED
    lease.save(update_fields=["draft", "state", "updated_at"])


def _annotation_create(
    lease: WithAnnotations[Lease, _SubmitColumns], actor: User, label: Label
) -> Annotation:
    project = lease.project
    # Time with the record open, capped at the lease time: a tab left open overnight is not
    # a night's work.
    spent = min(timezone.now() - lease.opened_at, timedelta(minutes=project.lease_minutes))
    annotation = Annotation(
        project=project,
        record=lease.record,
        annotator=actor,
        guideline_version=lease.guidelines,
        time_spent_ms=max(0, int(spent.total_seconds() * 1000)),
    )
    _apply(annotation, label)
    _annotation_insert(annotation, label.risk_types)
    lease.state = Lease.State.SUBMITTED
    lease.updated_at = annotation.created_at
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE curation_lease SET state = %s, updated_at = %s WHERE id = %s",
            [lease.state, _db_value(lease, Lease._meta.get_field("updated_at")), lease.pk],
        )
    records_left_forget(project_id=project.pk, annotator_id=actor.pk)
    audit_log(
        actor=actor,
        action="curation.annotation.created",
        project=project,
        obj=annotation,
        after=annotation_snapshot(annotation, label.risk_types),
    )
    _announce(annotation, created=True)
    return annotation


def annotation_update(
    *, annotation: Annotation, actor: User, label: Label, version: int
) -> Annotation:
    """Change the annotator's label, made from the copy at `version`.

    An edit from a stale copy (the label changed since, in another tab or through the API) is
    refused rather than overwriting the newer label.
    """
    with transaction.atomic():
        current = (
            Annotation.objects.select_for_update(of=("self",))
            .select_related("project", "record", "annotator", "guideline_version")
            .get(pk=annotation.pk)
        )
        if current.annotator_id != actor.pk:
            raise Conflict("This label is not yours to edit.")
        if current.version != version:
            raise Conflict(
                f"This label changed after you opened it (you edited version {version}; it is "
                f"now version {current.version}). Your changes were not saved, so as not to "
                "overwrite the newer label, which is shown now: edit that one if needed."
            )
        _check(current.project, current.record, label)
        before = annotation_snapshot(current, current.risk_types.all())
        current.version += 1
        current.guideline_version = latest_guideline_version(current.project)
        _apply(current, label)
        current.save()
        _votes_move(current.record_id, before["verdict"], current.verdict)
        current.risk_types.set(label.risk_types)
        audit_log(
            actor=actor,
            action="curation.annotation.updated",
            project=current.project,
            obj=current,
            before=before,
            after=annotation_snapshot(current, label.risk_types),
        )
        _announce(current, created=False)
    return current


def latest_guideline_version(project: Project) -> GuidelineVersion | None:
    return GuidelineVersion.objects.filter(project=project).order_by("-number").first()


def annotation_snapshot(
    annotation: Annotation, risk_types: Sequence[RiskType] | Any
) -> dict[str, Any]:
    """The label as the audit log keeps it."""
    guideline_version = annotation.guideline_version
    return {
        "record": annotation.record.external_id,
        "verdict": annotation.verdict,
        "risk_types": sorted(risk_type.slug for risk_type in risk_types),
        "risk_description": annotation.risk_description,
        "safety_score": annotation.safety_score,
        "helpfulness_score": annotation.helpfulness_score,
        "evidence_turns": annotation.evidence_turns,
        "guideline_version": guideline_version.number if guideline_version else None,
        "version": annotation.version,
    }


def _check(project: Project, record: Record, label: Label) -> None:
    errors = label_errors(project=project, label=label, turn_count=len(record.turns))
    if errors:
        raise ValidationError(errors)


def _apply(annotation: Annotation, label: Label) -> None:
    """Set the label on the annotation and check it; the caller saves it."""
    annotation.verdict = label.verdict
    annotation.risk_description = label.risk_description.strip()
    annotation.safety_score = label.safety_score
    annotation.helpfulness_score = label.helpfulness_score
    annotation.evidence_turns = sorted(set(label.evidence_turns))
    # Uniqueness and the score checks are the database's to enforce (label_errors has checked
    # the scores already); the foreign keys come from locked rows.
    annotation.full_clean(exclude=TRUSTED_KEYS, validate_unique=False, validate_constraints=False)


def _announce(annotation: Annotation, *, created: bool) -> None:
    # In the label's transaction (see annotation.signals).
    annotation_saved.send(sender=Annotation, annotation=annotation, created=created)


# A submit is the annotators' most frequent request. Its reads and writes are plain SQL, in the
# same few statements the ORM would send: building those through the ORM took two thirds of a
# label's time (see docs/benchmarks.md, Annotation). The SQL runs on PostgreSQL and SQLite.

# The lease, locked, with what a label needs: the project's settings, the record's turns (read
# from its raw source) and id, and the project's newest guidelines.
LEASE_TO_SUBMIT = """
SELECT lease.*,
    project.overlap AS project__overlap,
    project.lease_minutes AS project__lease_minutes,
    project.ask_risk_types AS project__ask_risk_types,
    project.ask_risk_description AS project__ask_risk_description,
    project.ask_safety_score AS project__ask_safety_score,
    project.ask_helpfulness_score AS project__ask_helpfulness_score,
    project.ask_evidence_turns AS project__ask_evidence_turns,
    record.external_id AS record__external_id,
    record.source_format AS record__source_format,
    record.raw AS record__raw,
    guidelines.id AS guidelines__id,
    guidelines.number AS guidelines__number
FROM curation_lease lease
JOIN curation_project project ON project.id = lease.project_id
JOIN curation_record record ON record.id = lease.record_id
LEFT JOIN curation_guidelineversion guidelines ON guidelines.id = (
    SELECT latest.id FROM curation_guidelineversion latest
    WHERE latest.project_id = lease.project_id ORDER BY latest.number DESC LIMIT 1
)
WHERE lease.id = %s
"""


class _SubmitColumns(TypedDict):
    """What LEASE_TO_SUBMIT's lease has besides its own columns, and the guidelines made of them
    (its project's and record's become the instances the lease's foreign keys hold)."""

    guidelines__id: int | None
    guidelines: GuidelineVersion | None


def _lease_to_submit(lease_id: int) -> WithAnnotations[Lease, _SubmitColumns]:
    """The lease, locked until the transaction ends, with its project, record and guidelines
    (None if the project has none) as far as a label needs them."""
    statement = LEASE_TO_SUBMIT
    if connection.features.has_select_for_update_of:
        statement += "FOR UPDATE OF lease"
    found = list(Lease.objects.raw(statement, [lease_id]))
    if not found:
        raise Lease.DoesNotExist(f"No lease {lease_id}")
    lease = cast("WithAnnotations[Lease, _SubmitColumns]", found[0])
    lease.project = instance_from_row(Project, lease, "project", id=lease.project_id)
    lease.record = instance_from_row(Record, lease, "record", id=lease.record_id)
    lease.guidelines = None
    if lease.guidelines__id is not None:
        lease.guidelines = instance_from_row(
            GuidelineVersion, lease, "guidelines", project_id=lease.project_id
        )
    return lease


def _annotation_insert(annotation: Annotation, risk_types: Sequence[RiskType]) -> None:
    """Insert the annotation, as `annotation.save()` would, and its risk types."""
    annotation.created_at = annotation.updated_at = timezone.now()
    # Every concrete field has a column; the stubs allow a field none.
    values = {
        field.column: _db_value(annotation, field)
        for field in Annotation._meta.concrete_fields
        if not field.primary_key and field.column
    }
    columns = ", ".join(values)
    placeholders = ", ".join(["%s"] * len(values))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO curation_annotation ({columns}) VALUES ({placeholders}) RETURNING id",  # noqa: S608 (the model's columns)
            list(values.values()),
        )
        (annotation.pk,) = cursor.fetchone()
        if risk_types:
            cursor.executemany(
                "INSERT INTO curation_annotation_risk_types (annotation_id, risktype_id) "
                "VALUES (%s, %s)",
                [(annotation.pk, risk_type.pk) for risk_type in risk_types],
            )
    # Saved: what save() records on the instance.
    annotation._state.adding = False
    annotation._state.db = connection.alias


def _db_value(instance: Model, field: Field[Any, Any]) -> Any:
    """The field's value as the field hands it to the database (JSON encoded, times adapted)."""
    return field.get_db_prep_save(getattr(instance, field.attname), connection)
