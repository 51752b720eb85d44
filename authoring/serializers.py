"""What the API shows of tasks, revisions and reviews, and what it accepts to change them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from authoring.diff import revision_diff
from authoring.models import (
    TASK_FIELDS,
    ReferenceFile,
    Review,
    RiskCategory,
    RubricCheck,
    Task,
    TaskRevision,
)
from authoring.services.tasks import CONTENT_FIELDS
from authoring.workflow import Action
from curation.serializers import SlugField

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from curation.models import Project

# The moves the transitions endpoint makes; decisions go through the reviews endpoint.
TRANSITION_ACTIONS = [Action.SUBMIT, Action.WITHDRAW, Action.REOPEN, Action.TAKE, Action.RELEASE]


class MessageSerializer(serializers.Serializer):
    sender = serializers.CharField(max_length=100)
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)


class ReferenceFileSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField(help_text="Where members download the file.")

    class Meta:
        model = ReferenceFile
        fields = ["id", "name", "size", "sha256", "content_type", "url"]
        read_only_fields = fields

    def get_url(self, file: ReferenceFile) -> str:
        task = file.task
        return reverse("authoring:task_file", args=[task.project.slug, task.pk, file.pk])


class TaskSerializer(serializers.ModelSerializer):
    author: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    reviewer: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,
        help_text="Who holds the task for review (while in review).",
    )
    risk_category: serializers.SlugRelatedField[RiskCategory] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )
    messages = MessageSerializer(many=True, read_only=True)
    reference_files = ReferenceFileSerializer(many=True, read_only=True)

    class Meta:
        model = Task
        fields = [
            "id",
            "external_id",
            *CONTENT_FIELDS,
            "reference_files",
            "state",
            "version",
            "round",
            "author",
            "reviewer",
            "review_expires_at",
            "submitted_at",
            "decided_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "external_id": {"help_text": "SafePro's task_id."},
            "version": {"help_text": "Send it back with a change: a change to a stale copy fails."},
            "round": {"help_text": "Submissions so far: the number of the latest revision."},
        }


class TaskWriteSerializer(serializers.Serializer):
    """A task's content. For a change, send the version you read; omitted fields stay as they
    are."""

    sector = serializers.CharField(max_length=200)
    occupation = serializers.CharField(max_length=200)
    prompt = serializers.CharField(trim_whitespace=False)
    messages = MessageSerializer(many=True, required=False)
    risk_category = SlugField(
        slug_field="slug",
        queryset=RiskCategory.objects.none(),
        allow_null=True,
        required=False,
        help_text="The slug of one of the project's risk categories.",
    )
    malicious_motivation = serializers.CharField(allow_blank=True, required=False)
    risk_outcome = serializers.CharField(allow_blank=True, required=False)
    unsafe_criteria = serializers.CharField(allow_blank=True, required=False)
    safe_criteria = serializers.CharField(allow_blank=True, required=False)
    version = serializers.IntegerField(required=False, help_text="Required for a change.")

    def __init__(self, *args: Any, project: Project | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if project is not None:
            # The SlugField declared above; the serializer's fields are typed as any field.
            risk_category = cast(SlugField, self.fields["risk_category"])
            # drf-stubs declare RelatedField.queryset as possibly a Manager, whose __get__ mypy
            # then applies to every use of the attribute.
            risk_category.queryset = project.risk_categories.all()  # type: ignore[arg-type]

    def content(self, task: Task | None = None) -> dict[str, Any]:
        """The whole content: what was sent, and for a change the task's own for the rest."""
        data = dict(self.validated_data)
        data.pop("version", None)
        base = {field: getattr(task, field) for field in CONTENT_FIELDS} if task else {}
        defaults: dict[str, Any] = {"messages": [], "risk_category": None}
        return {
            field: data.get(field, base.get(field, defaults.get(field, "")))
            for field in CONTENT_FIELDS
        }


class TransitionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=[action.value for action in TRANSITION_ACTIONS])
    version = serializers.IntegerField(help_text="The version of the task you read.")


class RubricCheckSerializer(serializers.ModelSerializer):
    class Meta:
        model = RubricCheck
        fields = ["id", "text"]
        read_only_fields = fields


class AvailableSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=Task.State.choices)
    version = serializers.IntegerField()
    available = serializers.ListField(
        child=serializers.ChoiceField(choices=[action.value for action in Action]),
        help_text="The moves you may make now (decisions are made by posting a review).",
    )
    rubric = RubricCheckSerializer(
        many=True, help_text="The checks a review answers, by id, in its rubric."
    )


class RevisionSerializer(serializers.ModelSerializer):
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    content = serializers.DictField(
        read_only=True, help_text=f"The task as submitted: {', '.join(TASK_FIELDS)}."
    )

    class Meta:
        model = TaskRevision
        fields = ["number", "content", "created_by", "created_at"]
        read_only_fields = fields


class FieldDiffSerializer(serializers.Serializer):
    field = serializers.CharField()
    # The serializer's metaclass takes declared fields off the class, so this one named "label"
    # leaves Field.label alone; the stubs cannot say so.
    label = serializers.CharField()  # type: ignore[assignment]
    changed = serializers.BooleanField()
    pieces = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text='[kind, text] pairs, kind being "same", "ins" or "del".',
    )


class RevisionDetailSerializer(RevisionSerializer):
    diff = serializers.SerializerMethodField(
        help_text="Field by field against the previous revision (nothing changed for the first)."
    )

    class Meta(RevisionSerializer.Meta):
        fields = [*RevisionSerializer.Meta.fields, "diff"]
        read_only_fields = fields

    @extend_schema_field(FieldDiffSerializer(many=True))
    def get_diff(self, revision: TaskRevision) -> list[dict[str, Any]]:
        previous = revision.task.revisions.filter(number=revision.number - 1).first()
        return [
            {**vars(field), "pieces": [list(piece) for piece in field.pieces]}
            for field in revision_diff(previous.content if previous else None, revision.content)
        ]


class ReviewSerializer(serializers.ModelSerializer):
    reviewer: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    revision: serializers.SlugRelatedField[TaskRevision] = serializers.SlugRelatedField(
        slug_field="number", read_only=True
    )
    comments = serializers.DictField(child=serializers.CharField(), read_only=True)
    rubric = serializers.DictField(child=serializers.BooleanField(), read_only=True)

    class Meta:
        model = Review
        fields = [
            "id",
            "revision",
            "reviewer",
            "decision",
            "comments",
            "rubric",
            "summary",
            "created_at",
        ]
        read_only_fields = fields


class ReviewWriteSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Review.Decision.choices)
    comments = serializers.DictField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False),
        required=False,
        default=dict,
        help_text=f"A comment per field ({', '.join(TASK_FIELDS)}).",
    )
    rubric = serializers.DictField(
        child=serializers.BooleanField(),
        help_text="An answer to every active check of the project's rubric, by the check's id.",
    )
    summary = serializers.CharField(allow_blank=True, required=False, default="")
    version = serializers.IntegerField(help_text="The version of the task you hold.")
