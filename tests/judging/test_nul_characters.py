"""Text with a NUL character, which PostgreSQL can neither store nor look up, in a judge's
parameters or an imported verdict's id: refused or reported, never a server error."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from judging.models import Judge, JudgeRun
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.judging.judge_runs import make_judge, numbered_records

pytestmark = pytest.mark.django_db

NUL_PARAMETERS = [{"stop": "a\u0000"}, {"stop": ["\u0000"]}]


@pytest.mark.parametrize("parameters", NUL_PARAMETERS)
def test_the_api_refuses_judge_parameters_with_a_nul_character(
    cast: Cast, parameters: dict
) -> None:
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    url = reverse("judging_api:judge_detail", args=[cast.project.slug, judge.pk])

    response = token_client(cast.manager).patch(
        url, {"parameters": parameters}, content_type="application/json"
    )

    assert response.status_code == 400
    assert "NUL character" in response.json()["parameters"][0]
    assert Judge.objects.get(pk=judge.pk).parameters == judge.parameters


def test_the_judge_page_refuses_parameters_with_a_nul_character(cast: Cast) -> None:
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    url = reverse("judging:judge_edit", args=[cast.project.slug, judge.pk])
    fields = {
        "name": judge.name,
        "protocol": judge.protocol,
        "model": judge.model,
        "connection": judge.connection_id,
        "parameters": json.dumps({"stop": "a\u0000"}),
        "concurrency": 4,
        "timeout_seconds": 10,
        "max_retries": 1,
    }

    response = cast.client_for("manager").post(url, fields)

    assert response.status_code == 200
    assert "Parameters cannot hold a NUL character" in response.content.decode()
    assert Judge.objects.get(pk=judge.pk).parameters == judge.parameters


def test_an_imported_line_whose_id_holds_a_nul_character_is_reported(cast: Cast) -> None:
    numbered_records(cast.project, 1)
    lines = [{"external_id": "1", "label": "unsafe"}, {"external_id": "1\u0000", "label": "safe"}]
    upload = SimpleUploadedFile(
        "verdicts.jsonl", "\n".join(json.dumps(line) for line in lines).encode()
    )

    response = token_client(cast.manager).post(
        reverse("judging_api:verdict_import", args=[cast.project.slug]),
        {"file": upload, "protocol": "rjudge"},
    )

    assert response.status_code == 201, response.content
    run = JudgeRun.objects.get()
    assert run.total == 1
    assert run.report["problems"] == [
        {"line": 2, "message": "an id with a NUL character, which no record has"}
    ]
