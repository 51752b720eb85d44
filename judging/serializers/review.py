"""What the API shows of disagreements, adjudications, judge quality and agreement."""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from judging import reports
from judging.metrics import Estimate
from judging.models import Adjudication, Disagreement
from judging.services.adjudications import FINAL_LABELS


class LabelEntrySerializer(serializers.Serializer):
    """One opinion in a disagreement: an annotator's, a judge run's, or the gold label."""

    source = serializers.ChoiceField(choices=["annotator", "judge", "gold"])
    name = serializers.CharField(
        help_text="The annotator's username, the run's name, or 'gold label'."
    )
    run = serializers.IntegerField(required=False, help_text="The run's id, for judges.")
    label = serializers.CharField(required=False, help_text="safe, unsafe or unsure.")
    scale = serializers.ChoiceField(choices=["safety", "helpfulness"], required=False)
    score = serializers.IntegerField(required=False, min_value=0, max_value=3)


class DisagreementSerializer(serializers.ModelSerializer):
    record_external_id = serializers.CharField(source="record.external_id", read_only=True)
    labels = LabelEntrySerializer(many=True, read_only=True)

    class Meta:
        model = Disagreement
        fields = [
            "id",
            "record",
            "record_external_id",
            "kind",
            "labels",
            "weight",
            "state",
            "created_at",
            "updated_at",
            "resolved_at",
        ]
        read_only_fields = fields


class AdjudicationSerializer(serializers.ModelSerializer):
    reviewer = serializers.CharField(source="reviewer.get_username", read_only=True)

    class Meta:
        model = Adjudication
        fields = ["id", "record", "label", "risk_description", "reason", "reviewer", "created_at"]
        read_only_fields = fields


# PostgreSQL's bigint, the type of every id: a larger number in a query would fail it.
LARGEST_ID = 2**63 - 1


def id_field(**options: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=LARGEST_ID, **options)


class DisagreementQuerySerializer(serializers.Serializer):
    """The disagreement list's filters."""

    state = serializers.ChoiceField(choices=Disagreement.State.choices, required=False)
    kind = serializers.ChoiceField(choices=Disagreement.Kind.choices, required=False)
    record = id_field(required=False, source="record_id", help_text="Only this record's.")


class AdjudicationCreateSerializer(serializers.Serializer):
    record = id_field(help_text="The record's id.")
    label = serializers.ChoiceField(choices=FINAL_LABELS, help_text="The final label.")
    reason = serializers.CharField(max_length=5000, help_text="Why: kept with the final label.")
    risk_description = serializers.CharField(max_length=5000, required=False, allow_blank=True)


@extend_schema_field(
    {
        "type": "object",
        "properties": {
            "value": {"type": "number", "nullable": True},
            "low": {"type": "number", "nullable": True},
            "high": {"type": "number", "nullable": True},
        },
        "description": "A statistic and its 95% bootstrap interval; null where undefined.",
    }
)
class EstimateField(serializers.Field):
    def to_representation(self, estimate: Estimate) -> dict[str, float | None]:
        return {
            name: None if math.isnan(value) else value
            for name, value in (
                ("value", estimate.value),
                ("low", estimate.low),
                ("high", estimate.high),
            )
        }


class QualityQuerySerializer(serializers.Serializer):
    """What the quality report compares: runs of the project that give safety labels, with a
    reference."""

    reference = serializers.ChoiceField(
        choices=reports.Reference.choices, default=reports.Reference.GOLD
    )
    runs = serializers.ListField(
        child=id_field(),
        required=False,
        help_text="Run ids (default: the latest two, of those not flagged unless included).",
    )
    include_flagged = serializers.BooleanField(
        required=False,
        default=False,
        help_text=(
            "Compare runs whose answers are mostly invalid or errors (more than half of their "
            "verdicts); left out otherwise, and listed in `left_out`."
        ),
    )

    def validate_runs(self, ids: list[int]) -> list[int]:
        offered = reports.quality_runs(self.context["project"]).filter(pk__in=ids)
        unknown = sorted(set(ids) - set(offered.values_list("pk", flat=True)))
        if unknown:
            raise serializers.ValidationError(
                "No run of safety labels in this project has the id "
                f"{', '.join(map(str, unknown))}."
            )
        return ids


class AgreementQuerySerializer(serializers.Serializer):
    scale = serializers.ChoiceField(choices=reports.Scale.choices, default=reports.Scale.VERDICT)


class QualitySerializer(serializers.Serializer):
    name = serializers.CharField(help_text="'All records', or the group's name.")
    n = serializers.IntegerField(help_text="Records with a reference label that the run judged.")
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Rows: the reference (safe, unsafe); columns: the judge (safe, unsafe, invalid).",
    )
    scores = serializers.DictField(
        child=EstimateField(), help_text="f1, recall, specificity, validity."
    )

    def to_representation(self, quality: reports.Quality) -> dict[str, Any]:
        return {
            "name": quality.name,
            "n": quality.n,
            "confusion": quality.confusion.tolist(),
            "scores": {
                name: EstimateField().to_representation(e) for name, e in quality.scores.items()
            },
        }


class UsabilitySerializer(serializers.Serializer):
    verdicts = serializers.IntegerField(help_text="The run's verdicts.")
    unusable = serializers.IntegerField(help_text="Those invalid or errors.")
    flagged = serializers.BooleanField(help_text="More than half of them invalid or errors.")


class RunQualitySerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run.pk")
    name = serializers.CharField(source="run.name")
    usability = UsabilitySerializer()
    overall = QualitySerializer()
    groups = serializers.DictField(
        child=QualitySerializer(many=True), help_text="category, scenario and attack_type."
    )


class LeftOutRunSerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run.pk")
    name = serializers.CharField(source="run.name")
    usability = UsabilitySerializer()


class QualityReportSerializer(serializers.Serializer):
    reference = serializers.ChoiceField(choices=reports.Reference.choices)
    runs = RunQualitySerializer(many=True)
    left_out = LeftOutRunSerializer(
        many=True, help_text="Runs asked for but not compared: mostly invalid or errors."
    )


class PairAgreementSerializer(serializers.Serializer):
    first = serializers.CharField()
    second = serializers.CharField(help_text="An annotator, or 'consensus'.")
    n = serializers.IntegerField(help_text="Records both labelled.")
    agreement = EstimateField(help_text="Percent agreement, as a share.")
    kappa = EstimateField(help_text="Cohen's kappa.")


class AgreementReportSerializer(serializers.Serializer):
    scale = serializers.ChoiceField(choices=reports.Scale.choices)
    items = serializers.IntegerField(help_text="Records with two labels or more.")
    annotators = serializers.IntegerField()
    overall = serializers.DictField(
        child=EstimateField(), help_text="percent, fleiss, krippendorff and gwet."
    )
    pairs = PairAgreementSerializer(many=True)
    with_consensus = PairAgreementSerializer(many=True)
