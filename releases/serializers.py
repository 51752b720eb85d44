from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.urls import reverse
from rest_framework import serializers

from curation.errors import Conflict
from releases.build import build_progress
from releases.models import LabelBasis, Release
from releases.pairs import DEFAULT_MIN_CHOSEN, DEFAULT_MIN_GAP, PairBy
from releases.scores import HUMAN

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ReleaseSerializer(serializers.ModelSerializer):
    previous: serializers.SlugRelatedField[Release] = serializers.SlugRelatedField(
        slug_field="version",
        read_only=True,
        allow_null=True,
        help_text="The version this one follows; null for a project's first release.",
    )
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    progress = serializers.SerializerMethodField(
        help_text="While the worker builds: the step and the records written of all."
    )
    files = serializers.SerializerMethodField(
        help_text="Once built: each file's name, size, SHA-256 and download URL."
    )

    class Meta:
        model = Release
        fields = [
            "id",
            "version",
            "notes",
            "license",
            "label_basis",
            "public",
            "options",
            "state",
            "summary",
            "previous",
            "progress",
            "files",
            "error",
            "created_by",
            "created_at",
            "built_at",
        ]
        read_only_fields = [name for name in fields if name != "public"]

    def get_progress(self, release: Release) -> dict[str, Any] | None:
        if release.state not in (Release.State.PENDING, Release.State.BUILDING):
            return None
        progress = build_progress(release)
        return {"step": progress.step, "records": progress.records, "total": progress.total}

    def get_files(self, release: Release) -> list[dict[str, Any]]:
        if release.state != Release.State.BUILT:
            return []
        request = self.context.get("request")

        def url(name: str) -> str:
            path = reverse(
                "releases_api:release_file", args=[release.project.slug, release.pk, name]
            )
            return request.build_absolute_uri(path) if request else path

        entries = [*release.manifest.get("files", []), {"name": "manifest.json"}]
        return [{**entry, "url": url(entry["name"])} for entry in entries]


class ReleaseUpdateSerializer(serializers.Serializer):
    """A change to a release: whether it is public, a boolean (`false`, `"false"` and `0` are
    false; anything that is not a boolean is refused). A client may send back the other fields
    of the release as it read them, but changing one is a conflict: a release never changes once
    created."""

    public = serializers.BooleanField()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        shown: dict[str, Any] = self.context["shown"]
        unknown = sorted(set(self.initial_data) - set(shown))
        if unknown:
            raise serializers.ValidationError(
                {name: ["A release has no such field."] for name in unknown}
            )
        frozen = sorted(
            name
            for name in self.initial_data
            if name != "public" and self.initial_data[name] != shown[name]
        )
        if frozen:
            raise Conflict(
                f"A release never changes once created ({', '.join(frozen)}): create a new "
                "version instead."
            )
        return data


class ReleaseCreateSerializer(serializers.Serializer):
    version = serializers.CharField(max_length=50)
    notes = serializers.CharField(required=False, allow_blank=True, default="")
    license = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="Defaults to the project's license.",
    )
    label_basis = serializers.ChoiceField(choices=LabelBasis.choices, default=LabelBasis.FINAL)
    public = serializers.BooleanField(default=False)
    annotator_labels = serializers.BooleanField(default=False)
    verdicts = serializers.BooleanField(default=False)
    safety_scores = serializers.CharField(
        max_length=20,
        default=HUMAN,
        help_text=f"Where the records' safety scores come from: `{HUMAN}` (the mean of the "
        "annotators' scores) or the id of one finished run of the project that gave safety "
        "scores. Runs are never averaged.",
    )
    helpfulness_scores = serializers.CharField(
        max_length=20,
        default=HUMAN,
        help_text=f"Where the helpfulness scores come from: `{HUMAN}` or the id of one finished "
        "run that gave helpfulness scores.",
    )
    pairs_by = serializers.ChoiceField(choices=PairBy.choices, default=PairBy.SAFETY)
    min_gap = serializers.FloatField(min_value=0.5, max_value=3, default=DEFAULT_MIN_GAP)
    min_chosen = serializers.FloatField(min_value=0, max_value=3, default=DEFAULT_MIN_CHOSEN)
    leave_out_in_annotation = serializers.BooleanField(
        default=True,
        help_text="Leave out records with fewer labels than the overlap, which annotators may "
        "still be handed (a public release would show them its labels and verdicts); on unless "
        "turned off. A release of runs' scores alone publishes nothing annotators are still "
        "giving and leaves out none of them.",
    )


class ReleasePreviewSerializer(ReleaseCreateSerializer):
    """The choices of a release to be made; its version is not needed to count what it holds."""

    version = serializers.CharField(max_length=50, required=False, allow_blank=True, default="")


class ReleasePreviewResultSerializer(serializers.Serializer):
    records = serializers.IntegerField(help_text="The records the release would hold.")
    excluded = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="For each reason a record would be left out, how many would be.",
    )
