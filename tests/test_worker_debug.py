"""A Celery worker never runs with DEBUG on.

Django keeps every SQL statement in memory while DEBUG is on and only a web request clears
them: a worker started so grew to 3 GB a process. `./studio up` starts its worker without it,
and a worker started any other way with DEBUG on refuses to start.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.workers import WORKER_COMMAND

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]


def test_a_worker_refuses_to_start_with_debug_on(tmp_path: Path) -> None:
    env = {**os.environ, "DEBUG": "true", "VAR_DIR": str(tmp_path)}

    result = subprocess.run(  # noqa: S603 (this interpreter, fixed arguments)
        WORKER_COMMAND,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert "does not run with DEBUG on" in result.stderr
    assert "ready" not in result.stdout + result.stderr
