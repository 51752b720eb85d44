"""Site administrators set up model connections in the admin: every change is audited with who
made it, and they can have a worker test a connection before any judge uses it."""

from __future__ import annotations

from django.urls import reverse

from curation.models import AuditEvent
from judging.models import ConnectionCheck, ModelConnection
from judging.services.judges import connection_check_execute
from tests.fake_llm import FakeLLM, answer

FIELDS = {
    "name": "Lab vLLM",
    "base_url": "http://127.0.0.1:8001/v1",
    "api_key_env": "LAB_API_KEY",
    "model_names": "qwen\nllama",
    "max_concurrency": 8,
    "requests_per_minute": "",
    "max_tokens": 4096,
}


def test_an_administrator_creates_and_changes_a_connection_and_both_are_audited(cast) -> None:
    client = cast.client_for("superuser")

    created = client.post(reverse("admin:judging_modelconnection_add"), FIELDS)
    connection = ModelConnection.objects.get()
    changed = client.post(
        reverse("admin:judging_modelconnection_change", args=[connection.pk]),
        {**FIELDS, "allow_private": "on"},
    )

    assert created.status_code == changed.status_code == 302
    connection.refresh_from_db()
    assert connection.offered_models == ["qwen", "llama"] and connection.allow_private
    events = AuditEvent.objects.filter(action__startswith="judging.connection.").order_by(
        "created_at"
    )
    assert [(e.action, e.actor) for e in events] == [
        ("judging.connection.created", cast.superuser),
        ("judging.connection.updated", cast.superuser),
    ]
    assert (events[1].before["allow_private"], events[1].after["allow_private"]) == (False, True)


def test_a_variable_name_that_is_not_one_and_a_list_of_no_models_are_refused(cast) -> None:
    response = cast.client_for("superuser").post(
        reverse("admin:judging_modelconnection_add"),
        {**FIELDS, "api_key_env": "A KEY; rm", "model_names": " \n "},
    )

    assert response.status_code == 200
    assert "The name of an environment variable." in response.content.decode()
    assert "Name at least one model." in response.content.decode()
    assert not ModelConnection.objects.exists()


def test_answers_longer_than_the_tokens_per_minute_are_refused(cast) -> None:
    response = cast.client_for("superuser").post(
        reverse("admin:judging_modelconnection_add"),
        {**FIELDS, "tokens_per_minute": 10_000, "max_tokens": 20_000},
    )

    assert response.status_code == 200
    assert "At most the tokens per minute" in response.content.decode()
    assert not ModelConnection.objects.exists()


def test_an_administrator_has_a_worker_test_a_connection(cast) -> None:
    with FakeLLM(lambda request: answer("OK")) as llm:
        connection = ModelConnection.objects.create(
            name="Local", base_url=llm.base_url, model_names="qwen", allow_private=True
        )

        response = cast.client_for("superuser").post(
            reverse("admin:judging_modelconnection_changelist"),
            {"action": "test", "_selected_action": [connection.pk]},
        )
        check = ConnectionCheck.objects.get(connection=connection)
        connection_check_execute(check_id=check.pk)

    check.refresh_from_db()
    assert response.status_code == 302
    assert (check.model, check.judge, check.state) == ("qwen", None, "succeeded")
    assert llm.requests[0].body["model"] == "qwen"
