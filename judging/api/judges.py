"""The REST API of judges and the model connections they may use: for managers, through the
same services and access rules as the pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from curation.access import MANAGERS
from curation.api import ProjectScoped
from curation.requests import api_user
from judging.models import ConnectionCheck, Judge, ModelConnection
from judging.serializers.judges import (
    ConnectionCheckSerializer,
    ConnectionSerializer,
    JudgeSerializer,
)
from judging.services.judges import connection_check_start, judge_create, judge_update


def _checked[T](service: Callable[..., T], **kwargs: Any) -> T:
    """Call a service, turning its field errors into a 400 that names the fields."""
    try:
        return service(**kwargs)
    except DjangoValidationError as error:
        raise ValidationError(error.message_dict) from None


# A generic view itself, so that its serializer and lookup are those of the generic views that
# derive from it (the views' method order is as it was: the generic view comes after theirs).
class JudgeScoped(ProjectScoped, generics.GenericAPIView):
    allowed_roles = MANAGERS
    serializer_class = JudgeSerializer
    lookup_url_kwarg = "judge_id"

    def get_queryset(self) -> QuerySet[Judge]:
        return self.access.project.judges.select_related("template")

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "project": self.access.project}


@extend_schema(tags=["judges"])
class JudgeList(JudgeScoped, generics.ListCreateAPIView):
    """The project's LLM judges (managers): each a protocol and a model of a connection that
    site administrators set up."""

    @extend_schema(summary="The project's judges (managers)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(summary="Create a judge (managers)", responses={201: JudgeSerializer})
    def post(self, request: Request, slug: str) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        judge = _checked(
            judge_create,
            actor=api_user(request),
            project=self.access.project,
            **serializer.validated_data,
        )
        location = reverse("judging_api:judge_detail", args=[slug, judge.pk])
        data = self.get_serializer(judge).data
        return Response(data, status=status.HTTP_201_CREATED, headers={"Location": location})


@extend_schema(tags=["judges"])
class JudgeDetail(JudgeScoped, generics.RetrieveUpdateAPIView):
    """One judge (managers). Runs keep the snapshot of the judge taken when they started."""

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        judge = self.get_object()
        serializer = self.get_serializer(judge, data=request.data, partial=kwargs.get("partial"))
        serializer.is_valid(raise_exception=True)
        _checked(judge_update, actor=api_user(request), judge=judge, **serializer.validated_data)
        return Response(self.get_serializer(judge).data)


@extend_schema(tags=["judges"], summary="The model connections judges may use (managers)")
class ConnectionList(ProjectScoped, generics.ListAPIView):
    allowed_roles = MANAGERS
    serializer_class = ConnectionSerializer
    queryset = ModelConnection.objects.all()


@extend_schema(
    tags=["judges"],
    summary="Test a judge's connection: a worker makes one short call, no retries (managers)",
    description="Follow the test at the URL in the Location header until it is finished.",
    request=None,
    responses={
        202: ConnectionCheckSerializer,
        409: OpenApiResponse(description="The connection is being tested already."),
        429: OpenApiResponse(description="You have started the most tests allowed an hour."),
    },
)
class JudgeConnectionTest(JudgeScoped, generics.GenericAPIView):
    def post(self, request: Request, slug: str, judge_id: int) -> Response:
        judge = self.get_object()
        check = connection_check_start(
            actor=api_user(request), connection=judge.connection, model=judge.model, judge=judge
        )
        location = reverse("judging_api:judge_test_detail", args=[slug, judge_id, check.pk])
        body = ConnectionCheckSerializer(check).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": location})


@extend_schema(tags=["judges"], summary="A test of a judge's connection (managers)")
class JudgeConnectionTestDetail(ProjectScoped, generics.RetrieveAPIView):
    allowed_roles = MANAGERS
    serializer_class = ConnectionCheckSerializer
    lookup_url_kwarg = "test_id"

    def get_queryset(self) -> QuerySet[ConnectionCheck]:
        return ConnectionCheck.objects.filter(
            judge__project=self.access.project, judge_id=self.kwargs["judge_id"]
        )
