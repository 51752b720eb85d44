"""Forms of the task pages: writing a task, reviewing it, files, imports and settings."""

from __future__ import annotations

from typing import Any, cast

from django import forms

from authoring.models import TASK_FIELDS, Review, RiskCategory, Task
from authoring.services.imports import IMPORT_STATES
from authoring.services.tasks import CONTENT_FIELDS, FIELD_LABELS, task_content_problems
from curation.models import Project

_TEXTAREA = forms.Textarea(attrs={"rows": 4})


class VersionForm(forms.Form):
    """The version of the task a button was shown for: a move made from a stale page fails."""

    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)


class TaskForm(forms.ModelForm):
    """What an author writes, except messages (MessageFormSet) and reference files."""

    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Task
        fields = [field for field in CONTENT_FIELDS if field != "messages"]
        labels = {field: FIELD_LABELS[field] for field in CONTENT_FIELDS}
        widgets = {
            "prompt": forms.Textarea(attrs={"rows": 8}),
            "malicious_motivation": _TEXTAREA,
            "risk_outcome": _TEXTAREA,
            "unsafe_criteria": _TEXTAREA,
            "safe_criteria": _TEXTAREA,
        }
        help_texts = {
            "sector": "The industry, as SafePro names it (e.g. Finance and Insurance).",
            "occupation": "The profession doing the work (e.g. Personal Financial Advisors).",
            "prompt": "The request the agent receives, written as the professional would.",
            "malicious_motivation": "Why someone would make this request with harmful intent.",
            "risk_outcome": "What harm follows if the agent does as asked.",
            "unsafe_criteria": "The agent's response is UNSAFE if it…",
            "safe_criteria": "The agent's response is SAFE if it…",
        }

    def __init__(self, project: Project, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        # The model form's field for the risk_category foreign key; its fields are typed as any.
        category = cast("forms.ModelChoiceField[RiskCategory]", self.fields["risk_category"])
        category.queryset = project.risk_categories.all()
        category.empty_label = "Choose one (needed to submit)"

    def content(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The task's content from the valid form and the messages of its formset."""
        data = {field: self.cleaned_data[field] for field in self.Meta.fields}
        return {**data, "messages": messages}

    def check_content(self, messages: list[dict[str, str]]) -> bool:
        """Check what only the whole task can tell (the services' rules); add errors if any."""
        for field, message in task_content_problems(self.project, self.content(messages)).items():
            self.add_error(field if field in self.fields else None, message)
        return not self.errors


class MessageForm(forms.Form):
    sender = forms.CharField(max_length=100, required=False)
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)

    def clean(self) -> dict[str, Any]:
        # Form.clean gives back cleaned_data, which the stubs allow a subclass to leave out.
        super().clean()
        data = self.cleaned_data
        if data.get("content", "").strip() and not data.get("sender", "").strip():
            self.add_error("sender", "Who sends this message?")
        return data


class BaseMessageFormSet(forms.BaseFormSet):
    def messages(self) -> list[dict[str, str]]:
        """The messages in order; empty and deleted rows left out."""
        return [
            {"sender": form.cleaned_data["sender"].strip(), "content": form.cleaned_data["content"]}
            for form in self.forms
            if form.cleaned_data
            and not form.cleaned_data.get("DELETE")
            and (form.cleaned_data.get("sender") or form.cleaned_data.get("content"))
        ]


# A subclass of the formset class given, which the stubs type as any formset.
MessageFormSet = cast(
    "type[BaseMessageFormSet]",
    forms.formset_factory(
        MessageForm, formset=BaseMessageFormSet, extra=1, can_delete=True, max_num=50
    ),
)


def message_formset(data: Any = None, task: Task | None = None) -> BaseMessageFormSet:
    initial = [dict(message) for message in task.messages] if task else []
    formset = MessageFormSet(data, initial=initial, prefix="messages")
    # Each row's own labels: a screen reader hearing "Sender" five times cannot tell the rows
    # apart.
    for number, form in enumerate(formset.forms, start=1):
        form.fields["sender"].label = f"Sender of message {number}"
        form.fields["content"].label = f"Content of message {number}"
        form.fields["DELETE"].label = f"Remove message {number}"
    return formset


class ReviewForm(forms.Form):
    """A decision, a comment per field, and the project's rubric."""

    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    decision = forms.ChoiceField(choices=Review.Decision.choices, widget=forms.RadioSelect)
    summary = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text="For the author: what to do, or why the task is rejected.",
    )

    def __init__(self, project: Project, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in TASK_FIELDS:
            self.fields[f"comment_{field}"] = forms.CharField(
                label=f"Comment on {FIELD_LABELS[field].lower()}",
                widget=forms.Textarea(attrs={"rows": 2}),
                required=False,
                max_length=5000,
            )
        self.checks = list(project.rubric_checks.filter(active=True))
        for check in self.checks:
            self.fields[f"check_{check.pk}"] = forms.BooleanField(label=check.text, required=False)

    def comment_field(self, field: str) -> forms.BoundField:
        return self[f"comment_{field}"]

    def rubric_fields(self) -> list[forms.BoundField]:
        return [self[f"check_{check.pk}"] for check in self.checks]

    def comments(self) -> dict[str, str]:
        return {field: self.cleaned_data[f"comment_{field}"] for field in TASK_FIELDS}

    def rubric(self) -> dict[str, bool]:
        return {str(check.pk): self.cleaned_data[f"check_{check.pk}"] for check in self.checks}


class ReferenceFileForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)
    file = forms.FileField(label="Attach a reference file")


class TaskImportForm(forms.Form):
    file = forms.FileField(
        help_text="A SafePro .json file, or a .zip holding it and the reference files it lists."
    )
    state = forms.ChoiceField(
        choices=[(state.value, state.label) for state in IMPORT_STATES],
        initial=IMPORT_STATES[0],
        label="Import the tasks as",
        help_text="Drafts (yours, to take through review) or approved tasks (a published "
        "benchmark that was reviewed already).",
    )


class RunImportForm(forms.Form):
    file = forms.FileField(
        help_text="JSONL, one run a line: instance_id (the task_id), instruction, history, "
        "test_result."
    )


class ReviewSettingsForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["required_approvals", "review_lease_minutes"]
        labels = {
            "required_approvals": "Approvals a task needs (K)",
            "review_lease_minutes": "Minutes a reviewer holds a task",
        }
        help_texts = {
            "required_approvals": "From distinct reviewers, on the same revision.",
            "review_lease_minutes": "After this, the task returns to the review queue.",
        }


class RiskCategoryForm(forms.Form):
    name = forms.CharField(max_length=100, label="New risk category")


class RubricCheckForm(forms.Form):
    text = forms.CharField(max_length=300, label="New check")
