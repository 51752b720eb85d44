"""The OpenAPI schema and its docs page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.core.management import call_command
from django.urls import reverse

from tests.access import walk_urlconf
from tests.conftest import Cast


def generated_schema(tmp_path: Path) -> dict:
    out = tmp_path / "schema.json"
    # --fail-on-warn: a view the generator cannot describe fully (an untyped field, a path
    # parameter it cannot resolve) fails here rather than showing up as a vague docs page.
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", "--file", out
    )
    return json.loads(out.read_text())


def test_the_schema_generates_without_warnings_and_validates(tmp_path: Path) -> None:
    schema = generated_schema(tmp_path)

    assert schema["info"]["title"] == "Curation Studio API"


def test_the_schema_describes_every_api_route(tmp_path: Path) -> None:
    paths = generated_schema(tmp_path)["paths"]

    templates = [re.compile(re.sub(r"\{\w+\}", "[^/]+", path) + "$") for path in paths]
    api_routes = [r for r in walk_urlconf() if r.name.startswith("api:")]
    assert api_routes
    for route in api_routes:
        url = reverse(route.name, kwargs={p: "1" for p in route.params})
        assert any(template.match(url) for template in templates), route.name


def test_the_schema_documents_the_record_filters_and_the_upload(tmp_path: Path) -> None:
    paths = generated_schema(tmp_path)["paths"]

    record_list = paths["/api/projects/{slug}/records/"]["get"]
    parameters = {p["name"]: p for p in record_list["parameters"]}
    assert {"category", "scenario", "gold_label", "attack_type", "q", "page"} <= set(parameters)
    assert parameters["gold_label"]["schema"]["enum"] == ["none", "safe", "unsafe"]
    upload = paths["/api/projects/{slug}/imports/"]["post"]["requestBody"]["content"]
    assert list(upload) == ["multipart/form-data"]


def test_the_schema_offers_token_and_session_authentication(tmp_path: Path) -> None:
    schemes = generated_schema(tmp_path)["components"]["securitySchemes"]

    assert schemes["tokenAuth"]["name"] == "Authorization"
    assert schemes["cookieAuth"]["in"] == "cookie"


def test_the_docs_page_has_nothing_inline_for_the_csp_to_block(cast: Cast) -> None:
    response = cast.client_for("annotator").get(reverse("api-docs"))

    assert response.status_code == 200
    page = response.content.decode()
    assert "<style" not in page
    assert " style=" not in page
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, re.DOTALL)
    assert scripts
    assert all("src=" in attributes and not body.strip() for attributes, body in scripts)
    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_the_docs_init_script_is_served_as_javascript(cast: Cast) -> None:
    response = cast.client_for("annotator").get(reverse("api-docs") + "?script=")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/javascript")
    assert reverse("api-schema") in response.content.decode()
