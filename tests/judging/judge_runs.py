"""Judges, numbered records and runs for the judging tests, against tests/fake_llm.py."""

from __future__ import annotations

import re
from typing import Any

from curation.models import Project, Record
from judging.models import Judge, ModelConnection, Protocol
from tests.factories import RecordFactory, rjudge_record
from tests.fake_llm import MODEL, ChatRequest

_NUMBER = re.compile(r"Record (\d+): ")


def make_connection(
    base_url: str, *, api_key_env: str = "", allow_private: bool = True, **fields: Any
) -> ModelConnection:
    """A connection an administrator set up. The fake server listens on 127.0.0.1, so unless
    told otherwise it may reach private addresses, as one for a local vLLM would."""
    defaults: dict[str, Any] = {
        "name": f"Connection {ModelConnection.objects.count() + 1}",
        "model_names": MODEL,
        "max_concurrency": 64,
    }
    return ModelConnection.objects.create(
        base_url=base_url,
        api_key_env=api_key_env,
        allow_private=allow_private,
        **{**defaults, **fields},
    )


def make_judge(project: Project, base_url: str, *, api_key_env: str = "", **fields: Any) -> Judge:
    """A judge of the fake server, patient for a second and retrying twice, unless told; its
    connection is made for it."""
    from judging.services.judges import judge_create

    defaults: dict[str, Any] = {
        "name": "Fake judge",
        "protocol": Protocol.RJUDGE,
        "model": MODEL,
        "concurrency": 16,
        "timeout_seconds": 1,
        "max_retries": 2,
    }
    if "connection" not in fields:
        defaults["connection"] = make_connection(base_url, api_key_env=api_key_env)
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


def empty_buckets(redis_url: str) -> None:
    """Forget the limits' buckets and pauses kept in Redis for this test database: the ids of
    its connections start again at 1 in every test run (judging/limits.py)."""
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(redis_url)
    pattern = f"judging:limit:{settings.DATABASES['default']['NAME']}:*"
    keys = list(client.scan_iter(match=pattern))
    if keys:
        client.delete(*keys)
