from __future__ import annotations

from django import forms

from releases.models import LabelBasis
from releases.pairs import DEFAULT_MIN_CHOSEN, DEFAULT_MIN_GAP, PairBy


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


class VisibilityForm(forms.Form):
    """The release page's "Make public" and "Make private" buttons."""

    public = forms.TypedChoiceField(
        choices=[("true", "Public"), ("false", "Private")], coerce=lambda value: value == "true"
    )
