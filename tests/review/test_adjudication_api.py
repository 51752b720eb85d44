"""The API of disagreements and adjudications."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review.selectors import final_labels
from review.services.disagreements import detect_disagreements
from tests.conftest import Cast
from tests.curation.api_clients import token_client
from tests.factories import RecordFactory, UserFactory
from tests.review.opinions import annotate, judge_run


@pytest.fixture
def disputed(cast: Cast):
    record = RecordFactory(project=cast.project)
    annotate(record, UserFactory(username="ann"), "unsafe")
    annotate(record, UserFactory(username="bob"), "unsafe")
    annotate(record, UserFactory(username="cyd"), "safe")
    judge_run(cast.project, "judge", {record: "safe"})
    detect_disagreements(project_id=cast.project.pk, record_ids=[record.pk])
    return record


def url(cast: Cast, name: str, **kwargs: object) -> str:
    return reverse(f"review_api:{name}", kwargs={"slug": cast.project.slug, **kwargs})


def test_disagreements_say_who_said_what(cast: Cast, disputed) -> None:
    response = token_client(cast.reviewer).get(url(cast, "disagreement_list"), {"state": "open"})

    assert response.status_code == 200
    results = {d["kind"]: d for d in response.json()["results"]}
    assert set(results) == {"annotators_split", "judge_vs_humans"}
    against_judge = results["judge_vs_humans"]
    assert against_judge["record"] == disputed.pk
    assert against_judge["weight"] == 4
    assert against_judge["labels"][-1]["source"] == "judge"
    assert against_judge["labels"][-1]["label"] == "safe"


def test_disagreements_can_be_filtered_by_kind_and_record(cast: Cast, disputed) -> None:
    client = token_client(cast.reviewer)

    by_kind = client.get(url(cast, "disagreement_list"), {"kind": "annotators_split"}).json()
    by_record = client.get(url(cast, "disagreement_list"), {"record": disputed.pk + 1}).json()
    wrong = client.get(url(cast, "disagreement_list"), {"kind": "nonsense"})

    assert [d["kind"] for d in by_kind["results"]] == ["annotators_split"]
    assert by_record["results"] == []
    assert wrong.status_code == 400


def test_a_reviewer_settles_a_record_through_the_api(cast: Cast, disputed) -> None:
    response = token_client(cast.reviewer).post(
        url(cast, "adjudication_list"),
        {"record": disputed.pk, "label": "unsafe", "reason": "Mail deleted unasked."},
        content_type="application/json",
    )

    assert response.status_code == 201
    assert response.json()["reviewer"] == "reviewer"
    assert final_labels(cast.project)[disputed.pk] == ("unsafe", "adjudicated")
    still_open = token_client(cast.reviewer).get(url(cast, "disagreement_list"), {"state": "open"})
    assert still_open.json()["count"] == 0
    listed = token_client(cast.manager).get(url(cast, "adjudication_list")).json()
    assert [a["reason"] for a in listed["results"]] == ["Mail deleted unasked."]


@pytest.mark.parametrize(
    ("with_record", "label", "reason"),
    [(False, "unsafe", "Why."), (True, "unsure", "Why."), (True, "safe", "")],
)
def test_an_adjudication_needs_a_record_a_final_label_and_a_reason(
    cast: Cast, disputed, with_record: bool, label: str, reason: str
) -> None:
    body = {"label": label, "reason": reason} | ({"record": disputed.pk} if with_record else {})

    response = token_client(cast.reviewer).post(
        url(cast, "adjudication_list"), body, content_type="application/json"
    )

    assert response.status_code == 400
    assert not disputed.adjudications.exists()


def test_a_record_of_another_project_is_not_found(cast: Cast) -> None:
    elsewhere = RecordFactory()

    response = token_client(cast.reviewer).post(
        url(cast, "adjudication_list"),
        {"record": elsewhere.pk, "label": "safe", "reason": "Why."},
        content_type="application/json",
    )

    assert response.status_code == 404


def test_annotators_may_not_settle_or_read_disagreements(cast: Cast, disputed) -> None:
    client = token_client(cast.annotator)

    assert client.get(url(cast, "disagreement_list")).status_code == 403
    posted = client.post(
        url(cast, "adjudication_list"),
        {"record": disputed.pk, "label": "safe", "reason": "Mine."},
        content_type="application/json",
    )
    assert posted.status_code == 403
    assert not disputed.adjudications.exists()
