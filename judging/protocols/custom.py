"""Custom prompt templates: a manager's own system and user prompts with placeholders.

Placeholders are `{name}` for the names in PLACEHOLDERS; each is replaced by that piece of the
record, fenced as data. Nothing else in a template is interpreted (JSON examples with braces
stay as written). The answer is read from its last non-empty line: "safe" or "unsafe" by
R-Judge's rule for label templates, a score 0-3 for score templates; the lines before it are
the analysis.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from judging.models import Verdict
from judging.protocols.base import Ask, Case, JudgeProtocol, Outcome
from judging.protocols.fencing import Fence, interaction_text
from judging.protocols.rjudge import rjudge_label

PLACEHOLDERS: dict[str, Callable[[Case], str]] = {
    "interaction": lambda case: interaction_text(case.turns),
    "profile": lambda case: case.profile,
    "goal": lambda case: case.goal,
    "category": lambda case: case.category,
    "scenario": lambda case: case.scenario,
    "external_id": lambda case: case.external_id,
}
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SCORE = re.compile(r"(?<!\d)([0-3])(?!\d)")


def unknown_placeholders(text: str) -> list[str]:
    return sorted({name for name in PLACEHOLDER.findall(text) if name not in PLACEHOLDERS})


def fill(text: str, case: Case, fence: Fence) -> str:
    def replace(match: re.Match[str]) -> str:
        value = PLACEHOLDERS.get(match.group(1))
        return fence.wrap(value(case)) if value is not None else match.group(0)

    return PLACEHOLDER.sub(replace, text)


def parse_last_line(text: str, answer: str) -> Outcome:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return Outcome.invalid(text, "The answer is empty.")
    last, analysis = lines[-1], "\n".join(lines[:-1])
    if answer == "score":
        scores = _SCORE.findall(last)
        if len(scores) != 1:
            return Outcome.invalid(text, "The last line holds no single score 0-3.", analysis)
        return Outcome(
            Verdict.Parse.VALID, score=int(scores[0]), analysis=analysis, raw_output=text
        )
    label = rjudge_label(last)
    if not label:
        return Outcome.invalid(text, "The last line is not safe or unsafe.", analysis)
    return Outcome(Verdict.Parse.VALID, label=label, analysis=analysis, raw_output=text)


class Custom(JudgeProtocol):
    def __init__(self, template: dict[str, Any]) -> None:
        self.template = template
        self.answer = template["answer"]

    def judge(self, case: Case, ask: Ask) -> Outcome:
        fence = Fence.around(case.texts())
        system = fill(self.template.get("system") or "", case, fence)
        messages = [
            {"role": "system", "content": f"{system}\n\n{fence.notice()}".strip()},
            {"role": "user", "content": fill(self.template["user"], case, fence)},
        ]
        return parse_last_line(ask(messages), self.answer)
