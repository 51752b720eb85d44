"""The record list's building blocks: its filters, its paginator, and its rows' own columns.

The list and the record page are the hub's (hub/views.py), which adds the columns of
labels, consensus, final labels and verdicts; what a record is made of is defined here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import F, QuerySet
from django.http import QueryDict
from django.utils.functional import cached_property

from curation import selectors
from curation.forms import RecordFilterForm
from curation.models import Project, Record, Scenario

# What the list shows of each record, besides its category and scenario.
LIST_COLUMNS = ("id", "external_id", "gold_label", "attack_type", "source_agent", "preview")
# The first user message is kept cut at import (200 characters); the list shows less.
PREVIEW_CHARS = 120


class RecordPaginator(Paginator):
    """A paginator that counts only up to `max_count` matches when given one."""

    # A queryset, not any sequence as Paginator's: it is counted and reordered in the database.
    object_list: QuerySet

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
        # max_count when there are more.
        return self.counted if self.max_count is None else min(self.counted, self.max_count)


def filter_form[FormT: RecordFilterForm](
    form_class: type[FormT], project: Project, data: QueryDict, **kwargs: Any
) -> FormT:
    """The filter form with category, scenario and attack type offered from the project's data."""
    form = form_class(data, **kwargs)
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


def list_rows(
    page_ids: Sequence[int], *, url_prefix: str, columns: Sequence[str] = ()
) -> list[dict[str, object]]:
    """The rows of one page in the page's order, with only the columns the list shows (and
    `columns`), each with the address of its record page (`url_prefix` and its id).

    They are fetched by the ids of the page rather than with OFFSET on the full query, because
    PostgreSQL computes the selected columns of every row that an OFFSET skips: deep pages would
    read tens of thousands of records to throw them away. And they are read as values, with
    their links and shortened previews made here: model instances for each record, its category
    and scenario, a link reversed per row and Django's `truncatechars` took 12 of a page's 70 ms.
    """
    rows = Record.objects.filter(pk__in=page_ids).values(
        *LIST_COLUMNS,
        *columns,
        category_name=F("category__name"),
        scenario_name=F("scenario__name"),
    )
    by_id = {row["id"]: row for row in rows}
    for row in by_id.values():
        row["url"] = f"{url_prefix}{row['id']}/"
        row["preview"] = _shortened(row["preview"], PREVIEW_CHARS)
    return [by_id[pk] for pk in page_ids if pk in by_id]


def _shortened(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, an ellipsis last, as `truncatechars` cuts it."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
