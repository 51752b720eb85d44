"""A real Celery worker as the tests start one: one process, quiet, on the project's app; and
the workers of each stack, for the tests that kill them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from celery import Celery

WORKER_COMMAND = [
    sys.executable,
    "-m",
    "celery",
    "-A",
    "config",
    "worker",
    "--pool=solo",
    "--loglevel=INFO",
    "--without-gossip",
    "--without-mingle",
    "--without-heartbeat",
]


@dataclass
class WorkerStack:
    """Workers of one stack, for tests that kill them: each started with `env`, its log under
    `logs`."""

    name: str
    start_worker: Callable[..., subprocess.Popen]
    env: dict[str, str | None]
    logs: Path
    names: dict[int, str] = field(default_factory=dict)

    def start(self, name: str) -> subprocess.Popen:
        process = self.start_worker(name, env=self.env)
        self.names[process.pid] = name
        return process

    def kill(self, process: subprocess.Popen) -> None:
        """kill -9 the worker and every process it started."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)

    def log(self, process: subprocess.Popen) -> str:
        return (self.logs / f"{self.names[process.pid]}.log").read_text()

    def wait_for(
        self, condition: Callable[[], object], what: str, process: subprocess.Popen | None = None
    ) -> None:
        """Until `condition` holds, while `process` (the worker expected to make it) runs."""
        deadline = time.monotonic() + WAIT_SECONDS
        while not condition():
            log = "" if process is None else self.log(process)
            assert process is None or process.poll() is None, f"Worker stopped:\n{log}"
            assert time.monotonic() < deadline, f"Timed out waiting for {what}:\n{log}"
            time.sleep(0.1)


# The longest a fault test waits for one thing to happen.
WAIT_SECONDS = 120
# Leases run out this long after a worker is killed (JOB_STALE_SECONDS), and live workers look
# for jobs to take over every half of it: short, so that the tests wait little, and long enough
# that a busy machine never lets a live worker's lease run out.
STALE_SECONDS = "4"


def worker_stack_for(
    stack: str,
    start_worker: Callable[..., subprocess.Popen],
    settings: Any,
    tmp_path: Path,
    monkeypatch: Any,
) -> WorkerStack:
    """The workers of `stack` ("redis" or "embedded"), with the test process sending its jobs
    and reading progress and leases where they do."""
    from django.core.cache import cache

    from config.celery import app
    from curation import jobs

    settings.MEDIA_ROOT = tmp_path / "media"
    env: dict[str, str | None] = {
        "JOB_STALE_SECONDS": STALE_SECONDS,
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }
    if stack == "embedded":
        var = tmp_path / "var"
        env |= {"REDIS_URL": None, "CELERY_BROKER_URL": "filesystem://", "VAR_DIR": str(var)}
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                "LOCATION": str(var / "cache"),
            }
        }
        client = Celery("embedded-client", broker="filesystem://", set_as_current=False)
        client.conf.broker_transport = "config.broker:Transport"
        client.conf.broker_transport_options = {
            "data_folder_in": str(var / "broker" / "queue"),
            "data_folder_out": str(var / "broker" / "queue"),
            "control_folder": str(var / "broker" / "control"),
        }
        client.conf.task_serializer = "json"
        for folder in client.conf.broker_transport_options.values():
            Path(folder).mkdir(parents=True, exist_ok=True)
        monkeypatch.setattr(jobs, "current_app", client)
    else:
        app.control.purge()
    # Leases and progress an earlier test left under the same ids are not this test's.
    cache.clear()
    settings.JOB_STALE_SECONDS = int(STALE_SECONDS)
    return WorkerStack(stack, start_worker, env, tmp_path)
