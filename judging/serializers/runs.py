"""What the API shows of runs and verdicts, and what it accepts to start or import a run."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from curation.serializers import blank_safety_label_field, id_field
from judging.models import (
    Judge,
    JudgeRun,
    Panel,
    Verdict,
)
from judging.selectors import run_top_errors
from judging.services.runs import run_progress
from judging.services.verdict_import import ID_FIELDS, IMPORTABLE

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class RunSerializer(serializers.ModelSerializer):
    judge: serializers.PrimaryKeyRelatedField[Judge] = serializers.PrimaryKeyRelatedField(
        read_only=True
    )
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    done = serializers.SerializerMethodField(help_text="Records judged so far.")
    seconds_left = serializers.SerializerMethodField(
        help_text="Seconds left at the recent rate, while the run goes on."
    )
    outcome = serializers.ChoiceField(
        read_only=True,
        choices=[
            "pending",
            "running",
            "cancelling",
            "cancelled",
            "finished",
            "finished_with_errors",
            "failed",
            "budget_reached",
        ],
        help_text=(
            "The state as the pages show it: a run that ended is finished, finished with errors "
            "(some records got an error verdict), failed (see `error`), cancelled, or stopped "
            "when its cost reached its budget."
        ),
    )
    outcome_display = serializers.CharField(read_only=True)
    cost = serializers.DecimalField(
        max_digits=16,
        decimal_places=6,
        read_only=True,
        allow_null=True,
        help_text="What its tokens so far cost at the run's prices; null when it is not priced.",
    )
    estimate = serializers.JSONField(
        read_only=True,
        help_text="Expected before it started, from its records' sizes: tokens_in, tokens_out, "
        "cost (null when not priced) and the records sampled.",
    )

    class Meta:
        model = JudgeRun
        fields = [
            "id",
            "name",
            "source",
            "judge",
            "judge_snapshot",
            "selection",
            "state",
            "outcome",
            "outcome_display",
            "retry_errors",
            "total",
            "done",
            "valid_count",
            "invalid_count",
            "error_count",
            "tokens_in",
            "tokens_out",
            "price_in_per_million",
            "price_out_per_million",
            "cost",
            "budget",
            "estimate",
            "rate",
            "seconds_left",
            "error",
            "report",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "heartbeat_at",
        ]
        read_only_fields = fields

    def get_done(self, run: JudgeRun) -> int:
        return run.done_count

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_seconds_left(self, run: JudgeRun) -> float | None:
        return run_progress(run).seconds_left


class RunErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    records = serializers.IntegerField()


class RunDetailSerializer(RunSerializer):
    top_errors = serializers.SerializerMethodField(
        help_text="The most frequent error texts of the run's verdicts, with how many records each."
    )

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "top_errors"]
        read_only_fields = fields

    @extend_schema_field(RunErrorSerializer(many=True))
    def get_top_errors(self, run: JudgeRun) -> list[dict[str, Any]]:
        rows = run_top_errors(run.pk)
        return [{"error": error, "records": count} for error, count in rows]


class RunCreateSerializer(serializers.Serializer):
    judge = serializers.IntegerField(help_text="The judge's id.")
    name = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    categories = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="Category names; empty for every category.",
    )
    only_labelled = serializers.BooleanField(required=False, default=False)
    sample = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0, default=None)
    budget = serializers.DecimalField(
        max_digits=12,
        decimal_places=4,
        required=False,
        allow_null=True,
        min_value=Decimal("0.0001"),
        default=None,
        help_text="The most the run may cost, at its connection's prices: it stops there.",
    )


class PanelSerializer(RunSerializer):
    """A panel: a run whose verdicts were combined from its members' (see judging/services/
    panels.py for the rules)."""

    rule = serializers.ChoiceField(source="panel.rule", choices=Panel.Rule.choices, read_only=True)
    members = serializers.SerializerMethodField(help_text="The member runs' ids.")

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "rule", "members"]

    def get_members(self, run: JudgeRun) -> list[int]:
        return sorted(member.pk for member in run.panel.members.all())


class PanelCreateSerializer(serializers.Serializer):
    runs = serializers.ListField(
        child=id_field(),
        min_length=2,
        max_length=50,
        help_text="Ids of two or more ended runs of safety labels of the project.",
    )
    rule = serializers.ChoiceField(choices=Panel.Rule.choices)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")


class VerdictSerializer(serializers.ModelSerializer):
    external_id = serializers.CharField(source="record.external_id", read_only=True)

    class Meta:
        model = Verdict
        fields = [
            "id",
            "record",
            "external_id",
            "parse_status",
            "label",
            "score",
            "score_label",
            "analysis",
            "raw_output",
            "error",
            "tokens_in",
            "tokens_out",
            "latency_ms",
            "attempts",
            "created_at",
        ]
        read_only_fields = fields

    def get_fields(self) -> dict[str, serializers.Field]:
        # Not declared in the class body, where `label` is the serializer's own label.
        fields = super().get_fields()
        fields["label"] = blank_safety_label_field(
            help_text="The safety label of a label protocol; empty for a score, an invalid "
            "answer or an error."
        )
        return fields


class VerdictImportSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="JSONL, one evaluation a line.")
    protocol = serializers.ChoiceField(choices=list(IMPORTABLE.items()))
    name = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    id_field = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        default="",
        help_text=f"The field naming the record; empty: the first of {', '.join(ID_FIELDS)}.",
    )
