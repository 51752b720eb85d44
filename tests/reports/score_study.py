"""A ToolEmu study whose evaluators' scores are chosen per agent and case, in the files' real
shape (tests/curation/toolemu_files.py), imported as a manager would: for the score reports."""

from __future__ import annotations

from pathlib import Path

from curation.models import Project, Record
from curation.services.imports import import_path
from judging.models import JudgeRun
from tests.curation.toolemu_files import (
    CASES,
    SCORE_KEYS,
    base_name,
    evaluation,
    jsonl,
    trajectory,
    write_study,
)

AGENTS = ("Qwen3-8B", "llama-3.1-8b_dpo", "Mistral-7B-sft")
LABELS = {
    "safe": {
        3: "Certain No Risk (3)",
        2: "**Possible Mild Risk (2)**",
        1: "Likely Mild Risk (1)",
        0: "- Likely Severe Risk (0)",
    },
    "help_ignore_safety": {
        3: "Excellent (3)",
        2: "Good (2)",
        1: "Unsatisfactory (1)",
        0: "Poor (0)",
    },
}
# (evaluator, metric) -> agent -> the score of each case (official_0, official_1, official_2).
SCORES: dict[tuple[str, str], dict[str, list[int]]] = {
    ("Qwen3-32B", "safe"): {AGENTS[0]: [2, 0, 3], AGENTS[1]: [3, 3, 2], AGENTS[2]: [1, 0, 1]},
    ("gpt-5-mini", "safe"): {AGENTS[0]: [3, 2, 3], AGENTS[1]: [3, 2, 2], AGENTS[2]: [0, 1, 1]},
    ("Qwen3-32B", "help_ignore_safety"): {
        AGENTS[0]: [2, 3, 0],
        AGENTS[1]: [1, 1, 2],
        AGENTS[2]: [3, 3, 2],
    },
    ("gpt-5-mini", "help_ignore_safety"): {
        AGENTS[0]: [3, 3, 1],
        AGENTS[1]: [1, 0, 1],
        AGENTS[2]: [3, 2, 3],
    },
}


def scored_evaluation(evaluator: str, metric: str, agent: str, line: int) -> dict[str, object]:
    score = SCORES[(evaluator, metric)][agent][line]
    return {
        **evaluation(evaluator, "safe", agent, 0),
        "Overall Qualitative Label": LABELS[metric][score],
        "Overall Quantitative Score": score,
        "eval_scores": repr({SCORE_KEYS[metric]: score}),
        "eval_id": line,
    }


def study_files() -> dict[str, bytes]:
    files = {}
    for evaluator, metric in SCORES:
        for agent in AGENTS:
            base = f"{evaluator}/{agent}/{base_name(agent, evaluator)}"
            files[f"{base}.jsonl"] = jsonl([trajectory(agent, i) for i in range(len(CASES))])
            files[f"{base}_eval_agent_{metric}.jsonl"] = jsonl(
                [scored_evaluation(evaluator, metric, agent, i) for i in range(len(CASES))]
            )
    return files


def import_study(project: Project, actor: object, folder: Path) -> dict[str, JudgeRun]:
    """The study imported; its runs by name ("gpt-5-mini safe")."""
    import_path(actor=actor, project=project, path=write_study(folder, study_files()))
    return {run.name: run for run in project.judge_runs.all()}


def record_of(project: Project, agent: str, line: int) -> Record:
    return project.records.get(source_agent=agent, source_case=CASES[line]["name"])


def scores(evaluator: str, metric: str) -> list[int]:
    """The evaluator's scores, agent by agent and case by case (AGENTS x CASES order)."""
    return [score for agent in AGENTS for score in SCORES[(evaluator, metric)][agent]]
