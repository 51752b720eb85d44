"""Judges and their prompt templates: create, edit, snapshot, test the connection."""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from curation.errors import Conflict, DomainError
from curation.job_leases import job_lease
from curation.jobs import job_send_after_commit
from curation.models import Project
from curation.services.audit import audit_log
from judging.client import CallFailed, ChatClient, Endpoint, EndpointUnavailable
from judging.limits import Caller, LimitWait
from judging.models import (
    ConnectionCheck,
    Judge,
    JudgeVersion,
    ModelConnection,
    PromptTemplate,
    Protocol,
)
from judging.parameters import parameter_errors
from judging.protocols.custom import PLACEHOLDERS, unknown_placeholders

if TYPE_CHECKING:
    from decimal import Decimal

    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

JUDGE_FIELDS = (
    "name",
    "protocol",
    "connection",
    "model",
    "template",
    "parameters",
    "concurrency",
    "timeout_seconds",
    "max_retries",
)
# A connection test must answer quickly, whatever the judge's own patience.
TEST_TIMEOUT_SECONDS = 15
# The task that tests a connection, whose lease the test holds.
CHECK_TASK = "judging.tasks.check_connection"
# The longest a test waits for its turn at the connection's limits before it gives up.
TEST_LIMIT_PATIENCE_SECONDS = 5
TEST_PROMPT = [{"role": "user", "content": "Reply with the single word OK."}]


def judge_create(*, actor: User | None, project: Project, **fields: Any) -> Judge:
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


def judge_update(*, actor: User | None, judge: Judge, **fields: Any) -> Judge:
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


