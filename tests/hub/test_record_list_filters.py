"""The record list's columns and filters of what was said about each record: labels (n of k),
consensus, final label, open disagreements and each run's verdict; its sort and page size."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.consensus import consensus_of
from curation.choices import ConsensusRule
from review.models import Disagreement
from tests.conftest import Cast
from tests.review.opinions import judge_run
from tests.review.test_one_consensus_rule import mixed_votes

pytestmark = pytest.mark.django_db


def listed(cast: Cast, project, **filters) -> list[dict]:
    response = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[project.slug]), filters
    )
    assert response.status_code == 200, response.content
    return response.context["records"]


@pytest.mark.parametrize("rule", ConsensusRule.values)
def test_the_consensus_filter_finds_the_records_the_rule_gives_a_consensus(
    cast: Cast, rule: str
) -> None:
    project, records = mixed_votes(cast, rule)
    expected = {
        label: {
            r.pk
            for r in records.values()
            if consensus_of(list(r.annotations.values_list("verdict", flat=True)), 3, rule=rule)[0]
            == label
        }
        for label in ("safe", "unsafe", "")
    }

    found = {
        label: {row["id"] for row in listed(cast, project, consensus=label or "none")}
        for label in ("safe", "unsafe", "")
    }

    assert found == expected
    assert expected["safe"] and expected["unsafe"] and expected[""]


def test_rows_show_labels_of_k_consensus_final_label_disputes_and_verdicts(cast: Cast) -> None:
    project, records = mixed_votes(cast, ConsensusRule.MAJORITY)
    run = judge_run(project, "Always unsafe", {records[2]: "unsafe", records[3]: "error"})
    Disagreement.objects.create(
        project=project, record=records[2], kind=Disagreement.Kind.JUDGE_VS_HUMANS
    )

    rows = {row["id"]: row for row in listed(cast, project)}

    two, three, seven, nine = (rows[records[n].pk] for n in (2, 3, 7, 9))
    assert (two["annotation_count"], two["labels_needed"]) == (3, 3)
    assert (seven["annotation_count"], seven["labels_needed"]) == (2, 3)
    assert (two["consensus"], two["final"], two["adjudicated"]) == ("safe", "safe", False)
    assert (nine["consensus"], nine["final"], nine["adjudicated"]) == ("", "unsafe", True)
    assert two["disputes"] == ["Judge vs human consensus"]
    assert three["disputes"] == []
    assert (two["verdicts"], three["verdicts"], seven["verdicts"]) == (["unsafe"], ["error"], [""])
    page = cast.client_for("reviewer").get(reverse("hub:record_list", args=[project.slug]))
    assert run.name in page.content.decode()


def test_the_disputed_and_verdict_filters_find_their_records(cast: Cast) -> None:
    project, records = mixed_votes(cast, ConsensusRule.MAJORITY)
    run = judge_run(
        project, "Judge", {records[1]: "unsafe", records[2]: "safe", records[3]: "error"}
    )
    Disagreement.objects.create(
        project=project, record=records[1], kind=Disagreement.Kind.JUDGE_VS_HUMANS
    )
    Disagreement.objects.create(
        project=project,
        record=records[2],
        kind=Disagreement.Kind.ANNOTATORS_SPLIT,
        state=Disagreement.State.RESOLVED,
    )

    def ids(**filters) -> set[int]:
        return {row["id"] for row in listed(cast, project, **filters)}

    assert ids(disputed="yes") == {records[1].pk}
    assert records[1].pk not in ids(disputed="no") and records[2].pk in ids(disputed="no")
    assert ids(run=run.pk, verdict="unsafe") == {records[1].pk}
    assert ids(run=run.pk, verdict="error") == {records[3].pk}
    assert ids(run=run.pk, verdict="missing") == {r.pk for r in records.values()} - {
        records[1].pk,
        records[2].pk,
        records[3].pk,
    }


def test_the_labels_filter_measures_each_record_against_its_own_need(cast: Cast) -> None:
    project, records = mixed_votes(cast, ConsensusRule.MAJORITY)
    # Record 1 has its three labels, but a manager asked for two more.
    type(records[1]).objects.filter(pk=records[1].pk).update(extra_labels=2)

    def numbers(labels: str) -> set[int]:
        number_of = {r.pk: n for n, r in records.items()}
        return {number_of[row["id"]] for row in listed(cast, project, labels=labels)}

    assert numbers("none") == {9}
    assert numbers("some") == {1, 7}
    assert numbers("done") == {2, 3, 4, 5, 6, 8}


def test_a_verdict_filter_without_its_run_is_refused_in_words(cast: Cast) -> None:
    page = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[cast.project.slug]), {"verdict": "safe"}
    )

    assert page.status_code == 200
    assert "Choose the judge run whose verdicts to filter by." in page.content.decode()


def test_the_list_sorts_by_labels_and_pages_by_the_size_asked(cast: Cast) -> None:
    project, records = mixed_votes(cast, ConsensusRule.MAJORITY)

    fewest = listed(cast, project, sort="labels", per_page=25)
    most = listed(cast, project, sort="-labels")
    response = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[project.slug]),
        {"sort": "-id", "per_page": 25, "consensus": "safe"},
    )

    assert [row["annotation_count"] for row in fewest] == sorted(
        row["annotation_count"] for row in fewest
    )
    assert fewest[0]["id"] == records[9].pk
    assert most[-1]["id"] == records[9].pk
    assert response.context["page"].paginator.per_page == 25
    assert [row["id"] for row in response.context["records"]] == [records[2].pk, records[1].pk]


def test_the_pager_keeps_the_filters_in_its_links(cast: Cast) -> None:
    project, _ = mixed_votes(cast, ConsensusRule.MAJORITY)

    page = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[project.slug]),
        {"per_page": 25, "consensus": "none", "sort": "-id"},
    )

    # Nine records fit one page of 25: no pager, but the form shows what is chosen.
    body = page.content.decode()
    assert '<option value="none" selected>' in body
    assert '<option value="-id" selected>' in body
    assert '<option value="25" selected>' in body


def test_the_labelled_by_filter_lists_the_records_a_person_labelled(cast: Cast) -> None:
    project, records = mixed_votes(cast, ConsensusRule.MAJORITY)
    person = records[2].annotations.order_by("id").first().annotator
    theirs = set(project.annotations.filter(annotator=person).values_list("record_id", flat=True))
    page = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[project.slug]), {"annotator": person.username}
    )

    found = {row["id"] for row in listed(cast, project, annotator=person.username)}
    nobody = listed(cast, project, annotator="nobody-by-this-name")
    api = cast.client_for("reviewer").get(
        reverse("hub_api:record_list", args=[project.slug]), {"annotator": person.username}
    )

    assert found == theirs and 0 < len(found) < len(records)
    assert nobody == []
    assert {row["id"] for row in api.json()["results"]} == theirs
    # The page offers the project's annotators by name, the chosen one selected.
    assert f'<option value="{person.username}" selected>{person.username}</option>' in (
        page.content.decode()
    )
