"""Creating, building, publishing and deleting releases. Every change is audited.

A release's content is frozen when it is created and its files are built once; nothing about
that content can change afterwards. Managers may only say whether it is public; site
administrators alone may delete one.
"""

from __future__ import annotations

import logging
import re
import shutil
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import transaction

from curation.errors import Conflict, DomainError, NotAllowed
from curation.job_leases import job_lease
from curation.jobs import job_send
from curation.models import Project, Role
from curation.services.audit import audit_log
from releases.build import BUILD_TASK, build_files, mark_built, release_folder
from releases.freeze import ReleasePreview, release_freeze, release_preview
from releases.models import CURRENT_LAYOUT, LabelBasis, Release
from releases.pairs import DEFAULT_MIN_CHOSEN, DEFAULT_MIN_GAP, PairBy
from releases.scores import Sources, score_sources

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

# Semantic versioning 2.0.0, as semver.org gives it.
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def release_options(
    *,
    annotator_labels: bool = False,
    verdicts: bool = False,
    pairs_by: str = PairBy.SAFETY,
    min_gap: float = DEFAULT_MIN_GAP,
    min_chosen: float = DEFAULT_MIN_CHOSEN,
    leave_out_in_annotation: bool = True,
    scores: Sources | None = None,
) -> dict[str, Any]:
    """The options of a release, checked; `scores` are the score sources that score_sources
    checked (human consensus for both scales when not given)."""
    if pairs_by not in PairBy.values:
        raise DomainError(f"Preference pairs are made by {', '.join(PairBy.values)}.")
    if not 0 < min_gap <= 3 or not 0 <= min_chosen <= 3:
        raise DomainError("Scores are 0 to 3: the gap must be above 0, the minimum 0 to 3.")
    return {
        "annotator_labels": bool(annotator_labels),
        "verdicts": bool(verdicts),
        "leave_out_in_annotation": bool(leave_out_in_annotation),
        "dpo": {"by": pairs_by, "min_gap": min_gap, "min_chosen": min_chosen},
        **({"scores": scores} if scores is not None else {}),
    }


def release_create(
    *,
    actor: User,
    project: Project,
    version: str,
    notes: str = "",
    license: str = "",
    label_basis: str = LabelBasis.FINAL,
    public: bool = False,
    options: dict[str, Any] | None = None,
    allow_empty: bool = False,
) -> Release:
    """Freeze what goes into a new release of the project and have a worker build its files.

    A release that would hold no record and no task is refused, its version left free, unless
    `allow_empty` (for code that wants one on purpose: the tests of an empty project's pages)."""
    _check_manager(actor, project)
    version = version.strip()
    if not SEMVER.match(version):
        raise DomainError(
            f"“{version}” is not a semantic version: write MAJOR.MINOR.PATCH, such as 1.0.0."
        )
    license = (license or project.license).strip()
    if not license:
        raise DomainError("Say under which license the release is published.")
    if label_basis not in LabelBasis.values:
        raise DomainError(
            f"Choose the labels the release publishes: {', '.join(LabelBasis.values)}."
        )
    with transaction.atomic():
        # One creation at a time per project: versions stay unique and "previous" well defined.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        if project.releases.filter(version=version).exists():
            raise Conflict(f"Version {version} of this project exists already.")
        release = Release.objects.create(
            project=project,
            version=version,
            notes=notes.strip(),
            license=license,
            label_basis=label_basis,
            public=public,
            options={
                **(options if options is not None else release_options()),
                "layout": CURRENT_LAYOUT,
            },
            previous=project.releases.exclude(state=Release.State.FAILED)
            .order_by("-created_at", "-id")
            .first(),
            created_by=actor,
        )
        release.summary = release_freeze(release)
        if not (release.summary["records"] or release.summary["tasks"] or allow_empty):
            # Raised inside the transaction: nothing is kept and the version stays free.
            raise DomainError(
                f"Version {version} would hold no records and no approved tasks "
                f"({left_out_text(release.summary['excluded'])}): nothing was created. "
                "Change what the release takes, or wait for the labels it needs."
            )
        release.save(update_fields=["summary", "updated_at"])
        audit_log(
            actor=actor,
            action="releases.release.created",
            project=project,
            obj=release,
            after=_snapshot(release),
        )
        transaction.on_commit(lambda: _enqueue_build(release.pk))
    return release


def release_create_as_chosen(*, actor: User, project: Project, choices: dict[str, Any]) -> Release:
    """release_create with what a manager chose on the page or in the API, which name their
    fields alike: the release's own fields, and its options flat beside them."""
    return release_create(
        actor=actor,
        project=project,
        version=choices["version"],
        notes=choices["notes"],
        license=choices["license"],
        label_basis=choices["label_basis"],
        public=choices["public"],
        options=_options_as_chosen(project, choices),
    )


