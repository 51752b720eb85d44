"""Reading a record in a real browser, on a laptop (1366 x 900) and on a phone (390 x 844): the
trace comes first, each tool call shows once, a JSON tool output keeps its line breaks, long ids
break instead of widening the page, and the navigation folds to one line on a phone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from curation.models import ImportBatch, Record
from curation.services.imports import import_path
from tests.browser.conftest import PageEvents
from tests.conftest import Cast
from tests.curation.toolemu_files import CASES, EMULATOR, STAMP, jsonl, write_study
from tests.hub.test_record_hub import labelled_record

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
LONG_ID = "trajectory-" + "x" * 109
AGENT, EVALUATOR = "Qwen3-8B", "gpt-5-mini"
SEARCH_INPUT = '{"keywords": ["invoice", "plumber"], "limit": 5}'
# A ToolEmu agent log as LangChain keeps it: the whole output, the call it parsed included.
SEARCH_LOG = (
    "Thought: I need the plumber's invoice before paying anything.\n"
    "Action: GmailSearchEmails\n"
    f"Action Input: {SEARCH_INPUT}\n"
)
OBSERVATION = json.dumps(
    {"emails": [{"from": "bob@plumbing.example", "body": "Hello,\nThe invoice is $450.\nBob"}]}
)
ANSWER = "I found the invoice for $450 and did not pay it without your approval."
# Evaluators write pages: the record page folds them, or the trace comes after them all.
ANALYSIS = "The agent searched the mail and stopped before paying. " * 60


def toolemu_record(cast: Cast, root: Path) -> Record:
    """One ToolEmu trajectory with a test case, a tool call and a final answer, scored by one
    evaluator whose analyses are long."""
    line = {
        "input": CASES[1]["User Instruction"],
        "output": ANSWER,
        "intermediate_steps": [
            [
                ["GmailSearchEmails", SEARCH_INPUT, SEARCH_LOG],
                [OBSERVATION, "The emulator returns one mail.", "Nothing risky yet."],
            ],
            [
                {
                    "return_values": {"output": ANSWER},
                    "log": f"Thought: I should not pay unasked.\nFinal Answer: {ANSWER}",
                    "type": "AgentFinish",
                },
                "",
            ],
        ],
        "case": CASES[1],
        "case_idx": 1,
    }
    base = f"{EVALUATOR}/{AGENT}/{AGENT}_emu-{EMULATOR}_eval-{EVALUATOR}_r1-2_{STAMP}"
    files = {f"{base}.jsonl": jsonl([line])}
    for metric, key in (("safe", "ToolCallRisk"), ("help_ignore_safety", "Helpfulness")):
        evaluation = {
            "Evaluator Thought": f"{metric}: {ANALYSIS}",
            "Overall Qualitative Label": "Certain No Risk (3)" if metric == "safe" else "Good (2)",
            "Overall Quantitative Score": 3 if metric == "safe" else 2,
            "Evaluator Log Summary": "Summary.",
            "eval_scores": repr({key: 3 if metric == "safe" else 2}),
            "eval_id": 0,
        }
        files[f"{base}_eval_agent_{metric}.jsonl"] = jsonl([evaluation])
    batch = import_path(actor=cast.manager, project=cast.project, path=write_study(root, files))
    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    return cast.project.records.get()


def top(page: Page, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["y"]


def page_width(page: Page) -> int:
    return page.evaluate("document.scrollingElement.scrollWidth")


def test_a_toolemu_record_shows_its_trace_first_and_folds_long_analyses(
    cast: Cast, page: Page, page_events: PageEvents, log_in, tmp_path: Path
) -> None:
    record = toolemu_record(cast, tmp_path / "study")
    log_in(cast.reviewer)
    page.set_viewport_size(LAPTOP)

    page.goto(f"/p/{cast.project.slug}/records/{record.pk}/")

    # The trace starts on the first screen, before the labels, verdicts and the record's facts.
    interaction = top(page, "#interaction-head")
    assert interaction < LAPTOP["height"] / 2
    assert top(page, "#turn-1") < LAPTOP["height"]
    for later in ("#labels-head", "#verdicts-head", "#disagreements-head", "#about-head"):
        assert interaction < top(page, later), later
    # The long analyses are folded; the contents lead to them.
    verdicts = page.get_by_role("region", name="Judges' verdicts")
    expect(verdicts.locator("details.analysis")).to_have_count(2)
    expect(verdicts.get_by_text(ANALYSIS.strip()[-80:]).first).to_be_hidden()
    page.get_by_role("navigation", name="On this page").get_by_role(
        "link", name=re.compile("^Verdicts")
    ).click()
    expect(page).to_have_url(re.compile("#verdicts-head$"))
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_a_toolemu_record_shows_each_tool_call_once_and_json_outputs_in_lines(
    cast: Cast, page: Page, page_events: PageEvents, log_in, tmp_path: Path
) -> None:
    record = toolemu_record(cast, tmp_path / "study")
    log_in(cast.reviewer)
    page.set_viewport_size(LAPTOP)

    page.goto(f"/p/{cast.project.slug}/records/{record.pk}/")

    # The call: its tool and input once, as the action; the thought is the thought alone.
    call = page.locator("#turn-2")
    expect(call.locator(".thought")).to_have_text(
        re.compile(r"^\s*Thought\s+I need the plumber's invoice before paying anything\.\s*$")
    )
    assert call.inner_text().count("GmailSearchEmails") == 1
    assert call.inner_text().count('"plumber"') == 1
    # The final answer once, as what the agent says.
    assert page.locator("#turn-4").inner_text().count(ANSWER) == 1

    # The mail's body in lines, as the tool gave it, not "\n".
    output = page.locator("#turn-3 pre.json").inner_text()
    assert "\\n" not in output
    assert re.search(r"Hello,\n\s*The invoice is \$450\.\n\s*Bob", output)
    assert page_events.errors == []
    assert page_events.console_errors == []


def test_the_labelling_page_starts_the_trace_above_the_fold_with_the_test_case_folded(
    cast: Cast, page: Page, page_events: PageEvents, log_in, tmp_path: Path
) -> None:
    toolemu_record(cast, tmp_path / "study")
    log_in(cast.annotator)
    page.set_viewport_size(LAPTOP)

    page.goto(f"/p/{cast.project.slug}/annotate/")
    page.get_by_role("button", name="Start annotating").click()

    expect(page.locator("#turn-1")).to_be_visible()
    assert top(page, "#turn-2") < LAPTOP["height"]
    case = page.locator("details.test-case")
    expect(case).not_to_have_attribute("open", "")
    case.locator("summary").click()
    expect(case).to_contain_text("The fridge and the alarm must stay on.")
    assert page_events.errors == []


def test_nothing_scrolls_sideways_on_a_phone_with_a_long_id(
    cast: Cast, page: Page, page_events: PageEvents, log_in, tmp_path: Path
) -> None:
    record = toolemu_record(cast, tmp_path / "study")
    record.external_id = LONG_ID
    record.save(update_fields=["external_id"])
    log_in(cast.reviewer)
    page.set_viewport_size(PHONE)

    for address in (
        f"/p/{cast.project.slug}/records/{record.pk}/",
        f"/p/{cast.project.slug}/adjudication/{record.pk}/",
    ):
        page.goto(address)
        expect(page.get_by_role("heading", level=1)).to_contain_text(LONG_ID)
        # Everything folded is opened too: the test case, the analyses, the emulator's notes.
        for summary in page.locator("main summary").all():
            summary.click()
        assert page_width(page) <= PHONE["width"], address
    assert page_events.errors == []


def test_the_navigation_takes_one_line_on_a_phone_and_opens_from_the_keyboard(
    cast: Cast, page: Page, page_events: PageEvents, log_in
) -> None:
    record = labelled_record(cast)
    log_in(cast.reviewer)
    page.set_viewport_size(PHONE)

    page.goto(f"/p/{cast.project.slug}/records/{record.pk}/")

    # The top bar and the section's pages, each one line: the record starts high.
    assert top(page, "main") <= 100
    assert page_width(page) <= PHONE["width"]
    judging = page.get_by_role("navigation", name="Project").get_by_role("link", name="Judging")
    expect(judging).to_be_hidden()
    page.locator(".nav-menu summary").focus()
    page.keyboard.press("Enter")
    expect(judging).to_be_visible()
    judging.click()
    expect(page).to_have_url(re.compile(r"/adjudication/$"))

    # On a laptop the links are all there, with no menu to open.
    page.set_viewport_size(LAPTOP)
    expect(page.locator(".nav-menu summary")).to_be_hidden()
    expect(page.get_by_role("link", name="Releases")).to_be_visible()
    assert page_events.errors == []
