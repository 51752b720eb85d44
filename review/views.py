"""The adjudication queue, and the page where a reviewer settles one record's final label."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods

from curation.access import RECORD_READERS, ProjectAccess, project_view
from curation.conversation import conversation, test_case_sections, with_evidence
from curation.errors import DomainError
from curation.models import Record
from curation.requests import AuthenticatedRequest
from curation.selectors import tool_summaries
from review import selectors
from review.forms import AdjudicationForm, QueueFilterForm
from review.services.adjudications import adjudication_create, score_adjudication_create

PAGE_SIZE = 50


@require_GET
@project_view(RECORD_READERS)
def adjudication_queue(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    kind = _queue_kind(request)
    records = selectors.adjudication_queue(access.project, kind=kind)
    context = {
        "project": access.project,
        "access": access,
        "form": QueueFilterForm(request.GET),
        "page": Paginator(records, PAGE_SIZE).get_page(request.GET.get("page")),
        "kind": kind,
    }
    return render(request, "review/adjudication_queue.html", context)


@require_http_methods(["GET", "POST"])
@project_view(RECORD_READERS)
def adjudication_record(
    request: AuthenticatedRequest, access: ProjectAccess, record_id: int
) -> HttpResponse:
    record = get_object_or_404(
        access.project.records.select_related("project", "category", "scenario"), pk=record_id
    )
    # The queue's filter, kept from one record to the next.
    kind = _queue_kind(request)
    opinions = selectors.record_opinions(record)
    form = AdjudicationForm(request.POST or None, scales=opinions.scales_to_settle)
    if request.method == "POST" and form.is_valid():
        try:
            settled = _settle(request, access, record, form)
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Record {record.external_id} settled: {settled}.")
            return _settle_next(access, record, kind)
    context = {
        "project": access.project,
        "access": access,
        "record": record,
        "opinions": opinions,
        "turns": with_evidence(
            conversation(record.turns, tools=tool_summaries(access.project)), opinions.evidence
        ),
        "test_case": test_case_sections(record.test_case),
        "form": form,
        "kind": kind,
    }
    return render(request, "review/adjudication_record.html", context)


def _settle(
    request: AuthenticatedRequest, access: ProjectAccess, record: Record, form: AdjudicationForm
) -> str:
    """Write the reviewer's final label and settled scores, together or not at all; what was
    settled, as the message after says it."""
    data, said = form.cleaned_data, []
    with transaction.atomic():
        if data["label"]:
            adjudication_create(
                actor=request.user,
                project=access.project,
                record=record,
                label=data["label"],
                reason=data["reason"],
                risk_description=data["risk_description"],
            )
            said.append(f"its final label is {data['label']}")
        if scores := form.scores():
            score_adjudication_create(
                actor=request.user,
                project=access.project,
                record=record,
                scores=scores,
                reason=data["reason"],
            )
            said += [f"its {scale} score is {score}" for scale, score in scores.items()]
    return ", ".join(said)


def _queue_kind(request: AuthenticatedRequest) -> str:
    form = QueueFilterForm(request.GET)
    return form.cleaned_data["kind"] if form.is_valid() else ""


def _settle_next(access: ProjectAccess, record: Record, kind: str) -> HttpResponse:
    """The queue's next open disagreement, or the queue once none is left."""
    query = f"?{urlencode({'kind': kind})}" if kind else ""
    next_id = selectors.adjudication_next(access.project, kind=kind, after=record)
    if next_id is None:
        return redirect(reverse("review:adjudication_queue", args=[access.project.slug]) + query)
    url = reverse("review:adjudication_record", args=[access.project.slug, next_id])
    return redirect(url + query)
