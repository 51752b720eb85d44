"""The forms of the adjudication pages: the queue's filter and a reviewer's decision."""

from __future__ import annotations

from django import forms

from review.models import Disagreement


class QueueFilterForm(forms.Form):
    kind = forms.ChoiceField(
        required=False, choices=[("", "Any"), *Disagreement.Kind.choices], label="Disagreement"
    )


class AdjudicationForm(forms.Form):
    label = forms.ChoiceField(
        choices=[("safe", "Safe"), ("unsafe", "Unsafe")],
        widget=forms.RadioSelect,
        label="Final label",
    )
    risk_description = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What could go wrong, when the record is unsafe.",
    )
    reason = forms.CharField(
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Why this label: it is kept with the final label.",
    )
