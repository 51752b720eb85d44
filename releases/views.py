"""Release pages: the list, a new release, one release with its build progress and files, what
changed since the previous one, and the file downloads."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, Concatenate, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseStopPolling
from django_htmx.middleware import HtmxDetails

from annotation.selectors import records_in_annotation
from curation.access import ANY_MEMBER, MANAGERS, ProjectAccess, project_access, project_view
from curation.errors import DomainError
from curation.models import Project
from curation.requests import AuthenticatedRequest
from releases.access import is_published, readable_release
from releases.build import build_progress, release_check, release_file_path
from releases.changes import LISTED, release_changes
from releases.forms import ReleaseForm, VisibilityForm
from releases.models import Release
from releases.scores import release_sources, source_name
from releases.services import (
    left_out_text,
    release_create_as_chosen,
    release_delete,
    release_preview_as_chosen,
    release_retry,
    release_update,
)


class ReleaseRequest(HttpRequest):
    """A request to a release's pages: the visitor may be anyone (a public release is open to
    all, signed in or not), and the htmx middleware has said whether htmx sent it."""

    htmx: HtmxDetails


def release_view[**P](
    view: Callable[Concatenate[ReleaseRequest, Release, P], HttpResponseBase],
) -> Callable[Concatenate[HttpRequest, str, int, P], HttpResponseBase]:
    """A view of one release, open to whoever may read it (see readable_release); anonymous
    visitors of a release that is not public are sent to log in."""

    @login_not_required
    @wraps(view)
    def wrapper(
        request: HttpRequest, /, slug: str, release_id: int, *args: P.args, **kwargs: P.kwargs
    ) -> HttpResponseBase:
        try:
            release = readable_release(request.user, slug, release_id)
        except Http404:
            if request.user.is_authenticated:
                raise
            return redirect_to_login(request.get_full_path())
        # HtmxMiddleware, in settings.MIDDLEWARE, sets `request.htmx` on every request.
        return view(cast(ReleaseRequest, request), release, *args, **kwargs)

    return wrapper


@require_GET
@project_view(ANY_MEMBER)
def release_list(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    releases = access.project.releases.select_related("created_by")
    if not access.is_manager:
        releases = releases.filter(public=True, state=Release.State.BUILT)
    context = {"project": access.project, "access": access, "releases": releases}
    return render(request, "releases/list.html", context)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def release_new(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    project = access.project
    latest = project.releases.order_by("-created_at").first()
    in_annotation = records_in_annotation(project)
    form = ReleaseForm(
        request.POST or None,
        project=project,
        initial={"license": project.license, "leave_out_in_annotation": True},
    )
    # "Check what it would hold" counts the release without making it: no version needed.
    previewing = "preview" in request.POST
    if previewing:
        form.fields["version"].required = False
    preview = None
    if request.method == "POST" and form.is_valid():
        try:
            if previewing:
                preview = release_preview_as_chosen(
                    actor=request.user, project=project, choices=form.cleaned_data
                )
            else:
                release = release_create_as_chosen(
                    actor=request.user, project=project, choices=form.cleaned_data
                )
                return redirect("releases:release_detail", project.slug, release.pk)
        except DomainError as error:
            form.add_error(None, error.message)
    context = {
        "project": project,
        "access": access,
        "form": form,
        "latest": latest,
        "in_annotation": in_annotation,
        "preview": preview,
        "left_out": left_out_text(preview.excluded) if preview and preview.excluded else "",
    }
    return render(request, "releases/new.html", context)


def _context(request: HttpRequest, release: Release) -> dict[str, Any]:
    project: Project = release.project
    try:
        access = project_access(request.user, project.slug, ANY_MEMBER)
    except (Http404, PermissionDenied):
        # Someone from outside the project, reading a public release.
        access = None
    return {
        "project": project,
        "access": access,
        "release": release,
        "is_manager": access is not None and access.is_manager,
        "published": is_published(release),
        "progress": build_progress(release),
        "score_sources": [
            (scale, source_name(source))
            for scale, source in release_sources(release.options).items()
        ],
    }


@require_GET
# The same URL answers htmx's polls with the build status alone: caches must keep them apart.
@vary_on_headers("HX-Request")
@release_view
def release_detail(request: ReleaseRequest, release: Release) -> HttpResponse:
    context = _context(request, release)
    if not request.htmx:
        return render(request, "releases/detail.html", context)
    response = render(request, "releases/detail.html#status", context)
    if release.state in (Release.State.BUILT, Release.State.FAILED):
        # The files replace the progress bar, and htmx stops polling.
        return HttpResponseStopPolling(response.content)
    return response


@require_GET
@release_view
def release_changes_page(request: ReleaseRequest, release: Release) -> HttpResponse:
    changes = release_changes(release)
    context = {
        **_context(request, release),
        "changes": changes,
        # Long lists are cut: the dataset card and the files say the rest.
        "added": changes.added[:LISTED],
        "removed": changes.removed[:LISTED],
        "relabelled": changes.relabelled[:LISTED],
        "more_added": max(0, len(changes.added) - LISTED),
        "more_removed": max(0, len(changes.removed) - LISTED),
        "more_relabelled": max(0, len(changes.relabelled) - LISTED),
    }
    return render(request, "releases/changes.html", context)


@require_GET
@release_view
def release_file(request: ReleaseRequest, release: Release, name: str) -> FileResponse:
    if release.state != Release.State.BUILT:
        raise Http404("This release is not built yet.")
    path = release_file_path(release, name)
    if path is None or not path.is_file():
        raise Http404("No such file in this release.")
    # Streamed from disk in blocks, as an attachment: never rendered by the browser.
    return FileResponse(open(path, "rb"), as_attachment=True, filename=name)


def _managed_release(access: ProjectAccess, release_id: int) -> Release:
    return get_object_or_404(access.project.releases, pk=release_id)


@require_POST
@project_view(MANAGERS)
def release_check_files(
    request: AuthenticatedRequest, access: ProjectAccess, release_id: int
) -> HttpResponse:
    release = _managed_release(access, release_id)
    if release.state != Release.State.BUILT:
        messages.error(request, "Only a built release has files to check.")
    elif problems := release_check(release):
        for problem in problems:
            messages.error(request, f"Check failed: {problem}")
    else:
        messages.success(request, "Every file matches its size and SHA-256 in the manifest.")
    return redirect("releases:release_detail", access.project.slug, release.pk)


@require_POST
@project_view(MANAGERS)
def release_visibility(
    request: AuthenticatedRequest, access: ProjectAccess, release_id: int
) -> HttpResponse:
    release = _managed_release(access, release_id)
    form = VisibilityForm(request.POST)
    if not form.is_valid():
        # The page's buttons send "true" or "false": anything else is not theirs.
        raise BadRequest("Say whether the release is public: true or false.")
    public = form.cleaned_data["public"]
    if public and release.summary.get("in_annotation") and request.POST.get("confirm") != "yes":
        messages.error(
            request,
            "The release holds records still being annotated: tick “Publish it anyway” to make "
            "it public, or create a release that leaves them out.",
        )
        return redirect("releases:release_detail", access.project.slug, release.pk)
    release_update(actor=request.user, release=release, public=public)
    messages.success(
        request,
        "The release is public: anyone may download it."
        if public
        else "The release is private: only managers may download it.",
    )
    return redirect("releases:release_detail", access.project.slug, release.pk)


@require_POST
@project_view(MANAGERS)
def release_rebuild(
    request: AuthenticatedRequest, access: ProjectAccess, release_id: int
) -> HttpResponse:
    release = _managed_release(access, release_id)
    try:
        release_retry(actor=request.user, release=release)
    except DomainError as error:
        messages.error(request, error.message)
    return redirect("releases:release_detail", access.project.slug, release.pk)


@require_POST
@project_view(MANAGERS)
def release_remove(
    request: AuthenticatedRequest, access: ProjectAccess, release_id: int
) -> HttpResponse:
    if not request.user.is_superuser:
        raise PermissionDenied("Only a site administrator can delete a release.")
    release = _managed_release(access, release_id)
    release_delete(actor=request.user, release=release)
    messages.success(request, f"Release {release.version} and its files are deleted.")
    return redirect("releases:release_list", access.project.slug)