def judge_snapshot(judge: Judge, version: JudgeVersion | None = None) -> dict[str, Any]:
    """What a run needs of its judge, frozen at the run's start. The connection is named by its
    id: its address and key variable are read when the worker calls, so that they never sit in
    a run that managers read, and an administrator's change to them holds for every run.

    The version is `version` if given, else the judge's active one; version 1 (no row) is the
    prompt as written, without examples."""
    version = version if version is not None else judge.active_version
    snapshot: dict[str, Any] = {
        "judge_id": judge.pk,
        "name": judge.name,
        "protocol": judge.protocol,
        "connection_id": judge.connection_id,
        "connection": judge.connection.name,
        "model": judge.model,
        "parameters": judge.parameters,
        "concurrency": judge.concurrency,
        "timeout_seconds": judge.timeout_seconds,
        "max_retries": judge.max_retries,
        "version": {
            "id": version.pk if version else None,
            "number": version.number if version else 1,
            "examples": version.examples if version else [],
        },
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


def endpoint_of(snapshot: dict[str, Any]) -> Endpoint:
    """Where a run's calls go: its judge's snapshot with its connection as it is now.
    Raises EndpointUnavailable when the connection is gone."""
    connection_id = snapshot.get("connection_id")
    # A snapshot without a connection's id finds none, as a connection deleted since does.
    connection = (
        ModelConnection.objects.filter(pk=connection_id).first()
        if connection_id is not None
        else None
    )
    if connection is None:
        raise EndpointUnavailable(
            "The judge's model connection no longer exists: ask a site administrator."
        )
    # What a connection offers is its administrator's to decide, for runs resumed too.
    if snapshot["model"] not in connection.offered_models:
        raise EndpointUnavailable(
            f"The connection {connection} no longer offers {snapshot['model']}: choose another "
            "model for the judge, or ask a site administrator."
        )
    parameters = snapshot.get("parameters") or {}
    # A judge saved before its parameters were bounded, or a connection's bound lowered since.
    if problems := parameter_errors(parameters, max_tokens=connection.max_tokens):
        raise EndpointUnavailable(
            f"The judge's parameters cannot be sent: {' '.join(problems)} Edit the judge and "
            "start a new run."
        )
    return _endpoint(
        connection,
        model=snapshot["model"],
        parameters=parameters,
        timeout_seconds=snapshot.get("timeout_seconds", 60),
        max_retries=snapshot.get("max_retries", 4),
        concurrency=min(snapshot.get("concurrency", 8), connection.max_concurrency),
    )


def connection_save(*, actor: User | None, connection: ModelConnection) -> None:
    """Create or change a connection (site administrators): where judges' calls go and with
    which key is worth a trace of who changed it."""
    with transaction.atomic():
        before = (
            _audited_connection(ModelConnection.objects.get(pk=connection.pk))
            if connection.pk
            else None
        )
        connection.full_clean()
        connection.save()
        audit_log(
            actor=actor,
            action=f"judging.connection.{'updated' if before else 'created'}",
            obj=connection,
            before=before,
            after=_audited_connection(connection),
        )


def connection_delete(*, actor: User | None, connection: ModelConnection) -> None:
    """Delete a connection no judge uses (the database refuses one in use)."""
    with transaction.atomic():
        audit_log(
            actor=actor,
            action="judging.connection.deleted",
            obj=connection,
            before=_audited_connection(connection),
        )
        connection.delete()


def connection_check_start(
    *,
    actor: User | None,
    connection: ModelConnection,
    model: str,
    judge: Judge | None = None,
) -> ConnectionCheck:
    """Ask a worker to test a connection and one of its models (a judge's, when its page
    asks); the page polls the check until it ends.

    Tests are limited so that nobody fills the workers with them: a connection has one test
    under way at a time, and so has a person but a site administrator (Conflict while they
    have), and a person starts at most JUDGE_CONNECTION_TESTS_PER_HOUR of them an hour
    (TooManyTests)."""
    with transaction.atomic():
        # Held until the check is written: of two requests at once, the second sees the first.
        ModelConnection.objects.select_for_update().filter(pk=connection.pk).first()
        _refuse_extra_tests(actor, connection)
        check = ConnectionCheck.objects.create(
            connection=connection, model=model, judge=judge, requested_by=_user(actor)
        )
        audit_log(
            actor=actor,
            action="judging.connection.tested",
            project=judge.project if judge else None,
            obj=judge or connection,
            after={"check": check.pk, "model": model},
        )
        job_send_after_commit("judging.tasks.check_connection", check.pk)
    return check


class TooManyTests(DomainError):
    status = 429


def _refuse_extra_tests(actor: User | None, connection: ModelConnection) -> None:
    now = timezone.now()
    # A test unfinished past its patience is one no worker will finish: it holds nothing back.
    under_way = ConnectionCheck.objects.filter(
        state__in=(ConnectionCheck.State.PENDING, ConnectionCheck.State.RUNNING),
        created_at__gt=now - timedelta(seconds=ConnectionCheck.PATIENCE_SECONDS),
    )
    if under_way.filter(connection=connection).exists():
        raise Conflict(
            "This connection is being tested already: its result shows on the page that asked, "
            "within a minute. Test it again once it has come."
        )
    user = _user(actor)
    if user is None:
        return
    # Held too: one person's requests at once are counted one after another.
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    # One test at a time a person, so that one person's tests of many connections never hold
    # every worker; site administrators test the connections they set up several at once.
    if not user.is_superuser and under_way.filter(requested_by=user).exists():
        raise Conflict("Your test of another connection is under way: wait for its result.")
    per_hour = settings.JUDGE_CONNECTION_TESTS_PER_HOUR
    recent = ConnectionCheck.objects.filter(
        requested_by=user, created_at__gt=now - timedelta(hours=1)
    )
    if recent.count() >= per_hour:
        raise TooManyTests(
            f"You have tested connections {per_hour} times in the last hour, the most allowed: "
            "try again later."
        )


def connection_check_execute(*, check_id: int) -> None:
    """One short call to the connection and model, without retries; safe to run twice: only
    the worker that holds the check's lease (curation/job_leases.py) and moves it from pending
    makes the call, or from running when the worker that moved it died."""
    with job_lease(CHECK_TASK, check_id) as held:
        if held:
            _connection_check_held(check_id)


def connection_checks_unfinished(before: datetime) -> list[int]:
    """Checks asked for before `before` that have not ended and that the page still waits
    for: one left by a dead worker is made again."""
    patience = timezone.now() - timedelta(seconds=ConnectionCheck.PATIENCE_SECONDS)
    unfinished = ConnectionCheck.objects.filter(
        state__in=(ConnectionCheck.State.PENDING, ConnectionCheck.State.RUNNING),
        created_at__lt=before,
        created_at__gt=patience,
    )
    return list(unfinished.values_list("pk", flat=True))


def _connection_check_held(check_id: int) -> None:
    unfinished = (ConnectionCheck.State.PENDING, ConnectionCheck.State.RUNNING)
    taken = ConnectionCheck.objects.filter(pk=check_id, state__in=unfinished).update(
        state=ConnectionCheck.State.RUNNING, updated_at=timezone.now()
    )
    if taken != 1:
        return
    check = ConnectionCheck.objects.select_related("connection", "judge").get(pk=check_id)
    patience = check.judge.timeout_seconds if check.judge else TEST_TIMEOUT_SECONDS
    endpoint = _endpoint(
        check.connection,
        model=check.model,
        timeout_seconds=min(patience, TEST_TIMEOUT_SECONDS),
        max_retries=0,
        concurrency=1,
    )
    # A test takes its turn at the connection's limits beside the runs, and gives up rather
    # than hold a worker waiting for one.
    group = f"project:{check.judge.project_id}" if check.judge else "administrators"
    caller = Caller(group=group, name=f"check:{check_id}")
    try:
        with ChatClient(endpoint, caller=caller, patience=TEST_LIMIT_PATIENCE_SECONDS) as client:
            completion = client.complete(TEST_PROMPT, max_tokens=5)
    except (EndpointUnavailable, CallFailed) as failure:
        state, message = ConnectionCheck.State.FAILED, str(failure)
    except LimitWait as wait:
        state = ConnectionCheck.State.FAILED
        message = (
            "The connection's limits of requests or tokens per minute are taken for the next "
            f"{math.ceil(wait.seconds)} s: test it again later."
        )
    except Exception:
        logger.exception("Connection test %s stopped on an unexpected error", check_id)
        state, message = ConnectionCheck.State.FAILED, "The test stopped on an unexpected error."
    else:
        state = ConnectionCheck.State.SUCCEEDED
        message = f"{check.model} answered in {completion.latency_ms} ms."
    ConnectionCheck.objects.filter(pk=check_id).update(
        state=state, message=message, finished_at=timezone.now(), updated_at=timezone.now()
    )


def _endpoint(connection: ModelConnection, **judge_settings: Any) -> Endpoint:
    """The connection's address, key variable and limits, with a judge's model and settings."""
    return Endpoint(
        base_url=connection.base_url,
        api_key_env=connection.api_key_env,
        allow_private=connection.allow_private,
        connection_id=connection.pk,
        requests_per_minute=connection.requests_per_minute,
        tokens_per_minute=connection.tokens_per_minute,
        **judge_settings,
    )


def _audited_connection(connection: ModelConnection) -> dict[str, Any]:
    return {
        "name": connection.name,
        "base_url": connection.base_url,
        "api_key_env": connection.api_key_env,
        "models": connection.offered_models,
        "max_concurrency": connection.max_concurrency,
        "requests_per_minute": connection.requests_per_minute,
        "tokens_per_minute": connection.tokens_per_minute,
        "max_tokens": connection.max_tokens,
        "price_in_per_million": _text(connection.price_in_per_million),
        "price_out_per_million": _text(connection.price_out_per_million),
        "allow_private": connection.allow_private,
    }


def _text(price: Decimal | None) -> str | None:
    """A price as the audit log's JSON keeps it, exactly."""
    return None if price is None else str(price)


def prompt_template_create(
    *,
    actor: User | None,
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
    if judge.connection_id is not None and judge.model not in judge.connection.offered_models:
        errors["model"] = (
            f"The connection {judge.connection} offers "
            f"{', '.join(judge.connection.offered_models) or 'no model'}."
        )
    if not isinstance(judge.parameters, dict):
        errors["parameters"] = 'Parameters are a JSON object, e.g. {"temperature": 0}.'
    elif judge.connection_id is not None and (
        problems := parameter_errors(judge.parameters, max_tokens=judge.connection.max_tokens)
    ):
        errors["parameters"] = " ".join(problems)
    elif _holds_nul(judge.parameters):
        errors["parameters"] = "Parameters cannot hold a NUL character (\\u0000)."
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


def _holds_nul(value: object) -> bool:
    """Whether a JSON value holds a NUL character anywhere: PostgreSQL cannot store it."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    return False


def _audited(judge: Judge) -> dict[str, Any]:
    return {
        "name": judge.name,
        "protocol": judge.protocol,
        "connection": str(judge.connection) if judge.connection_id else None,
        "model": judge.model,
        "template": str(judge.template) if judge.template else None,
        "parameters": judge.parameters,
        "concurrency": judge.concurrency,
        "timeout_seconds": judge.timeout_seconds,
        "max_retries": judge.max_retries,
    }


def _user(actor: User | None) -> User | None:
    return actor if actor is not None and actor.is_authenticated else None
