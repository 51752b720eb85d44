"""A trigram index for the record list's text search, on PostgreSQL only.

The search filters `search_text LIKE '%term%'` on a lower-cased column; without this index that
is a scan of every record. SQLite (the embedded setup) has no such index type and small data.
"""

from __future__ import annotations

from django.db import migrations


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    schema_editor.execute(
        "CREATE INDEX IF NOT EXISTS record_search_trgm ON curation_record "
        "USING gin (search_text gin_trgm_ops)"
    )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("DROP INDEX IF EXISTS record_search_trgm")


class Migration(migrations.Migration):
    dependencies = [("curation", "0001_initial")]

    operations = [migrations.RunPython(create_index, drop_index)]
