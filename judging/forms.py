"""Forms of the judging pages: judges, prompt templates, runs and verdict imports."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.forms.utils import pretty_name
from django.http import QueryDict

from annotation.services.queue import MORE_LABELS_MAX
from curation.forms import RecordFilterForm
from curation.models import Project
from judging.alignment import DEFAULT_EXAMPLES, MAX_EXAMPLES, Settled
from judging.client import PARAMETERS
from judging.models import Judge, JudgeRun, JudgeVersion, ModelConnection, Panel, PromptTemplate
from judging.protocols.custom import PLACEHOLDERS
from judging.record_list import FILTERS, run_choices
from judging.services.record_actions import BulkAction
from judging.services.verdict_import import ID_FIELDS, IMPORTABLE


class JudgeForm(forms.ModelForm):
    parameters = forms.JSONField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="A JSON object sent with every call; keys among "
        f"{', '.join(sorted(PARAMETERS))}.",
    )
    # The models of every connection, grouped by connection; the service checks that the one
    # chosen belongs to the connection chosen.
    model = forms.ChoiceField(help_text="One of the models its connection offers.")

    class Meta:
        model = Judge
        fields = [
            "name",
            "protocol",
            "connection",
            "model",
            "template",
            "parameters",
            "concurrency",
            "timeout_seconds",
            "max_retries",
        ]
        labels = {
            "connection": "Model connection",
            "template": "Prompt template (custom judges)",
            "timeout_seconds": "Timeout (seconds)",
            "concurrency": "Calls at once",
        }
        help_texts = {
            "connection": "The endpoints site administrators have set up for judges.",
            "concurrency": "Calls in flight at once during a run, at most the connection's limit.",
            "max_retries": "Retries of a call after a 429, a 5xx or a timeout, with backoff.",
        }

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["template"].queryset = project.prompt_templates.all()
        connections = list(ModelConnection.objects.all())
        self.fields["model"].choices = [("", "---------")] + [
            (connection.name, [(name, name) for name in connection.offered_models])
            for connection in connections
        ]
        if self.instance.pk is None:
            self.initial.setdefault("parameters", {"temperature": 0})

    def clean_parameters(self) -> dict[str, Any]:
        return self.cleaned_data["parameters"] or {}


class PromptTemplateForm(forms.ModelForm):
    class Meta:
        model = PromptTemplate
        fields = ["name", "answer", "system", "user"]
        labels = {"system": "System prompt", "user": "User prompt", "answer": "The answer is"}
        help_texts = {
            "user": (
                "Placeholders, each replaced by that part of the record fenced as data: "
                + ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
                + ". {interaction} is required. Ask for the answer alone on the last line: safe "
                "or unsafe, or a score from 0 to 3."
            ),
        }


class RunForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    name = forms.CharField(
        required=False, max_length=200, help_text="Defaults to the judge and date."
    )
    categories = forms.ModelMultipleChoiceField(
        queryset=None,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every category.",
    )
    only_labelled = forms.BooleanField(required=False, label="Only records with a human label")
    sample = forms.IntegerField(
        required=False, min_value=1, help_text="A random sample of this many records, if set."
    )
    seed = forms.IntegerField(
        required=False, min_value=0, help_text="Repeat an earlier sample by giving its seed."
    )
    budget = forms.DecimalField(
        required=False,
        min_value=Decimal("0.0001"),
        max_digits=12,
        decimal_places=4,
        help_text="The most the run may cost at its connection's prices: it stops there. "
        "Empty: no budget.",
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = project.judges.all()
        self.fields["categories"].queryset = project.categories.all()


class VerdictImportForm(forms.Form):
    file = forms.FileField(help_text="JSONL, one evaluation a line.")
    protocol = forms.ChoiceField(choices=list(IMPORTABLE.items()), label="Made with")
    name = forms.CharField(required=False, max_length=200, help_text="Defaults to the file's name.")
    id_field = forms.CharField(
        required=False,
        max_length=100,
        label="Id field",
        help_text=(
            "The field holding the record's external id; empty: the first of "
            f"{', '.join(ID_FIELDS)} a line has."
        ),
    )


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
        self.fields["records"].choices = [
            (case.record_id, f"{case.external_id} ({case.category}): {case.label}")
            for case in cases
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("picked") == JudgeVersion.Picked.BY_HAND and not data.get("records"):
            self.add_error("records", "Tick the settled cases to quote.")
        return data


class PanelForm(forms.Form):
    members = forms.ModelMultipleChoiceField(
        queryset=JudgeRun.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        label="Runs",
        help_text="Two or more ended runs of safety labels; the panel covers the records all of "
        "them judged.",
    )
    rule = forms.ChoiceField(choices=Panel.Rule.choices, initial=Panel.Rule.MAJORITY)
    name = forms.CharField(required=False, max_length=200, help_text="Defaults to its members.")

    def __init__(self, *args: Any, runs: QuerySet[JudgeRun], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["members"].queryset = runs


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
        empty_value=PER_PAGE,
        label="Per page",
        choices=[(str(n), str(n)) for n in (25, 50, 100, 200)],
    )

    def __init__(self, data: QueryDict, *, runs: list[tuple[int, str]], **kwargs: Any) -> None:
        if "per_page" not in data:
            # Shown as chosen, rather than the first size offered.
            data = data.copy()
            data["per_page"] = str(self.PER_PAGE)
        super().__init__(data, **kwargs)
        self.fields["run"].choices = [("", "Any"), *runs]

    @classmethod
    def of_project(cls, project: Project, data: QueryDict) -> RecordListForm:
        """The form over `data`, its runs those of the project (without the page's widgets)."""
        return cls(data, runs=run_choices(project))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
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
    action = forms.ChoiceField(choices=BulkAction.choices)
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
        self.fields["judge"].queryset = project.judges.order_by("name")

    @property
    def is_matching(self) -> bool:
        return self.data.get("scope") == self.MATCHING

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not self.is_matching and not data.get("records"):
            self.add_error("records", "Choose records first.")
        if data.get("action") == BulkAction.JUDGE and not data.get("judge"):
            self.add_error("judge", "Choose the judge to run.")
        if data.get("action") == BulkAction.MORE_LABELS and not data.get("more"):
            self.add_error("more", "Say how many more labels each record needs.")
        return data

    def action_arguments(self) -> dict[str, Any]:
        """What records_bulk_apply takes besides the records: the action and its settings."""
        data = self.cleaned_data
        return {"action": data["action"], "judge": data["judge"], "more": data["more"]}
