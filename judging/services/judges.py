"""Judges and their prompt templates: create, edit, snapshot, test the connection."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from curation.models import Project
from curation.services.audit import audit_log
from judging.client import PARAMETERS, ApiKeyMissing, CallFailed, ChatClient, Endpoint
from judging.models import Judge, PromptTemplate, Protocol
from judging.protocols.custom import PLACEHOLDERS, unknown_placeholders

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

JUDGE_FIELDS = (
    "name",
    "protocol",
    "model",
    "base_url",
    "api_key_env",
    "template",
    "parameters",
    "concurrency",
    "timeout_seconds",
    "max_retries",
)
# A connection test must answer quickly, whatever the judge's own patience.
TEST_TIMEOUT_SECONDS = 15
TEST_PROMPT = [{"role": "user", "content": "Reply with the single word OK."}]


def judge_create(*, actor: AbstractBaseUser | None, project: Project, **fields: Any) -> Judge:
    judge = Judge(project=project, created_by=_user(actor))
    with transaction.atomic():
        _assign(judge, fields)
        judge.save()
        audit_log(
            actor=actor,
            action="judging.judge.created",
            project=project,
            obj=judge,
            after=_audited(judge),
        )
    return judge


def judge_update(*, actor: AbstractBaseUser | None, judge: Judge, **fields: Any) -> Judge:
    """Change a judge. Runs keep the snapshot taken when they started."""
    with transaction.atomic():
        # From the row: the caller's instance may carry the new values already (a ModelForm's).
        before = _audited(Judge.objects.select_related("template").get(pk=judge.pk))
        _assign(judge, fields)
        judge.save()
        audit_log(
            actor=actor,
            action="judging.judge.updated",
            project=judge.project,
            obj=judge,
            before=before,
            after=_audited(judge),
        )
    return judge


def judge_snapshot(judge: Judge) -> dict[str, Any]:
    """What a run needs of its judge, frozen at the run's start: the name of the key's
    variable, never the key."""
    snapshot: dict[str, Any] = {
        "judge_id": judge.pk,
        "name": judge.name,
        "protocol": judge.protocol,
        "model": judge.model,
        "base_url": judge.base_url,
        "api_key_env": judge.api_key_env,
        "parameters": judge.parameters,
        "concurrency": judge.concurrency,
        "timeout_seconds": judge.timeout_seconds,
        "max_retries": judge.max_retries,
    }
    if judge.protocol == Protocol.CUSTOM and judge.template is not None:
        template = judge.template
        snapshot["template"] = {
            "id": template.pk,
            "name": template.name,
            "version": template.version,
            "system": template.system,
            "user": template.user,
            "answer": template.answer,
        }
    return snapshot


@dataclass(frozen=True)
class ConnectionCheck:
    ok: bool
    message: str


def judge_connection_test(*, judge: Judge) -> ConnectionCheck:
    """One short call to the judge's endpoint and model, without retries."""
    endpoint = Endpoint(
        base_url=judge.base_url,
        model=judge.model,
        api_key_env=judge.api_key_env,
        timeout_seconds=min(judge.timeout_seconds, TEST_TIMEOUT_SECONDS),
        max_retries=0,
        concurrency=1,
    )
    try:
        with ChatClient(endpoint) as client:
            completion = client.complete(TEST_PROMPT, max_tokens=5)
    except (ApiKeyMissing, CallFailed) as failure:
        return ConnectionCheck(ok=False, message=str(failure))
    reply = " ".join(completion.text.split())[:80] or "(an empty message)"
    return ConnectionCheck(
        ok=True,
        message=f"Connected: {judge.model} answered in {completion.latency_ms} ms: {reply}",
    )


def prompt_template_create(
    *,
    actor: AbstractBaseUser | None,
    project: Project,
    name: str,
    user: str,
    answer: str,
    system: str = "",
) -> PromptTemplate:
    """Save a template as the next version of its name (the first if the name is new).
    Versions are never edited: judges and runs keep the version they were given."""
    unknown = unknown_placeholders(system + user)
    if unknown:
        known = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
        raise ValidationError(
            {"user": f"Unknown placeholders {', '.join(unknown)}; the known ones are {known}."}
        )
    if "{interaction}" not in user:
        raise ValidationError({"user": "The prompt must quote the record: add {interaction}."})
    with transaction.atomic():
        # Serialise versioning per project: two editors saving at once get distinct numbers.
        Project.objects.select_for_update().filter(pk=project.pk).first()
        latest = project.prompt_templates.filter(name=name).aggregate(n=Max("version"))["n"]
        template = PromptTemplate(
            project=project,
            name=name,
            version=(latest or 0) + 1,
            system=system,
            user=user,
            answer=answer,
            created_by=_user(actor),
        )
        template.full_clean()
        template.save()
        audit_log(
            actor=actor,
            action="judging.template.created",
            project=project,
            obj=template,
            after={"name": name, "version": template.version, "answer": answer},
        )
    return template


def _assign(judge: Judge, fields: dict[str, Any]) -> None:
    """Set the fields and check them all, raising one ValidationError naming each bad field."""
    for name, value in fields.items():
        if name not in JUDGE_FIELDS:
            raise TypeError(f"Judges have no field {name!r}")
        setattr(judge, name, value)
    if judge.protocol != Protocol.CUSTOM:
        judge.template = None
    errors: dict[str, str] = {}
    if judge.protocol == Protocol.CUSTOM and judge.template is None:
        errors["template"] = "A custom judge needs a prompt template."
    if judge.template is not None and judge.template.project_id != judge.project_id:
        errors["template"] = "The template belongs to another project."
    if judge.api_key_env and not re.fullmatch(
        settings.JUDGE_API_KEY_ENV_PATTERN, judge.api_key_env
    ):
        errors["api_key_env"] = (
            "Judges may read their key only from variables whose names match "
            f"{settings.JUDGE_API_KEY_ENV_PATTERN} (e.g. OPENAI_API_KEY): other variables "
            "hold the studio's own secrets."
        )
    if not isinstance(judge.parameters, dict):
        errors["parameters"] = 'Parameters are a JSON object, e.g. {"temperature": 0}.'
    elif unknown := sorted(set(judge.parameters) - PARAMETERS):
        errors["parameters"] = (
            f"Unknown parameters {', '.join(unknown)}; allowed: {', '.join(sorted(PARAMETERS))}."
        )
    if not 1 <= judge.concurrency <= settings.JUDGE_MAX_CONCURRENCY:
        errors["concurrency"] = f"Between 1 and {settings.JUDGE_MAX_CONCURRENCY} calls at once."
    if not 1 <= judge.timeout_seconds <= 600:
        errors["timeout_seconds"] = "Between 1 and 600 seconds."
    if judge.max_retries > 10:
        errors["max_retries"] = "At most 10 retries."
    try:
        judge.full_clean()
    except ValidationError as error:
        for field, messages in error.message_dict.items():
            errors.setdefault(field, " ".join(messages))
    if errors:
        raise ValidationError(errors)


def _audited(judge: Judge) -> dict[str, Any]:
    return {
        "name": judge.name,
        "protocol": judge.protocol,
        "model": judge.model,
        "base_url": judge.base_url,
        "api_key_env": judge.api_key_env,
        "template": str(judge.template) if judge.template else None,
        "parameters": judge.parameters,
        "concurrency": judge.concurrency,
        "timeout_seconds": judge.timeout_seconds,
        "max_retries": judge.max_retries,
    }


def _user(actor: AbstractBaseUser | None) -> AbstractBaseUser | None:
    return actor if actor is not None and actor.is_authenticated else None
