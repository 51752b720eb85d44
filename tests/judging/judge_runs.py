"""Judges, numbered records and runs for the judging tests, against tests/fake_llm.py."""

from __future__ import annotations

import re
from typing import Any

from curation.models import Project, Record
from judging.models import Judge, Protocol
from tests.factories import RecordFactory, rjudge_record
from tests.fake_llm import MODEL, ChatRequest

_NUMBER = re.compile(r"Record (\d+): ")


def make_judge(project: Project, base_url: str, **fields: Any) -> Judge:
    """A judge of the fake server, patient for a second and retrying twice, unless told."""
    from judging.services.judges import judge_create

    defaults: dict[str, Any] = {
        "name": "Fake judge",
        "protocol": Protocol.RJUDGE,
        "model": MODEL,
        "base_url": base_url,
        "api_key_env": "",
        "concurrency": 16,
        "timeout_seconds": 1,
        "max_retries": 2,
    }
    return judge_create(actor=None, project=project, **{**defaults, **fields})


def numbered_records(
    project: Project, count: int, start: int = 1, category: str = "Application"
) -> list[Record]:
    """Records whose user turn says "Record <n>: ...", so a fake server can tell them apart."""
    return [
        RecordFactory(
            project=project,
            source={
                **rjudge_record(number, user=f"Record {number}: tidy up my inbox."),
                "category": category,
            },
            searchable=False,
        )
        for number in range(start, start + count)
    ]


def record_number(request: ChatRequest) -> int:
    """The number of the record a request to the fake server is about."""
    match = _NUMBER.search(request.text)
    assert match, "The request quotes no numbered record."
    return int(match.group(1))
