"""The record list's filters and its bulk actions."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.forms.utils import pretty_name
from django.http import QueryDict

from annotation.services.queue import MORE_LABELS_MAX
from curation.forms import RecordFilterForm
from curation.models import Project
from hub.record_list import FILTERS, run_choices
from hub.services import BulkAction
from judging.models import Judge


class RecordListForm(RecordFilterForm):
    """The record list's filters, sort and page size: curation's filters of what a record is,
    and those of what was said about it. All in the URL, so that a view can be shared."""

    ANY = [("", "Any")]
    labels = forms.ChoiceField(
        required=False,
        label="Labels",
        choices=[*ANY, ("none", "None yet"), ("some", "Fewer than needed"), ("done", "All needed")],
    )
    consensus = forms.ChoiceField(
        required=False, choices=[*ANY, ("safe", "Safe"), ("unsafe", "Unsafe"), ("none", "None")]
    )
    final = forms.ChoiceField(
        required=False,
        label="Final label",
        choices=[*ANY, ("safe", "Safe"), ("unsafe", "Unsafe"), ("none", "None")],
    )
    disputed = forms.ChoiceField(
        required=False,
        choices=[*ANY, ("yes", "Open disagreement"), ("no", "No open disagreement")],
    )
    # A username: the records this person labelled (the page offers the project's annotators).
    annotator = forms.CharField(required=False, max_length=150, label="Labelled by")
    run = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="Judge run")
    verdict = forms.ChoiceField(
        required=False,
        label="Its verdict",
        choices=[
            *ANY,
            ("safe", "Safe"),
            ("unsafe", "Unsafe"),
            ("invalid", "Invalid"),
            ("error", "Error"),
            ("missing", "Not judged"),
            # A run that scores 0-3 (an evaluator's safety or helpfulness) is filtered by score.
            *((f"score:{score}", f"Score {score}") for score in range(4)),
        ],
    )
    sort = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Import order"),
            ("-id", "Newest first"),
            ("external_id", "External id"),
            ("-external_id", "External id, descending"),
            ("labels", "Fewest labels first"),
            ("-labels", "Most labels first"),
        ],
    )
    PER_PAGE = 50
    per_page = forms.TypedChoiceField(
        required=False,
        coerce=int,
        # Django gives back any value for an empty choice; the stubs allow only text or None.
        empty_value=PER_PAGE,  # type: ignore[arg-type]
        label="Per page",
        choices=[(str(n), str(n)) for n in (25, 50, 100, 200)],
    )

    def __init__(
        self,
        data: QueryDict,
        *,
        runs: list[tuple[int, str]],
        annotators: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if "per_page" not in data:
            # Shown as chosen, rather than the first size offered.
            data = data.copy()
            data["per_page"] = str(self.PER_PAGE)
        super().__init__(data, **kwargs)
        # The field declared above; a form's fields are typed as any field.
        run = cast(forms.TypedChoiceField, self.fields["run"])
        run.choices = [("", "Any"), *runs]
        if annotators is not None:
            # A username from a link stays chosen though its owner left the project.
            chosen = data.get("annotator", "")
            names = [*annotators, *([chosen] if chosen and chosen not in annotators else [])]
            self.fields["annotator"].widget = forms.Select(
                choices=[("", "Anyone"), *((name, name) for name in names)]
            )

    @classmethod
    def of_project(cls, project: Project, data: QueryDict) -> RecordListForm:
        """The form over `data`, its runs those of the project (without the page's widgets)."""
        return cls(data, runs=run_choices(project))

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if data.get("verdict") and not data.get("run"):
            self.add_error("verdict", "Choose the judge run whose verdicts to filter by.")
        return data

    def filter_query(self) -> str:
        """The filters given, as a query string: what "all that match" is computed from again."""
        query = QueryDict(mutable=True)
        for name in FILTERS:
            if self.data.get(name):
                query[name] = self.data[name]
        return query.urlencode()

    def described(self) -> list[tuple[str, str]]:
        """The valid form's filters that narrow the list, as (the field's label, the value's)."""
        described = []
        for name in FILTERS:
            value, field = self.cleaned_data.get(name), self.fields[name]
            if value:
                choices = dict(getattr(field, "choices", ()))
                described.append(
                    (str(field.label or pretty_name(name)), str(choices.get(value, value)))
                )
        return described


class RecordIdsField(forms.TypedMultipleChoiceField):
    """Record ids as the list's checkboxes send them: any id, since the services take only the
    project's records among those sent."""

    def valid_value(self, value: Any) -> bool:
        return str(value).isdigit()


class RecordBulkForm(forms.Form):
    """What a manager does to the records chosen in the list: those ticked, or every record that
    matches the list's filters (`filters`, the list's query string, as the page showed it)."""

    CHOSEN, MATCHING = "chosen", "matching"
    # Deleting goes through a page that says what goes with the records (hub.views), and only
    # ever takes records ticked one by one: never all that some filters happen to match.
    DELETE = "delete"
    action = forms.ChoiceField(choices=[*BulkAction.choices, (DELETE, "Delete them")])
    scope = forms.ChoiceField(
        required=False, choices=[(CHOSEN, "The records ticked"), (MATCHING, "All that match")]
    )
    records = RecordIdsField(coerce=int, required=False)
    filters = forms.CharField(required=False, max_length=2000)
    # How many records matched when the manager confirmed, to tell them if it changed since.
    expected = forms.IntegerField(required=False, min_value=0)
    judge = forms.ModelChoiceField(queryset=Judge.objects.none(), required=False)
    more = forms.IntegerField(
        required=False, min_value=1, max_value=MORE_LABELS_MAX, initial=1, label="How many more"
    )
    # Where to go back to: the list as it was filtered.
    back = forms.CharField(required=False, max_length=2000)

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The field declared above; a form's fields are typed as any field.
        judge = cast("forms.ModelChoiceField[Judge]", self.fields["judge"])
        judge.queryset = project.judges.order_by("name")

    @property
    def is_matching(self) -> bool:
        return self.data.get("scope") == self.MATCHING

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if not self.is_matching and not data.get("records"):
            self.add_error("records", "Choose records first.")
        if data.get("action") == self.DELETE and self.is_matching:
            self.add_error("action", "Tick the records to delete: all that match is not offered.")
        if data.get("action") == BulkAction.JUDGE and not data.get("judge"):
            self.add_error("judge", "Choose the judge to run.")
        if data.get("action") == BulkAction.MORE_LABELS and not data.get("more"):
            self.add_error("more", "Say how many more labels each record needs.")
        return data

    def action_arguments(self) -> dict[str, Any]:
        """What records_bulk_apply takes besides the records: the action and its settings."""
        data = self.cleaned_data
        return {"action": data["action"], "judge": data["judge"], "more": data["more"]}
