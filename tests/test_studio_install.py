"""What `./studio` says while it installs the pinned requirements: the first start spends
minutes in pip, which a silent terminal makes look like a hang.

pip is stood in for by a virtual environment whose python hands everything to this suite's
Python but `-m pip`, which prints what it was asked and fails: the script stops there.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "-m pip" ]; then echo "pip was asked: $*"; exit 3; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    return python.parent.parent


def studio_up(venv: Path, *, in_a_terminal: bool) -> str:
    """What `./studio up` prints until pip, the stand-in, fails."""
    env = {**os.environ, "VENV": str(venv)}
    if not in_a_terminal:
        result = subprocess.run(  # noqa: S603 (this checkout's script)
            [str(ROOT / "studio"), "up"], env=env, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 3
        return result.stdout
    leader, follower = pty.openpty()
    try:
        result = subprocess.run(  # noqa: S603 (this checkout's script)
            [str(ROOT / "studio"), "up"], env=env, stdout=follower, stderr=follower, timeout=60
        )
        assert result.returncode == 3
        return os.read(leader, 65536).decode()
    finally:
        os.close(leader)
        os.close(follower)


def test_the_first_start_says_it_installs_and_lets_pip_show_its_progress(venv: Path) -> None:
    printed = studio_up(venv, in_a_terminal=True)

    assert f"Installing the pinned requirements of requirements.txt into {venv}/" in printed
    assert "(first start: a few minutes)..." in printed
    assert "pip was asked: -m pip install -r requirements.txt" in printed


def test_without_a_terminal_pip_keeps_quiet(venv: Path) -> None:
    printed = studio_up(venv, in_a_terminal=False)

    assert "Installing the pinned requirements of requirements.txt" in printed
    assert "pip was asked: -m pip install --quiet -r requirements.txt" in printed


def test_changed_requirements_are_installed_again_saying_why(venv: Path) -> None:
    (venv / ".installed-requirements.txt").write_text("an older digest\n")

    printed = studio_up(venv, in_a_terminal=False)

    assert f"requirements.txt into {venv}/ (they changed)..." in printed
