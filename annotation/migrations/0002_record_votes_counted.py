"""Count the votes of the labels already given onto their records (curation 0016 added the
columns): from here on the label services move them with each label."""

from django.db import migrations

COUNT_VOTES = """
UPDATE curation_record SET
    safe_votes = (
        SELECT COUNT(*) FROM curation_annotation a
        WHERE a.record_id = curation_record.id AND a.verdict = 'safe'
    ),
    unsafe_votes = (
        SELECT COUNT(*) FROM curation_annotation a
        WHERE a.record_id = curation_record.id AND a.verdict = 'unsafe'
    )
WHERE annotation_count > 0
"""


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0001_initial"),
        ("curation", "0016_record_label_counts"),
    ]

    # Going back, the columns are dropped by curation 0016's own reversal.
    operations = [migrations.RunSQL(COUNT_VOTES, reverse_sql=migrations.RunSQL.noop)]
