"""Forms of the judging pages: judges, prompt templates, runs and verdict imports."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, cast

from django import forms
from django.db.models import QuerySet

from curation.models import Category, Project
from judging.models import Judge, JudgeRun, ModelConnection, Panel, PromptTemplate, Verdict
from judging.parameters import PARAMETERS
from judging.protocols.custom import PLACEHOLDERS
from judging.services.verdict_import import ID_FIELDS, IMPORTABLE


class JudgeForm(forms.ModelForm):
    parameters = forms.JSONField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="A JSON object sent with every call; keys among "
        f"{', '.join(sorted(PARAMETERS))} (temperature 0 to 2, top_p 0 to 1, penalties -2 to 2, "
        "max_tokens at most what the connection allows).",
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
        # The model form's field for the template foreign key and the one declared above; a
        # form's fields are typed as any field.
        template = cast("forms.ModelChoiceField[PromptTemplate]", self.fields["template"])
        template.queryset = project.prompt_templates.all()
        model = cast(forms.ChoiceField, self.fields["model"])
        connections = list(ModelConnection.objects.all())
        model.choices = [("", "---------")] + [
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
    categories: forms.ModelMultipleChoiceField[Category] = forms.ModelMultipleChoiceField(
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
        # The fields declared above; a form's fields are typed as any field.
        judge = cast("forms.ModelChoiceField[Judge]", self.fields["judge"])
        judge.queryset = project.judges.all()
        categories = cast("forms.ModelMultipleChoiceField[Category]", self.fields["categories"])
        categories.queryset = project.categories.all()


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


class RunsField(forms.ModelMultipleChoiceField):
    """Runs to tick, each named as pages name it: two runs of one name are told apart."""

    def label_from_instance(self, obj: JudgeRun) -> str:
        return obj.display_name


class PanelForm(forms.Form):
    members = RunsField(
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
        # The field declared above; a form's fields are typed as any field.
        members = cast(RunsField, self.fields["members"])
        members.queryset = runs


class VerdictFilterForm(forms.Form):
    parse_status = forms.ChoiceField(
        required=False, choices=[("", "Any"), *Verdict.Parse.choices], label="Parse status"
    )
