"""Django's development server does not pile up idle database connections, one per thread."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.test_studio_up import free_port, shell_env, stop

pytestmark = [pytest.mark.subprocess, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[1]
APPLICATION = "studio-runserver-test"


def connections_of(application: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [application]
        )
        return cursor.fetchone()[0]


def wait_until_up(url: str, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert server.poll() is None, "the development server stopped"
        try:
            urllib.request.urlopen(url, timeout=5).read()  # noqa: S310 (our own server)
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("the development server did not answer")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="connections of a server")
def test_concurrent_requests_to_the_development_server_leave_no_idle_connections(
    tmp_path: Path,
) -> None:
    database = settings.DATABASES["default"]
    url = (
        f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
        f"?application_name={APPLICATION}"
    )
    port = free_port()
    env = {
        **shell_env(),
        "SECRET_KEY": "x" * 50,
        "DATABASE_URL": url,
        "REDIS_URL": os.environ.get("REDIS_URL", ""),
        "VAR_DIR": str(tmp_path / "var"),
    }
    log = (tmp_path / "runserver.log").open("w")
    server = subprocess.Popen(  # noqa: S603 (this interpreter and our own arguments)
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        health = f"http://127.0.0.1:{port}/healthz/"
        wait_until_up(health, server)
        with ThreadPoolExecutor(max_workers=20) as pool:
            answers = list(pool.map(lambda _: urllib.request.urlopen(health).read(), range(60)))
        assert answers == [b"ok"] * 60
        time.sleep(1)

        assert connections_of(APPLICATION) <= 1
    finally:
        stop(server)
        log.close()
