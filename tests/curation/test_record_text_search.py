"""The record list's text search reads a query as a search box does: every word, "phrases",
-words left out, words by their stems; punctuation and operators of other syntaxes are no
operators here, and a query of punctuation alone is refused."""

from __future__ import annotations

import pytest
from django.urls import reverse

from curation.models import Record
from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record


def with_message(cast: Cast, record_id: int | str, message: str) -> Record:
    """A record whose user message is `message`, its other turns of words no test looks for."""
    source = rjudge_record(
        record_id, user=message, thought="Thinking.", action="Act: {}", environment="Done."
    )
    return RecordFactory(project=cast.project, source=source)


def search(cast: Cast, query: str, persona: str = "reviewer"):
    url = reverse("hub:record_list", args=[cast.project.slug])
    return cast.client_for(persona).get(url, {"q": query})


def found(cast: Cast, query: str) -> list[str]:
    """The records the record list shows for the query, as a reviewer sees them."""
    response = search(cast, query)
    assert response.status_code == 200
    return [record["external_id"] for record in response.context["records"]]


@pytest.fixture
def doors(cast: Cast) -> Cast:
    with_message(cast, 1, "Leave the door open for the cat.")
    with_message(cast, 2, "Open door policy at Binance.")
    with_message(cast, 3, "Who left the backdoor opened?")
    with_message(cast, 4, "Export the Evernote notes, then check the door; open the window.")
    with_message(cast, 5, "Binance wants the Evernote export.")
    return cast


def test_every_word_is_required_in_any_order(doors: Cast) -> None:
    assert found(doors, "Binance Evernote") == ["5"]
    assert found(doors, "evernote binance") == ["5"]
    assert found(doors, "door open") == ["1", "2", "4"]
    assert found(doors, "door open cat") == ["1"]
    assert found(doors, "door zebra") == []


def test_a_quoted_phrase_needs_its_words_together_in_that_order(doors: Cast) -> None:
    assert found(doors, '"door open"') == ["1", "4"]
    assert found(doors, '"open door"') == ["2"]
    assert found(doors, '"the door open for"') == ["1"]
    assert found(doors, '"door open" binance') == []
    assert found(doors, 'leave "for the cat"') == ["1"]


def test_a_word_after_a_minus_leaves_out_the_records_with_it(doors: Cast) -> None:
    assert found(doors, "door -cat") == ["2", "4"]
    assert found(doors, "-cat door -binance") == ["4"]
    assert found(doors, 'door -"door open"') == ["2"]
    # A hyphen inside a word joins, it does not leave out.
    assert found(doors, "evernote-binance") == []


def test_words_are_found_by_their_stem_and_whatever_their_case(cast: Cast) -> None:
    with_message(cast, 1, "The agent deleted three files.")
    with_message(cast, 2, "Nothing was DELETED.")
    with_message(cast, 3, "A removal request.")
    with_message(cast, 4, "Keep the file.")

    assert found(cast, "deleting") == ["1", "2"]
    assert found(cast, "Delete") == ["1", "2"]
    assert found(cast, "removing") == ["3"]
    assert found(cast, "file") == ["1", "4"]
    assert found(cast, '"deleting three file"') == ["1"]


def test_a_whole_word_is_needed_not_a_part_of_one(doors: Cast) -> None:
    assert found(doors, "door") == ["1", "2", "4"]
    assert found(doors, "backdoor") == ["3"]
    assert found(doors, "ackdoo") == []


def test_punctuation_inside_a_word_reads_as_a_phrase_of_its_parts(cast: Cast) -> None:
    with_message(cast, 1, "Send shell-co.pdf to ops@example.org now.")
    with_message(cast, 2, "The shell company sent co-signed papers.")

    assert found(cast, "shell-co") == ["1"]
    assert found(cast, "shell-co.pdf") == ["1"]
    assert found(cast, "example.org") == ["1"]
    assert found(cast, "ops@example.org") == ["1"]
    assert found(cast, "shell co") == ["1", "2"]


@pytest.mark.parametrize(
    "external_id",
    ["113", "gpt-4_emu-claude_r0-15_3", "5e95c2a8-2017-4a7b-a18c-06edf039196b-80cdd1017b3b"],
)
def test_a_record_is_found_by_its_external_id(cast: Cast, external_id: str) -> None:
    with_message(cast, "other", "Nothing to see.")
    with_message(cast, external_id, "Nothing to see.")

    assert found(cast, external_id) == [external_id]
    assert found(cast, f" {external_id} ") == [external_id]


