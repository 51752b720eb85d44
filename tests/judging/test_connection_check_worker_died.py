"""A connection test whose worker died is made again by another worker, while the page still
waits for it; one a live worker holds is left to it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

import judging.tasks  # noqa: F401 (registers the kinds of jobs workers recover)
from curation import job_leases
from curation.job_leases import job_lease, jobs_recover
from judging.models import ConnectionCheck, ModelConnection
from judging.services.judges import CHECK_TASK, connection_check_execute
from tests.fake_llm import FakeLLM, answer


@pytest.fixture(autouse=True)
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    cache.clear()
    jobs: list[tuple[str, int]] = []
    monkeypatch.setattr(job_leases, "job_send", lambda task, pk: jobs.append((task, pk)))
    return jobs


@pytest.mark.django_db
def test_a_check_left_running_by_a_dead_worker_is_made_again(sent) -> None:
    with FakeLLM(lambda request: answer("OK")) as llm:
        connection = ModelConnection.objects.create(
            name="Local", base_url=llm.base_url, model_names="qwen", allow_private=True
        )
        check = ConnectionCheck.objects.create(
            connection=connection, model="qwen", state=ConnectionCheck.State.RUNNING
        )
        ConnectionCheck.objects.filter(pk=check.pk).update(
            created_at=timezone.now() - timedelta(seconds=40)
        )

        jobs_recover()
        with job_lease(CHECK_TASK, check.pk):
            # A copy of the job while another worker holds the check makes no call.
            connection_check_execute(check_id=check.pk)
            assert llm.request_count == 0
        connection_check_execute(check_id=check.pk)

    check.refresh_from_db()
    assert sent == [(CHECK_TASK, check.pk)]
    assert check.state == ConnectionCheck.State.SUCCEEDED
    assert llm.request_count == 1
