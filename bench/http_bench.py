"""Benchmark: the studio over HTTP, as annotators' scripts and browsers use it, on both stacks.

    .venv/bin/python bench/http_bench.py --stack default|postgres [--records 50000] [--runs 3] \\
        [--pairs 200] [--seconds 30] [--port 8791] \\
        [--database-url postgres://postgres@127.0.0.1:5432/studio_httpbench] \\
        [--redis-url redis://127.0.0.1:6379/8] [--trace-sleeps]

Each stack is started the way a user starts it, in a temporary folder of its own:
- `default`: `./studio up` with VAR_DIR in the folder and PORT free (SQLite, the file-system
  broker, gunicorn and a Celery worker, all as the README's one command starts them;
  the virtual environment is $VENV, so that nothing is installed);
- `postgres`: migrations, then gunicorn with 2 workers and one Celery worker on the given
  PostgreSQL database (dropped and made anew) and Redis database.

Then, --runs times each (medians printed):
1. import by upload: --records synthetic records (bench/generate_records.py, JSONL) POSTed to the
   imports API, polled until the import has succeeded ("stored") and until its records are
   searchable;
2. import by command: `manage.py import_records` of the same records into another project, its
   wall-clock time and its peak memory (the command's own process);
3. one annotator: --pairs claim + submit pairs one after the other, over the API with a token,
   each on a new connection as a script's `requests.post` makes it; p50 and p95 of a pair;
4. eight annotators at once for --seconds: pairs a second, p50 and p95; afterwards no record may
   have more than k labels.
Meanwhile the resident memory of the server's and the worker's process trees is sampled every
0.2 s: the peak of their sum, the sum when idle before the first run and after the last, and
at the end of each run (a process that kept a job's data would grow from run to run);
each process's own is printed too, idle, after each upload's import, after each run's eight
annotators and idle at the end, to show which process keeps what. The upload's figures say
when the server answered it (the file received and saved) as well as when it was stored.
The CPU time a pair takes is measured too (bench/processes.py): in the server's and the
worker's trees (SQLite's work included), in PostgreSQL's server processes for the database,
and in this client. The load average is printed with each run: the machine may be shared, and
other work stretches the wall-clock figures, not the CPU ones.
With --trace-sleeps (perf, as root), the time the server's and the worker's threads slept while
the eight annotators worked is measured too (bench/processes.py, Sleeps): on the default, the
time SQLite's busy handler spent waiting for another connection's write lock.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from processes import CpuMeter, MemorySampler, Sleeps, process_table, trees  # noqa: E402

VENV = Path(os.environ.get("VENV", ROOT / ".venv"))
PYTHON = str(VENV / "bin" / "python")
K = 2

# Run in the studio's own environment (manage.py shell): a manager, annotators with API tokens
# and two projects, one for the uploads and one for the command.
SETUP = """
import json
from django.contrib.auth import get_user_model
from curation.models import Role
from curation.services.accounts import api_token_create
from curation.services.projects import membership_grant, project_create

users = get_user_model().objects
manager = users.create_superuser("bench-manager", password=None)
keys = {"manager": api_token_create(user=manager, name="bench")[1], "annotators": []}
for n in range(8):
    user = users.create_user(f"bench-annotator-{n}")
    keys["annotators"].append(api_token_create(user=user, name="bench")[1])
for run in range(%(runs)d):
    for kind in ("upload", "command"):
        project = project_create(actor=manager, name=f"{kind} {run}", slug=f"{kind}-{run}")
        project.overlap = %(k)d
        project.save()
        membership_grant(actor=manager, project=project, user=manager, role=Role.MANAGER)
        for n in range(8):
            user = users.get(username=f"bench-annotator-{n}")
            membership_grant(actor=manager, project=project, user=user, role=Role.ANNOTATOR)
