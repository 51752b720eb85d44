"""The review app takes over its models from judging (judging 0011): their tables exist
already, under their old names, so this only tells Django where the models now live."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import judging.models.runs


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("curation", "0018_record_filters_by_category_with_label_counts"),
        # The tables, made by judging's migrations under judging's names.
        ("judging", "0010_merge_versions_workers_scores_and_record_list"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="PendingCheck",
                    fields=[
                        (
                            "record",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                primary_key=True,
                                related_name="+",
                                serialize=False,
                                to="curation.record",
                            ),
                        ),
                        ("marked_at", models.DateTimeField()),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="curation.project",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "judging_pendingcheck",
                    },
                ),
                migrations.CreateModel(
                    name="Adjudication",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "label",
                            models.CharField(
                                choices=[("safe", "Safe"), ("unsafe", "Unsafe")], max_length=10
                            ),
                        ),
                        ("risk_description", models.TextField(blank=True)),
                        ("reason", models.TextField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="adjudications",
                                to="curation.project",
                            ),
                        ),
                        (
                            "record",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="adjudications",
                                to="curation.record",
                            ),
                        ),
                        (
                            "reviewer",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="adjudications",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "judging_adjudication",
                        "ordering": ["record", "-created_at"],
                        "indexes": [
                            models.Index(
                                fields=["record", "-created_at"], name="adjudication_latest"
                            ),
                            models.Index(
                                fields=["project", "record"], name="adjudication_by_project"
                            ),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Disagreement",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("judge_vs_humans", "Judge vs human consensus"),
                                    ("annotators_split", "Annotators split"),
                                    ("judge_vs_judge", "Judge vs judge"),
                                    (
                                        "humans_vs_gold",
                                        "Human consensus vs the source's gold label",
                                    ),
                                    ("score_gap", "Scores 2 or more apart"),
                                    ("requested", "Sent for adjudication by a manager"),
                                ],
                                max_length=20,
                            ),
                        ),
                        ("labels", judging.models.runs.PlainJSONField(default=list)),
                        ("weight", models.PositiveIntegerField(default=0)),
                        (
                            "state",
                            models.CharField(
                                choices=[("open", "Open"), ("resolved", "Resolved")],
                                default="open",
                                max_length=10,
                            ),
                        ),
                        ("resolved_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "project",
                            models.ForeignKey(
                                db_constraint=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="disagreements",
                                to="curation.project",
                            ),
                        ),
                        (
                            "record",
                            models.ForeignKey(
                                db_constraint=False,
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="disagreements",
                                to="curation.record",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "judging_disagreement",
                        "ordering": ["-weight", "created_at"],
                        "indexes": [
                            models.Index(
                                condition=models.Q(("state", "open")),
                                fields=["project", "-weight", "created_at"],
                                name="disagreement_queue",
                            ),
                            models.Index(
                                condition=models.Q(("state", "open")),
                                fields=["project", "record"],
                                name="disagreement_open_records",
                            ),
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("record", "kind"), name="disagreement_once_per_kind"
                            )
                        ],
                    },
                ),
            ],
        ),
    ]
