"""Eight annotators at once on the embedded default (`./studio up`: SQLite, gunicorn's threads in
two processes, no Redis) label a project to the end: every record gets exactly k labels, and
nobody meets an error such as "database is locked"."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factories import rjudge_record
from tests.test_studio_up import free_port, shell_env, stop, studio_up

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]
ANNOTATORS = 8
RECORDS = 40
K = 2
# Typed beside `./studio up`, on its new SQLite database.
SETUP = """
import json
from curation.models import Role
from curation.services.accounts import api_token_create
from curation.services.imports import import_path
from curation.services.projects import membership_grant, project_create
from django.contrib.auth import get_user_model

users = get_user_model().objects
manager = users.create_user("boss")
project = project_create(actor=manager, name="Busy", slug="busy")
project.overlap = %(k)d
project.save()
import_path(actor=manager, project=project, path=%(path)r, default_category="Application")
keys = []
for n in range(%(annotators)d):
    user = users.create_user(f"labeller{n}")
    membership_grant(actor=manager, project=project, user=user, role=Role.ANNOTATOR)
    keys.append(api_token_create(user=user, name="bench")[1])
print(json.dumps(keys))
"""
COUNT = """
from annotation.models import Annotation
from curation.models import Record
from django.db.models import Count
busy = Record.objects.filter(project__slug="busy")
print(list(busy.annotate(n=Count("annotations")).values_list("n", flat=True)))
print(Annotation.objects.filter(record__project__slug="busy").count())
"""


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """`./studio up` in a var/ of its own; the environment its commands are typed in."""
    env = {**shell_env(), "VAR_DIR": str(tmp_path / "var")}
    port = free_port()
    log = tmp_path / "up.log"
    process = studio_up(ROOT, port, log, **env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz/", timeout=5).close()  # noqa: S310
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        yield url, env
    finally:
        stop(process)


def call(url: str, key: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(  # noqa: S310
        url + path,
        data=json.dumps(body or {}).encode(),
        headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            text = response.read()
            return response.status, json.loads(text) if text else {}
    except urllib.error.HTTPError as error:
        return error.code, {"error": error.read().decode(errors="replace")[:300]}


def test_eight_annotators_at_once_label_every_record_k_times(
    embedded: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, env = embedded
    data = tmp_path / "records.json"
    data.write_text(json.dumps([rjudge_record(n, user=f"Task {n}") for n in range(RECORDS)]))
    script = SETUP % {"k": K, "annotators": ANNOTATORS, "path": str(data)}
    keys = json.loads(
        subprocess.check_output(  # noqa: S603
            [sys.executable, "manage.py", "shell", "-c", script],
            env=env,
            cwd=ROOT,
        ).splitlines()[-1]
    )
    problems: list[str] = []
    labelled: Counter[str] = Counter()

    def annotate(key: str) -> None:
        while True:
            status, lease = call(url, key, "/api/projects/busy/annotation/claim/")
            if status == 204:
                return
            if status != 201 and status != 200:
                problems.append(f"claim {status}: {lease}")
                return
            status, answer = call(
                url,
                key,
                f"/api/projects/busy/annotation/leases/{lease['id']}/submit/",
                {"verdict": "unsafe", "risk_description": "It deletes things."},
            )
            if status >= 300:
                problems.append(f"submit {status}: {answer}")
                return
            labelled[key] += 1

    threads = [threading.Thread(target=annotate, args=(key,)) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)

    assert problems == []
    counts, total = subprocess.check_output(  # noqa: S603
        [sys.executable, "manage.py", "shell", "-c", COUNT], env=env, cwd=ROOT, text=True
    ).splitlines()[-2:]
    assert json.loads(counts) == [K] * RECORDS
    assert int(total) == sum(labelled.values()) == K * RECORDS
    # Several annotators labelled at once (one that started last may find nothing left).
    assert len(labelled) > 1
