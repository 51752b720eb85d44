"""The approved tasks of a release in the SafePro layout, from the revisions that were approved.

The layout is the project export's (authoring/exporters/safepro.py); the content is the frozen
revision, so a task edited after the release does not change it.
"""

from __future__ import annotations

import json
from typing import IO

from authoring.exporters.safepro import safepro_entry
from authoring.importers.safepro import group_key
from releases.models import Release

SAFEPRO_JSON = "safepro.json"


def write_safepro(release: Release, stream: IO[bytes]) -> None:
    document: dict[str, list[dict]] = {}
    rows = release.tasks.order_by("task_id").values_list("task__external_id", "revision__content")
    for external_id, content in rows:
        key = group_key(content["sector"], content["occupation"])
        document.setdefault(key, []).append(safepro_entry(external_id, content))
    stream.write(json.dumps(document, indent=2, ensure_ascii=False).encode())
