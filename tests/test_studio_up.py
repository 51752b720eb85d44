"""`./studio up` on a fresh clone: the studio it starts and the commands typed beside it.

The studio is served as in production (gunicorn, DEBUG off, static files under hashed names),
over plain HTTP on 127.0.0.1. The README's management commands must work as written once
`./studio up` has run, with nothing exported: the web server, the worker and every command share
the settings that `./studio up` keeps in var/. This copies the repository as a clone has it,
runs `./studio up` there (on this suite's virtual environment, so nothing is installed) and
types a command beside it.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from studio_client import StudioClient
from tests.factories import rjudge_record
from tests.fake_llm import MODEL, FakeLLM, answer

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]
# Not in a clone: ignored by git, or made by running things here.
LOCAL_FILES = {".git", ".venv", ".env", "var", "staticfiles", "bench/out", ".pytest_cache"}
CACHES = {"__pycache__", ".ruff_cache"}
# Migrating a new SQLite database and seeding the demo take a while on a busy machine.
START_TIMEOUT = 240


@dataclass
class Studio:
    folder: Path
    url: str
    log: Path

    def wait_for_log(self, pattern: str, process: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not re.search(pattern, self.log.read_text()):
            assert process.poll() is None, f"./studio up stopped:\n{self.log.read_text()}"
            assert time.monotonic() < deadline, f"No {pattern!r} in:\n{self.log.read_text()}"
            time.sleep(0.5)

    def wait_for_page(self, path: str, process: subprocess.Popen) -> None:
        """Until the web server answers: it says it starts before it listens."""
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert process.poll() is None, f"./studio up stopped:\n{self.log.read_text()}"
            try:
                with urllib.request.urlopen(self.url + path, timeout=10):  # noqa: S310
                    return
            except OSError:
                assert time.monotonic() < deadline, f"No answer:\n{self.log.read_text()}"
                time.sleep(0.5)


def as_in_a_clone(folder: str, names: list[str]) -> set[str]:
    """shutil.copytree's ignore: what a fresh clone would not have."""
    relative = Path(folder).relative_to(ROOT)
    return {name for name in names if name in CACHES or (relative / name).as_posix() in LOCAL_FILES}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def shell_env() -> dict[str, str]:
    """A user's shell with nothing exported for the studio."""
    return {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}


