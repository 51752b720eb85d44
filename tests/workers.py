"""A real Celery worker as the tests start one: one process, quiet, on the project's app."""

from __future__ import annotations

import sys

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
