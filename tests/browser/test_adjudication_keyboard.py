"""Adjudication at the labelling page's speed, in a real browser: a reviewer settles the whole
queue by keyboard, each "Settle and next" opening the next open disagreement with the focus on
its trace, so that the next key is a shortcut rather than typed into the reason; the
annotators' evidence turns are marked on the trace; the page keeps to the CSP, and fits a
phone's width."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from review.selectors import adjudication_queue, final_labels
from review.services.disagreements import detect_disagreements
from tests.annotation.annotators import add_annotator
from tests.browser.conftest import PageEvents
from tests.browser.test_annotate_csp import COLLECT_VIOLATIONS
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record
from tests.review.opinions import annotate, judge_run

pytestmark = pytest.mark.browser

# What the reviewer decides for each record of the queue, in its order: the key, and why.
DECISIONS = [
    ("u", "unsafe", "Deletes 214 mails unasked."),
    ("s", "safe", "Only old newsletters went."),
    ("u", "unsafe", "No confirmation was asked."),
]


@pytest.fixture
def disputed(cast: Cast) -> list:
    """Three records the annotators split on, with the turns each marked as evidence."""
    project = cast.project
    people = [add_annotator(project, name) for name in ("ann-first", "bob-second", "cyd-third")]
    records = []
    for number in range(1, 4):
        record = RecordFactory(
            project=project, source=rjudge_record(number, label=1), searchable=False
        )
        for person, verdict in zip(people, ("unsafe", "unsafe", "safe"), strict=True):
            annotate(record, person, verdict)
        record.annotations.exclude(verdict="safe").update(evidence_turns=[2])
        records.append(record)
    judge_run(project, "Judge Ypsilon", dict.fromkeys(records, "safe"))
    detect_disagreements(project_id=project.pk, record_ids=[record.pk for record in records])
    return list(adjudication_queue(project))


def heading(page: Page, record) -> None:
    expect(page.get_by_role("heading", name=f"Settle record {record.external_id}")).to_be_visible()


def test_a_reviewer_settles_the_whole_queue_by_keyboard(
    cast: Cast, page: Page, page_events: PageEvents, log_in, disputed: list
) -> None:
    page.add_init_script(COLLECT_VIOLATIONS)
    log_in(cast.reviewer)
    page.goto(f"/p/{cast.project.slug}/adjudication/")
    page.get_by_role("link", name=f"Record {disputed[0].external_id}", exact=True).focus()
    page.keyboard.press("Enter")

    reason = page.get_by_label("Reason")
    for number, (record, (key, label, why)) in enumerate(zip(disputed, DECISIONS, strict=True)):
        heading(page, record)
        # Where each annotator's evidence is, whose and how many.
        expect(page.locator("#turn-2 .evidence-marks")).to_have_text(
            "Evidence for 2: ann-first, bob-second"
        )
        expect(page.locator("#turn-1")).to_be_focused()
        page.keyboard.press("j")
        expect(page.locator("#turn-2")).to_be_focused()
        page.keyboard.press(key)
        expect(page.get_by_role("radio", name=label.capitalize(), exact=True)).to_be_checked()
        page.keyboard.press("r")
        expect(reason).to_be_focused()
        page.keyboard.type(why)
        if number == 1:
            # Esc leaves the box; Enter then settles, as on the labelling page.
            page.keyboard.press("Escape")
            expect(reason).not_to_be_focused()
            page.keyboard.press("?")
            expect(page.get_by_role("heading", name="Keyboard shortcuts")).to_be_visible()
            page.keyboard.press("Escape")
            page.keyboard.press("Enter")
        else:
            page.keyboard.press("Control+Enter")
        expect(page.get_by_text(f"Record {record.external_id} settled")).to_be_visible()

    expect(page.get_by_text("Nothing to settle: no open disagreement.")).to_be_visible()
    assert final_labels(cast.project, [record.pk for record in disputed]) == {
        record.pk: (label, "adjudicated")
        for record, (_, label, _) in zip(disputed, DECISIONS, strict=True)
    }
    reasons = [record.adjudications.get().reason for record in disputed]
    assert reasons == [why for _, _, why in DECISIONS]
    assert page.evaluate("window.cspViolations") == []
    assert page_events.errors == [] and page_events.console_errors == []


def test_a_shortcut_on_the_next_record_is_not_typed_into_its_reason(
    cast: Cast, page: Page, log_in, disputed: list
) -> None:
    log_in(cast.reviewer)
    page.goto(f"/p/{cast.project.slug}/adjudication/{disputed[0].pk}/")
    page.keyboard.press("s")
    page.keyboard.press("r")
    page.keyboard.type("Harmless.")
    page.keyboard.press("Control+Enter")
    heading(page, disputed[1])

    page.keyboard.press("u")
    page.keyboard.press("j")

    expect(page.get_by_label("Reason")).to_have_value("")
    expect(page.get_by_role("radio", name="Unsafe", exact=True)).to_be_checked()
    expect(page.locator("#turn-2")).to_be_focused()


def test_settling_without_a_reason_puts_the_focus_in_the_reason(
    cast: Cast, page: Page, log_in, disputed: list
) -> None:
    log_in(cast.reviewer)
    page.goto(f"/p/{cast.project.slug}/adjudication/{disputed[0].pk}/")
    page.keyboard.press("u")
    page.keyboard.press("Enter")

    # The browser asks for the reason before anything is sent.
    expect(page.get_by_label("Reason")).to_be_focused()
    heading(page, disputed[0])
    assert not disputed[0].adjudications.exists()


def test_the_adjudication_pages_fit_a_phone_without_sideways_scrolling(
    cast: Cast, page: Page, log_in, disputed: list
) -> None:
    long_word = "https://files.example.org/" + "x" * 300
    record = RecordFactory(
        project=cast.project, source=rjudge_record(9, user=long_word), searchable=False
    )
    for annotation in disputed[0].annotations.all():
        annotate(record, annotation.annotator, annotation.verdict)
    record.annotations.update(risk_description=long_word, evidence_turns=[1, 2, 3])
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(cast.reviewer)

    queue = f"/p/{cast.project.slug}/adjudication/"
    for url in (queue, f"{queue}{record.pk}/"):
        page.goto(url)
        expect(page.locator("main h1")).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{url} is {width} px wide"
    expect(page.get_by_role("button", name="Settle and next")).to_be_visible()
