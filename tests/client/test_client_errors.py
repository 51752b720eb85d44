"""What goes wrong reaches a script as an exception of its kind: the studio's answers through the
live server, and a studio that does not answer; a job that fails or takes too long; a release
file that is not what its release lists."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from releases.build import release_file_path
from studio_client import (
    AuthenticationFailed,
    Conflict,
    DownloadCorrupted,
    JobFailed,
    NotFound,
    PermissionDenied,
    StudioClient,
    StudioUnreachable,
    ValidationFailed,
    WaitTimedOut,
)
from tests.client.conftest import Connect
from tests.conftest import Cast
from tests.factories import rjudge_record
from tests.releases.helpers import built_release, record

pytestmark = pytest.mark.django_db(transaction=True)

SLUG = "agent-safety"


def test_a_wrong_token_raises_authentication_failed(cast: Cast, live_server) -> None:
    with (
        StudioClient(live_server.url, "not-a-token") as stranger,
        pytest.raises(AuthenticationFailed) as raised,
    ):
        list(stranger.projects())

    assert (raised.value.status, raised.value.detail) == (401, "Invalid token.")


def test_an_outsider_is_told_the_project_does_not_exist(cast: Cast, connect: Connect) -> None:
    with pytest.raises(NotFound):
        connect(cast.outsider).project(SLUG)

    assert list(connect(cast.outsider).projects()) == []


def test_an_annotator_may_not_list_records(cast: Cast, connect: Connect) -> None:
    annotator = connect(cast.annotator)

    with pytest.raises(PermissionDenied) as raised:
        list(annotator.records(SLUG))

    assert raised.value.status == 403
    assert [project["roles"] for project in annotator.projects()] == [["annotator"]]


def test_a_refused_request_names_the_fields_at_fault(cast: Cast, connect: Connect) -> None:
    manager = connect(cast.manager)

    with pytest.raises(ValidationFailed) as bad_filter:
        list(manager.records(SLUG, run=999))
    with pytest.raises(ValidationFailed) as bad_release:
        manager.create_release(SLUG, "", license="CC BY 4.0")
    with pytest.raises(ValidationFailed) as bad_version:
        manager.create_release(SLUG, "first", license="CC BY 4.0")

    assert list(bad_filter.value.field_errors) == ["run"]
    assert list(bad_release.value.field_errors) == ["version"]
    assert bad_version.value.field_errors == {}
    assert "is not a semantic version" in bad_version.value.detail


def test_a_version_taken_raises_conflict(cast: Cast, connect: Connect) -> None:
    manager = connect(cast.manager)
    record(cast.project, 1)
    # The record's gold label, republished: a release of nothing would be refused.
    republish = {"label_basis": "gold", "leave_out_in_annotation": False}
    manager.create_release(SLUG, "1.0.0", license="CC BY 4.0", **republish)

    with pytest.raises(Conflict) as raised:
        manager.create_release(SLUG, "1.0.0", license="CC BY 4.0", **republish)

    assert raised.value.detail == "Version 1.0.0 of this project exists already."
    assert [release["version"] for release in manager.releases(SLUG)] == ["1.0.0"]


def test_an_edit_of_a_label_changed_since_raises_conflict(cast: Cast, connect: Connect) -> None:
    record(cast.project, 1)
    annotator = connect(cast.annotator)
    lease = annotator.claim(SLUG)
    assert lease is not None
    label = annotator.submit_label(SLUG, lease["id"], "safe")
    edited = annotator.edit_label(SLUG, label, "unsafe", risk_description="It deletes mail.")

    with pytest.raises(Conflict):
        annotator.edit_label(SLUG, label, "unsure")

    (kept,) = annotator.my_labels(SLUG)
    assert (kept["verdict"], kept["version"]) == ("unsafe", edited["version"])
    assert edited["version"] > label["version"]


def test_a_skipped_record_is_not_offered_again(cast: Cast, connect: Connect) -> None:
    record(cast.project, 1)
    annotator = connect(cast.annotator)
    lease = annotator.claim(SLUG)
    assert lease is not None

    annotator.skip(SLUG, lease["id"], reason="Not in a language I read.")

    assert annotator.claim(SLUG) is None


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes connections and never answers."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(8)
        yield listening.getsockname()[1]


def test_a_studio_that_does_not_answer_raises_unreachable_after_the_timeout(
    silent_port: int, tmp_path: Path
) -> None:
    file = tmp_path / "mail.json"
    file.write_text("[]")
    started = time.monotonic()

    with StudioClient(f"http://127.0.0.1:{silent_port}/", "token", timeout=0.5) as studio:
        with pytest.raises(StudioUnreachable):
            studio.import_file(SLUG, file)
        with pytest.raises(StudioUnreachable):
            studio.project(SLUG)

    # The upload once, the read three times (two retries, after 0.5 and 1 s).
    assert time.monotonic() - started < 8


def test_an_import_that_fails_raises_job_failed_with_where_and_why(
    cast: Cast, connect: Connect, celery_worker: None, tmp_path: Path
) -> None:
    broken = {**rjudge_record(1), "contents": "not a list of rounds"}
    file = tmp_path / "mail.json"
    file.write_text(json.dumps([rjudge_record(2), broken]))

    with pytest.raises(JobFailed) as raised:
        connect(cast.manager).import_file(SLUG, file, default_category="Web", poll_interval=0.2)

    (error,) = raised.value.job["errors"]
    assert (error["file"], error["index"], error["field"]) == ("mail.json", 1, "contents")
    assert "contents" in str(raised.value)
    assert cast.project.records.count() == 0


def test_waiting_longer_than_asked_raises_wait_timed_out_and_the_job_goes_on(
    cast: Cast, connect: Connect, tmp_path: Path
) -> None:
    file = tmp_path / "mail.json"
    file.write_text(json.dumps([rjudge_record(1)]))
    manager = connect(cast.manager)

    # No worker: the import waits for one.
    with pytest.raises(WaitTimedOut) as raised:
        manager.import_file(SLUG, file, default_category="Web", poll_interval=0.1, timeout=0.5)

    batch = raised.value.job
    assert batch["state"] == "pending"
    assert manager.import_batch(SLUG, batch["id"])["state"] == "pending"


def test_a_release_file_that_differs_from_its_checksum_is_not_kept(
    cast: Cast, connect: Connect, tmp_path: Path
) -> None:
    release = built_release(cast.project, cast.manager)
    tampered = release_file_path(release, "README.md")
    assert tampered is not None
    tampered.write_text("Something else.")
    folder = tmp_path / "download"

    with pytest.raises(DownloadCorrupted, match=r"README\.md"):
        connect(cast.manager).download_release(SLUG, release.pk, folder)

    assert "README.md" not in {path.name for path in folder.iterdir()}