def studio_up(folder: Path, port: int, log: Path, **env: str) -> subprocess.Popen:
    """`./studio up` as typed in a terminal, in a process group of its own as a shell gives it."""
    with log.open("w") as out:
        return subprocess.Popen(
            ["./studio", "up"],
            cwd=folder,
            env={**shell_env(), "VENV": sys.prefix, "PORT": str(port), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def processes_in_group(group: int) -> list[str]:
    """The command lines of the processes still in a process group."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            # After the command's name in brackets: state, parent, process group.
            if (
                entry.name.isdigit()
                and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2]) == group
            ):
                found.append((entry / "cmdline").read_text().replace("\0", " "))
        except (OSError, ValueError):
            continue
    return found


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Studio]:
    folder = tmp_path_factory.mktemp("clone") / "studio"
    shutil.copytree(ROOT, folder, ignore=as_in_a_clone)
    port = free_port()
    running = Studio(folder=folder, url=f"http://127.0.0.1:{port}/", log=folder.parent / "up.log")
    process = studio_up(folder, port, running.log)
    try:
        running.wait_for_page("login/", process)
        # The worker, taking jobs (the demo's records need none: SQLite indexes them for search
        # as they are imported).
        running.wait_for_log(r"celery@\S+ ready", process)
        yield running
    finally:
        # ./studio up stops the web server and the worker when it is stopped.
        stop(process)


def test_the_web_server_serves_pages_under_the_strict_csp_and_static_files(
    studio: Studio,
) -> None:
    with urllib.request.urlopen(studio.url + "login/", timeout=30) as page:  # noqa: S310
        assert page.status == 200
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        stylesheet = re.search(r"/static/css/studio\.[0-9a-f]{12}\.css", page.read().decode())
    # Gathered under a name that changes with the content, so browsers may keep it for good.
    assert stylesheet, "The page links no stylesheet with a hashed name."
    with urllib.request.urlopen(studio.url + stylesheet.group()[1:], timeout=30) as css:  # noqa: S310
        assert css.status == 200
        assert "immutable" in css.headers["Cache-Control"]


def test_it_serves_with_a_production_server_and_shows_no_debug_page(studio: Studio) -> None:
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(studio.url + "no-such-page/", timeout=30)  # noqa: S310

    assert missing.value.code == 404
    assert missing.value.headers["Server"] == "gunicorn"
    body = missing.value.read().decode()
    assert "<h1>Not found</h1>" in body
    # Django's debug page lists the site's URL patterns.
    assert "URLconf" not in body


def test_a_demo_user_logs_in_over_plain_http(studio: Studio) -> None:
    passwords = json.loads((studio.folder / "var" / "demo-passwords.json").read_text())
    cookies = http.cookiejar.CookieJar()
    # A browser on http:// keeps no cookie marked Secure for the site; neither does this jar.
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
    with browser.open(studio.url + "login/", timeout=30) as page:
        assert page.url == studio.url + "login/", "Sent elsewhere (to HTTPS?)"
        assert "Strict-Transport-Security" not in page.headers
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
    assert token

    form = {
        "csrfmiddlewaretoken": token.group(1),
        "username": "demo-annotator",
        "password": passwords["demo-annotator"],
    }
    with browser.open(
        urllib.request.Request(  # noqa: S310
            studio.url + "login/",
            data=urllib.parse.urlencode(form).encode(),
            headers={"Origin": studio.url.rstrip("/")},
        ),
        timeout=30,
    ) as home:
        assert home.status == 200
        assert home.url == studio.url
        assert "demo-annotator" in home.read().decode()


def test_a_readme_command_typed_beside_it_needs_nothing_exported(
    studio: Studio, tmp_path: Path
) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(
        "".join(
            json.dumps(rjudge_record(number, user=f"Archive the mails of case {number}.")) + "\n"
            for number in (424201, 424202)
        )
    )

    result = subprocess.run(  # noqa: S603 (this interpreter, the README's command)
        [
            sys.executable,
            "manage.py",
            "import_records",
            "demo",
            str(records),
            "--category",
            "Finance",
        ],
        cwd=studio.folder,
        env=shell_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert "Imported 2 records: 2 new" in result.stdout


# Eight annotators at once on the embedded default (SQLite, gunicorn's threads in two
# processes, no Redis) label a project to the end: every record gets exactly k labels, and
# nobody meets an error such as "database is locked".
BUSY_ANNOTATORS = 8
BUSY_RECORDS = 40
BUSY_K = 2
# Typed beside `./studio up`, on its new SQLite database.
BUSY_SETUP = """
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
BUSY_COUNT = """
from annotation.models import Annotation
from curation.models import Record
from django.db.models import Count
busy = Record.objects.filter(project__slug="busy")
print(list(busy.annotate(n=Count("annotations")).values_list("n", flat=True)))
print(Annotation.objects.filter(record__project__slug="busy").count())
"""


def post_with_token(url: str, key: str, path: str, body: dict | None = None) -> tuple[int, dict]:
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
    studio: Studio, tmp_path: Path
) -> None:
    url, env = studio.url.rstrip("/"), shell_env()
    data = tmp_path / "records.json"
    data.write_text(json.dumps([rjudge_record(n, user=f"Task {n}") for n in range(BUSY_RECORDS)]))
    script = BUSY_SETUP % {"k": BUSY_K, "annotators": BUSY_ANNOTATORS, "path": str(data)}
    keys = json.loads(
        subprocess.check_output(  # noqa: S603
            [sys.executable, "manage.py", "shell", "-c", script],
            env=env,
            cwd=studio.folder,
        ).splitlines()[-1]
    )
    problems: list[str] = []
    labelled: Counter[str] = Counter()

    def annotate(key: str) -> None:
        while True:
            status, lease = post_with_token(url, key, "/api/projects/busy/annotation/claim/")
            if status == 204:
                return
            if status != 201 and status != 200:
                problems.append(f"claim {status}: {lease}")
                return
            status, answer = post_with_token(
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
        [sys.executable, "manage.py", "shell", "-c", BUSY_COUNT],
        env=env,
        cwd=studio.folder,
        text=True,
    ).splitlines()[-2:]
    assert json.loads(counts) == [BUSY_K] * BUSY_RECORDS
    assert int(total) == sum(labelled.values()) == BUSY_K * BUSY_RECORDS
    # Several annotators labelled at once (one that started last may find nothing left).
    assert len(labelled) > 1


# What a site administrator and the demo users do in the browser before using the client: a
# connection to a local endpoint (the fake one), and an API token each, printed for the test.
CLIENT_SETUP = """
import json
from django.contrib.auth.models import User
from curation.services.accounts import api_token_create
from judging.models import ModelConnection
ModelConnection.objects.create(
    name="Local", base_url={base_url!r}, model_names={model!r}, allow_private=True
)
print(json.dumps({{
    name: api_token_create(user=User.objects.get(username=name), name="client")[1]
    for name in ("demo-manager", "demo-annotator")
}}))
"""


def test_the_python_client_drives_it_through_an_import_labels_a_run_and_a_release(
    studio: Studio, tmp_path: Path
) -> None:
    scenario = tmp_path / "archive.json"
    scenario.write_text(
        json.dumps([rjudge_record(n, user="Archive my mail.") for n in (5251, 5252)])
    )

    with FakeLLM(lambda request: answer("unsafe")) as llm:
        setup = CLIENT_SETUP.format(base_url=llm.base_url, model=MODEL)
        typed = subprocess.run(  # noqa: S603 (this interpreter, a fixed script)
            [sys.executable, "manage.py", "shell", "-c", setup],
            cwd=studio.folder,
            env=shell_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        keys = json.loads(typed.stdout.strip().splitlines()[-1])
        with (
            StudioClient(studio.url, keys["demo-manager"]) as manager,
            StudioClient(studio.url, keys["demo-annotator"]) as annotator,
        ):
            wait = {"poll_interval": 0.5, "timeout": START_TIMEOUT}
            batch = manager.import_file("demo", scenario, default_category="Notebook", **wait)
            imported = {r["id"] for r in manager.records("demo", category="Notebook")}

            lease = annotator.claim("demo")
            assert lease is not None
            annotator.submit_label("demo", lease["id"], "safe", evidence_turns=[1])
            mine = list(annotator.my_labels("demo"))

            (connection,) = manager.connections("demo")
            judge = manager.create_judge(
                "demo", name="Local", protocol="rjudge", connection=connection["id"], model=MODEL
            )
            run = manager.start_run("demo", judge["id"], categories=["Notebook"])
            run = manager.wait_for_run("demo", run["id"], **wait)
            verdicts = list(manager.verdicts("demo", run["id"]))

            # The gold labels republished, records still being labelled included.
            release = manager.create_release(
                "demo", "9.0.0", label_basis="gold", leave_out_in_annotation=False
            )
            release = manager.wait_for_release("demo", release["id"], **wait)
            files = manager.download_release("demo", release["id"], tmp_path / "release")

    assert (batch["state"], batch["created_count"]) == ("succeeded", 2)
    assert len(imported) == 2
    assert [(label["record"]["id"], label["verdict"]) for label in mine] == [
        (lease["record"]["id"], "safe")
    ]
    assert (run["state"], run["valid_count"]) == ("succeeded", 2)
    assert {(v["record"], v["label"]) for v in verdicts} == {(r, "unsafe") for r in imported}
    assert {path.name for path in files} == {entry["name"] for entry in release["files"]}
    released = (tmp_path / "release" / "records.jsonl").read_text()
    assert '"id":"5251"' in released and '"id":"5252"' in released


def test_its_settings_file_holds_a_secret_key_only_its_owner_may_read(studio: Studio) -> None:
    settings_file = studio.folder / "var" / "studio.env"

    values = dict(
        line.split("=", 1)
        for line in settings_file.read_text().splitlines()
        if line and not line.startswith("#")
    )

    assert set(values) == {"SECRET_KEY"}
    assert len(values["SECRET_KEY"]) >= 50
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o600


def test_what_it_writes_only_its_owner_may_read(studio: Studio) -> None:
    var = studio.folder / "var"

    assert stat.S_IMODE(var.stat().st_mode) == 0o700
    for name in ("studio.sqlite3", "demo-passwords.json"):
        assert stat.S_IMODE((var / name).stat().st_mode) & 0o077 == 0, name


def test_its_start_warns_of_nothing_it_does_on_purpose(studio: Studio) -> None:
    # The broker on the file system has no host; kombu warned at every start that it had none.
    assert "No hostname was supplied" not in studio.log.read_text()


@pytest.mark.parametrize(
    ("debug", "missing_page"),
    [("", "<h1>Not found</h1>"), ("true", "URLconf")],
    ids=["as-is", "DEBUG=true"],
)
def test_started_again_it_serves_and_ctrl_c_stops_the_server_and_the_worker(
    studio: Studio, debug: str, missing_page: str
) -> None:
    port = free_port()
    again = Studio(
        folder=studio.folder,
        url=f"http://127.0.0.1:{port}/",
        log=studio.folder.parent / f"up-again-{port}.log",
    )
    process = studio_up(studio.folder, port, again.log, **({"DEBUG": debug} if debug else {}))
    try:
        again.wait_for_page("login/", process)
        again.wait_for_log(r"celery@\S+ ready", process)
        # A developer's DEBUG=true gets Django's own pages, with what went wrong.
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(again.url + "no-such-page/", timeout=30)  # noqa: S310
        assert missing_page in missing.value.read().decode()

        # Ctrl-C in the terminal: SIGINT to every process of the foreground group.
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=90)
    finally:
        if process.poll() is None:
            stop(process)

    deadline = time.monotonic() + 30
    while (left := processes_in_group(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert left == [], again.log.read_text()
    with pytest.raises(OSError):
        urllib.request.urlopen(again.url + "login/", timeout=5).close()  # noqa: S310
