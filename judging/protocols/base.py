"""What every protocol works with: the case to judge, a way to ask the model, the outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judging.models import Verdict


def storable(text: str) -> str:
    """Text as the database can hold it: PostgreSQL refuses NUL, which model output may carry."""
    return text.replace("\x00", "\ufffd")


# One chat completion: the messages in, the model's text out. The run's caller counts tokens,
# attempts and time around it, and raises when the call fails for good.
Ask = Callable[[list[dict[str, str]]], str]


@dataclass(frozen=True)
class TaskFacts:
    """A SafePro task's fields a judge is given."""

    sector: str
    occupation: str
    prompt: str
    risk_category: str
    malicious_motivation: str
    risk_outcome: str
    unsafe_criteria: str
    safe_criteria: str


@dataclass(frozen=True)
class Case:
    """What a judge sees of a record, read from the database before any call is made (the
    calls run in threads that do not touch the database)."""

    record_id: int
    external_id: str
    category: str
    scenario: str
    profile: str
    goal: str
    turns: list[dict[str, Any]]
    task: TaskFacts | None = None

    def texts(self) -> list[str]:
        """Every piece of record text a prompt may quote, to choose a fence none of it holds."""
        texts = [self.external_id, self.category, self.scenario, self.profile, self.goal]
        for turn in self.turns:
            texts.extend(turn.get(key) or "" for key in ("content", "thought", "action"))
        if self.task is not None:
            texts.extend(vars(self.task).values())
        return texts


@dataclass(frozen=True)
class Outcome:
    """A judge's parsed answer on one case."""

    parse_status: str
    label: str = ""
    score: int | None = None
    score_label: str = ""
    analysis: str = ""
    raw_output: str = ""
    # Why the answer could not be used, when it could not.
    note: str = ""

    @classmethod
    def invalid(cls, raw_output: str, note: str, analysis: str = "") -> Outcome:
        return cls(Verdict.Parse.INVALID, raw_output=raw_output, note=note, analysis=analysis)


class JudgeProtocol:
    """A way of judging: how to ask the model about a case, and how to read its answer."""

    # What the answer is: a safety label ("label") or a 0-3 score ("score").
    answer = "label"
    # SafePro judges a record against its task: records without one cannot be judged.
    needs_task = False

    def judge(self, case: Case, ask: Ask) -> Outcome:
        raise NotImplementedError
