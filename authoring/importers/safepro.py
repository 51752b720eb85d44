"""SafePro task files: the only code that knows their shape.

A file is a JSON object keyed "<Sector> - <Occupation>", each key holding a list of tasks:
`{task_id, prompt, messages: [{sender, content}], reference_files: [path, ...], risk_category,
malicious_motivation, risk_outcome, unsafe_criteria, safe_criteria}`. Reference files are paths
relative to the file's folder (or to the root of a zip holding it), as in
"reference_files/<task_id>/brief.pdf".

Reading checks the shape and reports every problem with the key, the task's index in its list
and the field; what the values may be (lengths, a known risk category) the import service checks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from curation.importers.problems import PROBLEM_LIMIT

# A task's keys, in SafePro's order: exports write them so.
SAFEPRO_KEYS: tuple[str, ...] = (
    "task_id",
    "prompt",
    "messages",
    "reference_files",
    "risk_category",
    "malicious_motivation",
    "risk_outcome",
    "unsafe_criteria",
    "safe_criteria",
)
TEXT_KEYS: tuple[str, ...] = (
    "prompt",
    "risk_category",
    "malicious_motivation",
    "risk_outcome",
    "unsafe_criteria",
    "safe_criteria",
)
# Some files repeat the group's sector and occupation in each task: allowed when they agree.
GROUP_KEYS: tuple[str, ...] = ("sector", "occupation")
KEY_SEPARATOR = " - "
TASK_ID_MAX_CHARS = 200


@dataclass(frozen=True)
class TaskProblem:
    """One problem: the group's key, the task's index in it (None: the group) and the field."""

    key: str
    index: int | None
    field: str
    message: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def __str__(self) -> str:
        where = [f"“{self.key}”" if self.key else "the file"]
        if self.index is not None:
            where.append(f"task {self.index}")
        if self.field:
            where.append(self.field)
        return f"{', '.join(where)}: {self.message}"


@dataclass
class SafeProTask:
    key: str
    index: int
    sector: str
    occupation: str
    task_id: str
    prompt: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    reference_files: list[str] = field(default_factory=list)
    risk_category: str = ""
    malicious_motivation: str = ""
    risk_outcome: str = ""
    unsafe_criteria: str = ""
    safe_criteria: str = ""


class _Limit(Exception):
    """Enough problems to show what is wrong; reading further would only add noise."""


class _Problems(list[TaskProblem]):
    def add(self, key: str, index: int | None, name: str, message: str) -> None:
        self.append(TaskProblem(key, index, name, message))
        if len(self) >= PROBLEM_LIMIT:
            raise _Limit


def split_key(key: str) -> tuple[str, str] | None:
    """(sector, occupation) of a group key, or None when it does not read so."""
    sector, separator, occupation = key.partition(KEY_SEPARATOR)
    if not separator or not sector.strip() or not occupation.strip():
        return None
    return sector.strip(), occupation.strip()


def group_key(sector: str, occupation: str) -> str:
    return f"{sector}{KEY_SEPARATOR}{occupation}"


def read_safepro(document: object) -> tuple[list[SafeProTask], list[TaskProblem]]:
    """The tasks of a parsed SafePro file, and what is wrong with it (nothing, if all is well)."""
    tasks: list[SafeProTask] = []
    problems = _Problems()
    try:
        if not isinstance(document, dict):
            problems.add("", None, "", "must be a JSON object keyed “<Sector> - <Occupation>”.")
            return tasks, problems
        seen: dict[str, tuple[str, int]] = {}
        for key, group in document.items():
            names = split_key(key)
            if names is None:
                problems.add(key, None, "", "a key must read “<Sector> - <Occupation>”.")
                continue
            if not isinstance(group, list):
                problems.add(key, None, "", "must be a list of tasks.")
                continue
            for index, item in enumerate(group):
                task = _read_task(key, index, names, item, problems)
                if task is None:
                    continue
                if task.task_id in seen:
                    first_key, first_index = seen[task.task_id]
                    problems.add(
                        key,
                        index,
                        "task_id",
                        f"“{task.task_id}” is also the id of task {first_index} of “{first_key}”.",
                    )
                    continue
                seen[task.task_id] = (key, index)
                tasks.append(task)
        if not tasks and not problems:
            problems.add("", None, "", "holds no tasks.")
    except _Limit:
        pass
    return tasks, problems


def reference_path(path: str) -> str | None:
    """A reference file's path, normalised, if it stays inside the file's folder."""
    posix = PurePosixPath(path.replace("\\", "/"))
    if posix.is_absolute() or ".." in posix.parts or not posix.parts or ":" in posix.parts[0]:
        return None
    return posix.as_posix()


def _read_task(
    key: str, index: int, names: tuple[str, str], item: object, problems: _Problems
) -> SafeProTask | None:
    if not isinstance(item, dict):
        problems.add(key, index, "", "a task must be a JSON object.")
        return None
    found = len(problems)
    for name in sorted(set(item) - set(SAFEPRO_KEYS) - set(GROUP_KEYS)):
        problems.add(key, index, name, f"is not a SafePro field ({', '.join(SAFEPRO_KEYS)}).")
    for name, expected in zip(GROUP_KEYS, names, strict=True):
        if name in item and item[name] != expected:
            problems.add(key, index, name, f"says {item[name]!r}, but the task is under “{key}”.")
    task_id = _task_id(key, index, item.get("task_id"), problems)
    text = {}
    for name in TEXT_KEYS:
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            problems.add(key, index, name, "must be text.")
        text[name] = value if isinstance(value, str) else ""
    messages = item.get("messages")
    if messages is None:
        messages = []
    elif not isinstance(messages, list):
        problems.add(key, index, "messages", "must be a list of {sender, content}.")
    files = _reference_files(key, index, item.get("reference_files"), problems)
    if len(problems) > found or task_id is None:
        return None
    return SafeProTask(
        key=key,
        index=index,
        sector=names[0],
        occupation=names[1],
        task_id=task_id,
        messages=messages,
        reference_files=files,
        **text,
    )


def _task_id(key: str, index: int, value: object, problems: _Problems) -> str | None:
    if value is None:
        problems.add(key, index, "task_id", "is missing.")
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        problems.add(key, index, "task_id", "must be text or a whole number.")
        return None
    task_id = str(value).strip()
    if not task_id:
        problems.add(key, index, "task_id", "is empty.")
        return None
    if len(task_id) > TASK_ID_MAX_CHARS:
        problems.add(key, index, "task_id", f"is longer than {TASK_ID_MAX_CHARS} characters.")
        return None
    return task_id


def _reference_files(key: str, index: int, value: object, problems: _Problems) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        problems.add(key, index, "reference_files", "must be a list of file paths.")
        return []
    paths = []
    for position, path in enumerate(value):
        name = f"reference_files[{position}]"
        normalised = reference_path(path) if isinstance(path, str) else None
        if normalised is None:
            problems.add(key, index, name, "must be a relative path inside the file's folder.")
        else:
            paths.append(normalised)
    return paths