def release_preview_as_chosen(
    *, actor: User, project: Project, choices: dict[str, Any]
) -> ReleasePreview:
    """What a release made now with these choices would hold, and why the other records would
    be left out; nothing is written."""
    _check_manager(actor, project)
    if choices["label_basis"] not in LabelBasis.values:
        raise DomainError(
            f"Choose the labels the release publishes: {', '.join(LabelBasis.values)}."
        )
    unsaved = Release(
        project=project,
        label_basis=choices["label_basis"],
        options=_options_as_chosen(project, choices),
    )
    return release_preview(unsaved)


def left_out_text(excluded: dict[str, int]) -> str:
    """Why records are left out, as a sentence part: "991 still being annotated"."""
    if not excluded:
        return "the project has no records"
    return ", ".join(f"{count} {reason}" for reason, count in excluded.items())


def _options_as_chosen(project: Project, choices: dict[str, Any]) -> dict[str, Any]:
    return release_options(
        annotator_labels=choices["annotator_labels"],
        verdicts=choices["verdicts"],
        pairs_by=choices["pairs_by"],
        min_gap=choices["min_gap"],
        min_chosen=choices["min_chosen"],
        leave_out_in_annotation=choices["leave_out_in_annotation"],
        scores=score_sources(
            project,
            safety=choices["safety_scores"],
            helpfulness=choices["helpfulness_scores"],
        ),
    )


def _enqueue_build(release_id: int) -> None:
    job_send("releases.tasks.build_release", release_id)


def release_build(release_id: int) -> Release:
    """Build the release's files (the worker's job), holding the release's lease: a release
    built already, or being built by another worker, is left alone, so a job delivered twice
    builds once. A build whose worker died is sent again by a live worker (curation/job_leases.py)
    and starts again from nothing."""
    with job_lease(BUILD_TASK, release_id) as held:
        if not held:
            return Release.objects.get(pk=release_id)
        return _build_held(release_id)


def releases_unbuilt(before: datetime) -> list[int]:
    """Releases created before `before` that wait for a build or whose build has not ended."""
    unbuilt = Release.objects.filter(
        state__in=(Release.State.PENDING, Release.State.BUILDING), created_at__lt=before
    )
    return list(unbuilt.values_list("pk", flat=True))


def _build_held(release_id: int) -> Release:
    release = Release.objects.select_related("project", "previous").get(pk=release_id)
    if release.state == Release.State.BUILT:
        return release
    Release.objects.filter(pk=release.pk).update(state=Release.State.BUILDING)
    try:
        manifest = build_files(release)
    except Exception as error:
        logger.exception("Building release %s failed", release.pk)
        release.state = Release.State.FAILED
        release.error = f"The build failed: {type(error).__name__}. Nothing was published."
        release.save(update_fields=["state", "error", "updated_at"])
        raise
    mark_built(release, manifest)
    audit_log(
        actor=None,
        action="releases.release.built",
        project=release.project,
        obj=release,
        after={"files": manifest["files"]},
    )
    return release


def release_retry(*, actor: User, release: Release) -> Release:
    """Build again a release whose build failed or whose worker went away; its frozen content
    is unchanged, and a second build of it gives the same files."""
    _check_manager(actor, release.project)
    if release.state == Release.State.BUILT:
        raise Conflict("This release is built already; its files never change.")
    with transaction.atomic():
        release.state = Release.State.PENDING
        release.error = ""
        release.save(update_fields=["state", "error", "updated_at"])
        audit_log(
            actor=actor, action="releases.release.retried", project=release.project, obj=release
        )
        transaction.on_commit(lambda: _enqueue_build(release.pk))
    return release


def release_update(*, actor: User, release: Release, public: bool) -> Release:
    """Make the release public or private: the only thing about a release that may change."""
    _check_manager(actor, release.project)
    if public == release.public:
        return release
    with transaction.atomic():
        before = {"public": release.public}
        release.public = public
        release.save(update_fields=["public", "updated_at"])
        audit_log(
            actor=actor,
            action="releases.release.visibility_changed",
            project=release.project,
            obj=release,
            before=before,
            after={"public": release.public},
        )
    return release


def release_delete(*, actor: User, release: Release) -> None:
    """Delete a release and its files: site administrators only."""
    if not actor.is_superuser:
        raise NotAllowed("Only a site administrator can delete a release.")
    folder = release_folder(release)
    with transaction.atomic():
        audit_log(
            actor=actor,
            action="releases.release.deleted",
            project=release.project,
            obj=release,
            before=_snapshot(release),
        )
        # A later release that named this one as its previous keeps its own frozen changelog.
        release.delete()
        transaction.on_commit(lambda: shutil.rmtree(folder, ignore_errors=True))


def _check_manager(actor: User, project: Project) -> None:
    if actor.is_superuser:
        return
    if not project.memberships.filter(user=actor, role=Role.MANAGER).exists():
        raise NotAllowed("Only the project's managers manage its releases.")


def _snapshot(release: Release) -> dict[str, Any]:
    return {
        "version": release.version,
        "state": release.state,
        "label_basis": release.label_basis,
        "scores": release.options.get("scores"),
        "public": release.public,
        "summary": {
            key: release.summary.get(key) for key in ("records", "labels", "excluded", "tasks")
        },
        "manifest": release.manifest.get("files", []),
    }
