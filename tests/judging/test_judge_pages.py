"""Managers create, edit and test judges, and save versioned prompt templates, on the pages."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.models import AuditEvent
from judging.models import Judge, ModelConnection, PromptTemplate
from tests.judging.judge_runs import make_connection, make_judge

FIELDS = {
    "name": "GPT judge",
    "protocol": "rjudge",
    "model": "gpt-4o",
    "parameters": '{"temperature": 0, "max_tokens": 512}',
    "concurrency": 8,
    "timeout_seconds": 60,
    "max_retries": 4,
}


@pytest.fixture
def hosted(db) -> ModelConnection:
    return make_connection(
        "https://api.openai.com/v1",
        name="OpenAI",
        api_key_env="OPENAI_API_KEY",
        allow_private=False,
        model_names="gpt-4o\ngpt-4.1",
    )


def test_a_manager_creates_a_judge_of_a_connection_and_one_of_its_models(cast, hosted) -> None:
    client = cast.client_for("manager")

    response = client.post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {**FIELDS, "connection": hosted.pk},
    )

    judge = Judge.objects.get(project=cast.project, name="GPT judge")
    assert response.status_code == 302
    assert (judge.connection, judge.model, judge.parameters) == (
        hosted,
        "gpt-4o",
        {"temperature": 0, "max_tokens": 512},
    )
    assert AuditEvent.objects.filter(action="judging.judge.created", object_id=str(judge.pk))
    page = client.get(response["Location"]).content.decode()
    assert "OpenAI" in page and "gpt-4.1" in page


def test_a_model_the_connection_does_not_offer_is_refused(cast, hosted) -> None:
    response = cast.client_for("manager").post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {**FIELDS, "connection": hosted.pk, "model": "fake-judge-1"},
    )

    make_connection("http://127.0.0.1:9/v1")  # offers fake-judge-1, which is then a choice
    offered = cast.client_for("manager").post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {**FIELDS, "connection": hosted.pk, "model": "fake-judge-1"},
    )

    assert response.status_code == offered.status_code == 200
    assert "fake-judge-1 is not one of the available choices" in response.content.decode()
    assert "The connection OpenAI offers gpt-4o, gpt-4.1." in offered.content.decode()
    assert not Judge.objects.exists()


def test_managers_never_see_where_a_connection_goes_or_its_key_variable(
    cast, hosted, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-whatever")
    judge = make_judge(cast.project, "", connection=hosted, model="gpt-4o")
    client = cast.client_for("manager")

    pages = [
        client.get(reverse("judging:judge_list", args=[cast.project.slug])),
        client.get(reverse("judging:judge_edit", args=[cast.project.slug, judge.pk])),
        client.get(reverse("judging:judge_new", args=[cast.project.slug])),
    ]

    for page in pages:
        text = page.content.decode()
        assert "OpenAI" in text
        assert "api.openai.com" not in text and "OPENAI_API_KEY" not in text
        assert "base_url" not in text and "api_key_env" not in text


def test_bad_parameters_and_a_custom_judge_without_template_are_refused(cast, hosted) -> None:
    response = cast.client_for("manager").post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {
            **FIELDS,
            "connection": hosted.pk,
            "protocol": "custom",
            "parameters": '{"logit_bias": {}}',
        },
    )

    page = response.content.decode()
    assert "A custom judge needs a prompt template." in page
    assert "Unknown parameters logit_bias" in page
    assert not Judge.objects.exists()


def test_editing_a_judge_is_audited_with_before_and_after(cast, hosted) -> None:
    judge = make_judge(cast.project, "", connection=hosted, model="gpt-4o")

    cast.client_for("manager").post(
        reverse("judging:judge_edit", args=[cast.project.slug, judge.pk]),
        {**FIELDS, "connection": hosted.pk, "name": judge.name, "model": "gpt-4.1"},
    )

    judge.refresh_from_db()
    event = AuditEvent.objects.get(action="judging.judge.updated")
    assert judge.model == "gpt-4.1"
    assert (event.before["model"], event.after["model"]) == ("gpt-4o", "gpt-4.1")
    assert event.after["connection"] == "OpenAI"


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


def test_a_custom_judge_uses_the_template_version_it_was_given(cast, hosted) -> None:
    client = cast.client_for("manager")
    url = reverse("judging:template_list", args=[cast.project.slug])
    client.post(url, {"name": "T", "answer": "score", "user": "{interaction}\nScore 0-3?"})
    template = PromptTemplate.objects.get(name="T")

    client.post(
        reverse("judging:judge_new", args=[cast.project.slug]),
        {**FIELDS, "connection": hosted.pk, "protocol": "custom", "template": template.pk},
    )
    client.post(url, {"name": "T", "answer": "score", "user": "{interaction}\nv2"})

    assert Judge.objects.get().template == template
