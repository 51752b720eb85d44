"""What goes into a release: final labels, the records left out and why, frozen for good."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from curation.errors import Conflict
from releases.build import release_folder
from releases.models import Release
from releases.services import release_build, release_create, release_options, release_retry
from review.models import Adjudication
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record

pytestmark = pytest.mark.django_db


def jsonl(release: Release, name: str) -> list[dict]:
    return [json.loads(line) for line in (release_folder(release) / name).read_text().splitlines()]


def test_final_labels_are_adjudicated_else_a_consensus_of_k(cast: Cast) -> None:
    project = cast.project
    project.overlap = 2
    project.save()
    ann1, ann2, ann3 = annotators(project, 3)
    agreed, split, adjudicated, lonely, unsure, nothing = (record(project, n) for n in range(1, 7))
    label(agreed, ann1, "unsafe", risk_description="Deletes mail unasked.")
    label(agreed, ann2, "unsafe", risk_description="Deleted 214 mails.")
    label(split, ann1, "safe")
    label(split, ann2, "unsafe")
    label(adjudicated, ann1, "safe")
    label(adjudicated, ann2, "unsafe")
    Adjudication.objects.create(
        project=project,
        record=adjudicated,
        label="unsafe",
        risk_description="Mails are gone for good.",
        reason="The mails could not be restored.",
        reviewer=cast.reviewer,
    )
    label(lonely, ann3, "safe")
    label(unsure, ann1, "unsure")
    label(unsure, ann2, "unsure")

    release = built_release(project, cast.manager)

    rows = {row["id"]: row for row in jsonl(release, "records.jsonl")}
    assert set(rows) == {"1", "3"}
    assert (rows["1"]["label"], rows["1"]["label_source"]) == ("unsafe", "consensus")
    assert rows["1"]["risk_description"] == "Deletes mail unasked."
    assert (rows["3"]["label"], rows["3"]["label_source"]) == ("unsafe", "adjudicated")
    assert rows["3"]["risk_description"] == "Mails are gone for good."
    assert release.summary["excluded"] == {
        "fewer than k labels": 1,
        "no strict majority for safe or unsafe": 2,
        "no labels": 1,
    }
    excluded = dict(
        release.records.filter(included=False).values_list("record__external_id", "label_source")
    )
    assert excluded == {
        "2": "no strict majority for safe or unsafe",
        "4": "fewer than k labels",
        "5": "no strict majority for safe or unsafe",
        "6": "no labels",
    }
    del nothing


def test_the_rjudge_file_carries_the_final_label_and_risk_description(cast: Cast) -> None:
    project = cast.project
    project.overlap = 1
    project.save()
    (ann,) = annotators(project, 1)
    # The source says unsafe; the team says safe.
    relabelled = record(project, 7, label=1)
    label(relabelled, ann, "safe")

    release = built_release(project, cast.manager)

    with zipfile.ZipFile(release_folder(release) / "rjudge.zip") as archive:
        assert archive.namelist() == ["data/Application/mail.json"]
        (written,) = json.loads(archive.read("data/Application/mail.json"))
    assert written["label"] == 0
    assert written["risk_description"] == ""
    assert list(written) == list(json.loads(relabelled.raw))


def test_labels_given_after_the_release_never_change_it(cast: Cast) -> None:
    project = cast.project
    project.overlap = 1
    project.save()
    ann1, ann2 = annotators(project, 2)
    first = record(project, 1)
    label(first, ann1, "unsafe", risk_description="Deletes mail.")
    release = built_release(project, cast.manager)
    folder = release_folder(release)
    files = {path.name: path.read_bytes() for path in folder.iterdir()}

    # New labels and an adjudication arrive; the release is built again from its frozen content.
    label(record(project, 2), ann2, "safe")
    Adjudication.objects.create(
        project=project,
        record=first,
        label="safe",
        reason="On second thought.",
        reviewer=cast.reviewer,
    )
    Release.objects.filter(pk=release.pk).update(state=Release.State.PENDING)
    release_build(release.pk)

    assert {path.name: path.read_bytes() for path in folder.iterdir()} == files
    later = built_release(project, cast.manager, version="1.1.0")
    assert later.summary["labels"] == {"safe": 2}
    assert later.previous == release


def test_annotator_labels_are_anonymised_and_verdicts_optional(cast: Cast) -> None:
    project = cast.project
    project.overlap = 2
    project.save()
    ann1, ann2 = annotators(project, 2)
    one = record(project, 1)
    label(one, ann2, "safe", safety=3, helpfulness=2)
    label(one, ann1, "safe", safety=2)

    release = built_release(
        project, cast.manager, options={"annotator_labels": True, "verdicts": False}
    )

    (row,) = jsonl(release, "records.jsonl")
    assert row["annotator_labels"] == [
        {"annotator": "annotator_1", "verdict": "safe", "safety_score": 3, "helpfulness_score": 2},
        {
            "annotator": "annotator_2",
            "verdict": "safe",
            "safety_score": 2,
            "helpfulness_score": None,
        },
    ]
    assert "verdicts" not in row
    assert (row["safety_score"], row["helpfulness_score"]) == (2.5, 2.0)
    everything = b"".join(path.read_bytes() for path in release_folder(release).iterdir())
    for person in (ann1, ann2):
        assert person.username.encode() not in everything
    csv_lines = (release_folder(release) / "labels.csv").read_text().splitlines()
    assert csv_lines[0].split(",") == [
        "id",
        "category",
        "scenario",
        "attack_type",
        "label",
        "label_source",
        "risk_description",
        "safety_score",
        "helpfulness_score",
        "labels",
    ]
    assert (
        csv_lines[1]
        == "1,Application,mail,unintended,safe,consensus,,2.5,2.0,annotator_1=safe;annotator_2=safe"
    )


def test_a_failed_build_says_so_and_can_be_built_again(
    cast: Cast, settings, tmp_path: Path
) -> None:
    project = cast.project
    project.overlap = 1
    project.save()
    (ann,) = annotators(project, 1)
    label(record(project, 1), ann, "safe")
    # Storage that cannot hold folders: the build fails, and nothing is published.
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    settings.MEDIA_ROOT = blocked
    release = release_create(
        actor=cast.manager,
        project=project,
        version="1.0.0",
        license="MIT",
        options=release_options(leave_out_in_annotation=False),
    )

    with pytest.raises(OSError):
        release_build(release.pk)

    release.refresh_from_db()
    assert release.state == Release.State.FAILED
    assert release.error == "The build failed: NotADirectoryError. Nothing was published."
    assert release.manifest == {}

    settings.MEDIA_ROOT = tmp_path / "media"
    release_retry(actor=cast.manager, release=release)
    release = release_build(release.pk)
    assert release.state == Release.State.BUILT
    with pytest.raises(Conflict):
        release_retry(actor=cast.manager, release=release)
