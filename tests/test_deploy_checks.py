"""Deployment: production settings pass Django's deploy checks, bad settings stop the start-up,
the manual and docker-compose.yml agree with the variables the settings read, and a process
carries only the libraries its work needs."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]
# The manual documents every variable and the production settings (the README points to it).
MANUAL = (ROOT / "docs" / "manual.md").read_text()
# Every variable the settings read, as env.<type>("NAME", ...).
SETTINGS_VARIABLES = set(
    re.findall(r'\benv\.\w+\(\s*"([A-Z][A-Z0-9_]*)"', (ROOT / "config/settings.py").read_text())
)
# The variables in the manual's tables, one row each.
DOCUMENTED_VARIABLES = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", MANUAL, re.MULTILINE))


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run manage.py in a fresh process with the given variables and little else, as on a
    server: the suite's own (DJANGO_ALLOW_ASYNC_UNSAFE for the browser tests) must not leak in."""
    shell = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return subprocess.run(  # noqa: S603 (this interpreter and the test's own arguments)
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**shell, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def production_env(tmp_path: Path) -> dict[str, str]:
    """The manual's production settings, with a real key and this machine's services.

    VAR_DIR is a folder of the test's own: in a checkout where `./studio up` ran, var/ holds
    the embedded studio's key, which these processes would otherwise read.
    """
    block = re.search(r"```dotenv\n(.*?)```", MANUAL, re.DOTALL)
    assert block, "The manual has no ```dotenv block of production settings."
    variables = dict(
        line.split("=", 1) for line in block.group(1).splitlines() if line and "=" in line
    )
    return {
        **variables,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": os.environ["DATABASE_URL"],
        "REDIS_URL": os.environ["REDIS_URL"],
        "VAR_DIR": str(tmp_path / "var"),
    }


def test_the_readme_production_settings_pass_the_deploy_checks(
    production_env: dict[str, str],
) -> None:
    assert production_env["DEBUG"] == "false"

    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DEBUG", "maybe"),
        ("SECURE_HSTS_SECONDS", "a year"),
        ("LOG_LEVEL", "LOUD"),
        ("DATABASE_URL", "postgres//no-scheme"),
    ],
)
def test_settings_refuse_to_start_with_a_malformed_variable(
    production_env: dict[str, str], name: str, value: str
) -> None:
    result = manage("check", env={**production_env, name: value})

    assert result.returncode != 0
    assert name in result.stderr


@pytest.mark.parametrize("debug", ["false", "true"])
def test_settings_refuse_to_start_without_a_secret_key_even_in_development(
    production_env: dict[str, str], debug: str
) -> None:
    del production_env["SECRET_KEY"]

    result = manage("check", env={**production_env, "DEBUG": debug})

    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
    assert "studio.env" in result.stderr


def test_the_deploy_check_warns_of_a_proxy_whose_forwarded_addresses_are_not_believed(
    production_env: dict[str, str],
) -> None:
    del production_env["TRUSTED_PROXY_COUNT"]

    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env)

    assert result.returncode != 0
    assert "curation.W001" in result.stderr


@pytest.mark.parametrize("key", ["too-short-" + "x" * 39, "ab" * 40])
def test_the_deploy_check_refuses_a_short_or_repetitive_secret_key(
    production_env: dict[str, str], key: str
) -> None:
    result = manage("check", "--deploy", env={**production_env, "SECRET_KEY": key})

    assert result.returncode != 0
    assert "curation.E001" in result.stderr
    assert "SECRET_KEY has" in result.stderr


@pytest.mark.parametrize(
    ("exported", "expected"),
    [({}, "kept-by-studio-up"), ({"SECRET_KEY": "exported"}, "exported")],
)
def test_settings_read_the_key_studio_up_keeps_and_the_environment_wins(
    production_env: dict[str, str], exported: dict[str, str], expected: str
) -> None:
    del production_env["SECRET_KEY"]
    var_dir = Path(production_env["VAR_DIR"])
    var_dir.mkdir()
    (var_dir / "studio.env").write_text(
        "# As ./studio up writes it.\nSECRET_KEY=kept-by-studio-up\n"
    )
    code = "from django.conf import settings; print(settings.SECRET_KEY)"

    result = manage("shell", "--no-imports", "-c", code, env={**production_env, **exported})

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_pages_workers_and_imports_load_without_the_libraries_of_builds_and_judge_calls(
    production_env: dict[str, str],
) -> None:
    # pyarrow (release builds) and openai (judge calls) take 125 MB of memory together, which
    # every web and worker process, and an import's 300 MB budget, would carry for nothing.
    code = (
        "import sys; from django.urls import get_resolver; get_resolver().url_patterns; "
        "import config.celery, curation.tasks, judging.tasks, releases.tasks; "
        "print(sorted(name for name in ('pyarrow', 'openai') if name in sys.modules))"
    )

    result = manage("shell", "--no-imports", "-c", code, env=production_env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_readme_documents_every_variable_the_settings_read() -> None:
    assert SETTINGS_VARIABLES, "No variables found: has the settings' style changed?"
    undocumented = SETTINGS_VARIABLES - DOCUMENTED_VARIABLES
    assert not undocumented, f"Add these to the manual's table: {sorted(undocumented)}"


def test_the_compose_file_runs_every_service_with_health_checks_and_volumes() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]

    assert set(services) == {"postgres", "redis", "web", "worker"}
    for name, service in services.items():
        assert service["healthcheck"]["test"], f"{name} has no health check"
    assert "pg_isready" in str(services["postgres"]["healthcheck"]["test"])
    assert "redis-cli" in services["redis"]["healthcheck"]["test"]
    assert "/healthz/" in str(services["web"]["healthcheck"]["test"])
    assert {"postgres-data", "redis-data", "media"} <= set(compose["volumes"])
    web_command = " ".join(services["web"]["command"])
    assert "manage.py migrate" in web_command
    assert "gunicorn config.wsgi" in web_command
    assert services["worker"]["command"][:4] == ["celery", "-A", "config", "worker"]
    for name in ("web", "worker"):
        assert services[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert services[name]["depends_on"]["redis"]["condition"] == "service_healthy"
        assert "media:/app/var/media" in services[name]["volumes"]


def test_the_compose_file_sets_only_variables_the_readme_documents() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name in ("web", "worker"):
        environment = compose["services"][name]["environment"]
        assert environment["DEBUG"] == "false"
        undocumented = set(environment) - DOCUMENTED_VARIABLES
        assert not undocumented, f"{name} sets variables the manual lacks: {undocumented}"
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert environment["REDIS_URL"].startswith("redis://")
