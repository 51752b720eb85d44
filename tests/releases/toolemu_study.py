"""A ToolEmu study whose two evaluators disagree, laid out as such studies publish it.

The trajectories are those of tests/curation/toolemu_files.py (three cases), run by three agents;
each evaluator scores each agent's trajectory of a case with a score of its own (SCORES), so that
the preference pairs of one evaluator differ from the other's and from their average.
"""

from __future__ import annotations

import json
from pathlib import Path

from curation.models import ImportBatch, Project
from curation.services.imports import import_path
from judging.models import JudgeRun
from tests.curation.toolemu_files import (
    CASES,
    EVALUATORS,
    TOOLKITS,
    base_name,
    jsonl,
    trajectory,
    write_study,
)

AGENTS = ("Qwen3-8B", "llama-3.1-8b_dpo", "Qwen3-8B_safety-dpo")
METRICS = {"safe": "safety", "help_ignore_safety": "helpfulness"}
# (evaluator, scale) -> agent -> the score of its trajectory of case 0, 1 and 2 (None: the
# evaluator's answer had no score).
SCORES: dict[tuple[str, str], dict[str, list[int | None]]] = {
    ("Qwen3-32B", "safety"): {AGENTS[0]: [3, 0, 2], AGENTS[1]: [1, 2, 0], AGENTS[2]: [0, 3, None]},
    ("gpt-5-mini", "safety"): {AGENTS[0]: [3, 3, 1], AGENTS[1]: [3, 0, 3], AGENTS[2]: [1, 1, 3]},
    ("Qwen3-32B", "helpfulness"): {
        AGENTS[0]: [2, 3, 0],
        AGENTS[1]: [0, 1, 3],
        AGENTS[2]: [3, 0, 1],
    },
    ("gpt-5-mini", "helpfulness"): {
        AGENTS[0]: [3, 2, 1],
        AGENTS[1]: [1, 0, 3],
        AGENTS[2]: [0, 3, 0],
    },
}
LABELS = {
    "safety": ["Likely Severe Risk", "Likely Mild Risk", "Possible Mild Risk", "Certain No Risk"],
    "helpfulness": ["Poor", "Unsatisfactory", "Good", "Excellent"],
}
SCORE_KEYS = {"safety": "ToolCallRisk", "helpfulness": "Helpfulness"}


def _evaluation(evaluator: str, scale: str, agent: str, line: int) -> dict[str, object]:
    score = SCORES[(evaluator, scale)][agent][line]
    return {
        "Evaluator Thought": f"{evaluator} read what {agent} did.",
        # Bold, as evaluators often write it.
        "Overall Qualitative Label": None
        if score is None
        else f"**{LABELS[scale][score]} ({score})**",
        "Overall Quantitative Score": score,
        "Evaluator Log Summary": "Summary.",
        "eval_scores": "{}" if score is None else repr({SCORE_KEYS[scale]: score}),
        "efficiency": 1.0,
        "eval_id": line,
    }


def write_scored_study(root: Path) -> Path:
    files = {"assets/all_toolkits.json": json.dumps(TOOLKITS).encode()}
    for evaluator in EVALUATORS:
        for agent in AGENTS:
            base = f"{evaluator}/{agent}/{base_name(agent, evaluator)}"
            files[f"{base}.jsonl"] = jsonl([trajectory(agent, i) for i in range(len(CASES))])
            for metric, scale in METRICS.items():
                files[f"{base}_eval_agent_{metric}.jsonl"] = jsonl(
                    [_evaluation(evaluator, scale, agent, i) for i in range(len(CASES))]
                )
    return write_study(root, files)


def import_scored_study(project: Project, actor, root: Path) -> dict[tuple[str, str], JudgeRun]:
    """Import the study; return its runs by (evaluator, scale)."""
    batch = import_path(actor=actor, project=project, path=write_scored_study(root))
    assert batch.state == ImportBatch.State.SUCCEEDED, batch.errors
    return {
        (evaluator, scale): JudgeRun.objects.get(project=project, name=f"{evaluator} {metric}")
        for evaluator in EVALUATORS
        for metric, scale in METRICS.items()
    }
