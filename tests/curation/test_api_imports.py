"""Imports through the API: managers upload a file, then follow the batch to its report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from curation.models import ImportBatch
from curation.progress import progress_clear, progress_publish
from curation.services.imports import PROGRESS_KIND, import_batch_run
from curation.services.projects import project_create
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import UserFactory, rjudge_record

IMPORTS = reverse("api:import_list", args=["agent-safety"])


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> None:
    # Uploads are stored: keep them out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"


def detail_url(batch: ImportBatch, slug: str = "agent-safety") -> str:
    return reverse("api:import_detail", args=[slug, batch.pk])


def scenario_file(*records: dict[str, object], name: str = "mail.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, json.dumps(list(records)).encode(), "application/json")


def upload(client: Client, file: SimpleUploadedFile, **fields: str):
    return client.post(IMPORTS, {"file": file, **fields})


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("outsider", 404),
        ("annotator", 403),
        ("author", 403),
        ("reviewer", 403),
        ("manager", 202),
        ("superuser", 202),
    ],
)
def test_only_managers_upload(cast: Cast, persona: str, status: int) -> None:
    response = upload(token_client(getattr(cast, persona)), scenario_file(rjudge_record(1)))

    assert response.status_code == status
    assert cast.project.import_batches.count() == (1 if status == 202 else 0)


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("outsider", 404),
        ("annotator", 403),
        ("author", 403),
        ("reviewer", 403),
        ("manager", 200),
        ("superuser", 200),
    ],
)
def test_only_managers_read_imports(cast: Cast, persona: str, status: int) -> None:
    batch = cast.project.import_batches.create(source_name="mail.json", created_by=cast.manager)
    client = token_client(getattr(cast, persona))

    assert client.get(IMPORTS).status_code == status
    assert client.get(detail_url(batch)).status_code == status


def test_anonymous_callers_get_401(cast: Cast) -> None:
    batch = cast.project.import_batches.create(source_name="mail.json", created_by=cast.manager)

    assert Client().get(IMPORTS).status_code == 401
    assert Client().get(detail_url(batch)).status_code == 401
    assert upload(Client(), scenario_file(rjudge_record(1))).status_code == 401
    assert cast.project.import_batches.count() == 1


def test_an_upload_creates_a_batch_to_follow(cast: Cast) -> None:
    response = upload(
        token_client(cast.manager),
        scenario_file(rjudge_record(1), name="bitcoin.json"),
        format="rjudge",
        default_category="Finance",
    )

    assert response.status_code == 202
    batch = cast.project.import_batches.get()
    assert response["Location"] == detail_url(batch)
    body = response.json()
    assert body["id"] == batch.pk
    assert body["source_name"] == "bitcoin.json"
    assert body["format"] == "rjudge"
    assert body["default_category"] == "Finance"
    assert body["created_by"] == "manager"
    assert batch.created_by == cast.manager


def test_a_manager_uploads_with_a_session_too(cast: Cast) -> None:
    response = upload(cast.client_for("manager"), scenario_file(rjudge_record(1)))

    assert response.status_code == 202
    assert response.json()["format"] == "auto"


def test_it_asks_for_a_file(cast: Cast) -> None:
    response = token_client(cast.manager).post(IMPORTS, {"format": "rjudge"})

    assert response.status_code == 400
    assert response.json() == {"file": ["No file was submitted."]}
    assert not cast.project.import_batches.exists()


def test_it_rejects_an_unknown_format(cast: Cast) -> None:
    response = upload(token_client(cast.manager), scenario_file(rjudge_record(1)), format="csv")

    assert response.status_code == 400
    assert response.json() == {"format": ['"csv" is not a valid choice.']}


def test_it_rejects_a_json_body(cast: Cast) -> None:
    response = token_client(cast.manager).post(
        IMPORTS, {"format": "rjudge"}, content_type="application/json"
    )

    assert response.status_code == 415


def test_the_list_is_newest_first(cast: Cast) -> None:
    old = cast.project.import_batches.create(source_name="old.json", created_by=cast.manager)
    new = cast.project.import_batches.create(source_name="new.json", created_by=None)

    response = token_client(cast.manager).get(IMPORTS)

    assert [(b["id"], b["created_by"]) for b in response.json()["results"]] == [
        (new.pk, None),
        (old.pk, "manager"),
    ]


def test_an_import_of_another_project_is_not_found(cast: Cast) -> None:
    other = project_create(actor=cast.manager, name="Other", slug="other")
    batch = other.import_batches.create(source_name="mail.json", created_by=cast.manager)

    assert token_client(cast.manager).get(detail_url(batch)).status_code == 404


def test_an_upload_run_by_the_worker_reports_its_counts(
    cast: Cast, rjudge_dir: Path, django_capture_on_commit_callbacks
) -> None:
    client = token_client(cast.manager)
    content = (rjudge_dir / "Finance" / "bitcoin.json").read_bytes()
    file = SimpleUploadedFile("bitcoin.json", content, "application/json")

    with django_capture_on_commit_callbacks() as queued:
        response = upload(client, file, default_category="Finance")
    assert response.status_code == 202
    assert response.json()["state"] == "pending"
    assert response.json()["progress"] == {"records": 0, "bytes_read": 0, "bytes_total": None}
    assert len(queued) == 1, "the upload hands the batch to a worker once committed"
    import_batch_run(batch_id=response.json()["id"])

    body = client.get(response["Location"]).json()
    assert body["state"] == "succeeded"
    assert body["record_count"] == body["created_count"] == 8
    assert body["existing_count"] == 0
    assert body["category_counts"] == {"Finance": 8}
    assert body["label_counts"] == {"safe": 3, "unsafe": 5}
    assert body["duplicate_groups"] == []
    assert body["errors"] == []
    assert body["progress"] == {"records": 8, "bytes_read": 1, "bytes_total": 1}
    listed = client.get(IMPORTS).json()["results"]
    assert [(b["id"], b["state"], b["created_count"]) for b in listed] == [
        (body["id"], "succeeded", 8)
    ]


def test_the_report_names_duplicates(cast: Cast) -> None:
    client = token_client(cast.manager)
    same = {"user": "Send my balance to this address."}
    file = scenario_file(rjudge_record(1, **same), rjudge_record(2, **same), rjudge_record(3))

    batch_id = upload(client, file, default_category="Finance").json()["id"]
    import_batch_run(batch_id=batch_id)

    body = client.get(detail_url(cast.project.import_batches.get(pk=batch_id))).json()
    assert body["created_count"] == 3
    assert body["duplicate_groups"] == [["1", "2"]]


def test_a_failed_import_says_where_the_input_is_wrong(cast: Cast) -> None:
    client = token_client(cast.manager)
    broken = rjudge_record(2)
    broken["contents"][0][1]["role"] = "robot"
    file = scenario_file(rjudge_record(1), broken)

    batch_id = upload(client, file, default_category="Finance").json()["id"]
    import_batch_run(batch_id=batch_id)

    body = client.get(detail_url(cast.project.import_batches.get(pk=batch_id))).json()
    assert body["state"] == "failed"
    assert body["created_count"] == 0
    assert len(body["errors"]) == 1
    error = body["errors"][0]
    assert (error["file"], error["index"], error["unit"]) == ("mail.json", 1, "record")
    assert error["field"] == "contents[0][1].role"
    assert "robot" in error["message"]
    assert not cast.project.records.exists()


def test_the_detail_shows_progress_while_the_import_runs(cast: Cast, request) -> None:
    batch = cast.project.import_batches.create(
        source_name="ds_app.json", created_by=cast.manager, state=ImportBatch.State.RUNNING
    )
    progress_publish(PROGRESS_KIND, batch.pk, (40, 5_000, 20_000))
    request.addfinalizer(lambda: progress_clear(PROGRESS_KIND, batch.pk))

    body = token_client(cast.manager).get(detail_url(batch)).json()

    assert body["state"] == "running"
    assert body["progress"] == {"records": 40, "bytes_read": 5_000, "bytes_total": 20_000}


def test_it_refuses_a_file_over_the_size_limit(cast: Cast, settings) -> None:
    settings.IMPORT_MAX_FILE_BYTES = 100
    file = scenario_file(rjudge_record(1))

    response = upload(token_client(cast.manager), file)

    assert response.status_code == 400
    assert response.json()["detail"].startswith(
        "The file is larger than the limit of 100 bytes. A .zip of it goes through"
    )
    assert not cast.project.import_batches.exists()


def test_it_refuses_a_file_it_cannot_import(cast: Cast) -> None:
    file = SimpleUploadedFile("labels.csv", b"id,label\n1,1\n", "text/csv")

    response = upload(token_client(cast.manager), file)

    assert response.status_code == 400
    assert response.json() == {"detail": "Upload a .json, .jsonl, .eval or .zip file."}
    assert not cast.project.import_batches.exists()


def test_listing_imports_costs_the_same_queries_for_two_or_twelve(cast: Cast) -> None:
    client = token_client(cast.manager)

    def queries_for_the_list() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(IMPORTS).status_code == 200
        return len(queries)

    def start_imports(count: int) -> None:
        for n in range(count):
            creator = UserFactory(username=f"importer-{cast.project.import_batches.count()}")
            cast.project.import_batches.create(source_name=f"{n}.json", created_by=creator)

    start_imports(2)
    # The first call also records when the token was used, which the next minute's do not.
    queries_for_the_list()
    few = queries_for_the_list()
    start_imports(10)
    assert queries_for_the_list() == few
