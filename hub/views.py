"""The record list, the record page and the project's status: what every domain says about a
project's records.

They are the hub's, which sees labels, verdicts and disagreements together and on which nothing
depends (docs/architecture.md, "The record as the hub"); curation keeps what a record is made
of.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBase, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.models import Annotation
from curation import selectors
from curation.access import ANY_MEMBER, MANAGERS, RECORD_READERS, ProjectAccess, project_view
from curation.conversation import conversation, metadata_items, test_case_sections
from curation.errors import DomainError
from curation.models import Project
from curation.record_table import RecordPaginator, filter_form
from curation.requests import AuthenticatedRequest
from curation.services.record_deletion import records_delete, records_deletion_count
from hub.exports import FORMATS, export_response
from hub.forms import RecordBulkForm, RecordListForm
from hub.project_status import project_status
from hub.record_list import (
    annotator_names,
    listed_records,
    matching_count,
    matching_record_ids,
    record_rows,
    run_choices,
    shown_runs,
)
from hub.record_page import record_hub
from hub.services import BulkAction, BulkOutcome, records_bulk_apply


@require_GET
# The same URL answers htmx with the results alone: caches must keep the two apart.
@vary_on_headers("HX-Request")
@project_view(RECORD_READERS)
def record_list(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    project = access.project
    runs = run_choices(project)
    form = filter_form(
        RecordListForm, project, request.GET, runs=runs, annotators=annotator_names(project)
    )
    ids = listed_records(project, form.cleaned_data) if form.is_valid() else project.records.none()
    searching = bool(form.cleaned_data.get("q"))
    paginator = RecordPaginator(
        ids.values_list("id", flat=True),
        form.cleaned_data.get("per_page") or RecordListForm.PER_PAGE,
        max_count=selectors.SEARCH_MATCH_LIMIT if searching else None,
    )
    page = paginator.get_page(request.GET.get("page"))
    columns = shown_runs(runs, form.cleaned_data.get("run"))
    list_url = reverse("hub:record_list", args=[project.slug])
    rows = record_rows(project, list(page.object_list), columns, url_prefix=list_url)
    context = {
        "project": project,
        "access": access,
        "form": form,
        "page": page,
        "runs": columns,
        "records": rows,
        # Columns only some formats fill (R-Judge's attack type, ToolEmu's agent): shown when a
        # record of the page has one, so that the list is no wider than what it says.
        "with_attack_type": any(row["attack_type"] for row in rows),
        "with_source_agent": any(row["source_agent"] for row in rows),
        "not_yet_searchable": selectors.records_not_yet_searchable(project) if searching else 0,
        "bulk": RecordBulkForm(project=project) if access.is_manager else None,
    }
    # A history restore asks for the whole page, though it comes from htmx too.
    partial = request.htmx and not request.htmx.history_restore_request
    return render(request, "hub/record_list.html" + ("#results" if partial else ""), context)


@require_GET
@project_view(RECORD_READERS)
def record_export(
    request: AuthenticatedRequest, access: ProjectAccess, file_format: str
) -> HttpResponseBase:
    """The records the list's filters match, with their labels as they stand, as a download."""
    if file_format not in FORMATS:
        raise Http404("Records are exported as jsonl or csv.")
    form = RecordListForm.of_project(access.project, request.GET)
    if not form.is_valid():
        messages.error(request, "The filters are not valid: correct them on the list, then export.")
        return redirect(reverse("hub:record_list", args=[access.project.slug]))
    try:
        ids = matching_record_ids(access.project, form.cleaned_data)
    except DomainError as error:
        messages.error(request, error.message)
        return redirect(reverse("hub:record_list", args=[access.project.slug]))
    return export_response(access.project, ids, file_format)


