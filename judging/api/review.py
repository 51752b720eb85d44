"""The REST API of disagreements and adjudications, and of judge quality and agreement (read
only). For reviewers and managers, like the pages; annotators see none of it."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from curation.access import RECORD_READERS
from curation.api import ProjectScoped
from judging import reports
from judging.models import Adjudication, Disagreement
from judging.serializers.review import (
    AdjudicationCreateSerializer,
    AdjudicationSerializer,
    AgreementQuerySerializer,
    AgreementReportSerializer,
    DisagreementQuerySerializer,
    DisagreementSerializer,
    QualityQuerySerializer,
    QualityReportSerializer,
)
from judging.services.adjudications import adjudication_create


class ReviewerScoped(ProjectScoped):
    allowed_roles = RECORD_READERS


def validated_query(
    serializer_class: type[Serializer], request: Request, **context: Any
) -> dict[str, Any]:
    """The request's query parameters, validated by `serializer_class` (400 naming each)."""
    query = serializer_class(data=request.query_params, context=context)
    query.is_valid(raise_exception=True)
    return query.validated_data


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
            actor=request.user, project=self.access.project, record=record, **data
        )
        return Response(AdjudicationSerializer(adjudication).data, status=status.HTTP_201_CREATED)


@extend_schema(
    tags=["metrics"],
    summary="Judge quality of runs against a reference (reviewers and managers)",
    parameters=[QualityQuerySerializer],
    responses={
        200: QualityReportSerializer,
        400: OpenApiResponse(description="A parameter is invalid, or names no run of labels"),
    },
)
class QualityReport(ReviewerScoped, generics.GenericAPIView):
    """F1, recall, specificity and validity with unsafe as the positive class (an invalid
    output or an error counts as a wrong answer), overall and per category, scenario and attack
    type, with confusion matrices and 95% bootstrap intervals."""

    serializer_class = QualityReportSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        project = self.access.project
        query = validated_query(QualityQuerySerializer, request, project=project)
        include_flagged = query["include_flagged"]
        run_ids = query.get("runs") or reports.default_quality_runs(
            project, include_flagged=include_flagged
        )
        report = reports.quality_report(
            project,
            run_ids=run_ids,
            reference=query["reference"],
            include_flagged=include_flagged,
        )
        return Response(QualityReportSerializer(report).data)


@extend_schema(
    tags=["metrics"],
    summary="Agreement between annotators (reviewers and managers)",
    parameters=[AgreementQuerySerializer],
    responses={
        200: AgreementReportSerializer,
        400: OpenApiResponse(description="The scale is not one of those offered"),
    },
)
class AgreementReport(ReviewerScoped, generics.GenericAPIView):
    """Percent agreement, Fleiss' kappa, Krippendorff's alpha (nominal for verdicts, ordinal
    for scores) and Gwet's AC1 with 95% bootstrap intervals; Cohen's kappa for each pair of
    annotators and for each annotator against the consensus."""

    serializer_class = AgreementReportSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        scale = validated_query(AgreementQuerySerializer, request)["scale"]
        report = reports.agreement_report(self.access.project, scale=scale)
        return Response(AgreementReportSerializer(report).data)
