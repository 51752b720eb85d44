"""What the API shows of projects, records and imports, and what it accepts for an import.

Lists are light (no interaction, no raw source) so that a page of them is one cheap query; the
detail endpoints carry everything.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypedDict

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.validators import UniqueValidator

from curation.choices import SafetyLabel
from curation.models import (
    Category,
    ImportBatch,
    ImportFormat,
    Membership,
    Project,
    Record,
    RecordChange,
    Role,
    Scenario,
)
from curation.services.imports import import_progress
from curation.services.record_changes import CHANGES_LISTED

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_stubs_ext import WithAnnotations


class OwnMemberships(TypedDict):
    """What curation.api prefetches into each project it lists."""

    own_memberships: list[Membership]


class SlugField(serializers.SlugRelatedField):
    """A related row named by its slug. Text with a NUL character names none: PostgreSQL can
    neither store nor look up such text, and would answer the lookup with an error."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data.replace("\x00", ""))
        return super().to_internal_value(data)


class ProjectSerializer(serializers.ModelSerializer):
    roles = serializers.SerializerMethodField(help_text="Your roles in this project.")

    class Meta:
        model = Project
        fields = ["slug", "name", "description", "license", "roles", "created_at"]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.ChoiceField(Role.choices)))
    def get_roles(self, project: WithAnnotations[Project, OwnMemberships]) -> list[str]:
        # Prefetched into `own_memberships` by the view: the requesting user's rows only.
        return sorted(membership.role for membership in project.own_memberships)


class ProjectCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(
        max_length=80,
        required=False,
        allow_blank=True,
        validators=[UniqueValidator(queryset=Project.objects.all())],
        help_text=(
            "The project's name in its addresses. Left out or empty, it is made from the name, "
            "with -2, -3 ... added when another project has it."
        ),
    )
    description = serializers.CharField(required=False, allow_blank=True, default="")
    license = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class ProjectUpdateSerializer(serializers.Serializer):
    """What a manager may change of a project: any of these, the others staying as they are."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(allow_blank=True)
    license = serializers.CharField(max_length=200, allow_blank=True)


class TurnSerializer(serializers.Serializer):
    """One turn of the interaction: users and the environment have content, agents a thought
    and an action; the others are null."""

    round = serializers.IntegerField(help_text="The round of the source's `contents` (from 0).")
    role = serializers.ChoiceField(choices=["user", "agent", "environment"])
    content = serializers.CharField(allow_null=True)
    thought = serializers.CharField(allow_null=True)
    action = serializers.CharField(
        allow_null=True, help_text="What the agent did; a ToolEmu tool call's input alone."
    )
    tool = serializers.CharField(
        required=False, help_text="ToolEmu: the tool an agent called (names may hold ': ')."
    )
    notes = serializers.DictField(
        child=serializers.CharField(allow_null=True),
        required=False,
        help_text="ToolEmu: the emulator's notes on an output it made up (summary, thought).",
    )


def blank_safety_label_field(**options: Any) -> serializers.ChoiceField:
    """A read-only safe or unsafe label that may be empty (""). Declared, since a ModelSerializer
    drops a read-only field's allow_blank, and the schema would then leave "" out of the enum."""
    choices = [(SafetyLabel.SAFE, "Safe"), (SafetyLabel.UNSAFE, "Unsafe")]
    return serializers.ChoiceField(choices=choices, allow_blank=True, read_only=True, **options)


class RecordListSerializer(serializers.ModelSerializer):
    gold_label = blank_safety_label_field(help_text="The source's label; empty when it gives none.")
    category: serializers.SlugRelatedField[Category] = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )
    scenario: serializers.SlugRelatedField[Scenario] = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )

    class Meta:
        model = Record
        fields = [
            "id",
            "external_id",
            "category",
            "scenario",
            "gold_label",
            "attack_type",
            "source_agent",
            "source_emulator",
            "source_case",
            "source_case_index",
            "source_replicate",
            "source_path",
            "source_position",
            "content_hash",
            "batch",
            "created_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "batch": {"help_text": "The import that brought the record in."},
        }


class RecordDetailSerializer(RecordListSerializer):
    metadata = serializers.DictField(
        read_only=True,
        help_text="Source fields with no column of their own (ASSEBench's risk_type, ...).",
    )
    # Turns are stored as the import normalised them; the serializer documents their shape
    # without dropping keys a newer importer may add.
    turns = serializers.SerializerMethodField()
    raw = serializers.SerializerMethodField(help_text="The record as the source file had it.")
    test_case = serializers.SerializerMethodField(
        help_text="ToolEmu: the test case (name, index, Toolkits, User Instruction, "
        "Underspecifications, Expected Achievements, Potential Risky Outcomes and Actions); "
        "null for records of other formats."
    )

    class Meta(RecordListSerializer.Meta):
        fields = [
            *RecordListSerializer.Meta.fields,
            "profile",
            "goal",
            "turns",
            "test_case",
            "gold_risk_description",
            "metadata",
            "raw",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(TurnSerializer(many=True))
    def get_turns(self, record: Record) -> list[dict[str, Any]]:
        return record.turns

    @extend_schema_field(serializers.DictField(allow_null=True))
    def get_test_case(self, record: Record) -> dict[str, Any] | None:
        return record.test_case

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_raw(self, record: Record) -> Any:
        return json.loads(record.raw)


class ImportBatchListSerializer(serializers.ModelSerializer):
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who started the import; null once that account is deleted.",
    )

    class Meta:
        model = ImportBatch
        fields = [
            "id",
            "source_name",
            "format",
            "state",
            "created_by",
            "created_at",
            "finished_at",
            "record_count",
            "created_count",
            "existing_count",
            "changed_count",
        ]
        read_only_fields = fields


