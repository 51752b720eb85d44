"""The REST API of disagreements and adjudications. For reviewers and managers, like the pages;
annotators see none of it."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response

from curation.api import ReviewerScoped, validated_query
from curation.requests import api_user
from review.models import Adjudication, Disagreement
from review.serializers import (
    AdjudicationCreateSerializer,
    AdjudicationSerializer,
    DisagreementQuerySerializer,
    DisagreementSerializer,
)
from review.services.adjudications import adjudication_create


@extend_schema(
    tags=["adjudication"],
    summary="The project's disagreements, most contested first (reviewers and managers)",
    parameters=[DisagreementQuerySerializer],
)
class DisagreementList(ReviewerScoped, generics.ListAPIView):
    """Disagreements found as labels and verdicts arrive; `labels` says who said what."""

    serializer_class = DisagreementSerializer

    def get_queryset(self) -> QuerySet[Disagreement]:
        filters = validated_query(DisagreementQuerySerializer, self.request)
        disagreements = self.access.project.disagreements.select_related("record")
        return disagreements.filter(**filters).order_by("-weight", "created_at", "id")


@extend_schema(tags=["adjudication"], summary="One disagreement (reviewers and managers)")
class DisagreementDetail(ReviewerScoped, generics.RetrieveAPIView):
    serializer_class = DisagreementSerializer
    lookup_url_kwarg = "disagreement_id"

    def get_queryset(self) -> QuerySet[Disagreement]:
        return self.access.project.disagreements.select_related("record")


@extend_schema(tags=["adjudication"])
class AdjudicationList(ReviewerScoped, generics.ListAPIView):
    """Reviewers' final labels, newest first. A record's latest adjudication is its final
    label, which releases use."""

    serializer_class = AdjudicationSerializer

    def get_queryset(self) -> QuerySet[Adjudication]:
        return self.access.project.adjudications.select_related("reviewer").order_by(
            "-created_at", "-id"
        )

    @extend_schema(summary="The project's adjudications (reviewers and managers)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Settle a record: set its final label and resolve its open disagreements",
        request=AdjudicationCreateSerializer,
        responses={201: AdjudicationSerializer},
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        given = AdjudicationCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        record = get_object_or_404(self.access.project.records, pk=data.pop("record"))
        adjudication = adjudication_create(
            actor=api_user(request), project=self.access.project, record=record, **data
        )
        return Response(AdjudicationSerializer(adjudication).data, status=status.HTTP_201_CREATED)
