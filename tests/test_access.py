"""Role by route: every route of the URLconf, every persona, on the server."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from authoring.models import TaskImport
from authoring.services.tasks import task_file_attach, task_submit
from curation.models import Invitation, Role
from curation.services.invitations import invitation_create
from judging.models import JudgeEvaluation, JudgeVersion
from judging.services.runs import judge_run_create
from releases.services import release_build, release_create
from review.models import Disagreement
from tests.access import RULES, Rule, walk_urlconf
from tests.authoring.task_helpers import make_task
from tests.conftest import PERSONAS, Cast
from tests.factories import RecordFactory, UserFactory, rjudge_record
from tests.judging.judge_runs import make_connection

ROUTES = list(walk_urlconf())
ADMIN_ROUTES = [r for r in ROUTES if r.name.startswith("admin:")]
STUDIO_ROUTES = [r for r in ROUTES if not r.name.startswith("admin:")]


def test_every_route_has_an_access_rule() -> None:
    missing = sorted(r.name for r in STUDIO_ROUTES if r.name not in RULES)
    assert not missing, f"Routes without an access rule in tests/access.py: {missing}"


def test_every_rule_names_a_route() -> None:
    stale = sorted(set(RULES) - {r.name for r in STUDIO_ROUTES})
    assert not stale, f"Rules for routes that no longer exist: {stale}"


def url_values(cast: Cast) -> dict[str, object]:
    """A value for each URL parameter, naming fresh objects of the cast's project.

    Made anew for each persona, since a permitted POST may delete what the URL names.
    """
    # The annotator labels one record and holds a lease on another, neither of them the record
    # the URLs name: a record's page sends an annotator who labelled it to their own label.
    RecordFactory.create_batch(2, project=cast.project)
    labelled = lease_next_record(project=cast.project, annotator=cast.annotator)
    annotation = annotation_submit(lease=labelled, actor=cast.annotator, label=Label("safe"))
    lease = lease_next_record(project=cast.project, annotator=cast.annotator)
    record = RecordFactory(project=cast.project)
    batch = cast.project.import_batches.create(source_name="x.json", created_by=cast.manager)
    # The batch found the record changed, which a manager may decide on.
    batch.changes.create(record=record, raw=record.raw, fields=["label"])
    membership = cast.project.memberships.create(user=UserFactory(), role="annotator")
    return {
        "slug": cast.project.slug,
        "record_id": record.pk,
        "batch_id": batch.pk,
        "membership_id": membership.pk,
        "user_id": membership.user_id,
        **invitation_values(cast),
        "lease_id": lease.pk,
        "annotation_id": annotation.pk,
        **judging_values(cast),
        "disagreement_id": Disagreement.objects.create(
            project=cast.project, record=record, kind=Disagreement.Kind.ANNOTATORS_SPLIT
        ).pk,
        "format": "json",
        "file_format": "csv",
        **task_values(cast),
        **release_values(cast),
    }


def invitation_values(cast: Cast) -> dict[str, object]:
    """A pending invitation to the project, and the token of its link."""
    invitation, token = invitation_create(
        actor=cast.manager,
        project=cast.project,
        username=f"invitee-{Invitation.objects.count()}",
        role=Role.ANNOTATOR,
    )
    return {"invitation_id": invitation.pk, "token": token}


def expected(rule: Rule, persona: str) -> str:
    if persona in rule.allowed:
        return "allowed"
    if persona == "anonymous":
        # The API answers 401 or 403 rather than redirecting to a login page.
        return "login" if rule.kind == "html" else "forbidden"
    if persona == "outsider" and rule.in_project:
        return "not found"
    return "forbidden"


def outcome(response) -> str:
    if response.status_code in (401, 403):
        return "forbidden"
    if response.status_code == 404:
        return "not found"
    if response.status_code == 302 and "/login/?next=" in response["Location"]:
        return "login"
    # A conflict (the run named has no errors to retry, say) is told only to those let in.
    if response.status_code < 400 or response.status_code == 409:
        return "allowed"
    return f"status {response.status_code}"


@pytest.mark.parametrize("route", STUDIO_ROUTES, ids=lambda r: r.name)
def test_route_admits_exactly_the_roles_of_its_rule(route, cast: Cast) -> None:
    rule = RULES[route.name]
    wrong = {}
    values = None
    for persona in PERSONAS:
        # Objects are made once per route, and again after a write that was let in, since it
        # may have deleted or used up what the URL names. Making them anew for every persona
        # built a release seven times per route: most of this file's time.
        if values is None:
            values = url_values(cast)
        missing = [p for p in route.params if p not in values]
        assert not missing, f"No test value for URL parameters {missing} of {route.name}"
        url = reverse(route.name, kwargs={p: values[p] for p in route.params})
        client = cast.client_for(persona)
        response = getattr(client, rule.method)(url, rule.data)
        want, got = expected(rule, persona), outcome(response)
        if response.streaming:
            # Read to its end, a download closes the file it streams from.
            b"".join(response.streaming_content)
        if got != want:
            wrong[persona] = f"expected {want}, got {got} ({response.status_code})"
        if rule.method != "get" and got == "allowed":
            values = None
    assert not wrong, f"{route.name} {url}: {wrong}"


# The admin's index and every model's list.
ADMIN_PAGES = [r for r in ADMIN_ROUTES if r.name == "admin:index" or r.name.endswith("_changelist")]


@pytest.mark.parametrize("route", ADMIN_PAGES, ids=lambda r: r.name)
def test_admin_pages_are_for_staff_only(route, cast: Cast) -> None:
    url = reverse(route.name)
    for persona in PERSONAS:
        response = cast.client_for(persona).get(url)
        if persona == "superuser":
            assert response.status_code == 200, (persona, url, response.status_code)
        else:
            assert response.status_code == 302, (persona, url, response.status_code)
            assert "login/?next=" in response["Location"], (persona, url)


def judging_values(cast: Cast) -> dict[str, object]:
    """A judge at a closed port, a run of it, a test of its connection, and the record the
    verdict import names."""
    if not cast.project.records.filter(external_id="access-check").exists():
        RecordFactory(project=cast.project, source=rjudge_record("access-check"))
    judge = cast.project.judges.create(
        name=f"Judge {cast.project.judges.count()}",
        protocol="rjudge",
        connection=make_connection("http://127.0.0.1:9/v1", model_names="none"),
        model="none",
        timeout_seconds=2,
        max_retries=0,
    )
    run = judge_run_create(actor=cast.manager, project=cast.project, judge=judge)
    check = judge.connection_checks.create(connection=judge.connection, model=judge.model)
    version = JudgeVersion.objects.create(judge=judge, number=2, picked="by_hand")
    evaluation = JudgeEvaluation.objects.create(
        judge=judge, candidate=version, baseline_run=run, candidate_run=run
    )
    return {
        "judge_id": judge.pk,
        "run_id": run.pk,
        "test_id": check.pk,
        "evaluation_id": evaluation.pk,
    }


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path) -> None:
    # url_values() attaches a reference file: keep it out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"


def release_values(cast: Cast) -> dict[str, object]:
    """A private release of the project, built, and the name of one of its files."""
    release = release_create(
        actor=cast.manager,
        project=cast.project,
        version=f"1.0.{cast.project.releases.count()}",
        license="CC BY 4.0",
        allow_empty=True,
    )
    release_build(release.pk)
    return {"release_id": release.pk, "name": "README.md"}


def task_values(cast: Cast) -> dict[str, object]:
    """The author's task with a reference file, submitted; a risk category and a rubric check."""
    task = make_task(cast.project, cast.author)
    file = task_file_attach(
        actor=cast.author, task=task, expected_version=task.version, name="brief.txt", data=b"Hi"
    )
    task_submit(actor=cast.author, task=task, expected_version=task.version)
    category = cast.project.risk_categories.create(
        slug=f"unused-{task.pk}", name=f"Unused {task.pk}"
    )
    check = cast.project.rubric_checks.create(text=f"Check {task.pk}")
    task_import = TaskImport.objects.create(
        project=cast.project, created_by=cast.manager, source_name="tasks.json", task_state="draft"
    )
    return {
        "import_id": task_import.pk,
        "task_id": task.pk,
        "file_id": file.pk,
        "number": 1,
        "category_id": category.pk,
        "check_id": check.pk,
    }