class ImportErrorSerializer(serializers.Serializer):
    file = serializers.CharField(help_text="The file inside the upload.")
    index = serializers.IntegerField(
        allow_null=True, help_text="Where in the file, counted in `unit`; null for the whole file."
    )
    unit = serializers.ChoiceField(
        choices=["record", "line"], help_text="record (JSON files) or line (JSONL files)."
    )
    field = serializers.CharField(help_text='The field at fault, like "contents[2][1].role".')
    message = serializers.CharField()


class ImportProgressSerializer(serializers.Serializer):
    records = serializers.IntegerField(help_text="Records read so far.")
    bytes_read = serializers.IntegerField(help_text="Bytes of the input read so far.")
    bytes_total = serializers.IntegerField(
        allow_null=True, help_text="Bytes of the input; null until a worker has started on it."
    )


class RecordChangeSerializer(serializers.ModelSerializer):
    record = serializers.CharField(source="record.external_id", help_text="The record's id.")
    # The serializer's metaclass takes declared fields off the class, so this one named "fields"
    # leaves Serializer.fields alone; the stubs cannot say so.
    fields = serializers.ListField(  # type: ignore[assignment]
        child=serializers.CharField(), help_text="The source fields whose value changed."
    )
    decided_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True, help_text="Null while pending."
    )

    class Meta:
        model = RecordChange
        fields = [
            "record",
            "record_id",
            "verdict_of",
            "fields",
            "state",
            "decided_by",
            "decided_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "verdict_of": {
                "help_text": "The imported judge run whose verdict of the record this changes; "
                "empty when the record's own content changed."
            }
        }


class RecordChangesDecisionSerializer(serializers.Serializer):
    take = serializers.BooleanField(
        help_text="true: take the new versions; false: keep the stored ones."
    )


class ImportBatchDetailSerializer(ImportBatchListSerializer):
    category_counts = serializers.DictField(
        child=serializers.IntegerField(), read_only=True, help_text="Records per category."
    )
    label_counts = serializers.DictField(
        child=serializers.IntegerField(), read_only=True, help_text="Records per gold label."
    )
    duplicate_groups = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        read_only=True,
        help_text="Groups of external ids whose content is identical.",
    )
    evaluation_counts = serializers.DictField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="ToolEmu evaluations read, by evaluator and metric; each is a judge run.",
    )
    # Taken off the class by the serializer's metaclass, as declared fields are: this leaves
    # Serializer.errors alone, which the stubs cannot say.
    errors = ImportErrorSerializer(  # type: ignore[assignment]
        many=True, read_only=True, help_text="The first problems found; nothing is imported then."
    )
    progress = serializers.SerializerMethodField()
    changes = serializers.SerializerMethodField(
        help_text="Records whose content differs from the stored version, and imported "
        "evaluations that differ from their run's verdict (the first 200)."
    )

    class Meta(ImportBatchListSerializer.Meta):
        fields = [
            *ImportBatchListSerializer.Meta.fields,
            "default_category",
            "attempts",
            "started_at",
            "category_counts",
            "label_counts",
            "duplicate_groups",
            "evaluation_counts",
            "errors",
            "progress",
            "changes",
        ]
        read_only_fields = fields

    @extend_schema_field(RecordChangeSerializer(many=True))
    def get_changes(self, batch: ImportBatch) -> list[dict[str, object]]:
        changes = batch.changes.select_related("record", "decided_by")[:CHANGES_LISTED]
        # many=True makes a ListSerializer, whose data is a list; the stubs type every
        # serializer's data as one dict.
        return RecordChangeSerializer(changes, many=True).data  # type: ignore[return-value]

    @extend_schema_field(ImportProgressSerializer)
    def get_progress(self, batch: ImportBatch) -> dict[str, int | None]:
        return import_progress(batch)._asdict()


class ImportUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text=(
            "An R-Judge scenario file (.json), a zip of an R-Judge data folder, JSONL, an "
            "Inspect eval log (.eval or .json, or a zip of them) or OpenAI-style chat "
            "transcripts (.jsonl)."
        )
    )
    format = serializers.ChoiceField(choices=ImportFormat.choices, default=ImportFormat.AUTO)
    default_category = serializers.CharField(
        max_length=100,
        required=False,
        default="",
        allow_blank=True,
        help_text="The category of records whose file does not say (a lone scenario file).",
    )


# PostgreSQL's bigint, the type of every id: a larger number in a query would fail it.
LARGEST_ID = 2**63 - 1


def id_field(**options: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=LARGEST_ID, **options)
