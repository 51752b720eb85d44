"""The record list's text search: the trigram index moves from each record's text to its word
pairs, so that a phrase of common words ("door open", 228 ms at p95 over 100,000 records) is
narrowed by the trigrams across the gap between its words. The search still decides on the text.

Existing search texts get their word pairs here. The trigram index and the columns' storage are
PostgreSQL's only, like the index this one replaces (see 0002); the index is dropped before the
backfill and built after it, so that the backfill's updates do not maintain it row by row.
"""

from __future__ import annotations

from itertools import pairwise

from django.db import migrations, models

# Search texts read and written at a time, so that memory does not grow with the project.
BACKFILL_CHUNK = 2000


def word_pairs_of(text):
    # A copy of curation.search_text.word_pairs_of as it is at this migration: a migration
    # must compute what the code of its time did, whatever that function becomes later.
    words = text.split()
    if len(words) == 1:
        return words[0]
    return " ".join(first + second for first, second in pairwise(words))


def backfill_word_pairs(apps, schema_editor):
    RecordSearchText = apps.get_model("curation", "RecordSearchText")
    after = 0
    while True:
        chunk = list(
            RecordSearchText.objects.filter(pk__gt=after)
            .order_by("pk")
            .values_list("pk", "text")[:BACKFILL_CHUNK]
        )
        if not chunk:
            return
        # Plain UPDATEs sent together rather than bulk_update, whose CASE over the chunk's ids
        # took three times the Python time (53 s against 15 s for 100,000 search texts).
        with schema_editor.connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE curation_recordsearchtext SET word_pairs = %s WHERE record_id = %s",
                [(word_pairs_of(text), pk) for pk, text in chunk],
            )
        after = chunk[-1][0]


def drop_text_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX record_search_trgm")


def create_text_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX record_search_trgm ON curation_recordsearchtext "
            "USING gin (text gin_trgm_ops)"
        )


def keep_word_pairs_inline(apps, schema_editor):
    """Every candidate the index offers has its word pairs read back and matched, so they stay in
    the row (storage MAIN), and in lz4 where the server has it, which decompresses faster: the
    text then goes out of line, read only for the candidates whose pairs match. "door open"
    took 33 ms instead of 63 ms this way over 100,000 records (see docs/benchmarks.md)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "ALTER TABLE curation_recordsearchtext ALTER COLUMN word_pairs SET STORAGE MAIN"
    )
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        (has_lz4,) = cursor.fetchone()
    if has_lz4:
        schema_editor.execute(
            "ALTER TABLE curation_recordsearchtext ALTER COLUMN word_pairs SET COMPRESSION lz4, "
            "ALTER COLUMN text SET COMPRESSION lz4"
        )


def reset_text_compression(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE curation_recordsearchtext ALTER COLUMN text SET COMPRESSION default"
        )


def create_word_pairs_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX search_word_pairs_trgm ON curation_recordsearchtext "
            "USING gin (word_pairs gin_trgm_ops)"
        )


def drop_word_pairs_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX search_word_pairs_trgm")


class Migration(migrations.Migration):
    dependencies = [("curation", "0003_record_queue_counts")]

    operations = [
        migrations.RunPython(drop_text_index, create_text_index),
        migrations.AddField(
            model_name="recordsearchtext",
            name="word_pairs",
            field=models.TextField(default=""),
            preserve_default=False,
        ),
        migrations.RunPython(keep_word_pairs_inline, reset_text_compression),
        migrations.RunPython(backfill_word_pairs, migrations.RunPython.noop),
        migrations.RunPython(create_word_pairs_index, drop_word_pairs_index),
    ]
