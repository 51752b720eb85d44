"""What the API shows of judges and connections, and what it accepts to create a judge.

A judge names its model connection, never the connection's address or key variable: those are
the site administrators'.
"""

from __future__ import annotations

from typing import Any, cast

from rest_framework import serializers

from judging.models import (
    ConnectionCheck,
    Judge,
    ModelConnection,
    PromptTemplate,
)


class ConnectionSerializer(serializers.ModelSerializer):
    """What managers may know of a connection: its name, the models it offers and the bounds
    its judges keep to (calls at once, the largest max_tokens)."""

    models = serializers.ListField(
        source="offered_models", child=serializers.CharField(), read_only=True
    )

    class Meta:
        model = ModelConnection
        fields = ["id", "name", "models", "max_concurrency", "max_tokens"]
        read_only_fields = fields


class JudgeSerializer(serializers.ModelSerializer):
    connection = serializers.PrimaryKeyRelatedField(
        queryset=ModelConnection.objects.all(),
        help_text="The model connection's id (see judges/connections/).",
    )
    template = serializers.PrimaryKeyRelatedField(
        queryset=PromptTemplate.objects.none(),
        allow_null=True,
        required=False,
        help_text="The prompt template version of a custom judge (its id).",
    )
    parameters = serializers.DictField(required=False, help_text='e.g. {"temperature": 0}')

    class Meta:
        model = Judge
        fields = [
            "id",
            "name",
            "protocol",
            "connection",
            "model",
            "template",
            "parameters",
            "concurrency",
            "timeout_seconds",
            "max_retries",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]
        extra_kwargs = {"model": {"help_text": "One of the models the connection offers."}}
        # The service checks the name's uniqueness in the project, which the view supplies.
        validators: list[object] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        project = self.context.get("project")
        if project is not None:
            # The model serializer's field for the template foreign key; the serializer's fields
            # are typed as any field.
            template = cast(
                "serializers.PrimaryKeyRelatedField[PromptTemplate]", self.fields["template"]
            )
            # drf-stubs declare RelatedField.queryset as possibly a Manager, whose __get__ mypy
            # then applies to every use of the attribute.
            template.queryset = project.prompt_templates.all()  # type: ignore[arg-type]


class ConnectionCheckSerializer(serializers.ModelSerializer):
    abandoned = serializers.BooleanField(
        source="is_abandoned",
        read_only=True,
        help_text="Unfinished a minute on: no worker took the test, or it died.",
    )

    class Meta:
        model = ConnectionCheck
        fields = ["id", "state", "message", "abandoned", "created_at", "finished_at"]
        read_only_fields = fields
