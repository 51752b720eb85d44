"""Labels: submitted from a lease, edited by their annotator with an optimistic lock.

Every label created or changed writes an audit event (before / after) and, once committed, sends
`curation.signals.annotation_saved`, which the judging app listens to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from curation.errors import Conflict
from curation.models import Annotation, GuidelineVersion, Lease, Project, Record, RiskType
from curation.models.base import SafetyLabel
from curation.services.audit import audit_log
from curation.services.queue import records_left_forget
from curation.signals import annotation_saved

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

SCORE_FIELDS = ("safety_score", "helpfulness_score")
# The foreign keys an annotation gets from rows the service has just read and locked: checking
# that they exist would cost a query each for nothing.
TRUSTED_KEYS = ["project", "record", "annotator", "guideline_version"]
LEASE_FIELDS = [field.name for field in Lease._meta.concrete_fields]
SUBMIT_RECORD_FIELDS = ["record__external_id", "record__source_format", "record__raw"]


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


def annotation_submit(*, lease: Lease, actor: AbstractBaseUser, label: Label) -> Annotation:
    """Turn the annotator's lease into their label of the record.

    A lease that expired is still accepted while the record has a free slot (the label takes
    it). A label the record has no room for is refused and kept as the lease's draft: the
    expired lease's record was filled by others meanwhile, or the project's overlap was lowered
    below the labels the record has (the live lease then ends, so the record is not offered
    again).
    """
    with transaction.atomic():
        lease = (
            Lease.objects.select_for_update(of=("self",))
            .select_related("project", "record")
            # Of the record, what a label needs: its turns (read from the raw source) and its id.
            .only(*LEASE_FIELDS, "project", *SUBMIT_RECORD_FIELDS)
            # The guidelines the label is made under, in the same query.
            .annotate(
                guidelines_id=Subquery(_latest_guidelines.values("id")[:1]),
                guidelines_number=Subquery(_latest_guidelines.values("number")[:1]),
            )
            .get(pk=lease.pk)
        )
        if lease.annotator_id != actor.pk:
            raise Conflict("This record is not yours to label.")
        if lease.state in (Lease.State.SUBMITTED, Lease.State.SKIPPED):
            raise Conflict(f"You have already {lease.state} this record.")
        _check(lease.project, lease.record, label)
        if _slot_for_label(lease):
            return _annotation_create(lease, actor, label)
        _label_refused(lease, label)
    raise Conflict(
        "This record has all the labels it needs now: your lease on it expired and other "
        "annotators took its places, or the project now asks for fewer labels per record. Your "
        "label was not saved; it is kept as a draft in case a place frees up."
    )


# The project's newest guidelines, for a lease's query (see annotation_submit).
_latest_guidelines = GuidelineVersion.objects.filter(project=OuterRef("project")).order_by(
    "-number"
)


def _slot_for_label(lease: Lease) -> bool:
    """Move the record's counts from the lease to a label, if the record has room for it: a live
    lease holds a slot, unless k was lowered below the record's labels since; an expired lease
    needs a free one."""
    records = Record.objects.filter(pk=lease.record_id)
    overlap = lease.project.overlap
    if lease.state == Lease.State.ACTIVE:
        return bool(
            records.filter(annotation_count__lt=overlap).update(
                lease_count=F("lease_count") - 1, annotation_count=F("annotation_count") + 1
            )
        )
    free = records.alias(taken=F("annotation_count") + F("lease_count")).filter(taken__lt=overlap)
    return bool(free.update(annotation_count=F("annotation_count") + 1))


def _label_refused(lease: Lease, label: Label) -> None:
    """Keep the refused label as the lease's draft; a live lease ends, freeing its slot."""
    lease.draft = label.as_draft()
    if lease.state == Lease.State.ACTIVE:
        Record.objects.filter(pk=lease.record_id).update(lease_count=F("lease_count") - 1)
        lease.state = Lease.State.EXPIRED
    lease.save(update_fields=["draft", "state", "updated_at"])


def _annotation_create(lease: Lease, actor: AbstractBaseUser, label: Label) -> Annotation:
    project = lease.project
    # Time with the record open, capped at the lease time: a tab left open overnight is not
    # a night's work.
    spent = min(timezone.now() - lease.opened_at, timedelta(minutes=project.lease_minutes))
    guidelines = None
    if lease.guidelines_id is not None:
        guidelines = GuidelineVersion(
            id=lease.guidelines_id, project=project, number=lease.guidelines_number
        )
    annotation = Annotation(
        project=project,
        record=lease.record,
        annotator=actor,
        guideline_version=guidelines,
        time_spent_ms=max(0, int(spent.total_seconds() * 1000)),
    )
    _apply(annotation, label)
    if label.risk_types:
        annotation.risk_types.add(*label.risk_types)
    lease.state = Lease.State.SUBMITTED
    lease.save(update_fields=["state", "updated_at"])
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
    *, annotation: Annotation, actor: AbstractBaseUser, label: Label, version: int
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
    annotation.verdict = label.verdict
    annotation.risk_description = label.risk_description.strip()
    annotation.safety_score = label.safety_score
    annotation.helpfulness_score = label.helpfulness_score
    annotation.evidence_turns = sorted(set(label.evidence_turns))
    # Uniqueness and the score checks are the database's to enforce (label_errors has checked
    # the scores already); the foreign keys come from locked rows.
    annotation.full_clean(exclude=TRUSTED_KEYS, validate_unique=False, validate_constraints=False)
    annotation.save()


def _announce(annotation: Annotation, *, created: bool) -> None:
    transaction.on_commit(
        lambda: annotation_saved.send_robust(
            sender=Annotation, annotation=annotation, created=created
        )
    )
