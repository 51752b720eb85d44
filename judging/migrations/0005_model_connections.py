"""Model connections, owned by site administrators, replace the address and key variable that
each judge named: the judges and the run snapshots of every address and variable met are moved
onto one connection per pair, which keeps every run and verdict."""

from __future__ import annotations

from typing import Any

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def judges_to_connections(apps: Any, schema_editor: Any) -> None:
    Judge = apps.get_model("judging", "Judge")
    JudgeRun = apps.get_model("judging", "JudgeRun")
    ModelConnection = apps.get_model("judging", "ModelConnection")
    # (base_url, api_key_env) -> the models and calls at once asked of it.
    wanted: dict[tuple[str, str], dict[str, Any]] = {}

    def want(base_url: str, api_key_env: str, model: str, concurrency: int) -> None:
        entry = wanted.setdefault((base_url, api_key_env), {"models": [], "concurrency": 1})
        if model and model not in entry["models"]:
            entry["models"].append(model)
        entry["concurrency"] = max(entry["concurrency"], concurrency)

    judges = list(Judge.objects.order_by("pk"))
    for judge in judges:
        want(judge.base_url, judge.api_key_env, judge.model, judge.concurrency)
    runs = [
        run
        for run in JudgeRun.objects.order_by("pk").only("pk", "judge_snapshot")
        if "base_url" in (run.judge_snapshot or {})
    ]
    for run in runs:
        snapshot = run.judge_snapshot
        want(
            snapshot["base_url"],
            snapshot.get("api_key_env", ""),
            snapshot.get("model", ""),
            snapshot.get("concurrency", 1),
        )
    # Named by number, not by address or variable: managers see the names. Private addresses
    # stay refused until an administrator allows them, connection by connection.
    connections = {
        pair: ModelConnection.objects.create(
            name=f"Connection {number}",
            base_url=pair[0],
            api_key_env=pair[1],
            model_names="\n".join(entry["models"]),
            max_concurrency=entry["concurrency"],
        )
        for number, (pair, entry) in enumerate(wanted.items(), start=1)
    }
    for judge in judges:
        judge.connection = connections[judge.base_url, judge.api_key_env]
        judge.save(update_fields=["connection"])
    for run in runs:
        snapshot = dict(run.judge_snapshot)
        connection = connections[snapshot.pop("base_url"), snapshot.pop("api_key_env", "")]
        snapshot["connection_id"] = connection.pk
        snapshot["connection"] = connection.name
        run.judge_snapshot = snapshot
        run.save(update_fields=["judge_snapshot"])


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0004_pendingcheck"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ModelConnection",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("name", models.CharField(max_length=100, unique=True)),
                ("base_url", models.URLField(max_length=500)),
                (
                    "api_key_env",
                    models.CharField(
                        blank=True,
                        help_text=(
                            "The environment variable holding the key where the workers run; "
                            "empty for endpoints without keys."
                        ),
                        max_length=100,
                        validators=[
                            django.core.validators.RegexValidator(
                                "\\A[A-Za-z_][A-Za-z0-9_]*\\Z",
                                "The name of an environment variable.",
                            )
                        ],
                    ),
                ),
                (
                    "model_names",
                    models.TextField(help_text="The models judges may use, one a line."),
                ),
                (
                    "max_concurrency",
                    models.PositiveSmallIntegerField(
                        default=8,
                        help_text="The most calls a run of a judge has in flight at once.",
                    ),
                ),
                (
                    "requests_per_minute",
                    models.PositiveIntegerField(
                        blank=True,
                        help_text=(
                            "Requests sent per minute, all runs and workers together; empty: "
                            "no limit."
                        ),
                        null=True,
                    ),
                ),
                (
                    "allow_private",
                    models.BooleanField(
                        default=False,
                        help_text=(
                            "Allow loopback, link-local and private network addresses (a local "
                            "vLLM or Ollama). Leave off for hosted endpoints."
                        ),
                        verbose_name="may reach private addresses",
                    ),
                ),
            ],
            options={"ordering": ["name"]},
        ),
        migrations.CreateModel(
            name="ConnectionCheck",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "state",
                    models.CharField(
                        choices=[
                            ("pending", "Waiting for a worker"),
                            ("running", "Calling the endpoint"),
                            ("succeeded", "Connected"),
                            ("failed", "Failed"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("message", models.TextField(blank=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "connection",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="checks",
                        to="judging.modelconnection",
                    ),
                ),
                ("model", models.CharField(max_length=200)),
                (
                    "judge",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="connection_checks",
                        to="judging.judge",
                    ),
                ),
                (
                    "requested_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["-created_at"]},
        ),
        migrations.AddField(
            model_name="judge",
            name="connection",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judges",
                to="judging.modelconnection",
            ),
        ),
        migrations.RunPython(judges_to_connections, migrations.RunPython.noop, elidable=False),
    ]
