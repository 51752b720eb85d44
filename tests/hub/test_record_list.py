"""The record list: filters, paging, htmx partials and a query count that ignores the data size."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from curation import selectors
from tests.conftest import Cast
from tests.factories import (
    CategoryFactory,
    ProjectFactory,
    RecordFactory,
    ScenarioFactory,
    rjudge_record,
)


def make_record(
    project,
    record_id: int,
    *,
    category: str = "Application",
    scenario: str = "mail",
    label: int | None = 1,
    attack_type: str = "unintended",
    user: str = "Please tidy up my inbox.",
):
    source = rjudge_record(record_id, label=label or 0, attack_type=attack_type, user=user)
    category_row = CategoryFactory(project=project, name=category)
    return RecordFactory(
        project=project,
        source=source,
        category=category_row,
        scenario=ScenarioFactory(category=category_row, name=scenario),
        **({} if label is not None else {"gold_label": ""}),
    )


def listed(response) -> list[str]:
    return [record["external_id"] for record in response.context["records"]]


@pytest.fixture
def varied(cast: Cast) -> Cast:
    """Five records that differ in one attribute each from the first."""
    project = cast.project
    make_record(project, 1)
    make_record(project, 2, category="Finance", scenario="bitcoin")
    make_record(project, 3, label=0)
    make_record(project, 4, label=None)
    make_record(project, 5, attack_type="injection", user="Summarise the README for me.")
    return cast


def get_list(cast: Cast, persona: str = "reviewer", **params):
    url = reverse("hub:record_list", args=[cast.project.slug])
    return cast.client_for(persona).get(url, params)


def test_it_lists_the_projects_records_with_what_tells_them_apart(varied: Cast) -> None:
    ProjectFactory()  # another project's records never show
    RecordFactory(source=rjudge_record(99))

    response = get_list(varied)

    assert response.status_code == 200
    assert listed(response) == ["1", "2", "3", "4", "5"]
    page = response.content.decode()
    for text in ["Finance", "bitcoin", "injection", "Summarise the README for me."]:
        assert text in page
    assert '<span class="badge unsafe">Unsafe</span>' in page
    assert '<span class="badge safe">Safe</span>' in page
    assert "5 records" in page


def test_it_shows_the_first_user_message_truncated(cast: Cast) -> None:
    message = "Delete everything " * 20
    make_record(cast.project, 1, user=message)

    page = get_list(cast).content.decode()

    shown = f"{message[:119]}…"
    assert f'<td class="first-message"><span title="{shown}">{shown}</span></td>' in page
    assert message[:121] not in page


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"category": "Finance"}, ["2"]),
        ({"scenario": "bitcoin"}, ["2"]),
        ({"gold_label": "unsafe"}, ["1", "2", "5"]),
        ({"gold_label": "safe"}, ["3"]),
        ({"gold_label": "none"}, ["4"]),
        ({"attack_type": "injection"}, ["5"]),
        ({"q": "readme"}, ["5"]),
        ({"category": "Application", "gold_label": "unsafe"}, ["1", "5"]),
        ({"category": "Finance", "gold_label": "safe"}, []),
    ],
)
def test_each_filter_narrows_the_list(varied: Cast, params: dict, expected: list[str]) -> None:
    assert listed(get_list(varied, **params)) == expected


def test_the_selects_offer_only_the_projects_own_values(varied: Cast) -> None:
    make_record(ProjectFactory(), 1, category="Elsewhere", scenario="far", attack_type="alien")

    form = get_list(varied).context["form"]

    def offered(name: str) -> list[str]:
        return [value for value, _ in form.fields[name].widget.choices]

    assert offered("category") == ["", "Application", "Finance", "IoT", "Program", "Web"]
    assert offered("scenario") == ["", "bitcoin", "mail"]
    assert offered("attack_type") == ["", "injection", "unintended"]


def test_a_filter_value_no_record_has_stays_selected(varied: Cast) -> None:
    page = get_list(varied, attack_type="jailbreak").content.decode()

    assert '<option value="jailbreak" selected>jailbreak</option>' in page
    assert "No records match these filters." in page


def test_an_invalid_filter_is_reported_and_lists_nothing(varied: Cast) -> None:
    response = get_list(varied, gold_label="maybe")

    assert listed(response) == []
    assert "Select a valid choice" in response.content.decode()


def test_it_pages_fifty_records_at_a_time(cast: Cast) -> None:
    for n in range(1, 61):
        make_record(cast.project, n)

    first, second = get_list(cast), get_list(cast, page=2)

    assert listed(first) == [str(n) for n in range(1, 51)]
    assert listed(second) == [str(n) for n in range(51, 61)]
    assert "Page 2 of 2" in second.content.decode()


def test_paging_links_keep_the_filters(cast: Cast) -> None:
    for n in range(1, 61):
        make_record(cast.project, n, category="Finance" if n % 2 else "Application")
    for n in range(61, 121):
        make_record(cast.project, n, category="Finance", attack_type="injection")

    response = get_list(cast, category="Finance", attack_type="injection")
    page = response.content.decode()

    next_link = "?category=Finance&amp;attack_type=injection&amp;page=2"
    assert f'href="/p/{cast.project.slug}/records/{next_link}"' in page
    assert f'hx-get="/p/{cast.project.slug}/records/{next_link}"' in page
    second = get_list(cast, category="Finance", attack_type="injection", page=2)
    assert listed(second) == [str(n) for n in range(111, 121)]


def test_a_broad_text_search_counts_and_pages_a_bounded_number_of_matches(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selectors, "SEARCH_MATCH_LIMIT", 60)
    for n in range(1, 71):
        make_record(cast.project, n)

    search, plain = get_list(cast, q="inbox"), get_list(cast)

    assert "More than 60 records match; 60 of them are listed." in search.content.decode()
    assert "Page 1 of 2" in search.content.decode()
    second_page = listed(get_list(cast, q="inbox", page=2))
    assert len(second_page) == 10
    assert sorted(second_page, key=int) == second_page
    assert "70 records" in plain.content.decode()
    assert "Page 1 of 2" in plain.content.decode()


def test_a_text_search_within_bounds_is_counted_exactly(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selectors, "SEARCH_MATCH_LIMIT", 60)
    for n in range(1, 61):
        make_record(cast.project, n)

    page = get_list(cast, q="inbox").content.decode()

    assert "60 records" in page
    assert "More than" not in page


def test_a_page_past_the_end_shows_the_last_page(cast: Cast) -> None:
    make_record(cast.project, 1)

    assert listed(get_list(cast, page=999)) == ["1"]


def count_queries(cast: Cast, **params) -> int:
    client = cast.client_for("reviewer")
    url = reverse("hub:record_list", args=[cast.project.slug])
    client.get(url, params)  # the session is read once, as in any later request
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url, params).status_code == 200
    return len(queries)


@pytest.mark.parametrize("params", [{}, {"category": "Finance", "q": "inbox"}])
def test_the_query_count_does_not_grow_with_the_records(cast: Cast, params: dict) -> None:
    for n in range(1, 6):
        make_record(cast.project, n, category="Finance", scenario=f"s{n}")
    few = count_queries(cast, **params)
    for n in range(6, 61):
        make_record(cast.project, n, category="Finance", scenario=f"s{n}", attack_type=f"a{n}")

    assert count_queries(cast, **params) == few


def test_the_filter_form_works_with_and_without_javascript(varied: Cast) -> None:
    page = get_list(varied).content.decode()
    url = f"/p/{varied.project.slug}/records/"

    assert f'<form method="get" action="{url}"' in page
    assert f'hx-get="{url}" hx-target="#record-results" hx-swap="outerHTML" hx-push-url="true"' in (
        page
    )
    assert '<button type="submit"' in page


def test_an_htmx_request_gets_only_the_results(varied: Cast) -> None:
    url = reverse("hub:record_list", args=[varied.project.slug])
    response = varied.client_for("reviewer").get(
        url, {"category": "Finance"}, headers={"HX-Request": "true"}
    )

    page = response.content.decode()
    assert page.lstrip().startswith('<section id="record-results"')
    assert "<html" not in page and "<form" not in page
    assert listed(response) == ["2"]
    assert "HX-Request" in response["Vary"]


def test_an_htmx_history_restore_gets_the_whole_page(varied: Cast) -> None:
    url = reverse("hub:record_list", args=[varied.project.slug])
    response = varied.client_for("reviewer").get(
        url, headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )

    assert "<html" in response.content.decode()


def test_record_content_in_the_list_is_escaped(cast: Cast) -> None:
    make_record(cast.project, 1, user='<script>alert("x")</script><img src=x onerror=alert(1)>')

    page = get_list(cast).content.decode()

    assert "<script>alert" not in page
    assert "<img src=x" not in page
    assert (
        "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
        in (page)
    )


def test_the_project_overview_links_to_a_category_filter_the_list_understands(
    varied: Cast,
) -> None:
    overview = varied.client_for("reviewer").get(
        reverse("curation:project", args=[varied.project.slug])
    )
    assert f"/p/{varied.project.slug}/records/?category=Finance" in overview.content.decode()

    assert listed(get_list(varied, category="Finance")) == ["2"]
