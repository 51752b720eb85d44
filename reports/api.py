"""The REST API of the reports (read only): judge quality, agreement between annotators, two
score sources compared, and the source models' mean safety and helpfulness. For reviewers and
managers, like the pages; annotators see none of it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response

from curation.api import ReviewerScoped, validated_query
from reports import quality
from reports.agreement import agreement_report
from reports.evaluators import evaluator_report
from reports.serializers import (
    AgreementQuerySerializer,
    AgreementReportSerializer,
    EvaluatorQuerySerializer,
    EvaluatorReportSerializer,
    QualityQuerySerializer,
    QualityReportSerializer,
    SourceModelQuerySerializer,
    SourceModelViewSerializer,
)
from reports.source_models import source_model_view


@extend_schema(
    tags=["metrics"],
    summary="Two score sources compared on 0-3 scores (reviewers and managers)",
    parameters=[EvaluatorQuerySerializer],
    responses={
        200: EvaluatorReportSerializer,
        400: OpenApiResponse(description="A parameter names no source of the project"),
    },
)
class EvaluatorReport(ReviewerScoped, generics.GenericAPIView):
    """Exact agreement, Cohen's kappa with quadratic weights, Krippendorff's alpha (ordinal),
    Spearman's rho, both means and the mean absolute error, with 95% bootstrap intervals, over
    the records both sources scored: overall and per case, toolkit and source model, with the
    table of score against score."""

    serializer_class = EvaluatorReportSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        project = self.access.project
        query = validated_query(EvaluatorQuerySerializer, request, project=project)
        report = evaluator_report(
            project, scale=query["scale"], first=query["first"], second=query["second"]
        )
        return Response(EvaluatorReportSerializer(report).data)


@extend_schema(
    tags=["metrics"],
    summary="Mean safety and helpfulness of each source model (reviewers and managers)",
    parameters=[SourceModelQuerySerializer],
    responses={
        200: SourceModelViewSerializer,
        400: OpenApiResponse(description="A parameter names no source or toolkit of the project"),
    },
)
class SourceModelView(ReviewerScoped, generics.GenericAPIView):
    """Per source agent, its mean safety and mean helpfulness score by the chosen sources, with
    95% bootstrap intervals, and whether it is on the Pareto frontier."""

    serializer_class = SourceModelViewSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        project = self.access.project
        query = validated_query(SourceModelQuerySerializer, request, project=project)
        view = source_model_view(
            project,
            safety=query["safety"],
            helpfulness=query["helpfulness"],
            toolkit=query["toolkit"],
        )
        return Response(SourceModelViewSerializer(view).data)


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
        run_ids = query.get("runs") or quality.default_quality_runs(
            project, include_flagged=include_flagged
        )
        report = quality.quality_report(
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
        report = agreement_report(self.access.project, scale=scale)
        return Response(AgreementReportSerializer(report).data)
