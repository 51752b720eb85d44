"""PostgreSQL only: a trigram index for the record list's text search, lz4 for raw records, and
the foreign key that ties a record's scenario and category together.

The search filters `text LIKE '%term%'` on lower-cased text; without this index that is a scan
of every record's text (0004 moves the index to the text's word pairs). Records' raw JSON is
most of what an import writes, and lz4 compresses it several times faster than PostgreSQL's
default (pglz), where the server was built with it.
One composite foreign key checks that a record's scenario exists and belongs to its category,
where two would check each exists, at twice the cost for every imported row. SQLite (the embedded setup) has neither and holds small data.
"""

from __future__ import annotations

from django.db import migrations


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    schema_editor.execute(
        "CREATE INDEX IF NOT EXISTS record_search_trgm ON curation_recordsearchtext "
        "USING gin (text gin_trgm_ops)"
    )
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        (has_lz4,) = cursor.fetchone()
    if has_lz4:
        schema_editor.execute("ALTER TABLE curation_record ALTER COLUMN raw SET COMPRESSION lz4")
    schema_editor.execute(
        "ALTER TABLE curation_record ADD CONSTRAINT record_scenario_in_category "
        "FOREIGN KEY (scenario_id, category_id) REFERENCES curation_scenario (id, category_id) "
        "DEFERRABLE INITIALLY DEFERRED"
    )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS record_search_trgm")
    schema_editor.execute(
        "ALTER TABLE curation_record DROP CONSTRAINT IF EXISTS record_scenario_in_category"
    )
    schema_editor.execute("ALTER TABLE curation_record ALTER COLUMN raw SET COMPRESSION default")


class Migration(migrations.Migration):
    dependencies = [("curation", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
