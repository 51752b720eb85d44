"""A folder given to the client is imported whole: the R-Judge data folder, zipped on the way,
keeps its categories."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio_client import Progress
from tests.client.conftest import Connect
from tests.conftest import Cast

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_rjudge_data_folder_is_imported_whole_with_its_categories(
    cast: Cast, connect: Connect, rjudge_dir: Path, celery_worker: None
) -> None:
    seen: list[Progress] = []

    batch = connect(cast.manager).import_file(
        "agent-safety", rjudge_dir, on_progress=seen.append, poll_interval=0.5
    )

    assert batch["source_name"] == "data.zip"
    assert (batch["state"], batch["created_count"]) == ("succeeded", 571)
    assert batch["category_counts"] == {
        "Application": 252,
        "Finance": 126,
        "IoT": 30,
        "Program": 128,
        "Web": 35,
    }
    sent = [progress.done for progress in seen if progress.state == "uploading"]
    assert sent == sorted(sent) and sent[-1] == seen[0].total
    assert seen[-1].state == "succeeded"
