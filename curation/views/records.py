"""Browsing a project's records: the filtered list and the record page."""

from __future__ import annotations

from django import forms
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import F, QuerySet
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.functional import cached_property
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from curation import selectors
from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.conversation import conversation, metadata_items, test_case_sections
from curation.forms import RecordFilterForm
from curation.models import Project, Record, Scenario
from curation.selectors import record_search, records_not_yet_searchable

PAGE_SIZE = 50
# What the list shows of each record, besides its category and scenario.
LIST_COLUMNS = ("id", "external_id", "gold_label", "attack_type", "source_agent", "preview")
# The first user message is kept cut at import (200 characters); the list shows less.
PREVIEW_CHARS = 120


class RecordPaginator(Paginator):
    """A paginator that counts only up to `max_count` matches when given one."""

    def __init__(self, object_list: QuerySet, per_page: int, *, max_count: int | None) -> None:
        super().__init__(object_list, per_page)
        self.max_count = max_count

    @cached_property
    def counted(self) -> int:
        """The number of matches, or max_count + 1 when there are more."""
        if self.max_count is None:
            return self.object_list.count()
        # Unordered, so that PostgreSQL may stop at the limit instead of sorting every match.
        return self.object_list.order_by()[: self.max_count + 1].count()

    @property
    def is_capped(self) -> bool:
        return self.max_count is not None and self.counted > self.max_count

    @cached_property
    def count(self) -> int:
        return self.max_count if self.is_capped else self.counted


@require_GET
# The same URL answers htmx with the results alone: caches must keep the two apart.
@vary_on_headers("HX-Request")
@project_view(RECORD_READERS)
def record_list(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    form = _filter_form(access.project, request.GET)
    ids = Record.objects.none().values_list("id", flat=True)
    if form.is_valid():
        filters = form.cleaned_data
        ids = record_search(
            access.project,
            category=filters["category"],
            scenario=filters["scenario"],
            gold_label=filters["gold_label"],
            attack_type=filters["attack_type"],
            text=filters["q"],
            agent=filters["agent"],
        ).values_list("id", flat=True)
    searching = bool(form.cleaned_data.get("q"))
    paginator = RecordPaginator(
        ids, PAGE_SIZE, max_count=selectors.SEARCH_MATCH_LIMIT if searching else None
    )
    page = paginator.get_page(request.GET.get("page"))
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "page": page,
        "records": _list_rows(access.project, page.object_list),
        "not_yet_searchable": records_not_yet_searchable(access.project) if searching else 0,
    }
    # A history restore asks for the whole page, though it comes from htmx too.
    partial = request.htmx and not request.htmx.history_restore_request
    template = "curation/record_list.html" + ("#results" if partial else "")
    return render(request, template, context)


@require_GET
@project_view(RECORD_READERS)
def record_detail(request: HttpRequest, access: ProjectAccess, record_id: int) -> HttpResponse:
    records = access.project.records
    record = get_object_or_404(
        records.select_related("category", "scenario", "batch"),
        pk=record_id,
    )
    ids = records.values_list("id", flat=True)
    context = {
        "project": access.project,
        "access": access,
        "record": record,
        "turns": conversation(record.turns, tools=selectors.tool_summaries(access.project)),
        "metadata": metadata_items(record.metadata),
        "test_case": test_case_sections(record.test_case),
        "previous_id": ids.filter(id__lt=record.pk).order_by("-id").first(),
        "next_id": ids.filter(id__gt=record.pk).order_by("id").first(),
    }
    return render(request, "curation/record_detail.html", context)


def _filter_form(project: Project, data: QueryDict) -> RecordFilterForm:
    """The filter form with category, scenario and attack type offered from the project's data."""
    form = RecordFilterForm(data)
    offered = {
        "category": project.categories.values_list("name", flat=True),
        "scenario": Scenario.objects.filter(category__project=project)
        .exclude(name="")
        .values_list("name", flat=True)
        .distinct()
        .order_by("name"),
        "attack_type": _attack_types(project),
        "agent": selectors.source_agents(project),
    }
    for name, values in offered.items():
        # A value from a link or a bookmark stays selected though no record has it any more.
        chosen = data.get(name, "")
        values = [*values, *([chosen] if chosen and chosen not in values else [])]
        form.fields[name].widget = forms.Select(choices=[("", "Any"), *((v, v) for v in values)])
    return form


# The distinct attack types of a project's records, walking the record_by_gold index from one
# (gold label, attack type) pair to the next: a handful of index probes, where DISTINCT would read
# an index entry per record. PostgreSQL does not skip through an index by itself.
ATTACK_TYPES_SQL = """
WITH RECURSIVE labels(label) AS (
    SELECT MIN(gold_label) FROM {table} WHERE project_id = %(project)s
    UNION ALL
    SELECT (
        SELECT MIN(gold_label) FROM {table} WHERE project_id = %(project)s AND gold_label > label
    )
    FROM labels WHERE label IS NOT NULL
), pairs(label, attack_type) AS (
    SELECT label, (
        SELECT MIN(attack_type) FROM {table} WHERE project_id = %(project)s AND gold_label = label
    )
    FROM labels WHERE label IS NOT NULL
    UNION ALL
    SELECT label, (
        SELECT MIN(attack_type) FROM {table}
        WHERE project_id = %(project)s AND gold_label = label AND attack_type > pairs.attack_type
    )
    FROM pairs WHERE attack_type IS NOT NULL
)
SELECT DISTINCT attack_type FROM pairs WHERE attack_type <> '' ORDER BY attack_type
"""


def _attack_types(project: Project) -> list[str]:
    sql = ATTACK_TYPES_SQL.format(table=connection.ops.quote_name(Record._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, {"project": project.pk})
        return [attack_type for (attack_type,) in cursor.fetchall()]


def _list_rows(project: Project, page_ids: QuerySet[Record]) -> list[dict[str, object]]:
    """The rows of one page, with only the columns the list shows.

    They are fetched by the ids of the page rather than with OFFSET on the full query, because
    PostgreSQL computes the selected columns of every row that an OFFSET skips: deep pages would
    read tens of thousands of records to throw them away. And they are read as values, with
    their links and shortened previews made here: model instances for each record, its category
    and scenario, a link reversed per row and Django's `truncatechars` took 12 of a page's 70 ms.
    """
    rows = list(
        Record.objects.filter(pk__in=page_ids)
        .order_by("id")
        .values(*LIST_COLUMNS, category_name=F("category__name"), scenario_name=F("scenario__name"))
    )
    # Record pages live under the list's URL (curation/urls.py).
    records_url = reverse("curation:record_list", args=[project.slug])
    for row in rows:
        row["url"] = f"{records_url}{row['id']}/"
        row["preview"] = _shortened(row["preview"], PREVIEW_CHARS)
    return rows


def _shortened(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, an ellipsis last, as `truncatechars` cuts it."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
