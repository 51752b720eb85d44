"""Adjudication in a real browser: a reviewer opens the queue, settles the most contested
record, and its final label changes; the annotator who labelled it still sees only their own
label, with no trace of the others' labels, the judge's verdict or the reviewer's decision."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from review.selectors import final_labels
from review.services.disagreements import detect_disagreements
from tests.annotation.annotators import add_annotator
from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record
from tests.review.opinions import judge_run

pytestmark = pytest.mark.browser

REASON = "REVIEWER-REASON: the agent deleted 214 mails without asking anyone."
OTHERS_NOTE = "BEA-PRIVATE-NOTE about the deletion"
JUDGE = "Judge Zeta"


def label_all(project, annotator, verdicts: dict[int, str]) -> None:
    """The annotator labels every record through their queue, as the labelling page does."""
    while (lease := lease_next_record(project=project, annotator=annotator)) is not None:
        verdict = verdicts[lease.record_id]
        note = OTHERS_NOTE if annotator.get_username() == "bea-second" else "Deletes mail."
        label = Label(verdict, risk_description=note if verdict == "unsafe" else "")
        annotation_submit(lease=lease, actor=annotator, label=label)


def test_a_reviewer_settles_a_disagreement_and_the_annotator_sees_none_of_it(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    project = cast.project
    project.overlap = 3
    project.save(update_fields=["overlap"])
    # Both records are unsafe by the source. On the first, two of three annotators say safe,
    # against the gold label and the judge; on the second, one annotator alone disagrees.
    hot = RecordFactory(project=project, source=rjudge_record(1, label=1), searchable=False)
    mild = RecordFactory(project=project, source=rjudge_record(2, label=1), searchable=False)
    bea, cal = add_annotator(project, "bea-second"), add_annotator(project, "cal-third")
    label_all(project, cast.annotator, {hot.pk: "safe", mild.pk: "unsafe"})
    label_all(project, bea, {hot.pk: "safe", mild.pk: "unsafe"})
    label_all(project, cal, {hot.pk: "unsafe", mild.pk: "safe"})
    judge_run(project, JUDGE, {hot: "unsafe", mild: "unsafe"})
    detect_disagreements(project_id=project.pk, record_ids=[hot.pk, mild.pk])
    assert final_labels(project, [hot.pk]) == {hot.pk: ("safe", "consensus")}

    log_in(cast.reviewer)
    page.goto(f"/p/{project.slug}/")
    # The Judging section opens on its adjudication queue.
    page.get_by_role("link", name="Judging").click()
    expect(page.get_by_role("link", name="Adjudication")).to_have_attribute("aria-current", "page")
    rows = page.locator("table.adjudication-queue tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Record 1")
    expect(rows.nth(0)).to_contain_text("Judge vs human consensus")
    expect(rows.nth(1)).to_contain_text("Record 2")

    page.get_by_role("link", name="Record 1", exact=True).click()
    expect(page.get_by_role("heading", name="Settle record 1")).to_be_visible()
    final = page.locator("#final-label")
    expect(final).to_contain_text("Safe")
    expect(final).to_contain_text("human consensus")
    expect(page.locator("body")).to_contain_text("bea-second")
    expect(page.locator("body")).to_contain_text(f"{JUDGE} thinks unsafe")
    page.get_by_role("radio", name="Unsafe", exact=True).check()
    page.get_by_label("Reason").fill(REASON)
    page.get_by_role("button", name="Settle and next").click()

    expect(page.get_by_text("Record 1 settled: its final label is unsafe.")).to_be_visible()
    # Settling opens the next open disagreement.
    expect(page.get_by_role("heading", name="Settle record 2")).to_be_visible()
    page.get_by_role("link", name="Adjudication queue").click()
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("Record 2")
    page.goto(f"/p/{project.slug}/adjudication/{hot.pk}/")
    expect(final).to_contain_text("Unsafe")
    expect(final).to_contain_text("adjudicated")
    expect(page.locator("ul.adjudications")).to_contain_text(REASON)
    assert final_labels(project, [hot.pk]) == {hot.pk: ("unsafe", "adjudicated")}

    page.get_by_role("button", name="Log out").click()
    log_in(cast.annotator)
    page.goto(f"/p/{project.slug}/")
    page.get_by_role("link", name="Annotation").click()
    page.get_by_role("link", name="My work").click()
    expect(page.get_by_role("heading", name="Your labels")).to_be_visible()
    assert_blind(page)
    page.get_by_role("link", name="Edit your label of record 1").click()
    expect(page.get_by_role("heading", name="Your label of record 1")).to_be_visible()
    expect(page.get_by_role("radio", name="Safe", exact=True)).to_be_checked()
    assert_blind(page)
    assert page_events.errors == [] and page_events.console_errors == []
    refused = page.goto(f"/p/{project.slug}/adjudication/{hot.pk}/")
    assert refused is not None and refused.status == 403
    assert REASON not in page.content()


def assert_blind(page: Page) -> None:
    """Nothing of the other annotators, the judge or the reviewer on the annotator's page."""
    body = page.locator("body")
    expect(page.get_by_role("link", name="Adjudication")).to_have_count(0)
    expect(page.get_by_role("link", name="Judging")).to_have_count(0)
    for hidden in (REASON, "adjudicat", "Final label", "bea-second", "cal-third", OTHERS_NOTE):
        expect(body).not_to_contain_text(hidden, ignore_case=True)
    for hidden in (JUDGE, "thinks unsafe", "consensus"):
        expect(body).not_to_contain_text(hidden, ignore_case=True)
