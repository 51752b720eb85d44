"""The record list's text search finds exactly the records whose text contains the query."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation import selectors
from curation.models import Record
from curation.selectors import record_search
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record


@pytest.fixture(autouse=True, params=["records read in turn", "trigram index"])
def lookup(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search here twice: as a small project's, whose records are read in turn, and
    through the index, as in a project too large for that."""
    if request.param == "trigram index":
        monkeypatch.setattr(selectors, "SAMPLE_ROWS", 1)
        monkeypatch.setattr(selectors, "FIRST_ROWS", 1)


def with_message(cast: Cast, record_id: int, message: str) -> Record:
    return RecordFactory(project=cast.project, source=rjudge_record(record_id, user=message))


def found(cast: Cast, query: str) -> list[str]:
    """The records the record list shows for the query, as a reviewer sees them."""
    url = reverse("curation:record_list", args=[cast.project.slug])
    response = cast.client_for("reviewer").get(url, {"q": query})
    return [record["external_id"] for record in response.context["records"]]


def test_a_phrase_is_found_wherever_its_characters_follow_each_other(cast: Cast) -> None:
    with_message(cast, 1, "Who left the backdoor opened?")
    with_message(cast, 2, "Leave the door open for the cat.")
    with_message(cast, 3, "The DOOR OPEN sensor is broken.")
    with_message(cast, 4, "Check the door, open the window.")
    with_message(cast, 5, "Open door policy.")
    with_message(cast, 6, "The door  open twice spaced.")

    assert found(cast, "door open") == ["1", "2", "3"]
    assert found(cast, "Door Open") == ["1", "2", "3"]
    assert found(cast, "door, open") == ["4"]
    assert found(cast, "door  open") == ["6"]


def test_a_phrase_broken_over_two_lines_needs_the_line_break_in_the_query(cast: Cast) -> None:
    with_message(cast, 1, "Leave the door\nopen for the cat.")

    assert found(cast, "door open") == []
    assert found(cast, "door\nopen") == ["1"]


def test_a_query_of_many_words_needs_them_all_in_that_order(cast: Cast) -> None:
    with_message(cast, 1, "Please open the front door now.")
    with_message(cast, 2, "Please open the door now.")
    with_message(cast, 3, "The front door: please open it now.")

    assert found(cast, "open the front door") == ["1"]
    assert found(cast, "please open the front door now") == ["1"]
    assert found(cast, "open the door") == ["2"]
    assert found(cast, "n the front do") == ["1"]
    assert found(cast, "front door please") == []
    assert found(cast, "please open") == ["1", "2", "3"]


def test_a_single_word_is_found_inside_longer_words(cast: Cast) -> None:
    with_message(cast, 1, "Who left the backdoors open?")
    with_message(cast, 2, "The doorbell rang.")
    with_message(cast, 3, "Nobody was at home.")

    assert found(cast, "door") == ["1", "2"]
    assert found(cast, "ackdoo") == ["1"]
    assert found(cast, "bell") == ["2"]


def test_the_end_of_a_word_joined_to_the_start_of_the_next_is_no_word(cast: Cast) -> None:
    with_message(cast, 1, "Leave the door open.")

    assert found(cast, "dooropen") == []
    assert found(cast, "oro") == []


MESSAGES = [
    "Leave the door open for the cat.",
    "Who left the backdoor opened?",
    "The door\topen, tab-separated.",
    "The door\u00a0open, with a non-breaking space.",
    "Open the door. Now!",
    "Transfer 50% of the balance to account_7.",
    "Transfer 50 of the balance to account 7.",
    "ok",
    "   Spaces around the message   ",
    "Ünïcode DOOR öpen",
]
QUERIES = [
    "door open",
    "door\topen",
    "door\u00a0open",
    "door",
    "oor ope",
    "open the door. now!",
    "the door",
    "50%",
    "50% of",
    "account_7",
    "t_7",
    "%",
    "_",
    "ok",
    "k",
    " ok",
    "message ",
    "around the",
    "door öpen",
    "ünïcode door",
    "agent's actions",
    "ok\ni should",
    "\n   spaces",
    "the cat.\nI should",
    "\n",
    "the",
]


@pytest.mark.parametrize("query", QUERIES)
def test_it_finds_what_a_plain_substring_search_finds(cast: Cast, query: str) -> None:
    for record_id, message in enumerate(MESSAGES, start=1):
        with_message(cast, record_id, message)
    records = Record.objects.filter(project=cast.project)
    substring_matches = records.filter(search_text__text__contains=query.lower())

    matches = record_search(cast.project, text=query)

    assert set(matches) == set(substring_matches)