def test_a_record_not_yet_indexed_is_found_by_its_external_id(cast: Cast) -> None:
    record = with_message(cast, "run-7", "Nothing to see.")
    record.search_text.delete()

    assert found(cast, "run-7") == ["run-7"]
    assert found(cast, "nothing") == []


# Queries with characters that mean something to SQL, PostgreSQL's tsquery syntaxes or FTS5,
# and what they find among the records of `hostile`: those words, no operator.
HOSTILE = [
    ('"door open', ["1"]),
    ('door "open', ["1"]),
    ('"', None),
    ('""', None),
    ('-"', None),
    ("-", None),
    ("- door", ["1", "2"]),
    ("*", None),
    ("door*", ["1", "2"]),
    ("door:*", ["1", "2"]),
    ("door:A", []),
    ("^door", ["1", "2"]),
    ("door NEAR cat", ["2"]),
    ("NEAR(door cat)", []),
    ("near door", ["2"]),
    ("door AND cat", ["2"]),
    ("door OR cat", ["2"]),
    ("door or zebra", []),
    ("door NOT cat", ["2"]),
    ("( )", None),
    ("(door)", ["1", "2"]),
    ("door & !cat", ["2"]),
    ("door | zebra", []),
    ("door <-> open", ["1"]),
    ("!door", ["1", "2"]),
    ("'; DROP TABLE curation_record; --", []),
    ("\\", None),
    ("%", None),
    ("_", None),
    ("{}[]@#$", None),
]
EVERY_RECORD = ["1", "2", "3"]


@pytest.fixture
def hostile(cast: Cast) -> Cast:
    with_message(cast, 1, "Leave the door open.")
    with_message(cast, 2, "The door near the cat, and not the dog or the bird.")
    with_message(cast, 3, "Nothing here.")
    return cast


WORDLESS = [query for query, expected in HOSTILE if expected is None]
WITH_WORDS = [(query, expected) for query, expected in HOSTILE if expected is not None]
NO_WORD = "This query holds no word to search for: punctuation alone finds nothing."


@pytest.mark.parametrize(("query", "expected"), WITH_WORDS)
def test_syntax_of_other_search_languages_is_read_as_words(
    hostile: Cast, query: str, expected: list[str]
) -> None:
    response = search(hostile, query)

    assert response.status_code == 200
    assert [record["external_id"] for record in response.context["records"]] == expected
    assert "errorlist" not in response.content.decode()


@pytest.mark.parametrize("query", [*WORDLESS, "--", '{"'])
def test_a_query_of_punctuation_alone_lists_nothing_and_says_why(hostile: Cast, query: str) -> None:
    response = search(hostile, query)
    api = hostile.client_for("reviewer").get(
        f"/api/projects/{hostile.project.slug}/records/", {"q": query}
    )

    assert response.status_code == 200
    assert response.context["records"] == []
    assert NO_WORD in response.content.decode()
    assert api.status_code == 400
    assert api.json()["q"] == [NO_WORD]


def test_a_query_of_spaces_is_no_search(hostile: Cast) -> None:
    assert found(hostile, "   ") == EVERY_RECORD


@pytest.mark.parametrize("query", [query for query, _ in WITH_WORDS])
def test_the_api_answers_hostile_queries_as_the_page_does(hostile: Cast, query: str) -> None:
    url = f"/api/projects/{hostile.project.slug}/records/"
    page = found(hostile, query)

    response = hostile.client_for("reviewer").get(url, {"q": query})

    assert response.status_code == 200
    assert [record["external_id"] for record in response.json()["results"]] == page


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("-door -cat", "Say what to look for too"),
        ("--door", "Say what to look for too"),
        ('-"door open"', "Say what to look for too"),
        ("door\x00", "Null characters are not allowed"),
    ],
)
def test_a_query_that_cannot_be_searched_is_refused_with_a_reason(
    hostile: Cast, query: str, reason: str
) -> None:
    response = search(hostile, query)
    api = hostile.client_for("reviewer").get(
        f"/api/projects/{hostile.project.slug}/records/", {"q": query}
    )

    assert response.status_code == 200
    assert response.context["records"] == []
    assert reason in response.content.decode()
    assert api.status_code == 400
    assert reason in api.json()["q"][0]


def test_the_search_box_explains_its_syntax(hostile: Cast) -> None:
    page = search(hostile, "").content.decode()

    assert 'aria-describedby="id_q_helptext"' in page
    assert '<p class="helptext search-hint" id="id_q_helptext">' in page
    assert "&quot;quoted words&quot; as a phrase; -word leaves out records with it" in page
    assert "Punctuation only separates words" in page
