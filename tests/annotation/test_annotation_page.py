"""The labelling page without JavaScript, and its htmx exchanges: start, label, draft, skip."""

from __future__ import annotations

import re

from django.core.cache import cache
from django.urls import reverse

from annotation.models import Lease
from annotation.services.queue import lease_next_record
from tests.annotation.annotators import counts, make_records
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record

HTMX = {"HX-Request": "true"}


def url(cast: Cast, name: str, *args: object) -> str:
    return reverse(f"annotation:{name}", args=[cast.project.slug, *args])


def long_record(cast: Cast, rounds: int = 10):
    source = rjudge_record(900)
    source["contents"] = [
        [
            {"role": "user", "content": f"Step {n}: please go on."},
            {"role": "agent", "thought": f"Thinking {n}", "action": f"Run: {{'step': {n}}}"},
            {"role": "environment", "content": f'{{"ok": true, "step": {n}}}'},
        ]
        for n in range(rounds)
    ]
    return RecordFactory(project=cast.project, source=source, searchable=False)


def checked(page: str, name: str) -> list[str]:
    return re.findall(rf'<input type="\w+" name="{name}" value="([^"]*)"[^>]*checked', page)


def test_the_start_page_counts_what_is_left_and_offers_to_start(cast: Cast) -> None:
    make_records(cast.project, 3)

    page = cast.client_for("annotator").get(url(cast, "annotate")).content.decode()

    assert "Start annotating" in page
    assert re.search(r"<dt>Left for you</dt><dd>3</dd>", page)
    assert 'class="nav-count" title="Records left for you to label">3<' in page


def test_starting_shows_a_record_beside_the_label_form(cast: Cast) -> None:
    (record,) = make_records(cast.project, 1)
    client = cast.client_for("annotator")

    response = client.post(url(cast, "annotate_next"), follow=True)

    page = response.content.decode()
    assert f"Record {record.external_id}" in page
    assert "Please tidy up my inbox." in page
    assert 'id="label-form"' in page
    assert 'name="verdict" value="unsafe"' in page
    assert counts(record) == (0, 1)


def test_a_label_posted_without_javascript_is_saved_and_the_next_record_shown(cast: Cast) -> None:
    first, second = make_records(cast.project, 2)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    client = cast.client_for("annotator")

    response = client.post(
        url(cast, "annotate_submit", lease.pk),
        {"verdict": "unsafe", "risk_description": "Deletes mail unasked.", "evidence_turns": ["2"]},
        follow=True,
    )

    page = response.content.decode()
    assert f"Saved your label of record {first.external_id}." in page
    assert f"Record {second.external_id}" in page
    annotation = cast.annotator.annotations.get()
    assert (annotation.verdict, annotation.evidence_turns) == ("unsafe", [2])
    assert counts(first) == (1, 0)
    assert counts(second) == (0, 1)


def test_with_htmx_a_submit_swaps_in_the_next_record_alone(cast: Cast) -> None:
    first, second = make_records(cast.project, 2)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)

    response = cast.client_for("annotator").post(
        url(cast, "annotate_submit", lease.pk), {"verdict": "safe"}, headers=HTMX
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<div id="workspace"')
    assert "<html" not in page
    assert f"Saved your label of record {first.external_id}." in page
    assert f"Record {second.external_id}" in page
    edit = url(cast, "annotation_edit", cast.annotator.annotations.get().pk)
    assert f'<a href="{edit}">Edit it</a>' in page


def test_after_the_last_record_the_page_says_nothing_is_left(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)

    response = cast.client_for("annotator").post(
        url(cast, "annotate_submit", lease.pk), {"verdict": "safe"}, headers=HTMX
    )

    assert "Nothing is left for you to label in this project." in response.content.decode()


def test_an_invalid_label_comes_back_with_its_errors_and_the_lease_kept(cast: Cast) -> None:
    (record,) = make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)

    response = cast.client_for("annotator").post(
        url(cast, "annotate_submit", lease.pk),
        {"verdict": "unsafe", "evidence_turns": ["3"]},
        headers=HTMX,
    )

    page = response.content.decode()
    assert response.status_code == 200
    assert "Describe the risk: you labelled the record unsafe." in page
    assert checked(page, "verdict") == ["unsafe"]
    assert checked(page, "evidence_turns") == ["3"]
    assert counts(record) == (0, 1)


