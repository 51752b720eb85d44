# Joins migrations written side by side; each changes its own tables and columns, so their
# order does not matter.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0016_record_label_counts"),
        ("curation", "0016_record_sources_index"),
    ]

    operations = []
