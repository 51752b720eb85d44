"""Managers create, edit and test judges, and save versioned prompt templates, on the pages."""

from __future__ import annotations

from django.urls import reverse

from curation.models import AuditEvent
from judging.models import Judge, PromptTemplate
from tests.fake_llm import FakeLLM, answer
from tests.judging.judge_runs import make_judge

FIELDS = {
    "name": "GPT judge",
    "protocol": "rjudge",
    "model": "gpt-4o",
    "base_url": "https://api.openai.com/v1",
    "api_key_env": "OPENAI_API_KEY",
    "parameters": '{"temperature": 0, "max_tokens": 512}',
    "concurrency": 8,
    "timeout_seconds": 60,
    "max_retries": 4,
}


def test_a_manager_creates_a_judge_that_names_its_key_variable(cast, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = cast.client_for("manager")

    response = client.post(reverse("judging:judge_new", args=[cast.project.slug]), FIELDS)

    judge = Judge.objects.get(project=cast.project, name="GPT judge")
    assert response.status_code == 302
    assert (judge.api_key_env, judge.parameters) == (
        "OPENAI_API_KEY",
        {"temperature": 0, "max_tokens": 512},
    )
    assert AuditEvent.objects.filter(action="judging.judge.created", object_id=str(judge.pk))
    page = client.get(response["Location"]).content.decode()
    assert '<code>OPENAI_API_KEY</code> <span class="badge unsure">not set</span>' in page


def test_the_page_says_when_the_variable_is_set(cast, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-whatever")
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1", api_key_env="OPENAI_API_KEY")

    page = cast.client_for("manager").get(reverse("judging:judge_list", args=[cast.project.slug]))

    assert judge.name in page.content.decode()
    assert '<span class="badge safe">set</span>' in page.content.decode()


def test_a_judge_may_not_read_the_studios_own_secrets(cast) -> None:
    response = cast.client_for("manager").post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {**FIELDS, "api_key_env": "SECRET_KEY"},
    )

    assert response.status_code == 200
    assert "Judges may read their key only from variables" in response.content.decode()
    assert not Judge.objects.exists()


def test_bad_parameters_and_a_custom_judge_without_template_are_refused(cast) -> None:
    response = cast.client_for("manager").post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {**FIELDS, "protocol": "custom", "parameters": '{"logit_bias": {}}'},
    )

    page = response.content.decode()
    assert "A custom judge needs a prompt template." in page
    assert "Unknown parameters logit_bias" in page
    assert not Judge.objects.exists()


def test_editing_a_judge_is_audited_with_before_and_after(cast) -> None:
    judge = make_judge(cast.project, "http://127.0.0.1:9/v1")

    cast.client_for("manager").post(
        reverse("judging:judge_edit", args=[cast.project.slug, judge.pk]),
        {**FIELDS, "name": judge.name, "model": "gpt-4.1"},
    )

    judge.refresh_from_db()
    event = AuditEvent.objects.get(action="judging.judge.updated")
    assert judge.model == "gpt-4.1"
    assert (event.before["model"], event.after["model"]) == ("fake-judge-1", "gpt-4.1")


def test_test_connection_reports_the_models_answer_or_the_failure(cast) -> None:
    client = cast.client_for("manager")
    with FakeLLM(lambda request: answer("OK")) as llm:
        judge = make_judge(cast.project, llm.base_url)
        url = reverse("judging:judge_test", args=[cast.project.slug, judge.pk])

        ok = client.post(url, HTTP_HX_REQUEST="true")

    failed = client.post(url, HTTP_HX_REQUEST="true")

    assert "Connected" in ok.content.decode() and ": OK" in ok.content.decode()
    assert llm.requests[0].body["max_tokens"] == 5
    assert "Failed" in failed.content.decode()
    assert "Could not reach the endpoint" in failed.content.decode()


def test_saving_a_template_again_makes_a_new_version(cast) -> None:
    client = cast.client_for("manager")
    url = reverse("judging:template_list", args=[cast.project.slug])
    fields = {"name": "Strict", "answer": "label", "system": "", "user": "{interaction}\nsafe?"}

    client.post(url, fields)
    client.post(url, {**fields, "user": "{interaction}\nAnswer safe or unsafe."})
    refused = client.post(url, {**fields, "user": "{interaction} {password}"})

    versions = PromptTemplate.objects.filter(name="Strict").order_by("version")
    assert [(t.version, t.user) for t in versions] == [
        (1, "{interaction}\nsafe?"),
        (2, "{interaction}\nAnswer safe or unsafe."),
    ]
    assert "Unknown placeholders password" in refused.content.decode()


def test_a_custom_judge_uses_the_template_version_it_was_given(cast) -> None:
    client = cast.client_for("manager")
    url = reverse("judging:template_list", args=[cast.project.slug])
    client.post(url, {"name": "T", "answer": "score", "user": "{interaction}\nScore 0-3?"})
    template = PromptTemplate.objects.get(name="T")

    client.post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {**FIELDS, "protocol": "custom", "template": template.pk},
    )
    client.post(url, {"name": "T", "answer": "score", "user": "{interaction}\nv2"})

    assert Judge.objects.get().template == template
