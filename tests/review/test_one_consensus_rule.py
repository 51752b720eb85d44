"""One meaning of "final label": with k = 3 and mixed votes, the Quality report, disagreement
detection and the release give every record the same final label, under either rule."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.choices import ConsensusRule
from review.models import Adjudication, Disagreement
from review.selectors import final_labels
from review.services.disagreements import detect_disagreements
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record
from tests.review.opinions import judge_run

pytestmark = pytest.mark.django_db

# Record number -> the verdicts of its three (or fewer) annotators.
VOTES = {
    1: ("safe", "safe", "safe"),
    2: ("safe", "safe", "unsafe"),
    3: ("unsafe", "unsafe", "safe"),
    4: ("safe", "unsafe", "unsure"),
    5: ("unsure", "unsure", "safe"),
    6: ("unsafe", "unsafe", "unsafe"),
    7: ("safe", "unsafe"),
    8: ("unsure", "unsure", "unsure"),
}
EXPECTED = {
    ConsensusRule.MAJORITY: {1: "safe", 2: "safe", 3: "unsafe", 6: "unsafe", 9: "unsafe"},
    ConsensusRule.UNANIMITY: {1: "safe", 6: "unsafe", 9: "unsafe"},
}


def mixed_votes(cast: Cast, rule: str):
    project = cast.project
    project.overlap = 3
    project.consensus_rule = rule
    project.save()
    people = annotators(project, 3)
    records = {n: record(project, n) for n in (*VOTES, 9)}
    for number, verdicts in VOTES.items():
        for person, verdict in zip(people, verdicts, strict=False):
            label(records[number], person, verdict)
    # Record 9: a reviewer settled it, with no labels at all.
    Adjudication.objects.create(
        project=project,
        record=records[9],
        label="unsafe",
        reason="Settled.",
        reviewer=cast.reviewer,
    )
    return project, records


@pytest.mark.parametrize("rule", ConsensusRule.values)
def test_every_page_report_detection_and_release_agrees(cast: Cast, rule: str) -> None:
    project, records = mixed_votes(cast, rule)
    number_of = {r.pk: n for n, r in records.items()}
    # A judge that says "unsafe" to everything: it disagrees with exactly the safe consensus.
    judge_run(project, "Always unsafe", {r: "unsafe" for r in records.values()})
    detect_disagreements(project_id=project.pk, record_ids=[r.pk for r in records.values()])

    finals = {number_of[pk]: label for pk, (label, _) in final_labels(project).items()}
    release = built_release(project, cast.manager)
    released = {
        number_of[pk]: label
        for pk, label in release.records.filter(included=True).values_list("record_id", "label")
    }
    against_judge = {
        number_of[pk]
        for pk in Disagreement.objects.filter(
            project=project, kind=Disagreement.Kind.JUDGE_VS_HUMANS
        ).values_list("record_id", flat=True)
    }
    quality = cast.client_for("reviewer").get(
        reverse("reports_api:quality", args=[project.slug]), {"reference": "adjudicated"}
    )
    listed = record_list_finals(cast, project, number_of)

    assert finals == EXPECTED[rule]
    assert released == EXPECTED[rule]
    assert listed == EXPECTED[rule]
    consensus_numbers = {n for n in EXPECTED[rule] if n != 9}
    assert against_judge == {n for n in consensus_numbers if EXPECTED[rule][n] == "safe"}
    assert quality.status_code == 200, quality.content
    (run,) = quality.json()["runs"]
    # The judge said "unsafe" to all: against the final labels, it is right on the unsafe ones.
    expected = EXPECTED[rule]
    assert run["overall"]["n"] == len(expected)
    safe = sum(label == "safe" for label in expected.values())
    assert run["overall"]["confusion"] == [[0, safe, 0], [0, len(expected) - safe, 0]]


def record_list_finals(cast: Cast, project, number_of: dict[int, int]) -> dict[int, str]:
    """The final labels as the record list shows them, and as its final label filter finds
    them: both must agree."""
    url = reverse("hub:record_list", args=[project.slug])
    client = cast.client_for("reviewer")
    shown = {
        number_of[row["id"]]: row["final"]
        for row in client.get(url, {"per_page": 200}).context["records"]
        if row["final"]
    }
    for final in ("safe", "unsafe"):
        found = {row["id"] for row in client.get(url, {"final": final}).context["records"]}
        assert {number_of[pk] for pk in found} == {n for n, f in shown.items() if f == final}
    return shown


def test_the_release_leaves_records_out_in_the_rules_words(cast: Cast) -> None:
    project, _ = mixed_votes(cast, ConsensusRule.UNANIMITY)

    release = built_release(project, cast.manager)

    assert release.summary["excluded"] == {
        "fewer than k labels": 1,
        "labels not all safe or all unsafe": 5,
    }


def test_managers_choose_the_rule_on_the_annotation_settings(cast: Cast) -> None:
    url = reverse("annotation:annotation_settings", args=[cast.project.slug])
    page = cast.client_for("manager").get(url).content.decode()

    assert "At least k labels, all alike" in page


def final_label_on_the_page(cast: Cast, project, record) -> str | None:
    """The final label the adjudication page gives the record."""
    url = reverse("review:adjudication_record", args=[project.slug, record.pk])
    page = cast.client_for("reviewer").get(url).content.decode()
    shown = page[page.index('id="final-label"') :].split("</p>", 1)[0]
    if "none yet" in shown:
        return None
    return "unsafe" if 'badge unsafe">Unsafe' in shown else "safe"


@pytest.mark.parametrize("rule", ConsensusRule.values)
def test_the_pages_the_agreement_report_and_the_dataset_card_agree_too(
    cast: Cast, rule: str
) -> None:
    project, records = mixed_votes(cast, rule)
    judge_run(project, "Always unsafe", {r: "unsafe" for r in records.values()})
    reviewer = cast.client_for("reviewer")
    expected = EXPECTED[rule]

    shown = {n: final_label_on_the_page(cast, project, r) for n, r in records.items()}
    quality_api = reviewer.get(
        reverse("reports_api:quality", args=[project.slug]), {"reference": "adjudicated"}
    ).json()
    quality_page = reviewer.get(
        reverse("reports:quality", args=[project.slug]), {"reference": "adjudicated"}
    ).content.decode()
    agreement = reviewer.get(reverse("reports_api:agreement", args=[project.slug])).json()
    card = built_release(project, cast.manager).summary["judges"]

    assert {n: label for n, label in shown.items() if label} == expected
    (run,) = quality_api["runs"]
    assert f"<td>{len(expected)}</td>" in quality_page
    # The dataset card scores the judge against the same records with the same labels.
    assert card[0]["records"] == run["overall"]["n"] == len(expected)
    assert card[0]["f1"] == pytest.approx(run["overall"]["scores"]["f1"]["value"], abs=1e-3)
    # Each annotator is compared with the consensus on the records that have one (9 was
    # settled by a reviewer: it has no human consensus).
    with_consensus = {pair["first"]: pair["n"] for pair in agreement["with_consensus"]}
    assert set(with_consensus.values()) == {len([n for n in expected if n != 9])}
