"""A manager acts on every record that matches the record list's filters, not only the page
shown: the server counts them for the manager to confirm, then computes them again from the
filters submitted and acts on those."""

from __future__ import annotations

import re

import pytest
from django.http import QueryDict
from django.urls import reverse
from django.utils.html import strip_tags

from curation.errors import DomainError
from curation.models import AuditEvent, Record
from hub.forms import RecordListForm
from hub.record_list import FILTERS, matching_count
from hub.services import records_bulk_apply
from judging.models import JudgeRun
from review.models import Disagreement
from tests.annotation.annotators import label_next, make_records
from tests.conftest import Cast
from tests.factories import ProjectFactory, RecordFactory
from tests.hub.matching_records import open_requests, unlabelled_over_two_pages
from tests.judging.judge_runs import make_connection

pytestmark = pytest.mark.django_db


def filters(project, query: str) -> dict:
    form = RecordListForm.of_project(project, QueryDict(query))
    assert form.is_valid(), form.errors
    return form.cleaned_data


@pytest.fixture
def unlabelled(cast: Cast) -> list[Record]:
    return unlabelled_over_two_pages(cast.project)


def test_acting_on_all_that_match_reaches_every_page_and_nothing_else(
    cast: Cast, unlabelled: list[Record]
) -> None:
    outcome = records_bulk_apply(
        actor=cast.manager,
        project=cast.project,
        action="adjudicate",
        matching=filters(cast.project, "gold_label=none&per_page=25"),
    )

    assert outcome.records == 30
    assert open_requests() == {r.pk for r in unlabelled}


def test_the_records_are_those_the_filters_match_when_the_action_runs(cast: Cast) -> None:
    project = cast.project
    records = make_records(project, 4)
    unlabelled = filters(project, "labels=none")
    assert matching_count(project, unlabelled) == 4

    # Between the count and the confirm, one record is labelled: it no longer matches.
    labelled = label_next(project, cast.annotator)
    outcome = records_bulk_apply(
        actor=cast.manager, project=project, action="adjudicate", matching=unlabelled
    )

    assert outcome.records == 3
    assert open_requests() == {r.pk for r in records} - {labelled.record_id}


def test_the_filters_submitted_decide_not_those_the_list_shows_since(cast: Cast) -> None:
    project = cast.project
    with_gold = make_records(project, 3)
    without_gold = make_records(project, 2, gold_label="")

    records_bulk_apply(
        actor=cast.manager,
        project=project,
        action="more_labels",
        more=2,
        matching=filters(project, "gold_label=none"),
    )

    assert {r.pk: r.extra_labels for r in Record.objects.filter(project=project)} == {
        **{r.pk: 0 for r in with_gold},
        **{r.pk: 2 for r in without_gold},
    }


def test_a_judge_run_on_all_that_match_holds_exactly_them(
    cast: Cast, unlabelled: list[Record]
) -> None:
    judge = cast.project.judges.create(
        name="Strict",
        protocol="rjudge",
        connection=make_connection("http://127.0.0.1:9/v1", model_names="m"),
        model="m",
    )

    outcome = records_bulk_apply(
        actor=cast.manager,
        project=cast.project,
        action="judge",
        judge=judge,
        matching=filters(cast.project, "gold_label=none"),
    )

    run = JudgeRun.objects.get(project=cast.project)
    assert outcome.run == run
    assert run.record_ids == sorted(r.pk for r in unlabelled)


def test_acting_on_all_that_match_is_audited_with_its_filters_and_each_record(
    cast: Cast, unlabelled: list[Record]
) -> None:
    records_bulk_apply(
        actor=cast.manager,
        project=cast.project,
        action="adjudicate",
        matching=filters(cast.project, "gold_label=none&sort=-id&per_page=25"),
    )

    event = AuditEvent.objects.get(action="judging.records.matching_acted_on")
    assert event.actor == cast.manager
    assert event.after == {
        "action": "adjudicate",
        "filters": {"gold_label": "none"},
        "matched": 30,
        "records": 30,
    }
    assert AuditEvent.objects.filter(action="judging.record.sent_to_adjudication").count() == 30


def test_filters_that_match_nothing_change_nothing(cast: Cast) -> None:
    make_records(cast.project, 2)

    with pytest.raises(DomainError, match="No records match these filters"):
        records_bulk_apply(
            actor=cast.manager,
            project=cast.project,
            action="adjudicate",
            matching=filters(cast.project, "gold_label=safe"),
        )

    assert not Disagreement.objects.exists()
    assert not AuditEvent.objects.filter(action="judging.records.matching_acted_on").exists()


def test_a_search_that_matches_more_than_it_lists_is_refused(cast: Cast, monkeypatch) -> None:
    # A text search lists at most SEARCH_MATCH_LIMIT records; three stand for the 500.
    monkeypatch.setattr("curation.selectors.SEARCH_MATCH_LIMIT", 3)
    monkeypatch.setattr("hub.record_list.SEARCH_MATCH_LIMIT", 3)
    for _ in range(5):
        RecordFactory(project=cast.project)
    mail = filters(cast.project, "q=mail")

    with pytest.raises(DomainError, match="More than 3 records match the search"):
        matching_count(cast.project, mail)
    with pytest.raises(DomainError, match="More than 3 records match the search"):
        records_bulk_apply(
            actor=cast.manager, project=cast.project, action="adjudicate", matching=mail
        )
    assert not Disagreement.objects.exists()


