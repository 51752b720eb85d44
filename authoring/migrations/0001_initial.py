"""The authoring app takes over its models from curation (curation 0006): their tables exist
already, under their old names, so this only tells Django where the models now live."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import authoring.models


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
                    name="RiskCategory",
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
                        ("slug", models.SlugField(max_length=80)),
                        ("name", models.CharField(max_length=100)),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="risk_categories",
                                to="curation.project",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name_plural": "risk categories",
                        "db_table": "curation_riskcategory",
                        "ordering": ["position", "name"],
                    },
                ),
                migrations.CreateModel(
                    name="RubricCheck",
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
                        ("text", models.CharField(max_length=300)),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                        ("active", models.BooleanField(default=True)),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="rubric_checks",
                                to="curation.project",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_rubriccheck",
                        "ordering": ["position", "id"],
                    },
                ),
                migrations.CreateModel(
                    name="Task",
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
                        ("external_id", models.CharField(max_length=200)),
                        ("sector", models.CharField(max_length=200)),
                        ("occupation", models.CharField(max_length=200)),
                        ("prompt", models.TextField()),
                        ("messages", models.JSONField(blank=True, default=list)),
                        ("malicious_motivation", models.TextField(blank=True)),
                        ("risk_outcome", models.TextField(blank=True)),
                        ("unsafe_criteria", models.TextField(blank=True)),
                        ("safe_criteria", models.TextField(blank=True)),
                        (
                            "state",
                            models.CharField(
                                choices=[
                                    ("draft", "Draft"),
                                    ("submitted", "Submitted"),
                                    ("in_review", "In review"),
                                    ("changes_requested", "Changes requested"),
                                    ("approved", "Approved"),
                                    ("rejected", "Rejected"),
                                    ("withdrawn", "Withdrawn"),
                                ],
                                default="draft",
                                max_length=20,
                            ),
                        ),
                        ("version", models.PositiveIntegerField(default=1)),
                        ("round", models.PositiveIntegerField(default=0)),
                        ("submitted_at", models.DateTimeField(blank=True, null=True)),
                        ("decided_at", models.DateTimeField(blank=True, null=True)),
                        ("review_expires_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "author",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="authored_tasks",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "project",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="tasks",
                                to="curation.project",
                            ),
                        ),
                        (
                            "reviewer",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="tasks_in_review",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "risk_category",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="tasks",
                                to="authoring.riskcategory",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_task",
                        "ordering": ["-updated_at"],
                    },
                ),
                migrations.CreateModel(
                    name="ReferenceFile",
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
                            "file",
                            models.FileField(
                                max_length=400, upload_to=authoring.models.reference_file_path
                            ),
                        ),
                        ("name", models.CharField(max_length=200)),
                        ("content_type", models.CharField(max_length=100)),
                        ("size", models.PositiveBigIntegerField()),
                        ("sha256", models.CharField(max_length=64)),
                        (
                            "uploaded_by",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "task",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="reference_files",
                                to="authoring.task",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_referencefile",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="TaskRevision",
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
                        ("number", models.PositiveIntegerField()),
                        ("content", models.JSONField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "created_by",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "task",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="revisions",
                                to="authoring.task",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_taskrevision",
                        "ordering": ["task", "number"],
                    },
                ),
                migrations.CreateModel(
                    name="Review",
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
                            "decision",
                            models.CharField(
                                choices=[
                                    ("approve", "Approve"),
                                    ("request_changes", "Request changes"),
                                    ("reject", "Reject"),
                                ],
                                max_length=20,
                            ),
                        ),
                        ("comments", models.JSONField(blank=True, default=dict)),
                        ("summary", models.TextField(blank=True)),
                        ("rubric", models.JSONField(blank=True, default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "reviewer",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="task_reviews",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "task",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="reviews",
                                to="authoring.task",
                            ),
                        ),
                        (
                            "revision",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="reviews",
                                to="authoring.taskrevision",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "curation_review",
                        "ordering": ["task", "created_at"],
                    },
                ),
                migrations.AddConstraint(
                    model_name="riskcategory",
                    constraint=models.UniqueConstraint(
                        fields=("project", "slug"), name="riskcategory_unique_slug"
                    ),
                ),
                migrations.AddIndex(
                    model_name="task",
                    index=models.Index(
                        fields=["project", "state", "submitted_at"], name="task_queue"
                    ),
                ),
                migrations.AddIndex(
                    model_name="task",
                    index=models.Index(
                        fields=["project", "author", "state"], name="task_by_author"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="task",
                    constraint=models.UniqueConstraint(
                        fields=("project", "external_id"), name="task_unique_external_id"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="referencefile",
                    constraint=models.UniqueConstraint(
                        fields=("task", "name"), name="referencefile_unique_name"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="taskrevision",
                    constraint=models.UniqueConstraint(
                        fields=("task", "number"), name="taskrevision_unique_number"
                    ),
                ),
                migrations.AddIndex(
                    model_name="review",
                    index=models.Index(fields=["task", "created_at"], name="review_by_task"),
                ),
                migrations.AddConstraint(
                    model_name="review",
                    constraint=models.UniqueConstraint(
                        fields=("revision", "reviewer"), name="review_once_per_revision"
                    ),
                ),
            ],
        ),
    ]
