"""The embedded setup's broker: a real Celery worker process takes jobs from the file system.

`./studio up` runs the web server and a worker without Redis; this starts such a worker, sends
it an import the way the web server does, and watches the import land in the database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery
from django.core.files.uploadedfile import SimpleUploadedFile
from kombu import Connection

from curation import jobs
from curation.models import ImportBatch
from curation.services.imports import import_batch_create
from curation.services.projects import project_create
from tests.factories import UserFactory, rjudge_record
from tests.workers import WORKER_COMMAND

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]
WORKER_TIMEOUT = 60


@pytest.fixture
def embedded_env(settings, tmp_path: Path) -> dict[str, str]:
    """The environment of `./studio up`'s worker, on the test database and a fresh var/."""
    settings.MEDIA_ROOT = tmp_path / "media"
    database = settings.DATABASES["default"]
    assert database["ENGINE"] == "django.db.backends.postgresql", "The suite runs on PostgreSQL."
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("REDIS_URL", "CELERY_BROKER_URL")
    }
    return {
        **env,
        "CELERY_BROKER_URL": "filesystem://",
        "VAR_DIR": str(tmp_path / "var"),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "DATABASE_URL": (
            f"postgres://{database['USER']}:{database['PASSWORD'] or ''}"
            f"@{database['HOST']}:{database['PORT']}/{database['NAME']}"
        ),
    }


@pytest.fixture
def embedded_broker(embedded_env: dict[str, str]) -> Celery:
    """A Celery app for the test process, on the broker folders the worker's settings give."""
    options = json.loads(
        subprocess.check_output(
            [
                sys.executable,
                "-c",
                "import json; from config import settings; "
                "print(json.dumps(settings.CELERY_BROKER_TRANSPORT_OPTIONS))",
            ],
            cwd=ROOT,
            env=embedded_env,
            text=True,
        )
    )
    assert options["data_folder_in"].startswith(embedded_env["VAR_DIR"])
    for folder in options.values():
        Path(folder).mkdir(parents=True, exist_ok=True)
    app = Celery("embedded-client", broker="filesystem://", set_as_current=False)
    app.conf.broker_transport_options = options
    app.conf.task_serializer = "json"
    return app


@pytest.fixture
def worker(embedded_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[subprocess.Popen, Path]]:
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        process = subprocess.Popen(  # noqa: S603 (this interpreter, fixed arguments)
            WORKER_COMMAND,
            cwd=ROOT,
            env=embedded_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process, log
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.mark.django_db(transaction=True)
def test_a_worker_on_the_file_system_broker_runs_an_uploaded_import(
    embedded_broker: Celery, worker: tuple[subprocess.Popen, Path], monkeypatch
) -> None:
    process, log = worker
    # The web server's dispatch, sent through the embedded broker instead of the suite's Redis.
    monkeypatch.setattr(jobs, "current_app", embedded_broker)
    manager = UserFactory()
    project = project_create(actor=manager, name="Embedded", slug="embedded")
    records = [rjudge_record(1, label=1), rjudge_record(2, label=0, user="Archive the old mail.")]
    upload = SimpleUploadedFile("mail.json", json.dumps(records).encode())

    batch = import_batch_create(
        actor=manager, project=project, upload=upload, default_category="Application"
    )

    deadline = time.monotonic() + WORKER_TIMEOUT
    while not batch.is_finished and time.monotonic() < deadline:
        assert process.poll() is None, f"The worker stopped:\n{log.read_text()}"
        time.sleep(0.2)
        batch.refresh_from_db()
    assert batch.state == ImportBatch.State.SUCCEEDED, log.read_text()
    assert batch.created_count == 2
    assert set(project.records.values_list("external_id", flat=True)) == {"1", "2"}
    assert "curation.tasks.run_import_batch" in log.read_text()


# A worker that takes one message from the embedded broker and keeps it, unacknowledged, until
# it is killed; it prints the message's body once it holds it.
HOLDER = """
import sys, time
from kombu import Connection
options = dict(zip(("data_folder_in", "data_folder_out", "control_folder"), sys.argv[1:4]))
with Connection("filesystem://", transport="config.broker:Transport",
                transport_options=options) as connection:
    queue = connection.SimpleQueue(sys.argv[4])
    message = queue.get(timeout=10)
    print(message.payload, flush=True)
    time.sleep(600)
"""


def broker_options(tmp_path: Path) -> dict[str, str]:
    options = {
        "data_folder_in": str(tmp_path / "broker" / "queue"),
        "data_folder_out": str(tmp_path / "broker" / "queue"),
        "control_folder": str(tmp_path / "broker" / "control"),
    }
    for folder in options.values():
        Path(folder).mkdir(parents=True, exist_ok=True)
    return options


def test_the_embedded_broker_delivers_again_what_a_killed_worker_held(tmp_path: Path) -> None:
    options = broker_options(tmp_path)
    # A queue of this test's own: kombu keeps the exchanges it declared in the process, for
    # every connection of the transport, so that one another test declared would not be
    # declared in this test's folders again and the message would go nowhere.
    name = f"jobs-{uuid.uuid4().hex[:8]}"
    with Connection(
        "filesystem://", transport="config.broker:Transport", transport_options=options
    ) as connection:
        connection.SimpleQueue(name).put("import 7")
        holder = subprocess.Popen(  # noqa: S603 (this interpreter, fixed arguments)
            [sys.executable, "-c", HOLDER, *options.values(), name],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "import 7"
            queue = connection.SimpleQueue(name)
            # Held by a live worker: nobody else gets it.
            with pytest.raises(queue.Empty):
                queue.get(timeout=3)
        finally:
            holder.kill()
            holder.communicate()

        message = queue.get(timeout=10)
        assert message.payload == "import 7"
        message.ack()
        with pytest.raises(queue.Empty):
            connection.SimpleQueue(name).get(timeout=3)
    assert not list((tmp_path / "broker" / "held").glob("*/*.msg"))
