"""The annotator's side: the queue, the labelling page, drafts, skips and their own labels.

Everything here is blind: records are read through selectors_annotation, which never loads the
gold label, the source's risk description or metadata, and no page shows anyone else's label.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from annotation import selectors
from annotation.forms import AnnotationEditForm, LabelForm, SkipForm
from annotation.models import Annotation, GuidelineVersion, Lease
from annotation.services.guidelines import guidelines_html
from annotation.services.labels import (
    annotation_submit,
    annotation_update,
    latest_guideline_version,
)
from annotation.services.queue import lease_draft_save, lease_next_record, lease_skip
from curation.access import ANY_MEMBER, ProjectAccess, annotator_view, project_view
from curation.conversation import conversation, test_case_sections
from curation.errors import Conflict, DomainError
from curation.requests import AuthenticatedRequest
from curation.selectors import tool_summaries

MY_WORK_PAGE_SIZE = 50
GONE = "That record is no longer yours to label: it was labelled, skipped or handed on."


@require_GET
@vary_on_headers("HX-Request")
@annotator_view
def annotate(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """The record the annotator is labelling, or the way to start when they hold none."""
    lease = selectors.live_lease(access.project, request.user)
    return _workspace(request, access, lease)


@require_GET
@vary_on_headers("HX-Request")
@annotator_view
def annotate_lease(
    request: AuthenticatedRequest, access: ProjectAccess, lease_id: int
) -> HttpResponse:
    """A record being labelled, at an address of its own that only its annotator may open."""
    lease = selectors.live_lease(access.project, request.user)
    if lease is not None and lease.pk == lease_id:
        return _workspace(request, access, lease)
    if not Lease.objects.filter(
        pk=lease_id, project=access.project, annotator=request.user
    ).exists():
        raise Http404("No record of yours is being labelled at this address.")
    messages.info(request, GONE)
    return redirect("annotation:annotate", access.project.slug)


@require_POST
@annotator_view
def annotate_next(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    lease = lease_next_record(project=access.project, annotator=request.user)
    if lease is None:
        messages.info(request, "Nothing is left for you to label in this project.")
    return _to_workspace(access, lease)


@require_POST
@annotator_view
def annotate_draft(
    request: AuthenticatedRequest, access: ProjectAccess, lease_id: int
) -> HttpResponse:
    lease = selectors.own_lease(access.project, request.user, lease_id)
    saved = lease is not None and lease_draft_save(
        lease=lease, draft=LabelForm.draft_of(request.POST)
    )
    context = {"draft_saved_at": timezone.now()} if saved else {"draft_failed": True}
    return render(request, "annotation/annotate.html#draft-status", context)


@require_POST
@annotator_view
def annotate_submit(
    request: AuthenticatedRequest, access: ProjectAccess, lease_id: int
) -> HttpResponse:
    lease = selectors.own_lease(access.project, request.user, lease_id)
    if lease is None:
        return _gone(request, access)
    form = LabelForm(request.POST, project=access.project, turn_count=len(lease.record.turns))
    if not form.is_valid():
        return _workspace(request, access, lease, form=form)
    try:
        annotation = annotation_submit(lease=lease, actor=request.user, label=form.to_label())
    except DomainError as error:
        return _workspace(request, access, None, error=error.message)
    return _next(
        request, access, f"Saved your label of record {lease.record.external_id}.", annotation
    )


@require_POST
@annotator_view
def annotate_skip(
    request: AuthenticatedRequest, access: ProjectAccess, lease_id: int
) -> HttpResponse:
    lease = selectors.own_lease(access.project, request.user, lease_id)
    if lease is None:
        return _gone(request, access)
    form = SkipForm(request.POST)
    if not form.is_valid():
        return _workspace(request, access, lease, skip_form=form)
    try:
        lease_skip(lease=lease, actor=request.user, reason=form.cleaned_data["reason"])
    except DomainError as error:
        return _workspace(request, access, None, error=error.message)
    return _next(request, access, f"Skipped record {lease.record.external_id}.")


def _next(
    request: AuthenticatedRequest, access: ProjectAccess, note: str, saved: Annotation | None = None
) -> HttpResponse:
    """After a submit or a skip: the next record, in place for htmx, else by a redirect."""
    lease = lease_next_record(project=access.project, annotator=request.user)
    if not request.htmx:
        messages.success(request, note)
        return _to_workspace(access, lease)
    return _workspace(request, access, lease, note=note, saved=saved)


def _to_workspace(access: ProjectAccess, lease: Lease | None) -> HttpResponse:
    """A redirect to the record being labelled, at its own address, or to the start page."""
    if lease is None:
        return redirect("annotation:annotate", access.project.slug)
    return redirect("annotation:annotate_lease", access.project.slug, lease.pk)


def _gone(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    if not request.htmx:
        messages.error(request, GONE)
        return redirect("annotation:annotate", access.project.slug)
    lease = selectors.live_lease(access.project, request.user)
    return _workspace(request, access, lease, error=GONE)


def _workspace(
    request: AuthenticatedRequest, access: ProjectAccess, lease: Lease | None, **extra: Any
) -> HttpResponse:
    """The labelling page for `lease` (or the start page without one); its body for htmx."""
    project = access.project
    guidelines = latest_guideline_version(project)
    context = {"project": project, "access": access, "lease": lease, "guidelines": guidelines}
    if lease is None:
        context["progress"] = selectors.annotator_progress(project, request.user)
    else:
        turns = conversation(lease.record.turns, tools=tool_summaries(project))
        form = extra.pop("form", None) or LabelForm(
            initial=lease.draft, project=project, turn_count=len(turns)
        )
        context |= {
            "record": lease.record,
            "turns": turns,
            "test_case": test_case_sections(lease.record.test_case),
            "form": form,
            "evidence": form.evidence_selected(),
            "skip_form": extra.pop("skip_form", None) or SkipForm(),
            "guidelines_html": guidelines_html(guidelines) if guidelines else "",
            "expired": lease.state == Lease.State.EXPIRED or lease.expires_at <= timezone.now(),
        }
    template = "annotation/annotate.html" + ("#workspace" if request.htmx else "")
    return render(request, template, context | extra)


@require_GET
@annotator_view
def my_work(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """The annotator's labels, newest first, each editable, with what is done and left."""
    annotations = selectors.own_annotations(access.project, request.user).defer("record__raw")
    page = Paginator(annotations, MY_WORK_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "project": access.project,
        "access": access,
        "page": page,
        "progress": selectors.annotator_progress(access.project, request.user),
    }
    return render(request, "annotation/my_work.html", context)


