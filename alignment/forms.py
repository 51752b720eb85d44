"""The form of a judge's new version: how many settled cases it quotes, or which."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from alignment.selectors import DEFAULT_EXAMPLES, MAX_EXAMPLES, Settled
from judging.models import JudgeVersion


class VersionForm(forms.Form):
    """A new version of a judge: settled cases picked automatically, or chosen by hand."""

    picked = forms.ChoiceField(
        choices=JudgeVersion.Picked.choices,
        initial=JudgeVersion.Picked.AUTOMATIC,
        widget=forms.RadioSelect,
        label="Worked examples",
    )
    count = forms.IntegerField(
        min_value=1,
        max_value=MAX_EXAMPLES,
        initial=DEFAULT_EXAMPLES,
        label="How many (automatic)",
        help_text="At most one per category: the most contested settled case of each.",
    )
    records = forms.TypedMultipleChoiceField(
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Settled cases (by hand)",
    )
    note = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, cases: list[Settled], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The field declared above; a form's fields are typed as any field.
        records = cast(forms.TypedMultipleChoiceField, self.fields["records"])
        records.choices = [
            (case.record_id, f"{case.external_id} ({case.category}): {case.label}")
            for case in cases
        ]

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if data.get("picked") == JudgeVersion.Picked.BY_HAND and not data.get("records"):
            self.add_error("records", "Tick the settled cases to quote.")
        return data
