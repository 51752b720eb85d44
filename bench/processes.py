"""What a stack's processes use, read from /proc: resident memory and CPU time of process trees.

Used by bench/http_bench.py: the memory of the web server's and the worker's trees, sampled for
their peak, and the CPU seconds the trees (and the database's server processes) spend in a
phase, which, unlike wall-clock times, the load of other work on the machine does not stretch.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Process:
    parent: int
    rss: int
    # User and system time of the process and of its children that ended and were waited for.
    cpu_seconds: float


def process_table() -> dict[int, Process]:
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # After the command's name in brackets: state (0), parent (1), ..., utime (11),
            # stime (12), cutime (13), cstime (14), ..., rss in pages (21).
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry.name)] = Process(
            parent=int(fields[1]),
            rss=int(fields[21]) * PAGE,
            cpu_seconds=sum(int(value) for value in fields[11:15]) / TICK,
        )
    return table


def trees(table: dict[int, Process], roots: list[int]) -> list[int]:
    """The roots and every process under them."""
    children: dict[int, list[int]] = {}
    for pid, process in table.items():
        children.setdefault(process.parent, []).append(pid)
    found, todo = [], [root for root in roots if root in table]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def database_servers(name: str) -> list[int]:
    """PostgreSQL's server processes for connections to the database `name`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
        except OSError:
            continue
        if command.startswith(b"postgres: ") and f" {name} ".encode() in command:
            found.append(int(entry.name))
    return found


class CpuMeter:
    """CPU seconds spent by the stack's trees, and by the database's server processes."""

    def __init__(self, roots: list[int], database: str | None) -> None:
        self.roots = roots
        self.database = database

    def now(self) -> tuple[float, dict[int, float]]:
        """The trees' CPU seconds (their ended children's included), and each database server
        process's: one that ends takes its time with it, so that only the processes alive at
        both ends of a phase are compared (see `database_seconds`)."""
        table = process_table()
        stack = sum(table[pid].cpu_seconds for pid in trees(table, self.roots))
        servers = database_servers(self.database) if self.database else []
        return stack, {pid: table[pid].cpu_seconds for pid in servers if pid in table}

    @staticmethod
    def database_seconds(before: dict[int, float], after: dict[int, float]) -> float:
        """What the server processes alive at the end spent since `before` (all of it, for those
        that started meanwhile)."""
        return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


class MemorySampler:
    """The summed resident memory of process trees, sampled in a thread; its peak."""

    def __init__(self, roots: list[int]) -> None:
        self.roots = roots
        self.peak = 0.0
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while self.running:
            self.peak = max(self.peak, self.now())
            time.sleep(0.2)

    def now(self) -> float:
        table = process_table()
        return sum(table[pid].rss for pid in trees(table, self.roots)) / 2**20

    def stop(self) -> None:
        self.running = False
        self.thread.join()


class Sleeps:
    """How long the stack's threads slept in a phase, and how often: `perf trace` on the
    clock_nanosleep and nanosleep system calls of the whole machine, kept for the threads of the
    trees' worker processes. Those (gunicorn's and Celery's) do not sleep on purpose; SQLite's
    busy handler does, in steps of 1 to 100 ms, while it waits for another connection's write
    lock. So in the default stack this is the time spent waiting for the lock, including the
    part of a step that goes on after the lock is free. Needs perf and the right to trace (root).

    The whole machine is traced, not the processes: `perf trace -p` follows only the threads
    alive when it starts, and gunicorn starts its threads as requests come.
    """

    HEADER = re.compile(r"^ (?P<name>.+) \((?P<tid>\d+)\), \d+ events")
    ROW = re.compile(r"^\s+(?:clock_)?nanosleep\s+(?P<calls>\d+)\s+\d+\s+(?P<total>[\d.]+)")

    def __init__(self, roots: list[int], output: Path) -> None:
        self.roots = roots
        self.output = output
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = ["perf", "trace", "-a", "-s", "-e", "clock_nanosleep,nanosleep"]
        self.process = subprocess.Popen(  # noqa: S603
            [*command, "-o", str(self.output)], stderr=subprocess.DEVNULL
        )
        time.sleep(1)  # perf attaches its probes before the phase starts

    def stop(self) -> tuple[int, float]:
        """The calls and the seconds slept since `start` by the threads of the trees' leaves:
        gunicorn's and Celery's worker processes. The processes above them sleep on purpose
        (Celery's main process polls the file-system broker ten times a second)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)
        table = process_table()
        in_trees = trees(table, self.roots)
        parents = {table[pid].parent for pid in in_trees}
        threads = set()
        for pid in in_trees:
            if pid in parents:
                continue
            try:
                threads.update(int(tid) for tid in os.listdir(f"/proc/{pid}/task"))
            except OSError:
                continue
        calls, seconds, tid = 0, 0.0, None
        for line in self.output.read_text().splitlines():
            if header := self.HEADER.match(line):
                tid = int(header["tid"])
            elif (row := self.ROW.match(line)) and tid in threads:
                calls += int(row["calls"])
                seconds += float(row["total"]) / 1000
        return calls, seconds
