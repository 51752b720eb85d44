"""The REST API of the 0-3 score reports (read only): two score sources compared, and the
source models' mean safety and helpfulness. For reviewers and managers, like the pages."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response

from judging.api.review import ReviewerScoped, validated_query
from judging.evaluators import evaluator_report
from judging.serializers.scores import (
    EvaluatorQuerySerializer,
    EvaluatorReportSerializer,
    SourceModelQuerySerializer,
    SourceModelViewSerializer,
)
from judging.source_models import source_model_view


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
