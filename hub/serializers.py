"""What the API's record list shows beyond what a record is made of (labels n of k, consensus,
final label, open disagreements, the runs' verdicts), and what its bulk action accepts."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from annotation.services.queue import MORE_LABELS_MAX
from curation.serializers import RecordListSerializer
from hub.services import BulkAction
from judging.models import Verdict
from review.models import Disagreement

# A consensus, a final label or a run's verdict: never "unsure", which only annotators give.
LABELS = [("safe", "Safe"), ("unsafe", "Unsafe")]


class LabelOrNull(serializers.ChoiceField):
    """Safe or unsafe; null where there is none (the list's "—")."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=LABELS, allow_null=True, read_only=True, **kwargs)

    # Null is this field's point, and drf writes what a field gives into the JSON as it is; the
    # stubs have a ChoiceField give text alone.
    def to_representation(self, value: str) -> str | None:  # type: ignore[override]
        return value or None


class RunVerdictSerializer(serializers.Serializer):
    run = serializers.IntegerField(source="run_id", help_text="The run's id.")
    run_name = serializers.CharField()
    # The serializer's metaclass takes declared fields off the class, so this one named "label"
    # leaves Field.label alone; the stubs cannot say so.
    label = LabelOrNull(help_text="Its safety label; null for a score, an invalid answer or none.")  # type: ignore[assignment]
    score = serializers.IntegerField(
        allow_null=True, min_value=0, max_value=3, help_text="Its 0-3 score, if it gave one."
    )
    parse_status = serializers.ChoiceField(
        choices=Verdict.Parse.choices,
        allow_null=True,
        help_text="null: the run has not judged the record.",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["parse_status"] = data["parse_status"] or None
        return data


class RecordRowSerializer(RecordListSerializer):
    """A record of the list, with what was said about it. The view gives each record its
    `opinions` (hub.record_list.opinions), read for the whole page at once."""

    labels_given = serializers.IntegerField(
        source="opinions.labels_given", read_only=True, help_text="Labels submitted so far."
    )
    labels_needed = serializers.IntegerField(
        source="opinions.labels_needed",
        read_only=True,
        help_text="The project's k, plus the more labels a manager asked of the record.",
    )
    consensus = LabelOrNull(
        source="opinions.consensus",
        help_text="The human consensus by the project's rule; null without one.",
    )
    final_label = LabelOrNull(
        source="opinions.final",
        help_text="The latest adjudication if a reviewer settled the record, else the consensus.",
    )
    final_label_settled = serializers.BooleanField(
        source="opinions.adjudicated",
        read_only=True,
        help_text="Whether the final label is a reviewer's adjudication.",
    )
    open_disagreements = serializers.ListField(
        source="opinions.disputes",
        child=serializers.ChoiceField(choices=Disagreement.Kind.choices),
        read_only=True,
        help_text="The kinds of the record's open disagreements.",
    )
    verdicts = RunVerdictSerializer(
        source="opinions.verdicts",
        many=True,
        read_only=True,
        help_text="The verdicts of the latest three runs, and of the run filtered by, newest "
        "first; a run that has not judged the record gives nulls.",
    )

    class Meta(RecordListSerializer.Meta):
        fields = [
            *RecordListSerializer.Meta.fields,
            "labels_given",
            "labels_needed",
            "consensus",
            "final_label",
            "final_label_settled",
            "open_disagreements",
            "verdicts",
        ]
        read_only_fields = fields


# More ids than this are a selection better made by filters (`all_matching`).
BULK_IDS_MAX = 10_000


class RecordBulkSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=BulkAction.choices)
    records = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        required=False,
        max_length=BULK_IDS_MAX,
        help_text="The records to act on, by id; ids of other projects' records are left out.",
    )
    all_matching = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Act on every record that the filters of the query string match (the record "
        "list's, by the same names), as they match when the request is handled, instead of "
        "`records`. Without filters: every record of the project.",
    )
    judge = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="The judge to run (`judge`)."
    )
    more = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MORE_LABELS_MAX,
        help_text="How many more labels to ask of each record (`more_labels`).",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["all_matching"] == ("records" in data):
            raise serializers.ValidationError(
                "Give either `records` or `all_matching`: true, not both."
            )
        return data


class RecordBulkOutcomeSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=BulkAction.choices)
    records = serializers.IntegerField(help_text="How many records the action applied to.")
    run = serializers.IntegerField(
        source="run.pk", allow_null=True, help_text="The run started (`judge`); else null."
    )
    more = serializers.IntegerField(
        allow_null=True, help_text="The more labels asked of each (`more_labels`); else null."
    )
    matched = serializers.IntegerField(
        allow_null=True,
        help_text="With `all_matching`: how many records the filters matched (more than "
        "`records` when some were waiting for adjudication already, or have no task for a "
        "SafePro judge); else null.",
    )
