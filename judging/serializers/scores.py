"""What the API shows of the score reports: evaluators compared, and the source models' view."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from judging.evaluators import DIMENSIONS, STATISTICS, Comparison, compared_sources
from judging.score_sources import ScoreSource, UnknownSource
from judging.serializers.review import EstimateField
from judging.source_models import view_choices

SCALES = [("safety", "Safety (0-3)"), ("helpfulness", "Helpfulness (0-3)")]
SOURCE_HELP = (
    "A score source: 'consensus' (the annotators' human consensus), 'run:<id>' (a run that "
    "gives scores on the scale) or 'person:<id>' (an annotator)."
)


class SourceField(serializers.CharField):
    """A score source's key; the query's validation refuses one the project does not offer."""

    def __init__(self, *, help_text: str) -> None:
        super().__init__(required=False, max_length=40, help_text=f"{help_text} {SOURCE_HELP}")


class EvaluatorQuerySerializer(serializers.Serializer):
    scale = serializers.ChoiceField(choices=SCALES, default="safety")
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
    scale = serializers.ChoiceField(choices=SCALES)
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
