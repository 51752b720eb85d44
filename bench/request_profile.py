"""Benchmark: what an API claim, an API submit and a labelling page cost in the web process.

    .venv/bin/python bench/request_profile.py [--records 5000] [--requests 300] [--top 15]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_profile REDIS_URL=redis://... \\
        .venv/bin/python bench/request_profile.py

Without DATABASE_URL, a new SQLite database in a temporary folder, as `./studio up` makes it;
with it, that database (migrated here; its project "profile" is made once and reused). The
requests go through Django's WSGI handler as gunicorn calls it, with the production settings
(DEBUG off) and every middleware, one after the other in this one thread:

1. `claim`: `POST /api/projects/profile/annotation/claim/` with an API token;
2. `submit`: `POST .../leases/<id>/submit/` of a label, the same annotator;
3. `page`: `GET /p/profile/annotate/`, the labelling page of a held lease, with a session.

For each kind: the median wall-clock time and CPU time (of this process: SQLite's work is in it,
PostgreSQL's is not) of a request, its queries and the time spent in them (from the driver's
`execute` until it returns, rows fetched included). Then each kind again under cProfile: the
time by where it is spent (the database driver, Django's ORM, DRF, templates, middleware and
the request's handling, the studio's own code), and the functions with the most time of their
own.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
_TEMPORARY = tempfile.TemporaryDirectory(prefix="request-profile-")
# Production settings over plain HTTP, as ./studio up runs them; the key signs nothing kept.
os.environ.update(DEBUG="false", SECURE_SSL_REDIRECT="false", SECURE_COOKIES="false")
os.environ.setdefault("SECRET_KEY", "profile-only-" + os.urandom(16).hex())
os.environ.setdefault("VAR_DIR", _TEMPORARY.name)
os.environ.setdefault("STATIC_ROOT", str(Path(_TEMPORARY.name) / "static"))

import django  # noqa: E402

django.setup()

from django.core.handlers.wsgi import WSGIHandler  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.test import Client  # noqa: E402

from annotation.models import Lease  # noqa: E402
from bench.generate_records import write_jsonl  # noqa: E402
from curation.models import ImportBatch, Project, Role  # noqa: E402
from curation.services.accounts import api_token_create  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import membership_grant, project_create  # noqa: E402

SLUG = "profile"
HOST = "127.0.0.1"
LABEL = json.dumps({"verdict": "unsafe", "risk_description": "It deletes the files."}).encode()
STUDIO_APPS = ("curation", "annotation", "judging", "config")
# Where a function's own time goes, by the file it is in (first match wins).
PLACES = [
    ("database driver", ("sqlite3", "psycopg", "<built-in method _sqlite3", "sqlite3.Cursor")),
    ("Django ORM", ("django/db/",)),
    ("DRF", ("rest_framework/",)),
    ("templates", ("django/template/", "django/templatetags/")),
    (
        "middleware and request handling",
        (
            "django/core/handlers/",
            "django/middleware/",
            "django/http/",
            "django/contrib/sessions/",
            "django/contrib/auth/",
            "django/contrib/messages/",
            "django/utils/csp",
            "whitenoise/",
            "django_htmx/",
            "axes/",
            "django/urls/",
            "django/dispatch/",
        ),
    ),
    (
        "the studio's code",
        tuple(f"{ROOT}/{app}/" for app in ("curation", "annotation", "judging", "config")),
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--show-queries", action="store_true", help="the SQL of each kind")
    parser.add_argument(
        "--sort", default="tottime", help="tottime (own time) or cumulative (with callees)"
    )
    parser.add_argument("--only", help="print only the functions whose place matches this")
    args = parser.parse_args()
    call_command("migrate", "--noinput", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)
    studio = Studio(args.records)
    DatabaseTime.watch_connections()
    print(f"{connection.vendor}, {args.records:,} records, load {os.getloadavg()}", flush=True)
    kinds: dict[str, Callable[[], None]] = {
        "claim": studio.claim,
        "submit": studio.submit,
        "page": studio.page,
    }
    timings = {kind: studio.timed(kinds, kind, args.requests) for kind in kinds}
    for kind, timing in timings.items():
        statements = timing.pop("statements")
        print(f"{kind}: {json.dumps(timing)}")
        if args.show_queries:
            print("".join(f"    {sql[:160]}\n" for sql in statements))
    for kind in kinds:
        print(f"\n== {kind}: where the time goes (cProfile, {args.requests} requests)")
        print(studio.profiled(kinds, kind, args))
    print(f"\nload {os.getloadavg()}")


class Studio:
    """The project, an annotator with a token and a session, and the WSGI application."""

    def __init__(self, records: int) -> None:
        self.application = WSGIHandler()
        project = Project.objects.filter(slug=SLUG).first() or _filled_project(records)
        from django.contrib.auth import get_user_model

        users = get_user_model().objects
        self.annotator = users.create_user(f"annotator-{time.monotonic_ns()}")
        membership_grant(actor=None, project=project, user=self.annotator, role=Role.ANNOTATOR)
        self.token = api_token_create(user=self.annotator, name="profile")[1]
        client = Client()
        client.force_login(self.annotator)
        self.cookie = f"sessionid={client.cookies['sessionid'].value}"
        self.lease_id = 0

    def request(
        self, method: str, path: str, body: bytes = b"", **headers: str
    ) -> tuple[int, bytes]:
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": HOST,
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": HOST,
            "HTTP_HOST": f"{HOST}:8000",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.url_scheme": "http",
            "wsgi.version": (1, 0),
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            **{f"HTTP_{name.upper()}": value for name, value in headers.items()},
        }
        status: list[str] = []
        response = self.application(environ, lambda line, _headers: status.append(line))
        try:
            content = b"".join(response)
        finally:
            response.close()
        return int(status[0].split()[0]), content

    def claim(self) -> None:
        path = f"/api/projects/{SLUG}/annotation/claim/"
        status, content = self.request("POST", path, b"{}", authorization=f"Token {self.token}")
        assert status == 200, (status, content[:300])
        self.lease_id = json.loads(content)["id"]

    def submit(self) -> None:
        path = f"/api/projects/{SLUG}/annotation/leases/{self.lease_id}/submit/"
        status, content = self.request("POST", path, LABEL, authorization=f"Token {self.token}")
        assert status == 201, (status, content[:300])

    def page(self) -> None:
        status, content = self.request("GET", f"/p/{SLUG}/annotate/", cookie=self.cookie)
        assert status == 200 and b'id="label-form"' in content, (status, content[:300])

    def before(self, kind: str) -> None:
        """The state a request of this kind needs: a lease to submit or to show, or none."""
        held = Lease.objects.filter(annotator=self.annotator, state=Lease.State.ACTIVE).first()
        if kind == "claim" and held is not None:
            self.lease_id = held.pk
            self.submit()
        elif kind != "claim" and held is None:
            self.claim()

    def timed(self, kinds: dict[str, Callable[[], None]], kind: str, count: int) -> dict:
        walls, cpus, queries, database = [], [], [], []
        for _ in range(count // 10):  # warm up
            self.before(kind)
            kinds[kind]()
        for _ in range(count):
            self.before(kind)
            spent = DatabaseTime.current = DatabaseTime()
            with connection.execute_wrapper(spent):
                started, cpu = time.perf_counter(), time.process_time()
                kinds[kind]()
                walls.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
            DatabaseTime.current = None
            queries.append(spent.queries)
            database.append(spent.seconds)
        return {
            "statements": spent.statements,
            "wall_ms": round(1000 * statistics.median(walls), 2),
            "cpu_ms": round(1000 * statistics.median(cpus), 2),
            "queries": statistics.median(queries),
            "database_ms": round(1000 * statistics.median(database), 2),
            "besides_database_ms": round(
                1000 * statistics.median(w - d for w, d in zip(walls, database, strict=True)), 2
            ),
        }

    def profiled(
        self, kinds: dict[str, Callable[[], None]], kind: str, args: argparse.Namespace
    ) -> str:
        count = args.requests
        profile = cProfile.Profile()
        for _ in range(count):
            self.before(kind)
            profile.enable()
            kinds[kind]()
            profile.disable()
        stats = pstats.Stats(profile)
        total = sum(row[2] for row in stats.stats.values())
        by_place: dict[str, float] = defaultdict(float)
        for (filename, _line, name), row in stats.stats.items():
            by_place[_place(filename, name)] += row[2]
        calls = sum(row[1] for row in stats.stats.values())
        # Function calls do not vary with the machine's load as times do: a cut shows in them
        # even on a busy machine.
        lines = [
            f"{total / count * 1000:.2f} ms a request under the profiler, "
            f"{calls / count:,.0f} function calls a request"
        ]
        for place, seconds in sorted(by_place.items(), key=lambda item: -item[1]):
            lines.append(f"  {place:34} {100 * seconds / total:5.1f} %")
        out = io.StringIO()
        restrictions = [args.only] if args.only else []
        pstats.Stats(profile, stream=out).sort_stats(args.sort).print_stats(*restrictions, args.top)
        lines.append(out.getvalue().split("\n\n", 2)[-1].replace(str(ROOT) + "/", ""))
        return "\n".join(lines)


class DatabaseTime:
    """The queries a request makes, and the time spent in the database driver: running them,
    committing, and opening and closing connections (SQLite checkpoints its log on a close)."""

    current: DatabaseTime | None = None

    def __init__(self) -> None:
        self.queries = 0
        self.seconds = 0.0
        self.statements: list[str] = []

    def __call__(
        self, execute: Callable, sql: str, params: object, many: bool, context: dict
    ) -> object:
        self.queries += 1
        self.statements.append(sql)
        return self.timing(execute, sql, params, many, context)

    def timing(self, call: Callable, *args: object) -> object:
        started = time.perf_counter()
        try:
            return call(*args)
        finally:
            self.seconds += time.perf_counter() - started

    @classmethod
    def watch_connections(cls) -> None:
        """Count commits and connections' opening and closing too, whatever the backend."""
        wrapper = type(connections["default"])
        for name in ("_commit", "_close", "get_new_connection", "init_connection_state"):
            method = getattr(wrapper, name)

            def timed(self: object, *args: object, _method: Callable = method) -> object:
                spent = DatabaseTime.current
                if spent is None:
                    return _method(self, *args)
                return spent.timing(_method, self, *args)

            setattr(wrapper, name, timed)


def _place(filename: str, name: str) -> str:
    where = filename + " " + name
    for place, marks in PLACES:
        if any(mark in where for mark in marks):
            return place
    if filename == "~":
        return "Python's built-ins (C)"
    return "other libraries and the standard library"


def _filled_project(records: int) -> Project:
    project = project_create(actor=None, name="Profile", slug=SLUG)
    project.overlap = 2
    project.save()
    with tempfile.TemporaryDirectory() as folder:
        write_jsonl(Path(folder), records, seed=1)
        batch = import_path(actor=None, project=project, path=Path(folder))
    if batch.state != ImportBatch.State.SUCCEEDED:
        sys.exit(f"The import failed: {batch.errors}")
    return project


if __name__ == "__main__":
    main()
