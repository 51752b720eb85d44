"""What the annotation API shows an annotator, and the labels it accepts.

Blind like the labelling page: a record is its id, category, scenario, profile, goal and turns,
never its gold label, the source's risk description, raw source or metadata; a label is the
caller's own.
"""

from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.forms import RISK_DESCRIPTION_MAX_CHARS
from annotation.models import HELPFULNESS_SCORES, SAFETY_SCORES, Annotation, Lease
from annotation.services.labels import Label, label_errors
from annotation.services.queue import SKIP_REASON_MAX_LENGTH
from curation.choices import SafetyLabel
from curation.models import Project, Record, RiskType
from curation.serializers import SlugField, TurnSerializer


class NumberedTurnSerializer(TurnSerializer):
    number = serializers.IntegerField(help_text="1..n: what evidence_turns refer to.")


class BlindRecordSerializer(serializers.ModelSerializer):
    category = serializers.CharField(source="category.name", read_only=True)
    scenario = serializers.CharField(source="scenario.name", read_only=True)
    turns = serializers.SerializerMethodField()

    class Meta:
        model = Record
        fields = ["id", "external_id", "category", "scenario", "profile", "goal", "turns"]
        read_only_fields = fields

    @extend_schema_field(NumberedTurnSerializer(many=True))
    def get_turns(self, record: Record) -> list[dict[str, Any]]:
        return [{"number": n, **turn} for n, turn in enumerate(record.turns, start=1)]


class RiskTypeSerializer(serializers.ModelSerializer):
    class Meta:
        model = RiskType
        fields = ["slug", "name"]
        read_only_fields = fields


class AskedSerializer(serializers.Serializer):
    """The fields the project asks for besides the verdict (safe, unsafe or unsure)."""

    risk_types = RiskTypeSerializer(
        many=True, allow_null=True, help_text="The risk types to choose from; null: not asked."
    )
    risk_description = serializers.BooleanField(
        help_text="Asked, and then required when the verdict is unsafe."
    )
    safety_score = serializers.DictField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="ToolEmu's safety scale, score -> meaning; null: not asked. Required if asked.",
    )
    helpfulness_score = serializers.DictField(
        child=serializers.CharField(),
        allow_null=True,
        help_text="ToolEmu's helpfulness scale, score -> meaning; null: not asked.",
    )
    evidence_turns = serializers.BooleanField()


def asked_of(project: Project) -> dict[str, Any]:
    """What AskedSerializer describes, as it would give it: every claim and every lease read
    answers it, and building a serializer and a model per risk type doubled its cost."""
    risk_types = project.risk_types.values("slug", "name") if project.ask_risk_types else None
    return {
        "risk_types": list(risk_types) if risk_types is not None else None,
        "risk_description": project.ask_risk_description,
        "safety_score": _scale(SAFETY_SCORES) if project.ask_safety_score else None,
        "helpfulness_score": _scale(HELPFULNESS_SCORES) if project.ask_helpfulness_score else None,
        "evidence_turns": project.ask_evidence_turns,
    }


def _scale(scores: dict[int, str]) -> dict[str, str]:
    return {str(score): meaning for score, meaning in scores.items()}


class LeaseSerializer(serializers.ModelSerializer):
    record = BlindRecordSerializer(read_only=True)
    asked = serializers.SerializerMethodField()
    draft = serializers.DictField(
        read_only=True, help_text="The label being written, as the labelling page saved it."
    )

    class Meta:
        model = Lease
        fields = ["id", "state", "expires_at", "opened_at", "draft", "record", "asked"]
        read_only_fields = fields

    @extend_schema_field(AskedSerializer)
    def get_asked(self, lease: Lease) -> dict[str, Any]:
        return asked_of(lease.project)


class AnnotationRecordSerializer(serializers.ModelSerializer):
    class Meta:
        model = Record
        fields = ["id", "external_id"]
        read_only_fields = fields


class AnnotationSerializer(serializers.ModelSerializer):
    record = AnnotationRecordSerializer(read_only=True)
    risk_types = serializers.SerializerMethodField()
    guideline_version = serializers.IntegerField(
        source="guideline_version.number",
        read_only=True,
        allow_null=True,
        help_text="The guidelines version the label was last made under.",
    )

    class Meta:
        model = Annotation
        fields = [
            "id",
            "record",
            "verdict",
            "risk_types",
            "risk_description",
            "safety_score",
            "helpfulness_score",
            "evidence_turns",
            "guideline_version",
            "time_spent_ms",
            "version",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields
        extra_kwargs = {"version": {"help_text": "Send it back with an edit (optimistic lock)."}}

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_risk_types(self, annotation: Annotation) -> list[str]:
        # A label just saved comes with the risk types it was given, in the context: reading
        # them back would cost a query for what the caller holds already.
        given = self.context.get("risk_types")
        if given is None:
            return [risk_type.slug for risk_type in annotation.risk_types.all()]
        # In the order the query would give them (RiskType's ordering).
        return [
            risk_type.slug
            for risk_type in sorted(
                given, key=lambda risk_type: (risk_type.position, risk_type.name)
            )
        ]


class LabelFieldsSerializer(serializers.Serializer):
    """A label's fields, each checked on its own: the rules that tie them to the project and the
    record (label_errors) are LabelSerializer's, or the service's. Its context names the
    `project`.
    """

    verdict = serializers.ChoiceField(choices=SafetyLabel.choices)
    risk_types = SlugField(
        slug_field="slug", many=True, queryset=RiskType.objects.none(), required=False
    )
    risk_description = serializers.CharField(
        required=False, allow_blank=True, max_length=RISK_DESCRIPTION_MAX_CHARS
    )
    safety_score = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=3
    )
    helpfulness_score = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=3
    )
    evidence_turns = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, max_length=1000
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "project" in self.context:
            project = self.context["project"]
            # Declared above with many=True, which makes a ManyRelatedField around the SlugField;
            # the serializer's fields are typed as any field.
            risk_types = cast(serializers.ManyRelatedField, self.fields["risk_types"])
            # drf-stubs declare RelatedField.queryset as possibly a Manager, whose __get__ mypy
            # then applies to every use of the attribute.
            risk_types.child_relation.queryset = project.risk_types.all()  # type: ignore[arg-type]

    def to_label(self) -> Label:
        return _label_of(self.validated_data)


class LabelSerializer(LabelFieldsSerializer):
    """A label. Fields the project does not ask for must be left out.

    Its context names the `project` and the `turn_count` of the record labelled.
    """

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        errors = label_errors(
            project=self.context["project"],
            label=_label_of(data),
            turn_count=self.context["turn_count"],
        )
        if errors:
            raise serializers.ValidationError(errors)
        return data


def _label_of(data: dict[str, Any]) -> Label:
    return Label(
        verdict=data["verdict"],
        risk_types=tuple(data.get("risk_types", ())),
        risk_description=data.get("risk_description", ""),
        safety_score=data.get("safety_score"),
        helpfulness_score=data.get("helpfulness_score"),
        evidence_turns=tuple(data.get("evidence_turns", ())),
    )


class LabelEditSerializer(LabelSerializer):
    version = serializers.IntegerField(
        min_value=1, help_text="The version of the label the edit was made from."
    )


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=SKIP_REASON_MAX_LENGTH)
