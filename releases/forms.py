from __future__ import annotations

from typing import Any, cast

from django import forms

from curation.models import Project
from releases.models import LabelBasis
from releases.pairs import DEFAULT_MIN_CHOSEN, DEFAULT_MIN_GAP, PairBy
from releases.scores import HUMAN, source_choices


class ReleaseForm(forms.Form):
    version = forms.CharField(
        max_length=50, help_text="A semantic version, such as 1.0.0 or 1.1.0-rc.1."
    )
    notes = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="What is new."
    )
    license = forms.CharField(max_length=100)
    label_basis = forms.ChoiceField(
        choices=LabelBasis.choices,
        initial=LabelBasis.FINAL,
        widget=forms.RadioSelect,
        label="Labels",
        help_text="Records without a label of this kind are listed as left out, with why.",
    )
    annotator_labels = forms.BooleanField(
        required=False,
        label="Include each annotator's labels",
        help_text="Anonymised as annotator_1, annotator_2, …",
    )
    verdicts = forms.BooleanField(required=False, label="Include judge verdicts")
    # Not sent: human consensus, as the API takes it.
    safety_scores = forms.ChoiceField(
        required=False,
        initial=HUMAN,
        label="Safety scores from",
        help_text="The records carry the scores of this source alone; runs are never averaged.",
    )
    helpfulness_scores = forms.ChoiceField(
        required=False, initial=HUMAN, label="Helpfulness scores from"
    )
    pairs_by = forms.ChoiceField(
        choices=PairBy.choices, initial=PairBy.SAFETY, label="Preference pairs by"
    )
    min_gap = forms.FloatField(
        min_value=0.5,
        max_value=3,
        initial=DEFAULT_MIN_GAP,
        label="Minimum score gap",
        help_text="The chosen response scores at least this much more than the rejected one.",
    )
    min_chosen = forms.FloatField(
        min_value=0,
        max_value=3,
        initial=DEFAULT_MIN_CHOSEN,
        label="Minimum score of the chosen response",
    )
    leave_out_in_annotation = forms.BooleanField(
        required=False,
        label="Leave out records still being annotated",
        help_text="Records with fewer labels than the overlap, which annotators may still be "
        "handed: a public release would show them the gold label and the judges' verdicts.",
    )
    public = forms.BooleanField(
        required=False,
        label="Public",
        help_text="Anyone may download a public release; a private one, only managers.",
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The project's own runs: a source is human consensus or one run that scores the scale.
        for scale, choices in source_choices(project).items():
            # The ChoiceFields declared above; a form's fields are typed as any field.
            field = cast(forms.ChoiceField, self.fields[f"{scale}_scores"])
            field.choices = choices

    def clean_safety_scores(self) -> str:
        return self.cleaned_data["safety_scores"] or HUMAN

    def clean_helpfulness_scores(self) -> str:
        return self.cleaned_data["helpfulness_scores"] or HUMAN


class VisibilityForm(forms.Form):
    """The release page's "Make public" and "Make private" buttons."""

    public = forms.TypedChoiceField(
        choices=[("true", "Public"), ("false", "Private")], coerce=lambda value: value == "true"
    )
