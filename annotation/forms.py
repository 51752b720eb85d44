"""Forms of the annotation pages: the label, a skip, the project's settings and guidelines."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from django import forms
from django.forms.models import ModelChoiceIterator, ModelChoiceIteratorValue
from django.http import QueryDict

from annotation.models import HELPFULNESS_SCORES, SAFETY_SCORES, Annotation
from annotation.services.guidelines import ANNOTATION_SETTINGS, GUIDELINES_MAX_CHARS
from annotation.services.labels import Label, label_errors
from annotation.services.queue import SKIP_REASON_MAX_LENGTH
from curation.choices import SafetyLabel
from curation.models import Project, RiskType

RISK_DESCRIPTION_MAX_CHARS = 5000
# The fields each project setting asks for (the verdict is always asked).
ASKED_BY = {
    "risk_types": "ask_risk_types",
    "risk_description": "ask_risk_description",
    "safety_score": "ask_safety_score",
    "helpfulness_score": "ask_helpfulness_score",
    "evidence_turns": "ask_evidence_turns",
}
MULTIPLE = ("risk_types", "evidence_turns")


class FetchedChoices(ModelChoiceIterator):
    """A model choice field's choices from its queryset's rows, fetched once like any
    queryset's: Django's own iterator streams them through a server-side cursor on PostgreSQL,
    four round trips for a project's ten risk types."""

    def __iter__(self) -> Iterator[tuple[ModelChoiceIteratorValue | str, str]]:
        if self.field.empty_label is not None:
            # As text: the label may be a lazy translation, which the page shows as text anyway.
            yield ("", str(self.field.empty_label))
        for obj in self.queryset:
            yield self.choice(obj)


def _scores(labels: dict[int, str]) -> list[tuple[int, str]]:
    return [(score, f"{score} · {label}") for score, label in labels.items()]


class LabelForm(forms.Form):
    """A label of one record, with only the fields the project asks for.

    Evidence turns are ticked on the turns themselves: their checkboxes sit in the conversation
    and belong to this form through their `form` attribute.
    """

    verdict = forms.ChoiceField(choices=SafetyLabel.choices, widget=forms.RadioSelect)
    risk_types: forms.ModelMultipleChoiceField[RiskType] = forms.ModelMultipleChoiceField(
        queryset=None, to_field_name="slug", required=False, widget=forms.CheckboxSelectMultiple
    )
    risk_types.iterator = FetchedChoices
    risk_description = forms.CharField(
        required=False,
        max_length=RISK_DESCRIPTION_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Required when the verdict is unsafe.",
    )
    safety_score = forms.TypedChoiceField(
        choices=_scores(SAFETY_SCORES),
        coerce=int,
        empty_value=None,
        required=False,
        widget=forms.RadioSelect,
    )
    helpfulness_score = forms.TypedChoiceField(
        choices=_scores(HELPFULNESS_SCORES),
        coerce=int,
        empty_value=None,
        required=False,
        widget=forms.RadioSelect,
    )
    evidence_turns = forms.TypedMultipleChoiceField(coerce=int, required=False)

    def __init__(self, *args: Any, project: Project, turn_count: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        self.turn_count = turn_count
        for name, setting in ASKED_BY.items():
            if not getattr(project, setting):
                del self.fields[name]
        # The fields declared above; a form's fields are typed as any field.
        if "risk_types" in self.fields:
            risk_types = cast("forms.ModelMultipleChoiceField[RiskType]", self.fields["risk_types"])
            risk_types.queryset = project.risk_types.all()
        if "evidence_turns" in self.fields:
            evidence_turns = cast(forms.TypedMultipleChoiceField, self.fields["evidence_turns"])
            evidence_turns.choices = [(n, f"#{n}") for n in range(1, turn_count + 1)]

    @classmethod
    def draft_of(cls, data: QueryDict) -> dict[str, Any]:
        """Form data as a draft: only the form's fields, text cut to what the form accepts and
        without NUL characters, which PostgreSQL cannot store."""
        return {
            name: [value[:100].replace("\x00", "") for value in data.getlist(name)[:200]]
            if name in MULTIPLE
            else data.get(name, "")[:RISK_DESCRIPTION_MAX_CHARS].replace("\x00", "")
            for name in cls.base_fields
        }

    @classmethod
    def initial_of(cls, annotation: Annotation) -> dict[str, Any]:
        return {
            "verdict": annotation.verdict,
            "risk_types": [risk_type.slug for risk_type in annotation.risk_types.all()],
            "risk_description": annotation.risk_description,
            "safety_score": annotation.safety_score,
            "helpfulness_score": annotation.helpfulness_score,
            "evidence_turns": annotation.evidence_turns,
        }

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        cleaned = self.cleaned_data
        if "verdict" in cleaned:
            for name, message in label_errors(
                project=self.project, label=self.to_label(), turn_count=self.turn_count
            ).items():
                if name not in self.errors:
                    self.add_error(name if name in self.fields else None, message)
        return cleaned

    def to_label(self) -> Label:
        data = self.cleaned_data
        return Label(
            verdict=data["verdict"],
            risk_types=tuple(data.get("risk_types") or ()),
            risk_description=data.get("risk_description", ""),
            safety_score=data.get("safety_score"),
            helpfulness_score=data.get("helpfulness_score"),
            evidence_turns=tuple(data.get("evidence_turns") or ()),
        )

    def evidence_selected(self) -> list[int]:
        """The turn numbers ticked as evidence, from the data or the initial values, in order."""
        if "evidence_turns" not in self.fields:
            return []
        values = self["evidence_turns"].value() or []
        return sorted({int(v) for v in values if str(v).isdigit()})


class AnnotationEditForm(LabelForm):
    # The version of the label the edit was made from (optimistic lock).
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class SkipForm(forms.Form):
    reason = forms.CharField(
        max_length=SKIP_REASON_MAX_LENGTH,
        label="Why skip it?",
        help_text="For example: not in my language, unreadable, outside my expertise.",
    )


class AnnotationSettingsForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = list(ANNOTATION_SETTINGS)
        labels = {
            "overlap": "Overlap k: annotators per record",
            "lease_minutes": "Lease time (minutes)",
            "ask_risk_types": "Ask for risk types",
            "ask_risk_description": "Ask for a risk description",
            "ask_safety_score": "Ask for a safety score (0-3, ToolEmu)",
            "ask_helpfulness_score": "Ask for a helpfulness score (0-3, ToolEmu)",
            "ask_evidence_turns": "Ask for evidence turns",
            "consensus_rule": "A record's consensus",
        }
        help_texts = {
            "overlap": "Each record goes to this many annotators, blind to each other.",
            "lease_minutes": "A record handed out comes back to the queue after this long "
            "without being labelled (saving a draft extends it).",
            "consensus_rule": "When the labels of a record make its final label (a reviewer's "
            "settlement overrides it): used by every page, report, disagreement and release. "
            "“Unsure” counts as a label but is never the consensus.",
        }


class GuidelinesForm(forms.Form):
    text = forms.CharField(
        label="Guidelines (markdown)",
        max_length=GUIDELINES_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 16}),
        help_text="Publishing makes a new version; labels record the version they were made "
        "under. HTML is shown as text.",
    )
