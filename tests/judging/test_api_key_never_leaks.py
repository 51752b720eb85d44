"""A judge's API key is read from the environment when calls are made, and appears in no page,
API response, log line or database row, even when an endpoint echoes it back in its errors;
managers see neither the key nor the name of the variable holding it."""

from __future__ import annotations

import json
import logging

from django.db import connection
from django.urls import reverse
from rest_framework.test import APIClient

from judging.models import ConnectionCheck, Judge, JudgeRun
from judging.services.judges import connection_check_execute
from judging.services.run_engine import judge_run_execute
from tests.curation.api_clients import api_key
from tests.fake_llm import MODEL, ChatRequest, FakeLLM, Reply, default_reply
from tests.judging.judge_runs import make_connection, numbered_records, record_number

KEY_VARIABLE = "STUDIO_LEAK_TEST_API_KEY"
KEY = "sk-leak-test-7f3e9a1c5b2d-do-not-show"
# Loggers of the HTTP stack, turned all the way up: even their debug output must not hold it.
LOGGERS = ("", "openai", "httpx2", "httpcore2", "judging", "celery", "django")


def echoing_endpoint(request: ChatRequest) -> Reply:
    """A hostile endpoint: it answers record 3 and connection tests with the key it was sent."""
    authorization = request.headers.get("authorization", "")
    if authorization != f"Bearer {KEY}":
        return Reply(status=401, body=b'{"error": {"message": "No key"}}')
    if "Reply with the single word OK." in request.text or record_number(request) == 3:
        echo = json.dumps({"error": {"message": f"Bad key: {authorization}"}}).encode()
        return Reply(status=401, body=echo)
    return default_reply(request)


def rows_containing(text: str) -> list[str]:
    """Every text, varchar and JSON column of every table, searched like a grep of a dump."""
    hits = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' "
            "AND data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')"
        )
        columns = cursor.fetchall()
        for table, column in columns:
            quote = connection.ops.quote_name
            cursor.execute(
                f"SELECT count(*) FROM {quote(table)} WHERE {quote(column)}::text LIKE %s",  # noqa: S608
                [f"%{text}%"],
            )
            if cursor.fetchone()[0]:
                hits.append(f"{table}.{column}")
    return hits


def test_the_key_is_used_but_never_shown_logged_or_stored(cast, monkeypatch, caplog) -> None:
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    numbered_records(cast.project, 6)
    pages = cast.client_for("manager")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_key(cast.manager)}")
    slug = cast.project.slug
    responses = []

    with FakeLLM(echoing_endpoint) as llm:
        address = llm.base_url
        connection = make_connection(address, api_key_env=KEY_VARIABLE)
        created = pages.post(
            reverse("judging:judge_new", args=[slug]),
            {
                "name": "Leaky",
                "protocol": "rjudge",
                "connection": connection.pk,
                "model": MODEL,
                "parameters": '{"temperature": 0}',
                "concurrency": 4,
                "timeout_seconds": 5,
                "max_retries": 1,
            },
        )
        judge = Judge.objects.get(name="Leaky")
        responses.append(created)
        responses.append(pages.post(reverse("judging:judge_test", args=[slug, judge.pk])))
        responses.append(
            pages.post(reverse("judging:judge_test", args=[slug, judge.pk]), HTTP_HX_REQUEST="true")
        )
        responses.append(api.post(reverse("judging_api:judge_test", args=[slug, judge.pk])))
        # What the worker does with each test.
        for check in ConnectionCheck.objects.all():
            connection_check_execute(check_id=check.pk)
            responses.append(
                api.get(reverse("judging_api:judge_test_detail", args=[slug, judge.pk, check.pk]))
            )
            responses.append(
                pages.get(reverse("judging:judge_test_detail", args=[slug, judge.pk, check.pk]))
            )
        started = api.post(
            reverse("judging_api:run_list", args=[slug]), {"judge": judge.pk}, format="json"
        )
        responses.append(started)
        run = JudgeRun.objects.get(pk=started.json()["id"])

        judge_run_execute(run_id=run.pk)

    for url in (
        reverse("judging:judge_list", args=[slug]),
        reverse("judging:judge_edit", args=[slug, judge.pk]),
        reverse("judging:run_list", args=[slug]),
        reverse("judging:run_detail", args=[slug, run.pk]),
        reverse("judging:run_detail", args=[slug, run.pk]) + "?parse_status=error",
    ):
        responses.append(pages.get(url, follow=True))
    for url in (
        reverse("judging_api:judge_list", args=[slug]),
        reverse("judging_api:judge_detail", args=[slug, judge.pk]),
        reverse("judging_api:run_list", args=[slug]),
        reverse("judging_api:run_detail", args=[slug, run.pk]),
        reverse("judging_api:run_verdicts", args=[slug, run.pk]),
    ):
        responses.append(api.get(url))

    run.refresh_from_db()
    # The key did its work: the endpoint answered every record but the one it refused.
    assert (run.valid_count, run.error_count) == (5, 1)
    # The refusal that quoted the key is told in the studio's own words, never the endpoint's.
    refusal = "The endpoint answered 401: it refused the API key or access."
    assert run.verdicts.get(parse_status="error").error == refusal
    assert {check.message for check in ConnectionCheck.objects.all()} == {refusal}
    bodies = [response.content.decode() for response in responses]
    assert sum(refusal in body for body in bodies) >= 4
    for body in bodies:
        assert KEY not in body and "Bad key" not in body
        assert KEY_VARIABLE not in body and address not in body
    assert KEY not in caplog.text
    assert caplog.records, "Nothing was logged: the log check would prove nothing."
    assert rows_containing(KEY) == []
    # The search itself finds what is there: the variable's name is stored, on purpose, in
    # the administrators' connection alone.
    assert rows_containing(KEY_VARIABLE) == ["judging_modelconnection.api_key_env"]