print(json.dumps(keys))
"""
# The most labels any record of a project has, and how many labels there are.
OVER_K = """
from django.db.models import Count, Max
from curation.models import Record
print(Record.objects.filter(project__slug=%r).annotate(n=Count("annotations"))
      .aggregate(most=Max("n"))["most"] or 0)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=("default", "postgres"), required=True)
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/studio_httpbench"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/8")
    parser.add_argument(
        "--trace-sleeps",
        action="store_true",
        help="trace the stack's sleeps (SQLite's busy handler) while 8 annotators work; "
        "needs perf and root",
    )
    args = parser.parse_args()
    from generate_records import write_jsonl

    with tempfile.TemporaryDirectory(prefix="http-bench-") as folder:
        folder = Path(folder)
        data = folder / "records"
        write_jsonl(data, args.records, seed=1)
        upload = folder / "records.jsonl"
        with upload.open("wb") as out:
            for part in sorted(data.glob("*.jsonl")):
                out.write(part.read_bytes())
        with stack(args, folder) as (url, env, trees_of_stack):
            keys = json.loads(
                manage(env, "shell", "-c", SETUP % {"runs": args.runs, "k": K}).splitlines()[-1]
            )
            memory = MemorySampler(trees_of_stack)
            database = args.database_url.rsplit("/", 1)[1] if args.stack == "postgres" else None
            cpu = CpuMeter(trees_of_stack, database)
            time.sleep(3)
            idle_before = memory.now()
            resident = {"idle": resident_by_process(trees_of_stack)}
            results = []
            for run in range(args.runs):
                result = {"load": os.getloadavg()[0]}
                result.update(import_by_upload(url, keys["manager"], env, f"upload-{run}", upload))
                resident[f"run {run + 1}, after the upload"] = resident_by_process(trees_of_stack)
                result.update(import_by_command(env, f"command-{run}", data))
                result["one"] = cpu_per_pair(
                    cpu, one_annotator, url, keys["annotators"][0], f"command-{run}", args
                )
                sleeps = Sleeps(trees_of_stack, ROOT / "bench" / "out" / f"sleeps-{args.stack}.txt")
                if args.trace_sleeps:
                    sleeps.start()
                result["eight"] = cpu_per_pair(
                    cpu, eight_annotators, url, keys["annotators"], f"upload-{run}", args
                )
                if args.trace_sleeps:
                    calls, seconds = sleeps.stop()
                    result["eight"]["sleeps_per_pair"] = calls / result["eight"]["pairs"]
                    result["eight"]["slept_ms_per_pair"] = 1000 * seconds / result["eight"]["pairs"]
                resident[f"run {run + 1}, after 8 annotators"] = resident_by_process(trees_of_stack)
                result["over_k"] = (
                    int(manage(env, "shell", "-c", OVER_K % f"upload-{run}").split()[-1]) > K
                )
                result["memory_after_mb"] = memory.now()
                results.append(result)
                print(f"run {run + 1}: {json.dumps(result)}", file=sys.stderr)
            time.sleep(10)
            idle_after = memory.now()
            resident["idle after"] = resident_by_process(trees_of_stack)
            memory.stop()
            report(args, results, idle_before, idle_after, memory.peak)
            report_resident(resident)


