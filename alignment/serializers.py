"""What the API shows of a judge's versions and their evaluations, and what it accepts to make
a version or start an evaluation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from alignment import selectors
from curation.serializers import id_field
from judging.models import JudgeEvaluation, JudgeVersion
from reports.serializers import QualitySerializer

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class VersionSerializer(serializers.ModelSerializer):
    """A version of a judge's prompt. Version 1 is the prompt as written: no worked examples,
    made by nobody."""

    picked = serializers.ChoiceField(
        choices=JudgeVersion.Picked.choices,
        allow_blank=True,
        read_only=True,
        help_text="How its worked examples were chosen; empty for version 1.",
    )
    examples = serializers.JSONField(
        read_only=True,
        help_text="The settled cases it quotes, as copied in when it was made: record_id, "
        "external_id, category, scenario, profile, goal, interaction, label, reason.",
    )
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    active = serializers.SerializerMethodField(help_text="Whether the judge's runs start with it.")

    class Meta:
        model = JudgeVersion
        fields = ["number", "picked", "note", "examples", "active", "created_by", "created_at"]
        read_only_fields = fields

    def get_active(self, version: JudgeVersion) -> bool:
        judge = self.context["judge"]
        return version.number == (judge.active_version.number if judge.active_version else 1)


class VersionCreateSerializer(serializers.Serializer):
    picked = serializers.ChoiceField(
        choices=JudgeVersion.Picked.choices,
        default=JudgeVersion.Picked.AUTOMATIC,
        help_text="automatic: the most contested settled cases, one per category; by_hand: "
        "the settled records listed in `records`.",
    )
    records = serializers.ListField(
        child=id_field(),
        required=False,
        max_length=selectors.MAX_EXAMPLES,
        help_text="By hand: the ids of settled records to quote, in that order.",
    )
    count = serializers.IntegerField(
        min_value=1,
        max_value=selectors.MAX_EXAMPLES,
        default=selectors.DEFAULT_EXAMPLES,
        help_text="Automatic: how many cases, at most one per category.",
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["picked"] == JudgeVersion.Picked.BY_HAND and not data.get("records"):
            raise serializers.ValidationError({"records": ["List the settled records to quote."]})
        return data


class EvaluationCreateSerializer(serializers.Serializer):
    candidate = serializers.IntegerField(
        min_value=2, max_value=2**31 - 1, help_text="The number of the version evaluated."
    )
    baseline = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        allow_null=True,
        default=None,
        help_text="The number of the version it is compared with; by default the one in use.",
    )


class VersionDifferenceSerializer(serializers.Serializer):
    record = serializers.IntegerField(source="record_id")
    external_id = serializers.CharField()
    final = serializers.CharField(help_text="The final label.")
    baseline = serializers.CharField(help_text="What the baseline said: safe, unsafe, no answer.")
    candidate = serializers.CharField(help_text="What the candidate said.")


class VersionComparisonSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Held-out records both versions have judged so far.")
    baseline = QualitySerializer()
    candidate = QualitySerializer()
    candidate_better = VersionDifferenceSerializer(
        many=True,
        help_text=f"Records the candidate gets right and the baseline wrong (the first "
        f"{selectors.LISTED}).",
    )
    baseline_better = VersionDifferenceSerializer(many=True)
    candidate_better_count = serializers.IntegerField()
    baseline_better_count = serializers.IntegerField()


class EvaluationSerializer(serializers.ModelSerializer):
    """Two versions judging the settled records that neither quotes, each in a run of its own."""

    candidate = serializers.SerializerMethodField(help_text="The version evaluated.")
    baseline = serializers.SerializerMethodField(help_text="The version compared with.")
    records = serializers.SerializerMethodField(help_text="The held-out records.")
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = JudgeEvaluation
        fields = [
            "id",
            "candidate",
            "baseline",
            "candidate_run",
            "baseline_run",
            "records",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields

    def get_candidate(self, evaluation: JudgeEvaluation) -> int:
        return evaluation.candidate.number

    def get_baseline(self, evaluation: JudgeEvaluation) -> int:
        return evaluation.baseline.number if evaluation.baseline else 1

    def get_records(self, evaluation: JudgeEvaluation) -> int:
        return len(evaluation.record_ids)


class EvaluationDetailSerializer(EvaluationSerializer):
    finished = serializers.SerializerMethodField(help_text="Whether both runs have ended.")
    comparison = serializers.SerializerMethodField(
        help_text="F1, recall, specificity and validity of each version with their 95% "
        "intervals, against the final labels, over the records both runs have judged so far."
    )

    class Meta(EvaluationSerializer.Meta):
        fields = [*EvaluationSerializer.Meta.fields, "finished", "comparison"]
        read_only_fields = fields

    def get_finished(self, evaluation: JudgeEvaluation) -> bool:
        return bool(self.context["finished"])

    @extend_schema_field(VersionComparisonSerializer)
    def get_comparison(self, evaluation: JudgeEvaluation) -> dict[str, Any]:
        return VersionComparisonSerializer(self.context["comparison"]).data
