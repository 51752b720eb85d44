"""What the API shows of the reports: judge quality, agreement, evaluators compared, and the
source models' view."""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from curation.choices import ScoreScale
from curation.serializers import id_field
from judging.selectors import quality_runs
from reports import agreement, quality
from reports.evaluators import DIMENSIONS, STATISTICS, Comparison, compared_sources
from reports.score_sources import ScoreSource, UnknownSource
from reports.source_models import view_choices
from stats.metrics import Estimate


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
        choices=quality.Reference.choices, default=quality.Reference.GOLD
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
        offered = quality_runs(self.context["project"]).filter(pk__in=ids)
        unknown = sorted(set(ids) - set(offered.values_list("pk", flat=True)))
        if unknown:
            raise serializers.ValidationError(
                "No run of safety labels in this project has the id "
                f"{', '.join(map(str, unknown))}."
            )
        return ids


class AgreementQuerySerializer(serializers.Serializer):
    scale = serializers.ChoiceField(
        choices=agreement.Scale.choices, default=agreement.Scale.VERDICT
    )


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

    def to_representation(self, quality: quality.Quality) -> dict[str, Any]:
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
    reference = serializers.ChoiceField(choices=quality.Reference.choices)
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
    scale = serializers.ChoiceField(choices=agreement.Scale.choices)
    items = serializers.IntegerField(help_text="Records with two labels or more.")
    annotators = serializers.IntegerField()
    overall = serializers.DictField(
        child=EstimateField(), help_text="percent, fleiss, krippendorff and gwet."
    )
    pairs = PairAgreementSerializer(many=True)
    with_consensus = PairAgreementSerializer(many=True)


SOURCE_HELP = (
    "A score source: 'consensus' (the annotators' human consensus), 'run:<id>' (a run that "
    "gives scores on the scale) or 'person:<id>' (an annotator)."
)


class SourceField(serializers.CharField):
    """A score source's key; the query's validation refuses one the project does not offer."""

    def __init__(self, *, help_text: str) -> None:
        super().__init__(required=False, max_length=40, help_text=f"{help_text} {SOURCE_HELP}")


class EvaluatorQuerySerializer(serializers.Serializer):
    scale = serializers.ChoiceField(choices=ScoreScale.choices, default=ScoreScale.SAFETY)
    first = SourceField(help_text="The first source (default: the first offered, the latest run).")
    second = SourceField(help_text="The second source (default: the second offered).")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        try:
            data["first"], data["second"] = compared_sources(
                self.context["project"],
                data["scale"],
                data.get("first", ""),
                data.get("second", ""),
            )
        except UnknownSource as unknown:
            raise serializers.ValidationError({unknown.field: str(unknown)}) from unknown
        return data


class SourceSerializer(serializers.Serializer):
    key = serializers.CharField(help_text=SOURCE_HELP)
    name = serializers.CharField()

    def to_representation(self, source: ScoreSource) -> dict[str, str]:
        return {"key": source.key, "name": source.name}


class ComparisonSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="'All records', or the group's name.")
    n = serializers.IntegerField(help_text="Records that both sources scored.")
    table = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="table[i][j]: records the first scored i and the second j (0-3).",
    )
    statistics = serializers.DictField(child=EstimateField(), help_text=", ".join(STATISTICS) + ".")

    def to_representation(self, comparison: Comparison) -> dict[str, Any]:
        return {
            "name": comparison.name,
            "n": comparison.n,
            "table": comparison.table.tolist(),
            "statistics": {
                key: EstimateField().to_representation(e)
                for key, e in comparison.statistics.items()
            },
        }


class EvaluatorReportSerializer(serializers.Serializer):
    scale = serializers.ChoiceField(choices=ScoreScale.choices)
    first = SourceSerializer()
    second = SourceSerializer()
    overall = ComparisonSerializer()
    groups = serializers.DictField(
        child=ComparisonSerializer(many=True),
        help_text=", ".join(key for key, _ in DIMENSIONS) + " (the source model).",
    )


class SourceModelQuerySerializer(serializers.Serializer):
    safety = SourceField(help_text="Where safety scores come from (default: the latest run).")
    helpfulness = SourceField(
        help_text="Where helpfulness scores come from (default: the same evaluator's run)."
    )
    toolkit = serializers.CharField(
        required=False, max_length=100, help_text="Only the records of cases using this toolkit."
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        try:
            data["safety"], data["helpfulness"], data["toolkit"] = view_choices(
                self.context["project"],
                safety=data.get("safety", ""),
                helpfulness=data.get("helpfulness", ""),
                toolkit=data.get("toolkit", ""),
            )
        except UnknownSource as unknown:
            raise serializers.ValidationError({unknown.field: str(unknown)}) from unknown
        return data


class SourceModelSerializer(serializers.Serializer):
    name = serializers.CharField(
        help_text="The source agent (model); '(none)' for records without."
    )
    safety_n = serializers.IntegerField(help_text="Its records with a safety score.")
    helpfulness_n = serializers.IntegerField(help_text="Its records with a helpfulness score.")
    safety = EstimateField(help_text="Mean safety score (0-3).")
    helpfulness = EstimateField(help_text="Mean helpfulness score (0-3).")
    pareto = serializers.BooleanField(help_text="On the Pareto frontier of safety and helpfulness.")


class SourceModelViewSerializer(serializers.Serializer):
    safety = SourceSerializer()
    helpfulness = SourceSerializer()
    toolkit = serializers.CharField(help_text="The toolkit filter, empty for all records.")
    models = SourceModelSerializer(many=True)
