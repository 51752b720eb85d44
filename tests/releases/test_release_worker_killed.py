"""A real worker killed (kill -9) in the middle of a release build, on both stacks: a fresh worker
builds it within a minute, with exactly the files of its manifest and nothing left of the dead
build; meanwhile the page says the worker stopped, then that the build resumed, never the
figures of the dead worker."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest
from django.test import Client
from django.urls import reverse

from curation.job_leases import job_liveness
from curation.services.imports import import_path
from curation.services.projects import project_create
from releases.build import BUILD_TASK, build_progress, release_check, release_folder
from releases.models import LabelBasis, Release
from releases.services import release_create, release_options
from tests.factories import UserFactory, rjudge_record
from tests.workers import WorkerStack

# Enough that the build takes seconds, so that it is killed midway (some 3 s on a quiet machine).
RECORDS = 20_000
RECOVERY_SECONDS = 60


def page_text(client: Client, release: Release) -> str:
    url = reverse("releases:release_detail", args=[release.project.slug, release.pk])
    return client.get(url).content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_release_build_survives_its_worker_being_killed(
    worker_stack: WorkerStack, tmp_path: Path
) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Killed build", slug="killed-build")
    source = tmp_path / "records.json"
    source.write_bytes(
        orjson.dumps([rjudge_record(number, label=number % 2) for number in range(1, RECORDS + 1)])
    )
    import_path(
        actor=manager, project=project, path=source, default_category="Mail", index_now=False
    )
    client = Client()
    client.force_login(manager)
    first = worker_stack.start("first")
    release = release_create(
        actor=manager,
        project=project,
        version="1.0.0",
        license="CC BY 4.0",
        label_basis=LabelBasis.GOLD,
        options=release_options(leave_out_in_annotation=False),
    )

    worker_stack.wait_for(lambda: build_progress(release).records > 0, "records written", first)
    worker_stack.kill(first)
    killed_at = time.monotonic()
    release.refresh_from_db()
    assert release.state == Release.State.BUILDING
    assert build_progress(release).records < RECORDS

    worker_stack.wait_for(lambda: job_liveness(BUILD_TASK, release.pk).stopped, "no lease")
    stopped_page = page_text(client, release)
    assert "The worker building this release stopped; nothing was published." in stopped_page
    assert "records written." not in stopped_page
    assert list(release_folder(release).parent.glob("*.partial-*"))

    second = worker_stack.start("second")
    pages = []
    while release.state != Release.State.BUILT:
        assert second.poll() is None, worker_stack.log(second)
        assert time.monotonic() - killed_at < RECOVERY_SECONDS, worker_stack.log(second)
        pages.append(page_text(client, release))
        time.sleep(0.2)
        release.refresh_from_db()
    assert any("Resumed after a worker stopped." in page for page in pages)
    assert release_check(release) == []
    assert not list(release_folder(release).parent.glob("*.partial-*"))
    lines = (release_folder(release) / "records.jsonl").read_bytes().splitlines()
    ids = [orjson.loads(line)["id"] for line in lines]
    assert sorted(map(str, ids), key=int) == [str(number) for number in range(1, RECORDS + 1)]
