"""The REST API: the user's projects, a record, and imports. The record list, which shows
what was said about records too, is the hub's (hub/api.py), at the same address.

Access is decided by curation.access, the same code as for the HTML pages: outsiders get 404 so
that a project's existence does not leak, members whose roles do not allow the action get 403.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import Prefetch, QuerySet
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from curation import selectors
from curation.access import ANY_MEMBER, MANAGERS, RECORD_READERS, ProjectAccess, project_access
from curation.models import ImportBatch, Membership, Project, Record, Role
from curation.requests import api_user
from curation.serializers import (
    ImportBatchDetailSerializer,
    ImportBatchListSerializer,
    ImportUploadSerializer,
    ProjectCreateSerializer,
    ProjectSerializer,
    ProjectUpdateSerializer,
    RecordChangesDecisionSerializer,
    RecordDetailSerializer,
)
from curation.services.imports import import_batch_create
from curation.services.projects import project_create, project_update
from curation.services.record_changes import record_changes_decide

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _with_own_roles(projects: QuerySet[Project], user: User) -> QuerySet[Project]:
    """`projects` with the user's memberships in each, fetched in one query for the whole page."""
    own = Prefetch(
        "memberships", queryset=Membership.objects.filter(user=user), to_attr="own_memberships"
    )
    return projects.prefetch_related(own)


class ProjectScoped(APIView):
    """A view inside the project named by the URL's slug, open to `allowed_roles`."""

    allowed_roles: tuple[Role, ...]
    access: ProjectAccess

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # After authentication and the IsAuthenticated check, so anonymous callers get 401
        # rather than the 404 that hides the project from outsiders.
        super().initial(request, *args, **kwargs)
        self.access = project_access(request.user, kwargs["slug"], self.allowed_roles)


@extend_schema(tags=["projects"])
class ProjectList(generics.ListAPIView):
    """The projects you are a member of (every project for site administrators)."""

    serializer_class = ProjectSerializer

    def get_queryset(self) -> QuerySet[Project]:
        user = api_user(self.request)
        return _with_own_roles(selectors.projects_for_user(user), user)

    @extend_schema(summary="Your projects, with your roles in each")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Create a project, which you then manage (site administrators, and those they "
        "allow)",
        request=ProjectCreateSerializer,
        responses={
            201: ProjectSerializer,
            400: OpenApiResponse(description="The request is invalid; the body says why."),
        },
    )
    def post(self, request: Request) -> Response:
        user = api_user(request)
        # As on the new-project page (curation.views.core.project_new).
        if not user.has_perm("curation.add_project"):
            raise PermissionDenied(
                "Only site administrators, and those they allow, create projects."
            )
        body = ProjectCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        project = project_create(actor=user, **body.validated_data)
        created = _with_own_roles(Project.objects.filter(pk=project.pk), user).get()
        return Response(
            ProjectSerializer(created).data,
            status=status.HTTP_201_CREATED,
            headers={"Location": reverse("api:project_detail", args=[project.slug])},
        )


@extend_schema(tags=["projects"])
class ProjectDetail(ProjectScoped, generics.RetrieveAPIView):
    """A project you are a member of; for anyone else it does not exist (404)."""

    allowed_roles = ANY_MEMBER
    serializer_class = ProjectSerializer
    lookup_field = "slug"
    # No PUT: the slug cannot change, and the other fields are changed one by one.
    http_method_names = ["get", "patch", "head", "options"]

    def get_queryset(self) -> QuerySet[Project]:
        return _with_own_roles(
            Project.objects.filter(pk=self.access.project.pk), api_user(self.request)
        )

    @extend_schema(summary="One project")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Change the project's name, description or license (managers)",
        description="The fields left out stay as they are; the slug never changes.",
        request=ProjectUpdateSerializer,
        responses={200: ProjectSerializer},
    )
    def patch(self, request: Request, slug: str) -> Response:
        # As on the settings page (curation.views.project_settings).
        if not self.access.is_manager:
            raise PermissionDenied("Only the project's managers change its settings.")
        body = ProjectUpdateSerializer(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        project_update(actor=api_user(request), project=self.access.project, **body.validated_data)
        return Response(ProjectSerializer(self.get_object()).data)


@extend_schema(
    tags=["records"], summary="One record, with its interaction (reviewers and managers)"
)
class RecordDetail(ProjectScoped, generics.RetrieveAPIView):
    """A record with its normalised turns, gold label and the source's JSON as imported."""

    allowed_roles = RECORD_READERS
    serializer_class = RecordDetailSerializer
    lookup_url_kwarg = "record_id"

    def get_queryset(self) -> QuerySet[Record]:
        return self.access.project.records.select_related("category", "scenario")


@extend_schema(tags=["imports"])
class ImportList(ProjectScoped, generics.ListAPIView):
    """Imports of records into the project. Managers only."""

    allowed_roles = MANAGERS
    serializer_class = ImportBatchListSerializer
    parser_classes = [MultiPartParser]

    def get_queryset(self) -> QuerySet[ImportBatch]:
        return self.access.project.import_batches.select_related("created_by")

    @extend_schema(summary="The project's imports, newest first (managers)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Upload a file to import (managers)",
        description=(
            "Creates an import batch that a worker processes in the background; follow its "
            "state and progress at the URL in the Location header."
        ),
        request=ImportUploadSerializer,
        responses={
            202: ImportBatchDetailSerializer,
            400: OpenApiResponse(
                description="The upload is invalid or refused; the body says why."
            ),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        upload = ImportUploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        batch = import_batch_create(
            actor=api_user(request),
            project=self.access.project,
            upload=upload.validated_data["file"],
            format=upload.validated_data["format"],
            default_category=upload.validated_data["default_category"],
        )
        location = reverse("api:import_detail", args=[slug, batch.pk])
        return Response(
            ImportBatchDetailSerializer(batch).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": location},
        )


@extend_schema(tags=["imports"], summary="One import: state, progress and report (managers)")
class ImportDetail(ProjectScoped, generics.RetrieveAPIView):
    """An import's state, progress while it runs, and its report: counts, duplicates, errors."""

    allowed_roles = MANAGERS
    serializer_class = ImportBatchDetailSerializer
    lookup_url_kwarg = "batch_id"

    def get_queryset(self) -> QuerySet[ImportBatch]:
        return self.access.project.import_batches.select_related("created_by")


@extend_schema(tags=["imports"])
class ImportChanges(ProjectScoped, APIView):
    """Decide on the records an import found with other content under ids the project holds."""

    allowed_roles = MANAGERS

    @extend_schema(
        summary="Take the new versions of an import's changed records, or keep the stored ones",
        request=RecordChangesDecisionSerializer,
        responses={
            200: ImportBatchDetailSerializer,
            409: OpenApiResponse(description="Nothing is left to decide."),
        },
    )
    def post(self, request: Request, slug: str, batch_id: int) -> Response:
        batch = get_object_or_404(self.access.project.import_batches, pk=batch_id)
        decision = RecordChangesDecisionSerializer(data=request.data)
        decision.is_valid(raise_exception=True)
        record_changes_decide(
            actor=api_user(request), batch=batch, take=decision.validated_data["take"]
        )
        return Response(ImportBatchDetailSerializer(batch).data)


class ReviewerScoped(ProjectScoped):
    allowed_roles = RECORD_READERS


def validated_query(
    serializer_class: type[Serializer], request: Request, **context: Any
) -> dict[str, Any]:
    """The request's query parameters, validated by `serializer_class` (400 naming each)."""
    query = serializer_class(data=request.query_params, context=context)
    query.is_valid(raise_exception=True)
    return query.validated_data
