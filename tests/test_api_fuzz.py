"""The whole API under a schema-driven fuzzer (schemathesis), as an anonymous caller, an
annotator and a manager: no answer is a server error, and every answer conforms to the schema
that /api/schema/ serves, its statuses included (tests/api_schema.py says which checks).

The fuzzer reads the schema from a live test server on this machine and sends it requests
generated from that schema, valid ones and invalid ones, with the project's slug and the ids of
real objects in the path so that the calls reach the project rather than a 404. Generation is
derandomized: every run sends the same requests. Each operation is a subtest, so that one run
reports every operation that fails, each with a command that reproduces the request.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.apps import apps
from django.conf import settings as django_settings
from schemathesis import GenerationMode

from annotation.services.queue import lease_next_record
from config.celery import app
from tests.api_schema import CHECKS, served_schema, token
from tests.conftest import Cast
from tests.factories import RecordFactory
from tests.test_access import url_values

pytestmark = pytest.mark.django_db(transaction=True)

PERSONAS = ("anonymous", "annotator", "manager")
# Requests per operation, persona and kind (valid, invalid): about a minute for the
# three personas on a machine of two cores.
EXAMPLES = 10
SETTINGS = hypothesis.settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    # No shrinking: a failure is reported as found, which keeps the test's time bounded.
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    suppress_health_check=[
        hypothesis.HealthCheck.too_slow,
        hypothesis.HealthCheck.filter_too_much,
        hypothesis.HealthCheck.data_too_large,
    ],
)
# Calls out to the judge's endpoint, which the fuzzer may just have pointed anywhere: requests
# leave this machine only towards servers of its own.
LEAVES_THE_MACHINE = ("POST", "/api/projects/{slug}/judges/{judge_id}/test/")
# Records left for the annotator's leases, which the fuzzer's submits and skips use up.
SPARE_RECORDS = 5


@pytest.fixture(scope="session")
def whole_studio_imported() -> None:
    """Every module of the studio, imported. Hypothesis mixes the constants of the project's
    modules that are loaded into the data it draws: without this, the requests would depend on
    which tests ran before in the same process, and on which modules they happened to import."""
    root = django_settings.BASE_DIR
    packages = ["config", *(a.name for a in apps.get_app_configs() if Path(a.path).parent == root)]
    for package in packages:
        path = importlib.import_module(package).__path__
        for module in pkgutil.walk_packages(path, prefix=f"{package}."):
            importlib.import_module(module.name)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    # The project's release is built: keep its files out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def no_jobs_left() -> Iterator[None]:
    # Imports, runs and releases the fuzzer starts are queued for workers that this test does
    # not start: they must not outlive it.
    yield
    app.control.purge()


def operations(schema: schemathesis.BaseSchema) -> Iterator[Any]:
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) != LEAVES_THE_MACHINE:
            yield operation


def modes(operation: Any) -> list[GenerationMode]:
    """Valid requests, and invalid ones where a request has a query or a body to get wrong: its
    path names real objects, and its only headers and cookies are the credentials, free text."""
    if len(operation.query) or len(operation.body):
        return [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    return [GenerationMode.POSITIVE]


def fuzz(operation: Any, mode: GenerationMode, path: dict[str, Any], headers: dict) -> set[int]:
    """Send the operation's generated requests; the statuses they were answered with."""
    strategy = operation.as_strategy(
        generation_mode=mode,
        path_parameters={p.name: path[p.name] for p in operation.path_parameters},
    )
    statuses: set[int] = set()

    @SETTINGS
    @hypothesis.given(case=strategy)
    def call(case: schemathesis.Case) -> None:
        statuses.add(case.call_and_validate(headers=headers, checks=CHECKS).status_code)

    call()
    return statuses


def nul_bodies(schema: schemathesis.BaseSchema, operation: Any) -> Iterator[dict[str, Any]]:
    """For each text field of the operation's JSON body, a body with a NUL character in it."""
    content = operation.definition.raw.get("requestBody", {}).get("content", {})
    reference = content.get("application/json", {}).get("schema", {}).get("$ref", "")
    if not reference:
        return
    component = schema.raw_schema["components"]["schemas"][reference.rsplit("/", 1)[-1]]
    for name, field in component.get("properties", {}).items():
        if field.get("type") == "string":
            yield {name: "a\x00"}
        elif field.get("type") == "array" and field.get("items", {}).get("type") == "string":
            yield {name: ["a\x00"]}


@pytest.mark.parametrize("persona", PERSONAS)
def test_the_api_answers_within_its_schema_and_never_with_a_server_error(
    persona: str,
    cast: Cast,
    live_server: Any,
    subtests: Any,
    no_jobs_left: None,
    whole_studio_imported: None,
) -> None:
    path = url_values(cast)
    RecordFactory.create_batch(SPARE_RECORDS, project=cast.project)
    schema = served_schema(live_server.url, cast.manager)
    headers = {} if persona == "anonymous" else token(getattr(cast, persona))
    only_not_found = []
    for operation in operations(schema):
        # The annotator's lease, or a new one if the last operation submitted or skipped it.
        path["lease_id"] = lease_next_record(project=cast.project, annotator=cast.annotator).pk
        statuses: set[int] = set()
        for mode in modes(operation):
            with subtests.test(msg=f"{operation.label} ({mode.value})"):
                statuses |= fuzz(operation, mode, path, headers)
        if statuses == {404}:
            only_not_found.append(operation.label)
    assert not only_not_found, "Calls that never reached the object in their path"


@pytest.mark.parametrize("persona", ["annotator", "manager"])
def test_text_with_a_nul_character_is_refused_and_never_a_server_error(
    persona: str, cast: Cast, live_server: Any, subtests: Any, no_jobs_left: None
) -> None:
    """PostgreSQL can neither store nor look up text holding a NUL character: every text field
    of every JSON body must refuse it before it reaches the database. The fuzzer draws such text
    too rarely to be relied on for it."""
    path = url_values(cast)
    RecordFactory.create_batch(SPARE_RECORDS, project=cast.project)
    schema = served_schema(live_server.url, cast.manager)
    headers = token(getattr(cast, persona))
    for operation in operations(schema):
        for body in nul_bodies(schema, operation):
            path["lease_id"] = lease_next_record(project=cast.project, annotator=cast.annotator).pk
            case = operation.Case(
                path_parameters={p.name: path[p.name] for p in operation.path_parameters},
                body=body,
                media_type="application/json",
            )
            with subtests.test(msg=f"{operation.label} {body}"):
                case.call_and_validate(headers=headers, checks=CHECKS)
