from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.test import Client

from config.celery import app
from curation.models import Project, Role
from curation.services.projects import membership_grant, project_create
from tests.factories import UserFactory
from tests.workers import WORKER_COMMAND, WorkerStack, worker_stack_for

# The real R-Judge dataset, kept beside the repository (never copied into it).
RJUDGE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "r-judge"


def pytest_configure(config: pytest.Config) -> None:
    # Tests render pages without running collectstatic: serve static files from the source
    # folders, as development does, instead of from a hashed manifest.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    settings.WHITENOISE_AUTOREFRESH = True


# What makes a test slow: a browser, a live server, a Celery worker (a thread of the suite or
# processes of its own) or another process of the studio. `./studio test -m "not slow"` leaves
# those tests out, for a loop of a few minutes; CI runs them all.
# How long the workers a test started have, together, to stop after it before they are killed.
WORKER_STOP_SECONDS = 10
SLOW_FIXTURES = frozenset({"page", "browser", "live_server", "celery_worker", "start_worker"})
SLOW_MARKERS = ("browser", "subprocess")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())) or any(
            item.get_closest_marker(name) for name in SLOW_MARKERS
        ):
            item.add_marker(pytest.mark.slow)


@dataclass
class Cast:
    """A project with one member per role, an outsider and a site administrator."""

    project: Project
    annotator: AbstractBaseUser
    author: AbstractBaseUser
    reviewer: AbstractBaseUser
    manager: AbstractBaseUser
    outsider: AbstractBaseUser
    superuser: AbstractBaseUser

    def client_for(self, persona: str) -> Client:
        """A client logged in as the persona ("anonymous" for nobody)."""
        client = Client()
        if persona != "anonymous":
            client.force_login(getattr(self, persona))
        return client


PERSONAS = ("anonymous", "outsider", "annotator", "author", "reviewer", "manager", "superuser")


@pytest.fixture
def cast(db: None) -> Cast:
    manager = UserFactory(username="manager")
    project = project_create(actor=manager, name="Agent Safety", slug="agent-safety")
    people = {}
    for role in (Role.ANNOTATOR, Role.AUTHOR, Role.REVIEWER):
        people[role.value] = UserFactory(username=role.value)
        membership_grant(actor=manager, project=project, user=people[role.value], role=role)
    return Cast(
        project=project,
        manager=manager,
        outsider=UserFactory(username="outsider"),
        superuser=UserFactory(username="admin", is_superuser=True, is_staff=True),
        **people,
    )


@pytest.fixture
def rjudge_dir() -> Path:
    assert (RJUDGE_DIR / "data").is_dir(), f"The R-Judge dataset is missing at {RJUDGE_DIR}"
    return RJUDGE_DIR / "data"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    # Password hashing is deliberately slow; tests create many users and need no protection.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def celery_worker(transactional_db: None) -> Iterator[None]:
    """A real worker, in a thread of this process, taking tasks from the Redis broker."""
    # Imported here: the Celery app is not needed by the tests that take no worker.
    from celery.contrib.testing.worker import start_worker

    from config.celery import app

    # Tasks left in the queue by an interrupted run would name rows that do not exist, and a
    # check that an earlier run left due (in the cache) would keep a project of the same id
    # from scheduling its own.
    app.control.purge()
    cache.clear()
    with start_worker(app, perform_ping_check=False, loglevel="WARNING"):
        yield


@pytest.fixture
def start_worker(settings, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start real `celery worker` processes on the suite's Redis and test database, with
    `env` added to their environment (a variable given None is left out); they are stopped
    after the test."""
    database = settings.DATABASES["default"]
    base_env = {
        **os.environ,
        "DATABASE_URL": (
            f"postgres://{database['USER']}:{database['PASSWORD'] or ''}"
            f"@{database['HOST']}:{database['PORT']}/{database['NAME']}"
        ),
    }
    processes: list[subprocess.Popen] = []

    def start(name: str, env: dict[str, str | None] | None = None) -> subprocess.Popen:
        merged = base_env | (env or {})
        with (tmp_path / f"{name}.log").open("w") as log:
            process = subprocess.Popen(  # noqa: S603 (this interpreter, fixed arguments)
                [*WORKER_COMMAND, f"--hostname={name}@%h"],
                cwd=Path(__file__).resolve().parents[1],
                env={key: value for key, value in merged.items() if value is not None},
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own process group, so that a kill takes every process it started.
                start_new_session=True,
            )
        processes.append(process)
        return process

    # Jobs left in the suite's queue by earlier tests are not this test's business.
    app.control.purge()
    yield start
    # All told to stop at once, then given WORKER_STOP_SECONDS together: a worker in a job
    # waits for it (a judge call may hang), and the test has seen what it wanted by now.
    running = [process for process in processes if process.poll() is None]
    for process in running:
        os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + WORKER_STOP_SECONDS
    for process in running:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(params=["redis", "embedded"])
def worker_stack(
    request: pytest.FixtureRequest,
    start_worker: Callable[..., subprocess.Popen],
    settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> WorkerStack:
    """Real workers to start and kill on each stack: the suite's Redis (broker and cache), or
    the embedded setup's broker and cache on the file system (on the suite's PostgreSQL)."""
    return worker_stack_for(request.param, start_worker, settings, tmp_path, monkeypatch)
