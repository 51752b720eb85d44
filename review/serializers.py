"""What the API shows of disagreements and adjudications."""

from __future__ import annotations

from rest_framework import serializers

from curation.serializers import id_field
from review.models import Adjudication, Disagreement
from review.services.adjudications import FINAL_LABELS


class LabelEntrySerializer(serializers.Serializer):
    """One opinion in a disagreement: an annotator's, a judge run's, or the gold label."""

    # The serializer's metaclass takes declared fields off the class, so this one named "source"
    # leaves Field.source alone; the stubs cannot say so.
    source = serializers.ChoiceField(choices=["annotator", "judge", "gold"])  # type: ignore[assignment]
    name = serializers.CharField(
        help_text="The annotator's username, the run's name, or 'gold label'."
    )
    run = serializers.IntegerField(required=False, help_text="The run's id, for judges.")
    # The serializer's metaclass takes declared fields off the class, so this one named "label"
    # leaves Field.label alone; the stubs cannot say so.
    label = serializers.CharField(required=False, help_text="safe, unsafe or unsure.")  # type: ignore[assignment]
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


class DisagreementQuerySerializer(serializers.Serializer):
    """The disagreement list's filters."""

    state = serializers.ChoiceField(choices=Disagreement.State.choices, required=False)
    kind = serializers.ChoiceField(choices=Disagreement.Kind.choices, required=False)
    record = id_field(required=False, source="record_id", help_text="Only this record's.")


class AdjudicationCreateSerializer(serializers.Serializer):
    record = id_field(help_text="The record's id.")
    # The serializer's metaclass takes declared fields off the class, so this one named "label"
    # leaves Field.label alone; the stubs cannot say so.
    label = serializers.ChoiceField(choices=FINAL_LABELS, help_text="The final label.")  # type: ignore[assignment]
    reason = serializers.CharField(max_length=5000, help_text="Why: kept with the final label.")
    risk_description = serializers.CharField(max_length=5000, required=False, allow_blank=True)
