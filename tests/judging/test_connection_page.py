"""Site administrators see every model connection on one page: where it goes, whether its key
is set, who uses it and how its last test went. Managers see none of it."""

from __future__ import annotations

from django.urls import reverse

from judging.models import ConnectionCheck
from tests.judging.judge_runs import make_connection, make_judge


def test_administrators_see_where_connections_go_and_how_their_last_test_went(
    cast, monkeypatch
) -> None:
    monkeypatch.setenv("LAB_API_KEY", "sk-lab")
    connection = make_connection(
        "http://10.0.0.7:8001/v1", name="Lab vLLM", api_key_env="LAB_API_KEY"
    )
    make_judge(cast.project, "", connection=connection)
    ConnectionCheck.objects.create(
        connection=connection,
        model="fake-judge-1",
        state="failed",
        message="Could not reach the endpoint.",
    )

    page = cast.client_for("superuser").get(reverse("judging:connection_list")).content.decode()
    judges = cast.client_for("superuser").get(
        reverse("judging:judge_list", args=[cast.project.slug])
    )
    managers = cast.client_for("manager").get(
        reverse("judging:judge_list", args=[cast.project.slug])
    )

    assert "<code>http://10.0.0.7:8001/v1</code>" in page
    assert '<code>LAB_API_KEY</code> <span class="badge safe">set</span>' in page
    assert "Could not reach the endpoint." in page
    assert "<td>1</td>" in page  # the judge using it
    assert "sk-lab" not in page
    assert reverse("judging:connection_list") in judges.content.decode()
    assert reverse("judging:connection_list") not in managers.content.decode()