@require_http_methods(["GET", "POST"])
@annotator_view
def annotation_edit(
    request: AuthenticatedRequest, access: ProjectAccess, annotation_id: int
) -> HttpResponse:
    annotation = _own_annotation(request, access, annotation_id)
    if annotation is None:
        return _label_gone(request, access)
    form = _edit_form(access, annotation, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            annotation_update(
                annotation=annotation,
                actor=request.user,
                label=form.to_label(),
                version=form.cleaned_data["version"],
            )
        except Conflict as error:
            # The newer label as it is now, to edit again from; gone only if its record was
            # deleted since.
            annotation = _own_annotation(request, access, annotation_id)
            if annotation is None:
                return _label_gone(request, access)
            form = _edit_form(access, annotation, None)
            return _edit_page(request, access, annotation, form, conflict=error.message)
        messages.success(request, f"Updated your label of record {annotation.record.external_id}.")
        return redirect("annotation:my_work", access.project.slug)
    return _edit_page(request, access, annotation, form)


def _label_gone(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    messages.error(request, "That label is not yours, or no longer exists.")
    return redirect("annotation:my_work", access.project.slug)


def _own_annotation(
    request: AuthenticatedRequest, access: ProjectAccess, annotation_id: int
) -> Annotation | None:
    return selectors.own_annotations(access.project, request.user).filter(pk=annotation_id).first()


def _edit_page(
    request: AuthenticatedRequest,
    access: ProjectAccess,
    annotation: Annotation,
    form: AnnotationEditForm,
    conflict: str = "",
) -> HttpResponse:
    context = {
        "project": access.project,
        "access": access,
        "annotation": annotation,
        "record": annotation.record,
        "turns": conversation(annotation.record.turns, tools=tool_summaries(access.project)),
        "test_case": test_case_sections(annotation.record.test_case),
        "form": form,
        "evidence": form.evidence_selected(),
        "conflict": conflict,
    }
    return render(request, "annotation/edit.html", context, status=409 if conflict else 200)


def _edit_form(access: ProjectAccess, annotation: Annotation, data: Any) -> AnnotationEditForm:
    initial = LabelForm.initial_of(annotation) | {"version": annotation.version}
    return AnnotationEditForm(
        data,
        initial=initial,
        project=access.project,
        turn_count=len(annotation.record.turns),
    )


@require_GET
@project_view(ANY_MEMBER)
def guidelines(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    """The project's guidelines, the latest version or the one asked for (`?version=2`)."""
    versions = GuidelineVersion.objects.filter(project=access.project).select_related("created_by")
    number = request.GET.get("version", "")
    shown = versions.filter(number=number).first() if number.isdigit() else versions.first()
    context = {
        "project": access.project,
        "access": access,
        "shown": shown,
        "shown_html": guidelines_html(shown) if shown else "",
        "versions": versions,
    }
    return render(request, "annotation/guidelines.html", context)
