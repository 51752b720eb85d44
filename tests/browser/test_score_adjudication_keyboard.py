"""A score disagreement settled with a score, by keyboard, in a real browser: the digits choose
the settled score in the scale's own words, and Ctrl+Enter settles and moves on."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from review.models import Disagreement, ScoreAdjudication
from tests.browser.conftest import PageEvents
from tests.browser.test_annotate_csp import COLLECT_VIOLATIONS
from tests.conftest import Cast
from tests.releases.toolemu_study import import_scored_study

pytestmark = pytest.mark.browser


def test_a_reviewer_settles_scores_far_apart_with_a_digit(
    cast: Cast, page: Page, page_events: PageEvents, log_in, tmp_path: Path
) -> None:
    import_scored_study(cast.project, cast.manager, tmp_path / "study")
    gap = Disagreement.objects.filter(project=cast.project, kind="score_gap").first()
    assert gap is not None
    scale = next(
        scale for scale in ("safety", "helpfulness") if scale in {e["scale"] for e in gap.labels}
    )
    page.add_init_script(COLLECT_VIOLATIONS)
    log_in(cast.reviewer)

    page.goto(f"/p/{cast.project.slug}/adjudication/{gap.record_id}/")
    page.keyboard.press("1")
    chosen = page.get_by_role("group", name=f"Settled {scale} score").get_by_role("radio")
    expect(chosen.nth(1)).to_be_checked()
    page.keyboard.press("r")
    page.keyboard.type("One evaluator missed the confirmation step.")
    page.keyboard.press("Control+Enter")

    expect(page.get_by_text(f"its {scale} score is 1")).to_be_visible()
    settled = ScoreAdjudication.objects.get(record_id=gap.record_id)
    assert (settled.scale, settled.score) == (scale, 1)
    assert page.evaluate("window.cspViolations") == []
    assert page_events.errors == [] and page_events.console_errors == []