@require_POST
@project_view(MANAGERS)
def record_bulk(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """Start a judge run on the chosen records, send them to adjudication, or ask for more
    labels; back to the list as it was filtered. Acting on every record that matches the
    list's filters goes through a page that counts them and asks to confirm."""
    form = RecordBulkForm(request.POST, project=access.project)
    back = request.POST.get("back", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("hub:record_list", args=[access.project.slug])
    try:
        if form.is_matching:
            return _bulk_matching(request, access, form, back)
        if form.is_valid() and form.cleaned_data["action"] == RecordBulkForm.DELETE:
            return _bulk_delete(request, access, form, back)
        if form.is_valid():
            outcome = records_bulk_apply(
                actor=request.user,
                project=access.project,
                record_ids=form.cleaned_data["records"],
                **form.action_arguments(),
            )
            messages.success(request, _bulk_done(outcome, access.project))
        for errors in form.errors.values():
            # An ErrorList gives its messages as text, which its stubs do not say.
            messages.error(request, " ".join(str(error) for error in errors))
    except DomainError as error:
        messages.error(request, str(error))
    return redirect(back)


def _bulk_matching(
    request: AuthenticatedRequest, access: ProjectAccess, form: RecordBulkForm, back: str
) -> HttpResponse:
    """Every record that the filters the form was sent with match, as they match now: counted
    for the manager to confirm, then acted on (the count may have moved in between)."""
    filters = RecordListForm.of_project(access.project, QueryDict(request.POST.get("filters", "")))
    if not filters.is_valid():
        raise DomainError("The list's filters are no longer valid: filter the list again.")
    confirmed = request.POST.get("confirm") == "yes"
    if confirmed and form.is_valid():
        outcome = records_bulk_apply(
            actor=request.user,
            project=access.project,
            matching=filters.cleaned_data,
            **form.action_arguments(),
        )
        messages.success(
            request, _bulk_done(outcome, access.project, expected=form.cleaned_data["expected"])
        )
        return redirect(back)
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "show_errors": confirmed,
        "count": matching_count(access.project, filters.cleaned_data),
        "filters": filters.described(),
        "filter_query": filters.filter_query(),
        "back": back,
    }
    return render(request, "hub/record_bulk_confirm.html", context)


def _bulk_delete(
    request: AuthenticatedRequest, access: ProjectAccess, form: RecordBulkForm, back: str
) -> HttpResponse:
    """The ticked records: what goes with them shown for the manager to confirm, then deleted."""
    records = access.project.records.filter(pk__in=form.cleaned_data["records"])
    if request.POST.get("confirm") == "yes":
        deleted = records_delete(actor=request.user, project=access.project, records=records)
        messages.success(request, f"Deleted {deleted.described()}.")
        return redirect(back)
    context = {
        "project": access.project,
        "access": access,
        "deletion": records_deletion_count(records),
        "record_ids": form.cleaned_data["records"],
        "back": back,
    }
    return render(request, "hub/record_delete_confirm.html", context)


def _bulk_done(
    outcome: BulkOutcome, project: Project, *, expected: int | None = None
) -> SafeString:
    """What a bulk action did, in words, a run started linked to its page; with how many
    records matched when the manager confirmed, if the filters match another number now."""
    n = outcome.records
    records = f"{n:,} record{'s' if n != 1 else ''}"
    if outcome.run is not None:
        page = reverse("judging:run_detail", args=[project.slug, outcome.run.pk])
        # format_html escapes the run's name: it is a manager's text.
        done = format_html(
            'Run <a href="{}">“{}”</a> started on {}.', page, outcome.run.display_name, records
        )
    elif outcome.more is not None:
        more = outcome.more
        done = format_html("{} will get {} more label{}.", records, more, "s" if more != 1 else "")
    else:
        done = format_html("{} sent to adjudication.", records)
    if outcome.matched is not None and n != outcome.matched:
        why_skipped: dict[str, str] = {
            BulkAction.JUDGE: "the judge takes only records linked to a task",
            BulkAction.ADJUDICATE: "the others were waiting for adjudication already",
        }
        skipped = why_skipped.get(outcome.action, "the others needed nothing done")
        done += format_html(" The filters matched {}: {}.", f"{outcome.matched:,}", skipped)
    if outcome.matched is not None and expected is not None and expected != outcome.matched:
        done += format_html(
            " When you confirmed they matched {}: the records changed since.", f"{expected:,}"
        )
    return done


@require_GET
@project_view(ANY_MEMBER)
def record_detail(
    request: AuthenticatedRequest, access: ProjectAccess, record_id: int
) -> HttpResponse:
    if not access.can_read_records:
        # Annotators see their own label of it, on the page where they may edit it, and
        # nothing else of the record: not whether it exists if they never labelled it.
        own = Annotation.objects.filter(
            project=access.project, record_id=record_id, annotator=request.user
        ).first()
        if own is None:
            raise PermissionDenied("Records are shown to annotators through their own labels.")
        return redirect("annotation:annotation_edit", access.project.slug, own.pk)
    records = access.project.records
    record = get_object_or_404(
        records.select_related("category", "scenario", "batch"), pk=record_id
    )
    ids = records.values_list("id", flat=True)
    context = {
        "project": access.project,
        "access": access,
        "record": record,
        "hub": record_hub(record),
        "turns": conversation(record.turns, tools=selectors.tool_summaries(access.project)),
        "metadata": metadata_items(record.metadata),
        "test_case": test_case_sections(record.test_case),
        "previous_id": ids.filter(id__lt=record.pk).order_by("-id").first(),
        "next_id": ids.filter(id__gt=record.pk).order_by("id").first(),
    }
    return render(request, "hub/record_detail.html", context)


@require_GET
@vary_on_headers("HX-Request")
@project_view(RECORD_READERS)
def project_status_view(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """How the project stands: its own page, and the section the project's overview loads."""
    context = {
        "project": access.project,
        "access": access,
        "status": project_status(access.project),
    }
    if request.htmx:
        return render(request, "hub/project_status.html#status", context)
    return render(request, "hub/project_status.html", context)
