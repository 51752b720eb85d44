"""The project's overview says how it stands: how far labelling has come, in all and by category,
what waits for a reviewer, and the runs going on or gone wrong; the home page's cards count each
project's records. Reviewers and managers see it; annotators do not."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotation.services.labels import Label, annotation_submit
from annotation.services.queue import lease_next_record
from curation.models import Role
from judging.models import JudgeRun
from review.models import Disagreement
from tests.conftest import Cast
from tests.factories import CategoryFactory, RecordFactory, UserFactory
from tests.review.opinions import judge_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def standing(cast: Cast) -> Cast:
    """k = 2 over four records in two categories: one labelled twice, one once, two not at all;
    one open disagreement; a run going on and one that failed."""
    project = cast.project
    project.overlap = 2
    project.save()
    mail = CategoryFactory(project=project, name="Mail")
    files = CategoryFactory(project=project, name="Files")
    records = [RecordFactory(project=project, category=mail) for _ in range(3)]
    records.append(RecordFactory(project=project, category=files))
    second = UserFactory(username="second-labeller")
    project.memberships.create(user=second, role=Role.ANNOTATOR)
    # The queue hands out the records closest to completion first: both annotators get the
    # first record, then the first annotator the second.
    for annotator in (cast.annotator, second, cast.annotator):
        lease = lease_next_record(project=project, annotator=annotator)
        annotation_submit(
            lease=lease, actor=annotator, label=Label("unsafe", risk_description="It deletes.")
        )
    Disagreement.objects.create(
        project=project, record=records[0], kind=Disagreement.Kind.JUDGE_VS_HUMANS
    )
    going = judge_run(project, "Careful judge", {})
    JudgeRun.objects.filter(pk=going.pk).update(state=JudgeRun.State.RUNNING)
    failed = judge_run(project, "Broken judge", {})
    JudgeRun.objects.filter(pk=failed.pk).update(state=JudgeRun.State.FAILED)
    return cast


def test_the_overview_loads_how_the_project_stands(standing: Cast) -> None:
    slug = standing.project.slug
    client = standing.client_for("manager")

    overview = client.get(reverse("curation:project", args=[slug])).content.decode()
    section = client.get(
        reverse("hub:project_status", args=[slug]), headers={"HX-Request": "true"}
    ).content.decode()

    assert f'hx-get="{reverse("hub:project_status", args=[slug])}" hx-trigger="load"' in overview
    assert "<html" not in section and 'id="project-status"' in section
    assert "25%" in section
    assert "1 of 4 records have every label they need; 1 has some; 2 none." in section
    assert "1 open disagreement" in section and "Judge vs human consensus: 1" in section
    run_page = reverse(
        "judging:run_detail", args=[slug, JudgeRun.objects.get(name="Careful judge").pk]
    )
    assert f'<a href="{run_page}">Careful judge</a>: Running' in section
    assert "Broken judge</a>: Failed" in section
    # By category: Files has one record, none labelled; Mail three, one of them fully.
    assert "<td>1</td><td>0 (0%)</td><td>0</td><td>1</td>" in section
    assert "<td>3</td><td>1 (33%)</td><td>1</td><td>1</td>" in section


def test_reviewers_see_it_and_annotators_do_not(standing: Cast) -> None:
    slug = standing.project.slug
    url = reverse("hub:project_status", args=[slug])

    reviewer = standing.client_for("reviewer").get(url)
    annotator = standing.client_for("annotator").get(url)
    annotators_overview = standing.client_for("annotator").get(
        reverse("curation:project", args=[slug])
    )

    assert reviewer.status_code == 200 and "How it stands" in reviewer.content.decode()
    assert annotator.status_code == 403
    assert url not in annotators_overview.content.decode()


def test_the_home_page_counts_each_projects_records(standing: Cast) -> None:
    page = standing.client_for("manager").get(reverse("home")).content.decode()

    assert "4 records · 25% with every label they need" in page
