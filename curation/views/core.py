"""Home and projects."""

from __future__ import annotations

from collections import defaultdict

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from curation import selectors
from curation.access import ANY_MEMBER, ProjectAccess, project_view
from curation.forms import ProjectForm
from curation.requests import AuthenticatedRequest
from curation.services.projects import project_create


@require_GET
@login_not_required
def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and compose health checks: the process is up and the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


@require_GET
def home(request: AuthenticatedRequest) -> HttpResponse:
    projects = list(selectors.projects_for_user(request.user).order_by("name"))
    counts = selectors.project_counts(projects)
    cards = [(project, counts[project.pk]) for project in projects]
    return render(request, "curation/home.html", {"cards": cards})


@require_http_methods(["GET", "POST"])
def project_new(request: AuthenticatedRequest) -> HttpResponse:
    # Site administrators, and those they allowed on the user page; managers run projects once
    # they exist.
    if not request.user.has_perm("curation.add_project"):
        raise PermissionDenied("Only site administrators, and those they allow, create projects.")
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        project = project_create(actor=request.user, **form.cleaned_data)
        messages.success(request, f"Project “{project.name}” created. You manage it.")
        return redirect("curation:project", project.slug)
    return render(request, "curation/project_new.html", {"form": form})


@require_GET
@project_view(ANY_MEMBER)
def project_overview(request: AuthenticatedRequest, access: ProjectAccess) -> HttpResponse:
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    if access.can_read_records:
        for row in selectors.record_counts_by_category(access.project):
            counts[row["category__name"]][row["gold_label"] or "unlabelled"] = row["n"]
    context = {"project": access.project, "access": access, "counts": dict(counts)}
    return render(request, "curation/project.html", context)
