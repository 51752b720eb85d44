"""Reads: querysets and small summaries the views and API share."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, TypedDict, cast

from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Sum
from django.utils import timezone

from curation.models import (
    ImportBatch,
    Invitation,
    Membership,
    Project,
    Record,
    RecordSearchText,
    Scenario,
)
from curation.search_text import (
    FTS_TABLE,
    SEARCH_CONFIG,
    SearchTerms,
    fts5_query_of,
    search_terms_of,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.db.models.expressions import CombinedExpression
    from django_stubs_ext import WithAnnotations


class CategoryCount(TypedDict):
    """A row of record_counts_by_category."""

    category__name: str
    gold_label: str
    n: int


class AccountMarks(TypedDict):
    """What users_overview adds to each account."""

    may_create_projects: bool
    locked_out: bool


def projects_for_user(user: User) -> QuerySet[Project]:
    """The projects `user` is a member of; superusers see every project."""
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


@dataclass(frozen=True)
class ProjectCounts:
    """A project card's figures: its records, and those with every label they need."""

    records: int
    labelled: int

    @property
    def percent_labelled(self) -> int:
        return round(100 * self.labelled / self.records) if self.records else 0


def project_counts(projects: list[Project]) -> dict[int, ProjectCounts]:
    """Each project's counts, in one grouped statement from the records' own label counts."""
    rows = (
        Record.objects.filter(project__in=projects)
        .values("project_id")
        .annotate(
            records=Count("id"),
            labelled=Count(
                "id",
                filter=Q(annotation_count__gte=F("project__overlap") + F("extra_labels")),
            ),
        )
        .order_by()
    )
    found = {row["project_id"]: ProjectCounts(row["records"], row["labelled"]) for row in rows}
    return {project.pk: found.get(project.pk, ProjectCounts(0, 0)) for project in projects}


def memberships_of(project: Project) -> QuerySet[Membership]:
    return project.memberships.select_related("user").order_by("user__username", "role")


def pending_invitations_of(project: Project) -> QuerySet[Invitation]:
    return project.invitations.filter(state=Invitation.State.PENDING).select_related("invited_by")


def record_counts_by_category(project: Project) -> list[CategoryCount]:
    """Rows of {category, gold_label, n}, one aggregate query whatever the number of records."""
    return list(
        Record.objects.filter(project=project)
        .values("category__name", "gold_label")
        .annotate(n=Count("id"))
        .order_by("category__name", "gold_label")
    )


def record_search(
    project: Project,
    *,
    category: str = "",
    scenario: str = "",
    gold_label: str = "",
    attack_type: str = "",
    text: str = "",
    agent: str = "",
) -> QuerySet[Record]:
    """The project's records matching every given filter, in id order, ready for one page.

    `gold_label` is "safe", "unsafe" or "none" (records without a gold label); `text` is a
    search box's query (search_text.search_terms_of), or a record's external id.
    """
    # The project as a range of one, and first in the order: PostgreSQL drops a column that an
    # equality fixes from the order, and then walks the primary key from the lowest id, passing
    # every record of the projects imported before (178 ms for the fifth of five projects of
    # 50,000 records, statistics fresh; bench/many_projects_bench.py). In (project, id) order
    # only the indexes that begin with the project give the order: 0.1 ms, whatever the
    # statistics say (tests/hub/test_record_list_plans.py reads the plan).
    records = Record.objects.filter(project_id__gte=project.pk, project_id__lte=project.pk)
    # By id rather than through a join on the name: the planner then sees how many records the
    # category or scenario holds.
    if category:
        category_ids = project.categories.filter(name=category).values_list("id", flat=True)
        records = records.filter(category_id__in=list(category_ids))
    if scenario:
        scenarios = Scenario.objects.filter(category__project=project, name=scenario)
        records = records.filter(scenario_id__in=list(scenarios.values_list("id", flat=True)))
    if gold_label:
        records = records.filter(gold_label="" if gold_label == "none" else gold_label)
    if attack_type:
        records = records.filter(attack_type=attack_type)
    if agent:
        records = records.filter(source_agent=agent)
    terms = search_terms_of(text)
    if terms.required:
        records = records.filter(id__in=_text_matches(project, text, terms))
    elif terms.excluded:
        # Everything but some words would read every record's (RecordFilterForm refuses it).
        records = records.none()
    order: F | CombinedExpression = F("id")
    if category or scenario:
        # Imports keep a category's and a scenario's records together, while PostgreSQL assumes
        # matches are spread evenly: asked for the first page in id order, it walks every
        # record by id and skips those of other categories (50 ms over 100,000 records). "id + 0"
        # is the same order, which no index gives, so it reads the filter's index and sorts the
        # matches instead (5 to 25 ms).
        order = order + 0
    return records.select_related("category", "scenario").order_by("project_id", order)


# A text search lists at most this many records (the callers say when there are more).
SEARCH_MATCH_LIMIT = 500


def _text_matches(project: Project, text: str, terms: SearchTerms) -> list[int]:
    """Ids of up to SEARCH_MATCH_LIMIT + 1 records whose text holds `terms`, and of the record
    whose external id is `text`, whatever the index made of its punctuation.

    Looked up on their own, without order, then listed in order: asked for the first page in id
    order, PostgreSQL would walk every record by id and test each; this way the index finds the
    matches and the limit stops a common word early.
    """
    if connection.vendor == "postgresql":
        matches = RecordSearchText.objects.filter(project=project, vector=_tsquery(terms))
        found = list(matches.values_list("record_id", flat=True)[: SEARCH_MATCH_LIMIT + 1])
    else:
        found = _fts5_matches(project, terms)
    by_id = project.records.filter(external_id=text.strip()).values_list("id", flat=True)
    return [*found, *by_id]


