"""The annotation app takes over its models from curation (curation 0006): their tables exist
already, under their old names, so this only tells Django where the models now live."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("curation", "0005_record_filters_with_gold_label"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="GuidelineVersion",
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
                        ("number", models.PositiveIntegerField()),
                        ("text", models.TextField()),
                        (
                            "created_by",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="guideline_versions",
                                to="curation.project",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_guidelineversion",
                        "ordering": ["project", "-number"],
                    },
                ),
                migrations.CreateModel(
                    name="Annotation",
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
                            "verdict",
                            models.CharField(
                                choices=[
                                    ("safe", "Safe"),
                                    ("unsafe", "Unsafe"),
                                    ("unsure", "Unsure"),
                                ],
                                max_length=10,
                            ),
                        ),
                        ("risk_description", models.TextField(blank=True)),
                        ("safety_score", models.PositiveSmallIntegerField(blank=True, null=True)),
                        (
                            "helpfulness_score",
                            models.PositiveSmallIntegerField(blank=True, null=True),
                        ),
                        ("evidence_turns", models.JSONField(blank=True, default=list)),
                        ("time_spent_ms", models.PositiveIntegerField(default=0)),
                        ("version", models.PositiveIntegerField(default=1)),
                        (
                            "annotator",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="annotations",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="annotations",
                                to="curation.project",
                            ),
                        ),
                        (
                            "record",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="annotations",
                                to="curation.record",
                            ),
                        ),
                        (
                            "risk_types",
                            models.ManyToManyField(
                                blank=True, related_name="annotations", to="curation.risktype"
                            ),
                        ),
                        (
                            "guideline_version",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="annotations",
                                to="annotation.guidelineversion",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_annotation",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="Lease",
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
                            "state",
                            models.CharField(
                                choices=[
                                    ("active", "Active"),
                                    ("submitted", "Submitted"),
                                    ("skipped", "Skipped"),
                                    ("expired", "Expired"),
                                ],
                                default="active",
                                max_length=10,
                            ),
                        ),
                        ("expires_at", models.DateTimeField()),
                        ("skip_reason", models.TextField(blank=True)),
                        ("draft", models.JSONField(blank=True, default=dict)),
                        ("opened_at", models.DateTimeField()),
                        (
                            "annotator",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="leases",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="leases",
                                to="curation.project",
                            ),
                        ),
                        (
                            "record",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="leases",
                                to="curation.record",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_lease",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.AddConstraint(
                    model_name="guidelineversion",
                    constraint=models.UniqueConstraint(
                        fields=("project", "number"), name="guideline_unique_number"
                    ),
                ),
                migrations.AddIndex(
                    model_name="annotation",
                    index=models.Index(
                        fields=["project", "annotator", "-created_at"], name="annotation_mine"
                    ),
                ),
                migrations.AddIndex(
                    model_name="annotation",
                    index=models.Index(fields=["project", "created_at"], name="annotation_by_day"),
                ),
                migrations.AddConstraint(
                    model_name="annotation",
                    constraint=models.UniqueConstraint(
                        fields=("record", "annotator"), name="annotation_once_per_annotator"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="annotation",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("safety_score__isnull", True),
                            ("safety_score__lte", 3),
                            _connector="OR",
                        ),
                        name="annotation_safety_score_0_3",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="annotation",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("helpfulness_score__isnull", True),
                            ("helpfulness_score__lte", 3),
                            _connector="OR",
                        ),
                        name="annotation_helpfulness_score_0_3",
                    ),
                ),
                migrations.AddIndex(
                    model_name="lease",
                    index=models.Index(
                        condition=models.Q(("state", "active")),
                        fields=["expires_at"],
                        name="lease_active_expiry",
                    ),
                ),
                migrations.AddIndex(
                    model_name="lease",
                    index=models.Index(
                        fields=["annotator", "project", "-created_at"], name="lease_by_annotator"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="lease",
                    constraint=models.UniqueConstraint(
                        fields=("record", "annotator"), name="lease_once_per_annotator"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="lease",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("state", "active")),
                        fields=("project", "annotator"),
                        name="lease_one_active",
                    ),
                ),
            ],
        ),
    ]
