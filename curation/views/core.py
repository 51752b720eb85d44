"""Home, projects and their members."""

from __future__ import annotations

from collections import defaultdict

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from curation import selectors
from curation.access import ANY_MEMBER, MANAGERS, ProjectAccess, project_view
from curation.forms import MembershipForm, ProjectForm
from curation.services.projects import membership_grant, membership_revoke, project_create


@require_GET
@login_not_required
def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and compose health checks: the process is up and the database answers."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    projects = selectors.projects_for_user(request.user)
    return render(request, "curation/home.html", {"projects": projects})


@require_http_methods(["GET", "POST"])
def project_new(request: HttpRequest) -> HttpResponse:
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
def project_overview(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    if access.can_read_records:
        for row in selectors.record_counts_by_category(access.project):
            counts[row["category__name"]][row["gold_label"] or "unlabelled"] = row["n"]
    context = {"project": access.project, "access": access, "counts": dict(counts)}
    return render(request, "curation/project.html", context)


@require_http_methods(["GET", "POST"])
@project_view(MANAGERS)
def members(request: HttpRequest, access: ProjectAccess) -> HttpResponse:
    form = MembershipForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user, role = form.cleaned_data["username"], form.cleaned_data["role"]
        membership_grant(actor=request.user, project=access.project, user=user, role=role)
        messages.success(request, f"{user.get_username()} is now {role} in this project.")
        return redirect("curation:members", access.project.slug)
    context = {
        "project": access.project,
        "access": access,
        "form": form,
        "memberships": selectors.memberships_of(access.project),
    }
    return render(request, "curation/members.html", context)


@require_POST
@project_view(MANAGERS)
def member_remove(request: HttpRequest, access: ProjectAccess, membership_id: int) -> HttpResponse:
    membership = get_object_or_404(access.project.memberships, pk=membership_id)
    if membership.user_id == request.user.pk and membership.role == "manager":
        messages.error(request, "You cannot remove your own manager role.")
    else:
        membership_revoke(actor=request.user, membership=membership)
        messages.success(request, f"Removed {membership.user.get_username()} as {membership.role}.")
    return redirect("curation:members", access.project.slug)
