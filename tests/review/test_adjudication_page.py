"""The adjudication queue and the page where a reviewer settles a record."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review.selectors import final_labels
from review.services.disagreements import detect_disagreements
from tests.conftest import Cast
from tests.factories import RecordFactory, UserFactory, rjudge_record
from tests.review.opinions import annotate, judge_run


@pytest.fixture
def people() -> list:
    return [UserFactory(username=name) for name in ("ann", "bob", "cyd")]


def disputed(cast: Cast, people, number: int, verdicts: tuple[str, ...], judged: str | None = None):
    record = RecordFactory(project=cast.project, source=rjudge_record(number, label=1))
    for person, verdict in zip(people, verdicts, strict=False):
        annotate(record, person, verdict)
    if judged:
        judge_run(cast.project, f"judge on {number}", {record: judged})
    detect_disagreements(project_id=cast.project.pk, record_ids=[record.pk])
    return record


def queue_url(cast: Cast, **query: str) -> str:
    url = reverse("review:adjudication_queue", args=[cast.project.slug])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def record_url(cast: Cast, record) -> str:
    return reverse("review:adjudication_record", args=[cast.project.slug, record.pk])


def test_the_queue_puts_the_most_contested_records_first(cast: Cast, people) -> None:
    mild = disputed(cast, people, 1, ("unsafe", "safe"))
    hot = disputed(cast, people, 2, ("safe", "safe", "unsafe"), judged="unsafe")

    page = cast.client_for("reviewer").get(queue_url(cast)).content.decode()

    assert page.index(f"Record {hot.external_id}<") < page.index(f"Record {mild.external_id}<")
    assert "Judge vs human consensus" in page


def test_the_queue_can_show_one_kind_of_disagreement(cast: Cast, people) -> None:
    split = disputed(cast, people, 1, ("unsafe", "safe"))
    against_gold = disputed(cast, people, 2, ("safe", "safe"))

    page = cast.client_for("reviewer").get(queue_url(cast, kind="humans_vs_gold")).content.decode()

    assert f"Record {against_gold.external_id}<" in page
    # Settling from here keeps to this kind (test_settling_keeps_to_the_kind_...).
    assert f'{record_url(cast, against_gold)}?kind=humans_vs_gold"' in page
    assert f"Record {split.external_id}<" not in page


def test_the_menu_counts_the_open_disagreements_for_reviewers(cast: Cast, people) -> None:
    disputed(cast, people, 1, ("safe", "safe", "unsafe"), judged="unsafe")
    project_page = reverse("curation:project", args=[cast.project.slug])

    page = cast.client_for("reviewer").get(project_page).content.decode()

    assert 'title="Open disagreements">3</span>' in page


def test_the_record_page_shows_every_label_verdict_and_the_gold_label(cast: Cast, people) -> None:
    record = disputed(cast, people, 1, ("unsafe", "safe"), judged="safe")

    page = cast.client_for("reviewer").get(record_url(cast, record)).content.decode()

    for name in ("ann", "bob"):
        assert f"<h3>{name}: " in page
    assert "judge on 1 thinks safe" in page
    assert "Gold label (source)" in page
    assert "The agent deleted mails without asking." in page
    assert "Annotators split" in page


def test_two_runs_of_one_name_are_told_apart_on_the_record_page(cast: Cast, people) -> None:
    record = disputed(cast, people, 1, ("unsafe", "safe"))
    first = judge_run(cast.project, "gpt-5-mini", {record: "safe"})
    second = judge_run(cast.project, "gpt-5-mini", {record: "unsafe"})

    page = cast.client_for("reviewer").get(record_url(cast, record)).content.decode()

    assert f"<h3>gpt-5-mini (#{first.pk}, " in page
    assert f"<h3>gpt-5-mini (#{second.pk}, " in page
    assert "<h3>gpt-5-mini: " not in page


def test_a_reviewer_settles_a_record_and_its_final_label_changes(cast: Cast, people) -> None:
    record = disputed(cast, people, 1, ("unsafe", "safe"))
    client = cast.client_for("reviewer")

    response = client.post(
        record_url(cast, record),
        {"label": "unsafe", "reason": "The agent deleted mail unasked.", "risk_description": ""},
    )

    assert response.status_code == 302
    assert response["Location"] == queue_url(cast)
    assert final_labels(cast.project)[record.pk] == ("unsafe", "adjudicated")
    assert f"Record {record.external_id}<" not in client.get(queue_url(cast)).content.decode()
    page = client.get(record_url(cast, record)).content.decode()
    assert "(adjudicated)" in page
    assert "The agent deleted mail unasked." in page


def test_settling_opens_the_next_open_disagreement_of_the_queue(cast: Cast, people) -> None:
    first = disputed(cast, people, 1, ("safe", "safe", "unsafe"), judged="unsafe")
    second = disputed(cast, people, 2, ("unsafe", "safe"))
    client = cast.client_for("reviewer")

    settled = client.post(record_url(cast, first), {"label": "unsafe", "reason": "Deletes mail."})
    next_page = client.get(settled["Location"]).content.decode()
    last = client.post(record_url(cast, second), {"label": "safe", "reason": "Harmless."})

    assert settled["Location"] == record_url(cast, second)
    assert "Record 1 settled: its final label is unsafe." in next_page
    assert "<h1>Settle record 2</h1>" in next_page
    assert last["Location"] == queue_url(cast)
    page = client.get(queue_url(cast)).content.decode()
    assert "Record 2 settled: its final label is safe." in page
    assert "Nothing to settle" in page


def test_settling_keeps_to_the_kind_of_disagreement_the_queue_showed(cast: Cast, people) -> None:
    split = disputed(cast, people, 1, ("unsafe", "safe"))
    against_gold = disputed(cast, people, 2, ("safe", "safe"))
    also_against_gold = disputed(cast, people, 3, ("safe", "safe"))
    url = record_url(cast, against_gold) + "?kind=humans_vs_gold"

    response = cast.client_for("reviewer").post(url, {"label": "unsafe", "reason": "Gold."})

    assert response["Location"] == record_url(cast, also_against_gold) + "?kind=humans_vs_gold"
    assert split.disagreements.filter(state="open").exists()


def test_the_turns_say_which_annotators_marked_them_as_evidence(cast: Cast, people) -> None:
    record = disputed(cast, people, 1, ("unsafe", "unsafe", "safe"), judged="safe")
    record.annotations.filter(annotator__username__in=["ann", "bob"]).update(evidence_turns=[2])
    record.annotations.filter(annotator__username="ann").update(evidence_turns=[2, 3])

    page = cast.client_for("reviewer").get(record_url(cast, record)).content.decode()

    assert "Evidence for 2: ann, bob</span>" in page
    assert "Evidence for 1: ann</span>" in page
    assert page.count("evidence-marks") == 2
    assert '<a href="#turn-3">#3</a>' in page


def test_settling_without_a_reason_shows_the_form_again(cast: Cast, people) -> None:
    record = disputed(cast, people, 1, ("unsafe", "safe"))

    response = cast.client_for("reviewer").post(record_url(cast, record), {"label": "safe"})

    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert not record.adjudications.exists()


@pytest.mark.parametrize("persona", ["annotator", "author", "outsider"])
def test_only_reviewers_and_managers_may_settle(cast: Cast, people, persona: str) -> None:
    record = disputed(cast, people, 1, ("unsafe", "safe"))

    response = cast.client_for(persona).post(
        record_url(cast, record), {"label": "safe", "reason": "Because."}
    )

    assert response.status_code in (403, 404)
    assert not record.adjudications.exists()


def test_record_content_and_names_are_escaped(cast: Cast) -> None:
    hostile = "<script>alert('x')</script>"
    record = RecordFactory(
        project=cast.project, source=rjudge_record(1, user=hostile, thought=hostile)
    )
    annotate(record, UserFactory(username="ann"), "unsafe")
    annotate(record, UserFactory(username="bob"), "safe")
    judge_run(cast.project, hostile, {record: "safe"})
    detect_disagreements(project_id=cast.project.pk, record_ids=[record.pk])

    page = cast.client_for("reviewer").get(record_url(cast, record)).content.decode()

    assert hostile not in page
    assert "&lt;script&gt;" in page
