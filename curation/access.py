"""Who may do what in a project. Every HTML view and API view goes through here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse

from curation.models import Membership, Project, Role

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

ANY_MEMBER: tuple[Role, ...] = tuple(Role)
# Records with their gold labels: annotators are kept blind to those, so they label from their
# queue instead of browsing.
RECORD_READERS: tuple[Role, ...] = (Role.REVIEWER, Role.MANAGER)
MANAGERS: tuple[Role, ...] = (Role.MANAGER,)
# Benchmark tasks: authors write them, reviewers review those of others, managers do both.
AUTHORS: tuple[Role, ...] = (Role.AUTHOR, Role.MANAGER)
REVIEWERS: tuple[Role, ...] = (Role.REVIEWER, Role.MANAGER)
TASK_MEMBERS: tuple[Role, ...] = (Role.AUTHOR, Role.REVIEWER, Role.MANAGER)
# Labelling takes the annotator role itself (see annotator_view): site administrators, who see
# gold labels and everyone's labels, label only when given the role, so every label is blind.
ANNOTATORS: tuple[Role, ...] = (Role.ANNOTATOR,)


@dataclass(frozen=True)
class ProjectAccess:
    project: Project
    roles: frozenset[str]
    is_superuser: bool

    def has(self, *roles: str) -> bool:
        return self.is_superuser or bool(self.roles.intersection(roles))

    # For templates, which cannot pass arguments.
    @property
    def can_read_records(self) -> bool:
        return self.has(*RECORD_READERS)

    @property
    def is_manager(self) -> bool:
        return self.has(*MANAGERS)

    @property
    def can_write_tasks(self) -> bool:
        return self.has(*AUTHORS)

    @property
    def can_review_tasks(self) -> bool:
        return self.has(*REVIEWERS)

    @property
    def sees_tasks(self) -> bool:
        return self.has(*TASK_MEMBERS)

    @property
    def is_annotator(self) -> bool:
        return bool(self.roles.intersection(ANNOTATORS))


def superuser_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorate a view that only site administrators use (accounts, lock-outs)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_superuser:
            raise PermissionDenied("Only site administrators manage accounts.")
        return view(request, *args, **kwargs)

    return wrapper


def project_access(
    user: AbstractBaseUser | AnonymousUser, slug: str, allowed: tuple[Role, ...]
) -> ProjectAccess:
    """The project behind `slug` as `user` may see it.

    Raises Http404 for people outside the project, so that its existence does not leak, and
    PermissionDenied for members whose roles do not include one of `allowed`.
    """
    if not user.is_authenticated:
        raise Http404("No such project.")
    # A member's roles and the project in one query, as every page and API request asks.
    memberships = list(
        Membership.objects.filter(project__slug=slug, user=user)
        .select_related("project")
        .order_by()
    )
    if memberships:
        project = memberships[0].project
    else:
        # A superuser may open a project they are no member of.
        project = Project.objects.filter(slug=slug).first() if user.is_superuser else None
        if project is None:
            raise Http404("No such project.")
    roles = frozenset(membership.role for membership in memberships)
    access = ProjectAccess(project=project, roles=roles, is_superuser=user.is_superuser)
    if not access.has(*allowed):
        raise PermissionDenied("Your role in this project does not allow this.")
    return access


def project_view(
    allowed: tuple[Role, ...],
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Decorate a view taking (request, access, ...) so that it receives a checked ProjectAccess."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, slug: str, *args: Any, **kwargs: Any) -> HttpResponse:
            access = project_access(request.user, slug, allowed)
            return view(request, access, *args, **kwargs)

        return wrapper

    return decorator


def annotator_access(user: AbstractBaseUser | AnonymousUser, slug: str) -> ProjectAccess:
    """project_access for the annotation queue, which only the project's annotators use."""
    access = project_access(user, slug, ANNOTATORS)
    if not access.is_annotator:
        raise PermissionDenied("Only the project's annotators label its records.")
    return access


def annotator_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorate a view taking (request, access, ...) that only the project's annotators use."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str, *args: Any, **kwargs: Any) -> HttpResponse:
        return view(request, annotator_access(request.user, slug), *args, **kwargs)

    return wrapper