@contextmanager
def stack(args: argparse.Namespace, folder: Path) -> Iterator[tuple[str, dict, list]]:
    """Start the stack; yield its URL, the environment its commands run with, and the pids of
    the process trees whose memory counts (the web server, the worker)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DEBUG")}
    env.update(VAR_DIR=str(folder / "var"), VENV=str(VENV), PORT=str(args.port))
    url = f"http://127.0.0.1:{args.port}"
    # Kept after the run, for a look at what the stack said (bench/out is not in git).
    (ROOT / "bench" / "out").mkdir(exist_ok=True)
    logs = (ROOT / "bench" / "out" / f"http-{args.stack}.log").open("w")
    processes: list[subprocess.Popen] = []
    if args.stack == "default":
        processes.append(
            subprocess.Popen(  # noqa: S603
                [str(ROOT / "studio"), "up"],
                env=env,
                stdout=logs,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        # Every command afterwards reads var/studio.env, as a user's would.
    else:
        fresh_databases(args.database_url, args.redis_url)
        env.update(
            DATABASE_URL=args.database_url,
            REDIS_URL=args.redis_url,
            SECRET_KEY="bench-" + uuid.uuid4().hex,
            SECURE_SSL_REDIRECT="false",
            SECURE_COOKIES="false",
            MEDIA_ROOT=str(folder / "media"),
            STATIC_ROOT=str(folder / "static"),
        )
        manage(env, "migrate", "--noinput", "-v0")
        manage(env, "collectstatic", "--noinput", "-v0")
        for command in (
            [
                str(VENV / "bin" / "gunicorn"),
                "config.wsgi",
                "--workers",
                "2",
                "--bind",
                f"127.0.0.1:{args.port}",
            ],
            [
                str(VENV / "bin" / "celery"),
                "-A",
                "config",
                "worker",
                "--concurrency",
                "1",
                "--loglevel",
                "WARNING",
            ],
        ):
            processes.append(
                subprocess.Popen(  # noqa: S603
                    command,
                    env=env,
                    cwd=ROOT,
                    stdout=logs,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
    try:
        wait_for(url, processes)
        yield url, env, [process.pid for process in processes]
    finally:
        # Each stops its own children: ./studio up its server and worker, gunicorn and Celery
        # their worker processes.
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)
        logs.close()


def fresh_databases(database_url: str, redis_url: str) -> None:
    import psycopg
    import redis

    server, name = database_url.rsplit("/", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    redis.Redis.from_url(redis_url).flushdb()


def wait_for(url: str, processes: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + 600
    while True:
        try:
            urllib.request.urlopen(f"{url}/healthz/", timeout=5).close()  # noqa: S310
            return
        except OSError:
            if any(p.poll() is not None for p in processes) or time.monotonic() > deadline:
                sys.exit("The stack did not start; see its log.")
            time.sleep(0.5)


def manage(env: dict, *args: str) -> str:
    return subprocess.run(  # noqa: S603
        [PYTHON, "manage.py", *args],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def call(
    url: str,
    key: str,
    method: str,
    path: str,
    body: bytes | None = None,
    content_type: str = "application/json",
) -> tuple[int, dict]:
    request = urllib.request.Request(  # noqa: S310
        url + path,
        data=body,
        method=method,
        headers={"Authorization": f"Token {key}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
            text = response.read()
            return response.status, json.loads(text) if text else {}
    except urllib.error.HTTPError as error:
        return error.code, {"error": error.read()[:300].decode(errors="replace")}


def searchable_at(env: dict, batch_id: int) -> object:
    """When the batch's records became searchable, read from the database: the API does not
    say."""
    query = f"SELECT searchable_at FROM curation_importbatch WHERE id = {int(batch_id)}"  # noqa: S608
    if "DATABASE_URL" in env:
        import psycopg

        with psycopg.connect(env["DATABASE_URL"]) as connection:
            return connection.execute(query).fetchone()[0]
    import sqlite3

    connection = sqlite3.connect(Path(env["VAR_DIR"]) / "studio.sqlite3", timeout=30)
    try:
        return connection.execute(query).fetchone()[0]
    finally:
        connection.close()


def import_by_upload(url: str, key: str, env: dict, slug: str, upload: Path) -> dict:
    boundary = uuid.uuid4().hex
    body = b"".join(
        [
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{upload.name}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode(),
            upload.read_bytes(),
            f"\r\n--{boundary}--\r\n".encode(),
        ]
    )
    started = time.perf_counter()
    status, batch = call(
        url,
        key,
        "POST",
        f"/api/projects/{slug}/imports/",
        body,
        f"multipart/form-data; boundary={boundary}",
    )
    assert status == 202, (status, batch)
    # The upload sent, parsed by the server and saved; the worker's part follows.
    accepted = time.perf_counter() - started
    stored = None
    while True:
        status, batch = call(url, key, "GET", f"/api/projects/{slug}/imports/{batch['id']}/")
        if batch["state"] == "failed":
            sys.exit(f"The import failed: {batch}")
        if batch["state"] == "succeeded" and stored is None:
            stored = time.perf_counter() - started
        if stored is not None and searchable_at(env, batch["id"]):
            searchable = time.perf_counter() - started
            break
        time.sleep(0.1)
    return {
        "upload_accepted_s": accepted,
        "upload_stored_s": stored,
        "upload_rate": batch["created_count"] / stored,
        "upload_searchable_s": searchable,
    }


def import_by_command(env: dict, slug: str, data: Path) -> dict:
    started = time.perf_counter()
    # GNU time's maximum resident set size of the command, in kB.
    result = subprocess.run(  # noqa: S603
        ["/usr/bin/time", "-f", "%M", PYTHON, "manage.py", "import_records", slug, str(data)],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    created = int(result.stdout.split(" new,")[0].rsplit(" ", 1)[1].replace(",", ""))
    return {
        "command_s": seconds,
        "command_rate": created / seconds,
        "command_peak_mb": int(result.stderr.strip().splitlines()[-1]) / 1024,
    }


def pair(url: str, key: str, slug: str) -> float | None:
    """Claim and submit once; the seconds it took, None when nothing is left."""
    started = time.perf_counter()
    status, lease = call(url, key, "POST", f"/api/projects/{slug}/annotation/claim/", b"{}")
    if status == 204:
        return None
    assert status == 200, (status, lease)
    label = json.dumps({"verdict": "unsafe", "risk_description": "It deletes the files."})
    status, answer = call(
        url,
        key,
        "POST",
        f"/api/projects/{slug}/annotation/leases/{lease['id']}/submit/",
        label.encode(),
    )
    assert status == 201, (status, answer)
    return time.perf_counter() - started


def one_annotator(url: str, key: str, slug: str, args: argparse.Namespace) -> dict:
    for _ in range(10):
        pair(url, key, slug)
    times = [pair(url, key, slug) for _ in range(args.pairs)]
    return summary([t for t in times if t is not None], None)


def eight_annotators(url: str, keys: list[str], slug: str, args: argparse.Namespace) -> dict:
    times: list[float] = []
    stop = time.monotonic() + args.seconds

    def annotate(key: str) -> None:
        while time.monotonic() < stop:
            seconds = pair(url, key, slug)
            if seconds is None:
                return
            times.append(seconds)

    threads = [threading.Thread(target=annotate, args=(key,)) for key in keys]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return summary(times, time.perf_counter() - started)


def cpu_per_pair(cpu: CpuMeter, phase: Callable[..., dict], *args: object) -> dict:
    """The phase's figures, with the CPU time a pair took: in the server's and the worker's
    trees (SQLite's work included), in PostgreSQL's server processes, and in this client."""
    stack, database = cpu.now()
    client = time.process_time()
    result = phase(*args)
    client = time.process_time() - client
    stack_after, database_after = cpu.now()
    for name, seconds in (
        ("stack", stack_after - stack),
        ("database", cpu.database_seconds(database, database_after)),
        ("client", client),
    ):
        result[f"{name}_cpu_ms_per_pair"] = 1000 * seconds / result["pairs"]
    return result


def summary(times: list[float], seconds: float | None) -> dict:
    times.sort()
    result = {
        "pairs": len(times),
        "mean_ms": 1000 * statistics.fmean(times),
        "p50_ms": 1000 * times[len(times) // 2],
        "p95_ms": 1000 * times[int(len(times) * 0.95)],
    }
    if seconds is not None:
        result["pairs_per_s"] = len(times) / seconds
    return result


def resident_by_process(roots: list[int]) -> dict[str, float]:
    """Each process of the trees by what it runs, with its resident memory in MB: which
    process keeps what after a job."""
    table = process_table()
    resident = {}
    for pid in sorted(trees(table, roots)):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        name = " ".join(Path(part.decode()).name for part in command[:3] if part)
        resident[f"{pid} {name}"] = table[pid].rss / 2**20
    return resident


def report_resident(resident: dict[str, dict[str, float]]) -> None:
    """A table of each process's resident memory at each moment sampled."""
    processes = list(dict.fromkeys(name for sample in resident.values() for name in sample))
    print("  resident memory by process, MB:")
    print("    " + " | ".join(["moment", *processes]))
    for moment, sample in resident.items():
        cells = [f"{sample[name]:.0f}" if name in sample else "-" for name in processes]
        print("    " + " | ".join([moment, *cells]))


def report(args, results, idle_before, idle_after, peak) -> None:
    def median(*keys: str) -> float:
        values = []
        for result in results:
            value = result
            for key in keys:
                value = value[key]
            values.append(value)
        return statistics.median(values)

    def cpu(phase: str) -> str:
        return (
            f"CPU a pair: server and worker {median(phase, 'stack_cpu_ms_per_pair'):.1f} ms, "
            f"PostgreSQL {median(phase, 'database_cpu_ms_per_pair'):.1f} ms, "
            f"this client {median(phase, 'client_cpu_ms_per_pair'):.1f} ms"
        )

    print(
        f"{args.stack} stack, {args.records:,} records, {len(results)} runs (medians), load "
        f"average {median('load'):.1f}:\n"
        f"  import by upload: accepted in {median('upload_accepted_s'):.1f} s, "
        f"stored in {median('upload_stored_s'):.1f} s "
        f"({median('upload_rate'):,.0f} records/s), searchable after "
        f"{median('upload_searchable_s'):.1f} s\n"
        f"  import by command: {median('command_s'):.1f} s ({median('command_rate'):,.0f} "
        f"records/s, whole command), peak {median('command_peak_mb'):.0f} MB\n"
        f"  one annotator: pair p50 {median('one', 'p50_ms'):.0f} ms, "
        f"p95 {median('one', 'p95_ms'):.0f} ms; {cpu('one')}\n"
        f"  8 annotators: {median('eight', 'pairs_per_s'):.1f} pairs/s, pair p50 "
        f"{median('eight', 'p50_ms'):.0f} ms, p95 {median('eight', 'p95_ms'):.0f} ms; "
        f"{cpu('eight')}; a record over k: {any(r['over_k'] for r in results)}\n"
        + (
            f"  8 annotators, the stack's threads slept (SQLite's busy handler) "
            f"{median('eight', 'slept_ms_per_pair'):.1f} ms a pair in "
            f"{median('eight', 'sleeps_per_pair'):.1f} sleeps, of a pair's mean "
            f"{median('eight', 'mean_ms'):.0f} ms\n"
            if args.trace_sleeps
            else ""
        )
        + f"  memory of the server and worker trees: idle {idle_before:.0f} MB, peak "
        f"{peak:.0f} MB, idle after {idle_after:.0f} MB; at the end of each run "
        + ", ".join(f"{result['memory_after_mb']:.0f}" for result in results)
        + " MB"
    )


if __name__ == "__main__":
    main()
