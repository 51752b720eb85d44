"""Who may do what in a project. Every HTML view and API view goes through here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import TYPE_CHECKING, Concatenate, Protocol, cast

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase

from curation.models import Membership, Project, Role
from curation.requests import AuthenticatedRequest

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

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


def _checked(request: HttpRequest) -> AuthenticatedRequest:
    """`request` as the view behind an access check sees it.

    Only the decorators below call this, once their check has passed: whoever passes it (a
    superuser, or a member of the project) is signed in, never the anonymous user; and
    HtmxMiddleware, in settings.MIDDLEWARE, has set `request.htmx` on every request.
    """
    return cast(AuthenticatedRequest, request)


def superuser_view[**P, R: HttpResponseBase](
    view: Callable[Concatenate[AuthenticatedRequest, P], R],
) -> Callable[Concatenate[HttpRequest, P], R]:
    """Decorate a view that only site administrators use (accounts, lock-outs)."""

    @wraps(view)
    def wrapper(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if not request.user.is_superuser:
            raise PermissionDenied("Only site administrators manage accounts.")
        return view(_checked(request), *args, **kwargs)

    return wrapper


def project_access(
    user: User | AnonymousUser, slug: str, allowed: tuple[Role, ...]
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
    project: Project | None
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


class ProjectViewDecorator(Protocol):
    """What project_view(allowed) returns: it turns a view taking (request, access, ...) into
    one taking (request, slug, ...), whatever else the view takes and whatever it answers."""

    def __call__[**P, R: HttpResponseBase](
        self, view: Callable[Concatenate[AuthenticatedRequest, ProjectAccess, P], R], /
    ) -> Callable[Concatenate[HttpRequest, str, P], R]: ...


def project_view(allowed: tuple[Role, ...]) -> ProjectViewDecorator:
    """Decorate a view taking (request, access, ...) so that it receives a checked ProjectAccess."""

    def decorator[**P, R: HttpResponseBase](
        view: Callable[Concatenate[AuthenticatedRequest, ProjectAccess, P], R],
    ) -> Callable[Concatenate[HttpRequest, str, P], R]:
        @wraps(view)
        def wrapper(request: HttpRequest, /, slug: str, *args: P.args, **kwargs: P.kwargs) -> R:
            access = project_access(request.user, slug, allowed)
            return view(_checked(request), access, *args, **kwargs)

        return wrapper

    return decorator


def annotator_access(user: User | AnonymousUser, slug: str) -> ProjectAccess:
    """project_access for the annotation queue, which only the project's annotators use."""
    access = project_access(user, slug, ANNOTATORS)
    if not access.is_annotator:
        raise PermissionDenied("Only the project's annotators label its records.")
    return access


def annotator_view[**P, R: HttpResponseBase](
    view: Callable[Concatenate[AuthenticatedRequest, ProjectAccess, P], R],
) -> Callable[Concatenate[HttpRequest, str, P], R]:
    """Decorate a view taking (request, access, ...) that only the project's annotators use."""

    @wraps(view)
    def wrapper(request: HttpRequest, /, slug: str, *args: P.args, **kwargs: P.kwargs) -> R:
        access = annotator_access(request.user, slug)
        return view(_checked(request), access, *args, **kwargs)

    return wrapper
