"""Releases: made, built by a worker, made public, and their files downloaded and checked."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any, cast
from urllib.parse import quote

from studio_client import jobs
from studio_client.errors import DownloadCorrupted, StudioError
from studio_client.http import Http, path_of
from studio_client.jobs import ProgressCallback
from studio_client.types import LabelBasis, Release


class ReleasesApi:
    http: Http

    def create_release(
        self,
        project: str,
        version: str,
        *,
        license: str = "",
        notes: str = "",
        label_basis: LabelBasis = "final",
        public: bool = False,
        **options: Any,
    ) -> Release:
        """Freeze the project's records and labels as a release (managers), which a worker
        then builds into files. `license` defaults to the project's (one of them must say);
        `options` are the schema's other fields (annotator_labels, verdicts, safety_scores,
        ...). Sent once."""
        body = {
            "version": version,
            "license": license,
            "notes": notes,
            "label_basis": label_basis,
            "public": public,
        }
        response = self.http.send(
            "POST", path_of("projects", project, "releases"), json={**body, **options}
        )
        return cast(Release, response.json())

    def release(self, project: str, release_id: int) -> Release:
        return cast(Release, self.http.get(path_of("projects", project, "releases", release_id)))

    def releases(self, project: str) -> Iterator[Release]:
        return self.http.pages(path_of("projects", project, "releases"))

    def publish_release(self, project: str, release_id: int, *, public: bool = True) -> Release:
        path = path_of("projects", project, "releases", release_id)
        return cast(Release, self.http.send("PATCH", path, json={"public": public}).json())

    def wait_for_release(
        self,
        project: str,
        release_id: int,
        *,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 1.0,
        timeout: float | None = None,
    ) -> Release:
        """The release once built; raises JobFailed if its build failed."""
        return cast(
            Release,
            jobs.wait(
                jobs.RELEASE,
                lambda: self.release(project, release_id),
                on_progress=on_progress,
                poll_interval=poll_interval,
                timeout=timeout,
            ),
        )

    def download_release(
        self, project: str, release_id: int, folder: str | os.PathLike[str]
    ) -> list[Path]:
        """Download a built release's files into `folder`, each checked against the size and
        SHA-256 its release lists; returns their paths. A file that does not match is not
        kept (DownloadCorrupted)."""
        release = self.release(project, release_id)
        if release["state"] != "built":
            raise StudioError(f"The release {release['version']} is {release['state']}, not built.")
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        return [self._download(project, release_id, entry, target) for entry in release["files"]]

    def _download(self, project: str, release_id: int, entry: Any, folder: Path) -> Path:
        name = entry["name"]
        # The name becomes a file here: a plain name, never a path out of the folder.
        if PurePath(name).name != name or name in {".", ".."}:
            raise StudioError(f"The release lists a file named {name!r}, which is not a file name.")
        path = path_of("projects", project, "releases", release_id, "files") + quote(name, safe="")
        partial = folder / f".{name}.part"
        digest, size = hashlib.sha256(), 0
        response = self.http.stream_read(path)
        try:
            with partial.open("wb") as out:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
        finally:
            response.close()
        expected = (entry.get("size", size), entry.get("sha256", digest.hexdigest()))
        if (size, digest.hexdigest()) != expected:
            partial.unlink()
            raise DownloadCorrupted(
                f"{name}: {size} bytes of SHA-256 {digest.hexdigest()}, but the release lists "
                f"{expected[0]} bytes of SHA-256 {expected[1]}"
            )
        return partial.replace(folder / name)
