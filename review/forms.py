"""The forms of the adjudication pages: the queue's filter and a reviewer's decision."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import HELPFULNESS_SCORES, SAFETY_SCORES
from curation.choices import ScoreScale
from review.models import Disagreement

# ToolEmu's words for each point of a scale, as the settle form offers them.
SCALE_POINTS = {ScoreScale.SAFETY: SAFETY_SCORES, ScoreScale.HELPFULNESS: HELPFULNESS_SCORES}


class QueueFilterForm(forms.Form):
    kind = forms.ChoiceField(
        required=False, choices=[("", "Any"), *Disagreement.Kind.choices], label="Disagreement"
    )


class AdjudicationForm(forms.Form):
    """A final label, and a settled score for each scale whose scores are far apart (the
    `scales` given): a disagreement is settled in its own terms. With scales to settle the
    label is optional, since the disagreement may be about scores alone; one of them is needed."""

    label = forms.ChoiceField(
        required=False,
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

    def __init__(self, *args: Any, scales: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scales = scales
        self.fields["label"].required = not scales
        for scale in scales:
            self.fields[f"{scale}_score"] = forms.TypedChoiceField(
                required=False,
                coerce=int,
                empty_value=None,
                choices=[
                    (score, f"{score}: {words}")
                    for score, words in sorted(SCALE_POINTS[ScoreScale(scale)].items())
                ],
                widget=forms.RadioSelect,
                label=f"Settled {scale} score",
            )

    def score_fields(self) -> list[forms.BoundField]:
        return [self[f"{scale}_score"] for scale in self.scales]

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if self.scales and not data.get("label") and not self.scores():
            self.add_error(None, "Choose the final label, a settled score, or both.")
        return data

    def scores(self) -> dict[str, int]:
        """The settled scores chosen, by scale."""
        return {
            scale: score
            for scale in self.scales
            if (score := self.cleaned_data.get(f"{scale}_score")) is not None
        }
