"""A run is named to people by its name, told apart from the project's other runs of that name
by its number and when it was started."""

from __future__ import annotations

import pytest
from django.utils import timezone

from judging.models import JudgeRun, name_shared
from judging.selectors import runs_named
from tests.conftest import Cast
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def make_run(project, name: str) -> JudgeRun:
    return JudgeRun.objects.create(project=project, name=name)


def started(run: JudgeRun) -> str:
    when = timezone.localtime(run.created_at)
    return f"{when.day} {when:%b %H:%M}"


def test_a_run_alone_with_its_name_is_named_as_it_is(cast: Cast) -> None:
    run = make_run(cast.project, "gpt-5-mini")
    make_run(ProjectFactory(), "gpt-5-mini")

    assert JudgeRun.objects.get(pk=run.pk).display_name == "gpt-5-mini"


def test_runs_of_one_name_say_their_number_and_start(cast: Cast) -> None:
    first, second = make_run(cast.project, "gpt-5-mini"), make_run(cast.project, "gpt-5-mini")

    names = [JudgeRun.objects.get(pk=run.pk).display_name for run in (first, second)]

    assert names == [
        f"gpt-5-mini (#{first.pk}, {started(first)})",
        f"gpt-5-mini (#{second.pk}, {started(second)})",
    ]


def test_a_list_names_its_runs_as_one_run_names_itself(cast: Cast) -> None:
    make_run(cast.project, "gpt-5-mini")
    make_run(cast.project, "gpt-5-mini")
    make_run(cast.project, "Qwen3-32B")
    one_by_one = {run.pk: run.display_name for run in JudgeRun.objects.all()}

    annotated = JudgeRun.objects.annotate(name_is_shared=name_shared())
    named_after = runs_named(JudgeRun.objects.all())

    assert {run.pk: run.display_name for run in annotated} == one_by_one
    assert {run.pk: run.display_name for run in named_after} == one_by_one