def _tsquery(terms: SearchTerms) -> SearchQuery:
    """Every term as a phrase (a single word is a phrase of one), none of the excluded ones."""

    def phrase(term: str) -> SearchQuery:
        return SearchQuery(term, search_type="phrase", config=SEARCH_CONFIG)

    query = reduce(operator.and_, map(phrase, terms.required))
    for term in terms.excluded:
        query &= ~phrase(term)
    return query


def _fts5_matches(project: Project, terms: SearchTerms) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(*fts5_statement(project, terms))
        return [record_id for (record_id,) in cursor.fetchall()]


def fts5_statement(project: Project, terms: SearchTerms) -> tuple[str, list[str | int]]:
    """The SQLite statement of a project's text search: the FTS5 table's matches, then their
    search rows, which say which project a record is in (and that it is one: the FTS table
    cannot be joined to by a foreign key).

    In that order, always: SQLite's CROSS JOIN keeps its left table outermost whatever the
    statistics say. The other order, which the planner picked once a project had many search
    rows, walks the project's rows by `search_text_by_project` and evaluates the match once per
    record: seconds in a database of several large projects, where the match over the whole
    FTS table takes milliseconds (tests/curation/test_record_text_search_sqlite.py reads the
    plan).
    """
    return (
        f"SELECT fts.rowid FROM {FTS_TABLE} fts "  # noqa: S608 (constants)
        f"CROSS JOIN {RecordSearchText._meta.db_table} search ON search.record_id = fts.rowid "
        f"WHERE {FTS_TABLE} MATCH %s AND search.project_id = %s LIMIT %s",
        [fts5_query_of(terms), project.pk, SEARCH_MATCH_LIMIT + 1],
    )


def records_not_yet_searchable(project: Project) -> int:
    """Imported records whose text the search cannot find yet: indexing follows an import."""
    pending = project.import_batches.filter(
        state=ImportBatch.State.SUCCEEDED, searchable_at__isnull=True
    ).aggregate(records=Sum("created_count"))
    return pending["records"] or 0


def user_may_create_projects(user: User) -> bool:
    """Given the permission directly (on the user page), not through a group or as a superuser."""
    return user.user_permissions.filter(
        content_type__app_label="curation", codename="add_project"
    ).exists()


def login_lockouts(username: str | None = None) -> list[dict[str, object]]:
    """The usernames locked out now, from which address, after how many failures and when the
    last; as django-axes counts them (a username from one address, within the cool-off)."""
    attempts = AccessAttempt.objects.filter(
        attempt_time__gte=timezone.now() - settings.AXES_COOLOFF_TIME
    )
    if username is not None:
        attempts = attempts.filter(username=username)
    return list(
        attempts.values("username", "ip_address")
        .annotate(failures=Sum("failures_since_start"), last_attempt=Max("attempt_time"))
        .filter(failures__gte=settings.AXES_FAILURE_LIMIT)
        .order_by("-last_attempt")
    )


def users_overview() -> list[WithAnnotations[User, AccountMarks]]:
    """Every account for the site administrators' user list, each marked with whether it may
    create projects and whether it is locked out."""
    may_create = Permission.objects.filter(
        user=OuterRef("pk"), content_type__app_label="curation", codename="add_project"
    )
    # The query adds may_create_projects; locked_out is set below, from django-axes's records.
    users = cast(
        "list[WithAnnotations[User, AccountMarks]]",
        list(
            get_user_model()
            .objects.annotate(may_create_projects=Exists(may_create))
            .order_by("username")
        ),
    )
    locked = {lockout["username"] for lockout in login_lockouts()}
    for user in users:
        user.locked_out = user.get_username() in locked
    return users


def tool_summaries(project: Project) -> dict[str, str]:
    """What each tool of the project's ToolEmu toolkits does, by the name agents call it."""
    summaries: dict[str, str] = {}
    for tools in project.toolkits.values_list("tools", flat=True):
        summaries.update(tools)
    return summaries


# A project's distinct source agents, walking the record_by_source_agent index from one agent to
# the next: an index probe per agent, where DISTINCT reads an index entry per record (and most
# projects' records have no agent at all).
SOURCE_AGENTS_SQL = """
WITH RECURSIVE agents(agent) AS (
    SELECT MIN(source_agent) FROM {table} WHERE project_id = %(project)s AND source_agent > ''
    UNION ALL
    SELECT (
        SELECT MIN(source_agent) FROM {table}
        WHERE project_id = %(project)s AND source_agent > agents.agent
    )
    FROM agents WHERE agent IS NOT NULL
)
SELECT agent FROM agents WHERE agent IS NOT NULL
"""


def source_agents(project: Project) -> list[str]:
    """The agents (models) the project's records name as their source, in order."""
    sql = SOURCE_AGENTS_SQL.format(table=connection.ops.quote_name(Record._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, {"project": project.pk})
        return [agent for (agent,) in cursor.fetchall()]


def usernames(ids: list[int]) -> dict[int, str]:
    users = get_user_model()
    return dict(users.objects.filter(pk__in=ids).values_list("pk", users.USERNAME_FIELD))
