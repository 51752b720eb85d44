"""The dataset card of a release of a ToolEmu study lists each source model's mean safety and
helpfulness per evaluator, with the Pareto frontier, as frozen at creation (the card is printed
from the frozen summary, as the build prints it)."""

from __future__ import annotations

from pathlib import Path

from releases.build import release_folder
from releases.card import dataset_card
from releases.services import release_create, release_options
from tests.conftest import Cast
from tests.releases.helpers import built_release, record
from tests.reports.score_study import AGENTS, import_study, record_of
from tests.review.opinions import annotate, judge_run


def test_the_card_prints_each_evaluators_view_of_the_released_records(
    cast: Cast, tmp_path: Path
) -> None:
    import_study(cast.project, cast.manager, tmp_path / "study")
    second = type(cast.annotator).objects.create(username="second")
    # Records enter the release with a final label: those of case official_0, for each agent.
    for agent in AGENTS:
        for person in (cast.annotator, second):
            annotate(record_of(cast.project, agent, 0), person, "safe")

    release = release_create(
        actor=cast.manager,
        project=cast.project,
        version="1.0.0",
        license="CC BY 4.0",
        options=release_options(leave_out_in_annotation=False),
    )

    card = dataset_card(release, ["README.md"])
    _, _, section = card.partition("## Source models: safety and helpfulness")
    assert "Safety scores from Qwen3-32B safe, helpfulness scores from Qwen3-32B " in section
    assert "Safety scores from gpt-5-mini safe, helpfulness scores from gpt-5-mini " in section
    # gpt-5-mini on official_0: Qwen3-8B 3 and 3, llama 3 and 1, Mistral 0 and 3.
    gpt = section.partition("Safety scores from gpt-5-mini safe")[2]
    assert "| Qwen3-8B | 1 | 3.00 | 3.00 | * |" in gpt
    assert "| llama-3.1-8b_dpo | 1 | 3.00 | 1.00 |  |" in gpt
    assert "Human consensus" not in section
    views = release.summary["source_models"]
    assert [len(view["models"]) for view in views] == [3, 3]


def test_a_release_without_scores_has_no_such_section(cast: Cast) -> None:
    records = [record(cast.project, n, label=n % 2) for n in range(1, 3)]
    judge_run(cast.project, "judge A", dict.fromkeys(records, "safe"))

    release = built_release(cast.project, cast.manager, label_basis="gold")

    assert "## Source models" not in (release_folder(release) / "README.md").read_text()
    assert release.summary["source_models"] == []
