"""The REST API of releases: list, create, follow and download, with the pages' rules.

Managers list every release of their project and create them; other members list the public
ones. A public, built release and its files are open to anyone; only a site administrator
deletes a release.
"""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation.access import ANY_MEMBER, MANAGERS
from curation.api import ProjectScoped
from curation.errors import NotAllowed
from curation.requests import api_user
from releases.access import readable_release
from releases.build import release_file_path
from releases.models import Release
from releases.serializers import (
    ReleaseCreateSerializer,
    ReleasePreviewResultSerializer,
    ReleasePreviewSerializer,
    ReleaseSerializer,
    ReleaseUpdateSerializer,
)
from releases.services import (
    release_create_as_chosen,
    release_delete,
    release_preview_as_chosen,
    release_update,
)


@extend_schema(tags=["releases"])
class ReleaseList(ProjectScoped, generics.ListAPIView):
    """The project's releases, newest first: all of them for managers, the public ones for
    other members."""

    allowed_roles = ANY_MEMBER
    serializer_class = ReleaseSerializer

    def get_queryset(self):
        releases = self.access.project.releases.select_related("project", "previous")
        if not self.access.is_manager:
            releases = releases.filter(public=True, state=Release.State.BUILT)
        return releases.order_by("-created_at", "-id")

    @extend_schema(summary="The project's releases")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Create a release: freeze its content and build its files (managers)",
        request=ReleaseCreateSerializer,
        responses={202: ReleaseSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        if not self.access.is_manager:
            raise NotAllowed("Only the project's managers create releases.")
        serializer = ReleaseCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        release = release_create_as_chosen(
            actor=api_user(request), project=self.access.project, choices=serializer.validated_data
        )
        location = reverse("releases_api:release_detail", args=[slug, release.pk])
        return Response(
            ReleaseSerializer(release, context={"request": request}).data,
            # Accepted: a worker builds the files; follow the Location for its state.
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": location},
        )


@extend_schema(tags=["releases"])
class ReleasePreview(ProjectScoped):
    """What a release made now with these choices would hold, before any version is used."""

    allowed_roles = MANAGERS

    @extend_schema(
        summary="Count what a release would hold and why the rest would be left out (managers)",
        request=ReleasePreviewSerializer,
        responses={200: ReleasePreviewResultSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        serializer = ReleasePreviewSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        preview = release_preview_as_chosen(
            actor=api_user(request), project=self.access.project, choices=serializer.validated_data
        )
        return Response({"records": preview.records, "excluded": preview.excluded})


class ReleaseScoped(APIView):
    """A view of one release that anyone may read once it is public (see readable_release)."""

    permission_classes = [AllowAny]

    def release(self, request: Request, slug: str, release_id: int) -> Release:
        try:
            return readable_release(request.user, slug, release_id)
        except Http404:
            if not request.user.is_authenticated:
                # Anonymous callers of a private release are asked to authenticate.
                self.permission_denied(request)
            raise


@extend_schema(tags=["releases"])
class ReleaseDetail(ReleaseScoped):
    @extend_schema(
        summary="One release: its state, build progress and files", responses=ReleaseSerializer
    )
    def get(self, request: Request, slug: str, release_id: int) -> Response:
        release = self.release(request, slug, release_id)
        return Response(ReleaseSerializer(release, context={"request": request}).data)

    @extend_schema(
        summary="Make a release public or private (managers); nothing else about it changes",
        request=ReleaseUpdateSerializer,
        responses={
            200: ReleaseSerializer,
            400: OpenApiResponse(description="`public` is not a boolean, or no such field"),
            409: OpenApiResponse(description="A frozen field"),
        },
    )
    def patch(self, request: Request, slug: str, release_id: int) -> Response:
        release = self.release(request, slug, release_id)
        if not request.user.is_authenticated:
            self.permission_denied(request)
        shown = ReleaseSerializer(release, context={"request": request}).data
        change = ReleaseUpdateSerializer(data=request.data, partial=True, context={"shown": shown})
        change.is_valid(raise_exception=True)
        public = change.validated_data.get("public", release.public)
        release_update(actor=api_user(request), release=release, public=public)
        return Response(ReleaseSerializer(release, context={"request": request}).data)

    @extend_schema(
        summary="Delete a release and its files (site administrators)", responses={204: None}
    )
    def delete(self, request: Request, slug: str, release_id: int) -> Response:
        release = self.release(request, slug, release_id)
        if not request.user.is_authenticated:
            self.permission_denied(request)
        release_delete(actor=api_user(request), release=release)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["releases"])
class ReleaseFile(ReleaseScoped):
    @extend_schema(
        summary="Download one file of a built release, streamed",
        description="Each file comes with its own media type: a zip, JSON lines, CSV, ...",
        responses={(200, "*/*"): OpenApiTypes.BINARY},
    )
    def get(self, request: Request, slug: str, release_id: int, name: str) -> FileResponse:
        release = self.release(request, slug, release_id)
        path = release_file_path(release, name) if release.state == Release.State.BUILT else None
        if path is None or not path.is_file():
            raise Http404("No such file in this release.")
        return FileResponse(open(path, "rb"), as_attachment=True, filename=name)