def test_a_draft_is_kept_on_the_server_and_restored_on_the_next_visit(cast: Cast) -> None:
    make_records(cast.project, 1)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    client = cast.client_for("annotator")

    saved = client.post(
        url(cast, "annotate_draft", lease.pk),
        {
            "verdict": "unsafe",
            "risk_types": ["data-loss"],
            "risk_description": "It wipes the <b>inbox</b>.",
            "evidence_turns": ["2", "3"],
        },
        headers=HTMX,
    )
    page = client.get(url(cast, "annotate")).content.decode()

    assert saved.content.decode().startswith("Draft saved at ")
    assert checked(page, "verdict") == ["unsafe"]
    assert checked(page, "risk_types") == ["data-loss"]
    assert checked(page, "evidence_turns") == ["2", "3"]
    assert "It wipes the &lt;b&gt;inbox&lt;/b&gt;.</textarea>" in page
    assert "Your draft is back" in page


def test_a_draft_for_a_lease_that_ended_is_not_saved(cast: Cast) -> None:
    make_records(cast.project, 2)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    client = cast.client_for("annotator")
    client.post(url(cast, "annotate_submit", lease.pk), {"verdict": "safe"})

    response = client.post(url(cast, "annotate_draft", lease.pk), {"verdict": "unsafe"})

    assert "Not saved: this record is no longer yours to label." in response.content.decode()
    assert Lease.objects.get(pk=lease.pk).draft == {}


def test_a_skip_asks_why_and_then_moves_on(cast: Cast) -> None:
    first, second = make_records(cast.project, 2)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    client = cast.client_for("annotator")

    refused = client.post(url(cast, "annotate_skip", lease.pk), {"reason": ""}, headers=HTMX)
    skipped = client.post(
        url(cast, "annotate_skip", lease.pk), {"reason": "Outside my expertise."}, headers=HTMX
    )

    assert "This field is required." in refused.content.decode()
    assert f"Skipped record {first.external_id}." in skipped.content.decode()
    assert f"Record {second.external_id}" in skipped.content.decode()
    lease.refresh_from_db()
    assert (lease.state, lease.skip_reason) == (Lease.State.SKIPPED, "Outside my expertise.")


def test_a_label_for_a_lease_no_longer_held_is_refused_with_a_message(cast: Cast) -> None:
    make_records(cast.project, 2)
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    client = cast.client_for("annotator")
    client.post(url(cast, "annotate_submit", lease.pk), {"verdict": "safe"})

    response = client.post(url(cast, "annotate_submit", lease.pk), {"verdict": "safe"}, follow=True)

    assert "That record is no longer yours to label" in response.content.decode()
    assert cast.annotator.annotations.count() == 1


def test_every_turn_has_an_evidence_box_of_the_label_form(cast: Cast) -> None:
    long_record(cast, rounds=2)
    lease_next_record(project=cast.project, annotator=cast.annotator)

    page = cast.client_for("annotator").get(url(cast, "annotate")).content.decode()

    boxes = re.findall(r'name="evidence_turns" value="(\d+)" form="label-form"', page)
    assert boxes == [str(n) for n in range(1, 7)]


def test_the_form_asks_only_what_the_project_asks(cast: Cast) -> None:
    project = cast.project
    project.ask_risk_types = project.ask_evidence_turns = False
    project.ask_safety_score = project.ask_helpfulness_score = True
    project.save()
    make_records(project, 1)
    lease_next_record(project=project, annotator=cast.annotator)

    page = cast.client_for("annotator").get(url(cast, "annotate")).content.decode()

    assert 'name="risk_types"' not in page
    assert 'name="evidence_turns"' not in page
    assert "3 · Certain No Risk" in page
    assert "0 · Likely Severe Risk" in page
    assert "2 · Good" in page


def test_the_labelling_page_of_a_30_turn_record_takes_at_most_12_queries(
    cast: Cast, django_assert_max_num_queries
) -> None:
    long_record(cast)
    make_records(cast.project, 50)
    lease_next_record(project=cast.project, annotator=cast.annotator)
    client = cast.client_for("annotator")
    cache.clear()

    with django_assert_max_num_queries(12):
        page = client.get(url(cast, "annotate")).content.decode()

    assert 'id="turn-30"' in page