def test_the_filters_are_the_list_forms_own_less_its_order_and_page_size() -> None:
    assert set(FILTERS) == set(RecordListForm.base_fields) - {"sort", "per_page"}


# The page: the offer in the list, the count to confirm, the action.


def list_page(cast: Cast, persona: str, query: str = "gold_label=none&per_page=25"):
    return cast.client_for(persona).get(
        reverse("hub:record_list", args=[cast.project.slug]) + "?" + query
    )


def post_matching(cast: Cast, persona: str, query: str, **fields):
    back = reverse("hub:record_list", args=[cast.project.slug]) + "?gold_label=unsafe"
    return cast.client_for(persona).post(
        reverse("hub:record_bulk", args=[cast.project.slug]),
        {"scope": "matching", "filters": query, "back": back, **fields},
        follow=True,
    )


def test_a_manager_is_offered_every_match_when_they_fill_more_than_a_page(
    cast: Cast, unlabelled: list[Record]
) -> None:
    page = list_page(cast, "manager").content.decode()

    assert "Choose all 30 records that match" in page
    assert 'name="filters" value="gold_label=none"' in page
    # One page holds every match: the header box is enough.
    assert "records that match" not in list_page(cast, "manager", "per_page=50").content.decode()


def test_reviewers_are_offered_no_bulk_action(cast: Cast, unlabelled: list[Record]) -> None:
    page = list_page(cast, "reviewer").content.decode()

    assert "records that match" not in page
    assert 'name="scope"' not in page


def test_asking_for_every_match_shows_the_count_and_filters_and_changes_nothing(
    cast: Cast, unlabelled: list[Record]
) -> None:
    response = post_matching(cast, "manager", "gold_label=none", action="adjudicate")

    page = response.content.decode()
    assert response.status_code == 200
    assert "Act on all 30 records that match" in page
    assert "Gold label" in page and "None" in page
    assert 'name="expected" value="30"' in page
    assert "Apply to all 30 records" in page
    # The page belongs to the Records section, as the list does.
    assert 'aria-current="true">Records</a>' in page
    assert not Disagreement.objects.exists()


def test_confirming_acts_on_the_filters_submitted_and_goes_back_to_the_list(
    cast: Cast, unlabelled: list[Record]
) -> None:
    response = post_matching(
        cast, "manager", "gold_label=none", action="adjudicate", expected="30", confirm="yes"
    )

    assert "30 records sent to adjudication." in response.content.decode()
    assert response.redirect_chain[-1][0].endswith("?gold_label=unsafe")
    assert open_requests() == {r.pk for r in unlabelled}


def test_the_message_says_which_matching_records_needed_nothing_done(
    cast: Cast, unlabelled: list[Record]
) -> None:
    records_bulk_apply(
        actor=cast.manager, project=cast.project, action="adjudicate", record_ids=[unlabelled[0].pk]
    )

    response = post_matching(
        cast, "manager", "gold_label=none", action="adjudicate", expected="30", confirm="yes"
    )

    assert (
        "29 records sent to adjudication. The filters matched 30: the others were waiting for "
        "adjudication already." in response.content.decode()
    )
    assert len(open_requests()) == 30


def test_the_message_says_when_the_records_changed_since_the_count(
    cast: Cast, unlabelled: list[Record]
) -> None:
    RecordFactory(project=cast.project, gold_label="", searchable=False)

    response = post_matching(
        cast, "manager", "gold_label=none", action="adjudicate", expected="30", confirm="yes"
    )

    assert (
        "31 records sent to adjudication. When you confirmed they matched 30: the records "
        "changed since." in response.content.decode()
    )
    assert len(open_requests()) == 31


def test_a_confirmation_without_a_judge_asks_for_one_and_starts_nothing(
    cast: Cast, unlabelled: list[Record]
) -> None:
    response = post_matching(
        cast, "manager", "gold_label=none", action="judge", expected="30", confirm="yes"
    )

    assert "Choose the judge to run." in response.content.decode()
    assert "Apply to all 30 records" in response.content.decode()
    assert not JudgeRun.objects.exists()


def test_filters_no_longer_valid_are_refused_in_words(cast: Cast) -> None:
    make_records(cast.project, 2)

    response = post_matching(
        cast, "manager", "run=999999&verdict=safe", action="adjudicate", confirm="yes"
    )

    assert "filters are no longer valid: filter the list again" in response.content.decode()
    assert not Disagreement.objects.exists()


@pytest.mark.parametrize("persona", ["reviewer", "annotator", "author"])
@pytest.mark.parametrize("confirm", ["", "yes"])
def test_only_managers_count_or_act_on_every_match(
    cast: Cast, unlabelled: list[Record], persona: str, confirm: str
) -> None:
    response = post_matching(
        cast, persona, "gold_label=none", action="adjudicate", expected="30", confirm=confirm
    )

    assert response.status_code == 403
    # The count would leak as words ("30 records", "all 30"); a bare "30" also
    # turns up by chance inside the page's random CSRF token, an attribute and not text.
    assert not re.search(r"\b30\b", strip_tags(response.content.decode()))
    assert not Disagreement.objects.exists()


def test_another_projects_manager_finds_no_project(cast: Cast, unlabelled: list[Record]) -> None:
    elsewhere = ProjectFactory()
    elsewhere.memberships.create(user=cast.outsider, role="manager")

    response = post_matching(cast, "outsider", "", action="adjudicate", confirm="yes")

    assert response.status_code == 404
    assert not Disagreement.objects.exists()
