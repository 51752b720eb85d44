"""Fixtures of the judging tests."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from config.celery import app
from tests.workers import WORKER_COMMAND

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def start_worker(settings, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen]]:
    """Start real `celery worker` processes on the suite's Redis and test database, with
    `env` added to their environment; they are stopped after the test."""
    database = settings.DATABASES["default"]
    base_env = {
        **os.environ,
        "DATABASE_URL": (
            f"postgres://{database['USER']}:{database['PASSWORD'] or ''}"
            f"@{database['HOST']}:{database['PORT']}/{database['NAME']}"
        ),
    }
    processes: list[subprocess.Popen] = []

    def start(name: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        with (tmp_path / f"{name}.log").open("w") as log:
            process = subprocess.Popen(  # noqa: S603 (this interpreter, fixed arguments)
                [*WORKER_COMMAND, f"--hostname={name}@%h"],
                cwd=ROOT,
                env=base_env | (env or {}),
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
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
