"""Reads: querysets and small summaries the views and API share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import Count, F, QuerySet, Sum

from curation.models import ImportBatch, Membership, Project, Record, RecordSearchText, Scenario
from curation.search_text import word_pairs_of

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def projects_for_user(user: AbstractBaseUser) -> QuerySet[Project]:
    """The projects `user` is a member of; superusers see every project."""
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def memberships_of(project: Project) -> QuerySet[Membership]:
    return project.memberships.select_related("user").order_by("user__username", "role")


def record_counts_by_category(project: Project) -> list[dict[str, object]]:
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

    `gold_label` is "safe", "unsafe" or "none" (records without a gold label); `text` matches
    anywhere in the interaction, case-insensitively.
    """
    records = Record.objects.filter(project=project)
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
    if text:
        records = records.filter(id__in=_text_matches(project, text))
    order = F("id")
    if category or scenario:
        # Imports keep a category's and a scenario's records together, while PostgreSQL assumes
        # matches are spread evenly: asked for the first page in id order, it walks every
        # record by id and skips those of other categories (50 ms over 100,000 records). "id + 0"
        # is the same order, which no index gives, so it reads the filter's index and sorts the
        # matches instead (5 to 25 ms).
        order = order + 0
    return records.select_related("category", "scenario").order_by(order)


# A text search lists at most this many records (the callers say when there are more).
SEARCH_MATCH_LIMIT = 500


def _text_matches(project: Project, text: str) -> list[int]:
    """Ids of up to SEARCH_MATCH_LIMIT + 1 records whose text contains `text`.

    Looked up on their own, without order, then listed in order: PostgreSQL cannot estimate how
    many records a LIKE matches, and given the whole query it walks every record in id order,
    looking each one's text up (600 ms for a rare word over 100,000 records). The trigram index
    on the word pairs finds the candidates directly, and the limit stops it early when a word is
    everywhere.

    The LIKE on the text decides; the one on the word pairs narrows the candidates and never
    loses a match. Where a record's text contains `text`, the query's first word ends a word of
    the text, each middle word is a whole word of it and the last starts one, neighbours in that
    order; so the query's own word pairs ("door open now" gives "dooropen opennow") are a
    substring of the record's. A single word lies within one of the text's words, and so within
    its pairs. What the pairs add are trigrams across the gaps between words ("oro" and "rop" in
    "dooropen"), which few records have where "door" and "open" are in nearly all.
    """
    # The search text is stored lower-cased, so a plain LIKE finds it whatever its case.
    text = text.lower()
    pairs = word_pairs_of(text)
    sample = _first_records(SAMPLE_SQL, project, text, pairs, rows=SAMPLE_ROWS)
    found = [record_id for record_id, matches in sample if matches]
    if len(sample) < SAMPLE_ROWS:
        # The sample holds every record of the project.
        return found
    if len(found) * 2 >= SAMPLE_ROWS:
        first = _first_records(FIRST_MATCHES_SQL, project, text, pairs, rows=FIRST_ROWS)
        found = [record_id for (record_id,) in first]
        if len(found) > SEARCH_MATCH_LIMIT:
            return found
    matches = RecordSearchText.objects.filter(project=project, text__contains=text)
    if pairs:
        matches = matches.filter(word_pairs__contains=pairs)
    return list(matches.values_list("record_id", flat=True)[: SEARCH_MATCH_LIMIT + 1])


# A word in most records is found sooner by reading records in turn than through the trigram
# index, which gathers every candidate before PostgreSQL reads the first (87,000 of them for a
# word in nearly every record: 35 ms). So a search first reads the project's first SAMPLE_ROWS
# records; when the query is in at least half of them, it reads up to FIRST_ROWS records in turn,
# and takes the index only when those hold too few matches to fill the list. Over 100,000
# records, the sample costs any other search about 2 ms; a word in 87% of the records was found
# in 15 ms this way, against 64 ms through the index.
SAMPLE_ROWS = 100
FIRST_ROWS = 1000
# The project's first records by id, with their search text where it is indexed already. The
# LIMIT keeps PostgreSQL from taking the trigram index for the LIKEs around, as it would for
# their estimate.
FIRST_RECORDS_SQL = """
    SELECT first_records.id AS record_id, search.word_pairs, search.text
    FROM (
        SELECT id FROM curation_record WHERE project_id = %(project)s ORDER BY id LIMIT %(rows)s
    ) first_records
    LEFT JOIN curation_recordsearchtext search ON search.record_id = first_records.id
    LIMIT %(rows)s
"""
MATCHES_SQL = "word_pairs LIKE %(pairs)s ESCAPE '\\' AND text LIKE %(text)s ESCAPE '\\'"
# Every record read, and whether it matches.
SAMPLE_SQL = f"SELECT record_id, {MATCHES_SQL} FROM ({FIRST_RECORDS_SQL}) first_rows"  # noqa: S608 (constants)
# The matches alone, up to SEARCH_MATCH_LIMIT + 1.
FIRST_MATCHES_SQL = (
    f"SELECT record_id FROM ({FIRST_RECORDS_SQL}) first_rows "  # noqa: S608 (constants)
    f"WHERE {MATCHES_SQL} LIMIT %(limit)s"
)


def _first_records(
    statement: str, project: Project, text: str, pairs: str, *, rows: int
) -> list[tuple]:
    """The rows `statement` (SAMPLE_SQL or FIRST_MATCHES_SQL) reads of the project's first
    `rows` records, matching `text`; a record not yet searchable does not match."""

    def containing(value: str) -> str:
        return f"%{connection.ops.prep_for_like_query(value)}%"

    with connection.cursor() as cursor:
        cursor.execute(
            statement,
            {
                "project": project.pk,
                "rows": rows,
                "pairs": containing(pairs),
                "text": containing(text),
                "limit": SEARCH_MATCH_LIMIT + 1,
            },
        )
        return cursor.fetchall()


def records_not_yet_searchable(project: Project) -> int:
    """Imported records whose text the search cannot find yet: indexing follows an import."""
    pending = project.import_batches.filter(
        state=ImportBatch.State.SUCCEEDED, searchable_at__isnull=True
    ).aggregate(records=Sum("created_count"))
    return pending["records"] or 0


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
