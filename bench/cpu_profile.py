"""Where a running Python process spends its CPU, by what bounds it: a sampling profile taken
with Linux `perf` from outside the process, every thread included, with Python's own function
names (used by bench/judge_bench.py --profile).

The process must have been started with PYTHON_PERF_JIT_SUPPORT=1 (Python 3.13 and later):
Python then writes, for each function it runs, the unwinding information `perf inject --jit`
needs to walk the stack through the interpreter, so each sample carries its whole Python stack,
from the thread's start to the function on the CPU and the C code below it.

Each sample is put down to the innermost code on its stack that belongs to an owner below
(OWNERS, first match from the top of the stack down): a sample in `typing.get_origin` called
by the openai client counts for the client; one in `json.loads` called by judging/client.py,
for that module. Frames of the standard library and of Redis's client are passed through to
their callers (Redis is used by both the limits and Celery's broker). A sample with no Python
frame at all (the interpreter between functions, the garbage collector, a thread starting) is
counted apart.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# (a part of a file's path, the owner it is put down to), the first that matches wins.
OWNERS = [
    ("/judging/limits.py", "Redis limits (judging/limits.py)"),
    ("/judging/client.py", "our client: the request's JSON and the answer's (judging/client.py)"),
    ("/judging/protocols/", "protocols: prompts and parsing"),
    ("/judging/services/run_engine/", "run engine: chunks, commits, cases"),
    ("/judging/", "other judging code"),
    ("/curation/", "other studio code"),
    ("/openai/", "openai client: request options, retries, answer"),
    ("/pydantic", "openai client: request options, retries, answer"),
    ("/httpx2/", "HTTP: httpx, httpcore, h11 and sockets"),
    ("/httpcore2/", "HTTP: httpx, httpcore, h11 and sockets"),
    ("/h11/", "HTTP: httpx, httpcore, h11 and sockets"),
    ("/django/db/", "database: Django ORM and psycopg"),
    ("/psycopg/", "database: Django ORM and psycopg"),
    ("/celery/", "Celery and its broker (kombu, Redis)"),
    ("/kombu/", "Celery and its broker (kombu, Redis)"),
    ("/billiard/", "Celery and its broker (kombu, Redis)"),
]
NO_PYTHON = "no Python frame: the interpreter itself, the garbage collector, threads starting"
STANDARD_ONLY = "the standard library alone: thread pool, queues, locks"


@dataclass(frozen=True)
class Profile:
    samples: int
    by_owner: list[tuple[str, float]]
    # (function, share of samples on the CPU in it or below it), and (function, share in it).
    inclusive: list[tuple[str, float]]
    own: list[tuple[str, float]]


def available() -> bool:
    return shutil.which("perf") is not None


def record(
    pid: int, seconds: float, *, then: Callable[[], None] = lambda: None, frequency: int = 99
) -> Profile:
    """Sample the process `pid` for `seconds`, call `then` as the sampling ends (reading the
    stacks takes a while), and read where the process's CPU went."""
    with tempfile.TemporaryDirectory(prefix="cpu-profile-") as folder:
        raw, jitted = Path(folder) / "perf.data", Path(folder) / "perf.jit.data"
        # -k 1: the clock Python's JIT dumps use; 64 kB of each thread's stack for the unwinder.
        perf = ["perf", "record", "-q", "-F", str(frequency), "-k", "1"]
        perf += ["--call-graph", "dwarf,65528", "-p", str(pid), "-o", str(raw)]
        subprocess.run([*perf, "--", "sleep", str(seconds)], check=True, capture_output=True)  # noqa: S603
        then()
        inject = ["perf", "inject", "--jit", "-i", str(raw), "-o", str(jitted)]
        subprocess.run(inject, check=True, capture_output=True)  # noqa: S603
        script = subprocess.run(  # noqa: S603
            ["perf", "script", "-F", "ip,sym", "-i", str(jitted)],  # noqa: S607
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return read(script)


def read(script: str) -> Profile:
    """A profile from `perf script -F ip,sym`: samples apart by blank lines, frames from the
    innermost out."""
    owners: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    samples = 0
    for block in script.split("\n\n"):
        frames = [_python_frame(line) for line in block.strip().splitlines()]
        python = [frame for frame in frames if frame]
        if not block.strip():
            continue
        samples += 1
        owners[_owner(python)] += 1
        if python:
            own[python[0]] += 1
        for function in set(python):
            inclusive[function] += 1
    if not samples:
        raise RuntimeError("perf took no sample of the process.")
    return Profile(
        samples=samples,
        by_owner=[(owner, count / samples) for owner, count in owners.most_common()],
        inclusive=[(name, count / samples) for name, count in inclusive.most_common()],
        own=[(name, count / samples) for name, count in own.most_common()],
    )


def _python_frame(line: str) -> str:
    """`function:path` for a frame of Python code, "" for one of C."""
    _, _, symbol = line.strip().partition(" ")
    return symbol.removeprefix("py::") if symbol.startswith("py::") else ""


def _owner(python: list[str]) -> str:
    if not python:
        return NO_PYTHON
    for frame in python:
        for part, owner in OWNERS:
            if part in frame:
                return owner
    return STANDARD_ONLY


def short(frame: str, width: int = 96) -> str:
    """A frame's function and its path from the package or the repository down, to print."""
    function, _, path = frame.partition(":")
    for prefix in (f"{ROOT}/", "site-packages/", "lib/python3.13/"):
        if prefix in path:
            path = path[path.index(prefix) + len(prefix) :]
            break
    text = f"{function} ({path})"
    return text if len(text) <= width else text[: width - 1] + "…"
