"""Building a release's files from its frozen content, and checking them against the manifest.

The files are written into a folder of their own beside the final one and moved into place only
when all of them and the manifest are complete, so a release is never seen half built. Progress
goes to the cache, where the page and the API read it while the worker's transaction runs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from curation.job_leases import job_liveness
from releases.card import dataset_card
from releases.models import Release
from releases.pairs import DPO_JSONL, PairTexts, write_pairs
from releases.record_files import write_record_files
from releases.safepro_file import (
    SAFEPRO_JSON,
    SAFEPRO_ZIP,
    has_reference_files,
    write_safepro,
    write_safepro_zip,
)
from releases.trl_file import TRL_JSONL

MANIFEST = "manifest.json"
CARD = "README.md"
HASH_BLOCK = 1024 * 1024
PROGRESS_SECONDS = 24 * 3600
# The task that builds a release, whose lease the build holds (curation/job_leases.py).
BUILD_TASK = "releases.tasks.build_release"


@dataclass(frozen=True)
class BuildProgress:
    started: bool
    step: str = ""
    records: int = 0
    total: int = 0
    # A worker building it died: another builds it again from the start when one is free.
    stopped: bool = False
    # The build runs again after a worker building it died.
    resumed: bool = False

    @property
    def percent(self) -> int:
        return int(100 * self.records / self.total) if self.total else 0


def _progress_key(release_id: int) -> str:
    return f"release:progress:{release_id}"


def build_progress(release: Release) -> BuildProgress:
    liveness = job_liveness(BUILD_TASK, release.pk)
    if liveness.stopped:
        # Never the figures the dead worker left: the build starts again from nothing.
        return BuildProgress(started=False, stopped=True)
    values = cache.get(_progress_key(release.pk))
    if not values:
        return BuildProgress(started=False)
    return BuildProgress(started=True, resumed=liveness.resumed, **values)


def _report(release: Release, step: str, records: int = 0) -> None:
    total = release.summary.get("records", 0)
    cache.set(
        _progress_key(release.pk),
        {"step": step, "records": records, "total": total},
        PROGRESS_SECONDS,
    )


def release_folder(release: Release) -> Path:
    """Where a built release's files live: outside the web root, under MEDIA_ROOT."""
    return Path(settings.MEDIA_ROOT) / "releases" / str(release.project_id) / str(release.pk)


def release_file_path(release: Release, name: str) -> Path | None:
    """The path of one of the release's files, if the manifest lists it."""
    if name != MANIFEST and name not in manifest_names(release):
        return None
    return release_folder(release) / name


def manifest_names(release: Release) -> list[str]:
    return [entry["name"] for entry in release.manifest.get("files", [])]


def build_files(release: Release) -> dict[str, Any]:
    """Write every file of the release; return its manifest. Building the same frozen release
    again gives the same bytes."""
    final = release_folder(release)
    # The build holds the release's lease: folders of other builds are those of dead workers.
    for abandoned in final.parent.glob(f"{final.name}.partial-*"):
        shutil.rmtree(abandoned, ignore_errors=True)
    # A folder of this build's own: a job delivered twice may build twice at once, harmlessly.
    partial = final.with_name(f"{final.name}.partial-{uuid.uuid4().hex}")
    partial.mkdir(parents=True)
    try:
        return _build_into(release, partial, final)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _build_into(release: Release, partial: Path, final: Path) -> dict[str, Any]:
    _report(release, "Records")
    with PairTexts() as pair_texts:
        names = write_record_files(
            release, partial, pair_texts, lambda n: _report(release, "Records", n)
        )
        _report(release, "Tasks and preference pairs", release.summary.get("records", 0))
        with (
            open(partial / DPO_JSONL, "wb") as stream,
            open(partial / TRL_JSONL, "wb") as conversational,
        ):
            pairs, trl_pairs = write_pairs(release, stream, conversational, pair_texts)
    if release.summary.get("tasks"):
        with open(partial / SAFEPRO_JSON, "wb") as stream:
            write_safepro(release, stream)
        names.append(SAFEPRO_JSON)
        if has_reference_files(release):
            with open(partial / SAFEPRO_ZIP, "wb") as stream:
                write_safepro_zip(release, stream)
            names.append(SAFEPRO_ZIP)
    for name, written in ((DPO_JSONL, pairs), (TRL_JSONL, trl_pairs)):
        if written:
            names.append(name)
        else:
            (partial / name).unlink()
    _report(release, "Dataset card and manifest", release.summary.get("records", 0))
    names.append(CARD)
    (partial / CARD).write_text(dataset_card(release, sorted(names)), encoding="utf-8")
    manifest = {
        "release": release.version,
        "files": [_entry(partial / name) for name in sorted(names)],
    }
    (partial / MANIFEST).write_bytes(_manifest_bytes(manifest))
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return manifest


def _manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return json.dumps(manifest, indent=2, sort_keys=True).encode() + b"\n"


def _entry(path: Path) -> dict[str, Any]:
    return {"name": path.name, "size": path.stat().st_size, "sha256": file_sha256(path)}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def release_check(release: Release) -> list[str]:
    """What is wrong with the release's files against its manifest; empty if nothing is.

    The manifest on disk must be the one recorded at build time, and every file it lists must
    have its size and SHA-256; a file that is missing, changed or added is reported.
    """
    folder = release_folder(release)
    problems = []
    manifest_path = folder / MANIFEST
    if not manifest_path.exists():
        return [f"{MANIFEST} is missing."]
    if manifest_path.read_bytes() != _manifest_bytes(release.manifest):
        problems.append(f"{MANIFEST} differs from the manifest recorded when it was built.")
    expected = {entry["name"]: entry for entry in release.manifest.get("files", [])}
    for name, entry in expected.items():
        path = folder / name
        if not path.exists():
            problems.append(f"{name} is missing.")
        elif path.stat().st_size != entry["size"] or file_sha256(path) != entry["sha256"]:
            problems.append(f"{name} does not match its size and SHA-256 in the manifest.")
    for path in sorted(folder.iterdir()):
        if path.name not in expected and path.name != MANIFEST:
            problems.append(f"{path.name} is not in the manifest.")
    return problems


def mark_built(release: Release, manifest: dict[str, Any]) -> None:
    release.manifest = manifest
    release.state = Release.State.BUILT
    release.built_at = timezone.now()
    release.error = ""
    release.save(update_fields=["manifest", "state", "built_at", "error", "updated_at"])
    cache.delete(_progress_key(release.pk))
