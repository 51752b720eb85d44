"""The forms of the report pages: which runs, reference, scale, sources and view a page shows,
with the defaults each takes when a query leaves them out, as the API does."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.db.models import QuerySet
from django.http import QueryDict

from curation.choices import ScoreScale
from curation.models import Project
from judging.forms import RunsField
from judging.models import JudgeRun
from reports import agreement as annotator_agreement
from reports import evaluators as report_of
from reports import quality as judge_quality
from reports.score_sources import UnknownSource, score_sources, toolkit_names
from reports.source_models import view_choices


class QualityForm(forms.Form):
    reference = forms.ChoiceField(
        choices=judge_quality.Reference.choices,
        initial=judge_quality.Reference.GOLD,
        label="Compared with",
    )
    runs = RunsField(
        queryset=JudgeRun.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        label="Runs",
        # None ticked: the latest ones (see with_defaults), or none when the project has none.
        required=False,
    )
    include_flagged = forms.BooleanField(
        required=False,
        label="Include runs whose answers are mostly invalid or errors",
        help_text="More than half of such a run's verdicts are invalid or errors.",
    )

    def __init__(self, *args: Any, runs: QuerySet[JudgeRun], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The field declared above; a form's fields are typed as any field.
        runs_field = cast(RunsField, self.fields["runs"])
        runs_field.queryset = runs


def with_defaults(query: QueryDict, **defaults: list[Any]) -> QueryDict:
    """The page's query with each parameter that it leaves out or empty set to its default, as
    the API does."""
    data = query.copy()
    for name, values in defaults.items():
        if not any(data.getlist(name)):
            data.setlist(name, values)
    return data


class AgreementForm(forms.Form):
    scale = forms.ChoiceField(
        choices=annotator_agreement.Scale.choices, initial=annotator_agreement.Scale.VERDICT
    )


class EvaluatorsForm(forms.Form):
    scale = forms.ChoiceField(choices=ScoreScale.choices, initial=ScoreScale.SAFETY)
    # Empty: the first two sources offered (the latest runs).
    first = forms.ChoiceField(required=False, label="First source")
    second = forms.ChoiceField(required=False, label="Second source")

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        asked = self.data.get("scale")
        scale = asked if asked in ScoreScale.values else ScoreScale.SAFETY
        offered = [("", "The default")] + [(s.key, s.name) for s in score_sources(project, scale)]
        # The choice fields declared above; a form's fields are typed as any field.
        first = cast(forms.ChoiceField, self.fields["first"])
        second = cast(forms.ChoiceField, self.fields["second"])
        first.choices = second.choices = offered

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if "scale" in data:
            try:
                data["first"], data["second"] = report_of.compared_sources(
                    self.project, data["scale"], data.get("first", ""), data.get("second", "")
                )
            except UnknownSource as unknown:
                self.add_error(unknown.field, str(unknown))
        return data


class SourceModelsForm(forms.Form):
    # Empty: the latest safety run and the same evaluator's helpfulness run.
    safety = forms.ChoiceField(required=False, label="Safety scores from")
    helpfulness = forms.ChoiceField(required=False, label="Helpfulness scores from")
    toolkit = forms.ChoiceField(required=False, label="Cases using the toolkit")

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        # The choice fields declared above; a form's fields are typed as any field.
        for scale in ("safety", "helpfulness"):
            offered = score_sources(project, scale, people=False)
            cast(forms.ChoiceField, self.fields[scale]).choices = [("", "The default")] + [
                (source.key, source.name) for source in offered
            ]
        cast(forms.ChoiceField, self.fields["toolkit"]).choices = [("", "Any")] + [
            (name, name) for name in toolkit_names(project)
        ]

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        try:
            data["safety"], data["helpfulness"], data["toolkit"] = view_choices(
                self.project,
                safety=data.get("safety", ""),
                helpfulness=data.get("helpfulness", ""),
                toolkit=data.get("toolkit", ""),
            )
        except UnknownSource as unknown:
            self.add_error(unknown.field, str(unknown))
        return data
