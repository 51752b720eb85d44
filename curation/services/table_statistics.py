"""Fresh planner statistics after a job writes many rows.

PostgreSQL plans every query from statistics of each table that autovacuum refreshes some time
after the table changed, and never where autovacuum is off. Until then, a project's first import
of tens of thousands of records is planned as the table it was before: the check that an
import's records are all indexed (search._mark_batches_searchable) was planned as a nested loop
over a search table taken for empty and was still running after 19 minutes, and an annotator's
claim on a table never analysed compared each record with all of their leases (30 ms instead of
under 1; docs/benchmarks.md). So a job that wrote many rows analyses the tables it wrote before
anything is planned on them: ANALYZE reads a sample of at most 30,000 rows of a table, a fraction
of a second.

Outside a transaction, as a job runs, it vacuums them too (VACUUM (ANALYZE)): until a table's
new pages are marked all-visible, which autovacuum also does only later, PostgreSQL cannot count
or list a project's records from an index alone and reads the table instead. Counting the fifth
of five projects of 50,000 records took 120 ms by a parallel scan of the table and 9 ms from an
index after a VACUUM of 0.5 s (bench/many_projects_bench.py). A VACUUM skips the pages marked
already, so it costs what the write added.

SQLite plans without statistics unless ANALYZE was run once, which the studio never does, so
its plans do not go stale: nothing is done there.
"""

from __future__ import annotations

from django.db import connection, models

# Rows written by one job from which its tables are analysed: fewer change the statistics of a
# large table little, and a small table is planned well whatever its statistics.
LARGE_WRITE = 10_000


def analyse_after_large_write(rows: int, *written: type[models.Model]) -> None:
    """Refresh PostgreSQL's statistics of the `written` tables if `rows` is a large write, and
    their visibility map where no transaction is open (VACUUM cannot run in one)."""
    if rows < LARGE_WRITE or connection.vendor != "postgresql":
        return
    command = "ANALYZE" if connection.in_atomic_block else "VACUUM (ANALYZE)"
    with connection.cursor() as cursor:
        for model in written:
            cursor.execute(f"{command} {connection.ops.quote_name(model._meta.db_table)}")
