"""What an import found wrong, in the words and places a user needs to fix the input."""

from __future__ import annotations

from dataclasses import asdict, dataclass

# Enough to show what is wrong with a file; past this, the rest is probably the same mistake.
PROBLEM_LIMIT = 50


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem: the file, the record in it, the field (a path like "contents[2][1].role")."""

    file: str
    # The record's position: its index in a JSON file, or its line number in a JSONL file
    # (see `unit`); None for a problem with the file as a whole.
    index: int | None
    field: str
    message: str
    unit: str = "record"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class ProblemLimitReached(Exception):
    """Raised once PROBLEM_LIMIT problems are collected: reading further would only add noise."""


class ImportFailed(Exception):
    """The input is not importable; nothing was written."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"{len(problems)} problem(s) in the input")
        self.problems = problems


class FileRejected(Exception):
    """A file cannot be read at all (too large, not JSON, not a list, a broken archive)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class Problems:
    """The problems collected so far, up to PROBLEM_LIMIT."""

    def __init__(self) -> None:
        self.items: list[Problem] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, problem: Problem) -> None:
        self.items.append(problem)
        if len(self.items) >= PROBLEM_LIMIT:
            raise ProblemLimitReached
