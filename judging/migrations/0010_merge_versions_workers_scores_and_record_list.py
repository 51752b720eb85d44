# Joins migrations written side by side; each changes its own tables and columns, so their
# order does not matter.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0008_judge_versions_and_panels"),
        ("judging", "0008_runs_spread_over_workers_with_limits_and_costs"),
        ("judging", "0008_verdict_scores_index"),
        ("judging", "0009_record_list_filters"),
    ]

    operations = []
