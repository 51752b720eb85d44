"""Testing connections is limited, so that nobody fills the workers with tests: a connection
has one test under way at a time, a person starts at most JUDGE_CONNECTION_TESTS_PER_HOUR an
hour and has one under way at a time, and a test gives up rather than wait long for its turn at
the connection's limits."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.admin.sites import site
from django.test import RequestFactory
from django.urls import reverse

from judging.admin import ModelConnectionAdmin
from judging.limits import pause_connection
from judging.models import ConnectionCheck, ModelConnection
from judging.services.judges import connection_check_execute
from tests.fake_llm import FakeLLM
from tests.judging.judge_runs import empty_buckets, make_connection, make_judge
from tests.judging.test_run_api import api_for


def check_url(cast, judge) -> str:
    return reverse("judging_api:judge_test", args=[cast.project.slug, judge.pk])


def test_a_second_test_of_a_connection_under_test_is_refused(cast) -> None:
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    api = api_for(cast.manager)

    first = api.post(check_url(cast, judge))
    second = api.post(check_url(cast, judge))
    page = cast.client_for("manager").post(
        reverse("judging:judge_test", args=[cast.project.slug, judge.pk]), HTTP_HX_REQUEST="true"
    )

    assert first.status_code == 202
    assert second.status_code == 409
    assert "being tested already" in second.json()["detail"]
    assert "Not tested" in page.content.decode()
    assert "being tested already" in page.content.decode()
    assert ConnectionCheck.objects.count() == 1


def test_a_connection_is_tested_again_once_its_test_ended_or_was_given_up(cast) -> None:
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    api = api_for(cast.manager)
    ended = api.post(check_url(cast, judge)).json()["id"]
    ConnectionCheck.objects.filter(pk=ended).update(state=ConnectionCheck.State.FAILED)
    given_up = api.post(check_url(cast, judge)).json()["id"]
    check = ConnectionCheck.objects.get(pk=given_up)
    ConnectionCheck.objects.filter(pk=given_up).update(
        created_at=check.created_at - timedelta(minutes=2)
    )

    assert api.post(check_url(cast, judge)).status_code == 202


def test_a_person_has_one_test_under_way_at_a_time(cast) -> None:
    judges = [
        make_judge(cast.project, f"http://127.0.0.1:{port}/v1", name=f"Judge {port}")
        for port in (9, 10)
    ]
    api = api_for(cast.manager)

    first = api.post(check_url(cast, judges[0]))
    second = api.post(check_url(cast, judges[1]))
    ConnectionCheck.objects.filter(pk=first.json()["id"]).update(state="succeeded")
    third = api.post(check_url(cast, judges[1]))

    assert (first.status_code, second.status_code, third.status_code) == (202, 409, 202)
    assert second.json()["detail"] == (
        "Your test of another connection is under way: wait for its result."
    )


def test_a_person_starts_at_most_so_many_tests_an_hour(cast, settings) -> None:
    settings.JUDGE_CONNECTION_TESTS_PER_HOUR = 3
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")
    api = api_for(cast.manager)
    answers = []
    for _ in range(5):
        answers.append(api.post(check_url(cast, judge)))
        ConnectionCheck.objects.update(state="failed")

    other = api_for(cast.superuser).post(check_url(cast, judge))

    assert [answer.status_code for answer in answers] == [202, 202, 202, 429, 429]
    assert "3 times in the last hour" in answers[-1].json()["detail"]
    assert other.status_code == 202


def test_the_admin_action_tests_the_connections_not_under_test_already(cast) -> None:
    tested = make_connection("http://127.0.0.1:9/v1", name="Under test")
    make_connection("http://127.0.0.1:10/v1", name="Idle")
    ConnectionCheck.objects.create(connection=tested, model="fake-judge-1")
    request = RequestFactory().post("/admin/")
    request.user = cast.superuser
    admin = ModelConnectionAdmin(ModelConnection, site)
    notes: list[str] = []
    admin.message_user = lambda request, message, *args, **kwargs: notes.append(message)

    admin.test(request, ModelConnection.objects.all())

    assert ConnectionCheck.objects.filter(connection__name="Idle").count() == 1
    assert ConnectionCheck.objects.filter(connection__name="Under test").count() == 1
    assert any(note.startswith("Under test: This connection is being tested") for note in notes)


def test_a_test_gives_up_rather_than_wait_long_for_its_turn(cast, settings) -> None:
    empty_buckets(settings.REDIS_URL)
    with FakeLLM() as llm:
        connection = make_connection(llm.base_url, requests_per_minute=60)
        judge = make_judge(cast.project, "", connection=connection)
        check = ConnectionCheck.objects.create(
            connection=connection, model=judge.model, judge=judge
        )
        pause_connection(connection.pk, 60)

        connection_check_execute(check_id=check.pk)

    check.refresh_from_db()
    assert check.state == ConnectionCheck.State.FAILED
    assert "limits of requests or tokens per minute are taken" in check.message
    assert llm.request_count == 0
