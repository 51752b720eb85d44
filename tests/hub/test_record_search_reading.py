"""The record list says how it read a query that leaves words out: `rm -rf` is "rm" without
"rf", which finds fewer records than the command does, quoted."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.conftest import Cast
from tests.factories import RecordFactory, rjudge_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def commands(cast: Cast) -> Cast:
    for record_id, message in enumerate(
        ["Run rm -rf / now.", "Run rm on the old logs.", "Nothing to delete."], start=1
    ):
        source = rjudge_record(
            record_id, user=message, thought="Thinking.", action="Act: {}", environment="Done."
        )
        RecordFactory(project=cast.project, source=source)
    return cast


def search(cast: Cast, query: str):
    response = cast.client_for("reviewer").get(
        reverse("hub:record_list", args=[cast.project.slug]), {"q": query}
    )
    assert response.status_code == 200
    return response


def test_a_shell_flag_is_read_as_a_word_left_out_and_the_page_says_so(commands: Cast) -> None:
    response = search(commands, "rm -rf")

    assert [record["external_id"] for record in response.context["records"]] == ["2"]
    assert (
        "Records with &quot;rm&quot; and without &quot;rf&quot; (a word after a lone - is left "
        "out; write &quot;rm -rf&quot; in quotes to find it)."
    ) in response.content.decode()


def test_the_quoted_command_finds_it_and_needs_no_explanation(commands: Cast) -> None:
    response = search(commands, '"rm -rf"')

    assert [record["external_id"] for record in response.context["records"]] == ["1"]
    assert "without" not in response.content.decode()


def test_a_query_with_quotes_of_its_own_is_told_to_quote_the_flag(commands: Cast) -> None:
    page = search(commands, '"run rm" -rf -"old logs"').content.decode()

    assert (
        "Records with &quot;run rm&quot; and without &quot;rf&quot; or &quot;old logs&quot; "
        "(a word after a lone - is left out; write &quot;-rf&quot; in quotes to find it)."
    ) in page


def test_a_phrase_left_out_on_purpose_is_read_back_without_advice(commands: Cast) -> None:
    page = search(commands, 'rm -"old logs"').content.decode()

    assert "Records with &quot;rm&quot; and without &quot;old logs&quot;." in page
    assert "in quotes to find" not in page


def test_the_reading_comes_with_the_results_that_htmx_swaps_in(commands: Cast) -> None:
    response = commands.client_for("reviewer").get(
        reverse("hub:record_list", args=[commands.project.slug]),
        {"q": "rm -rf"},
        headers={"HX-Request": "true"},
    )

    assert "without &quot;rf&quot;" in response.content.decode()


def test_a_query_read_back_is_escaped(commands: Cast) -> None:
    page = search(commands, "<b>rm</b> -rf").content.decode()

    assert "write &quot;&lt;b&gt;rm&lt;/b&gt; -rf&quot; in quotes" in page
    assert "<b>rm</b>" not in page


def test_a_query_that_leaves_nothing_out_is_not_read_back(commands: Cast) -> None:
    assert "Records with" not in search(commands, "rm logs").content.decode()
