"""The REST API of disagreements and adjudications, and of judge quality and agreement (read
only). For reviewers and managers, like the pages; annotators see none of it."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from curation.access import RECORD_READERS
from curation.api import ProjectScoped
from judging import reports
from judging.models import Adjudication, Disagreement
from judging.serializers_adjudication import (
    AdjudicationCreateSerializer,
    AdjudicationSerializer,
    AgreementReportSerializer,
    DisagreementSerializer,
    QualityReportSerializer,
)
from judging.services.adjudications import adjudication_create


class ReviewerScoped(ProjectScoped):
    allowed_roles = RECORD_READERS


def _choice(request: Request, name: str, choices: list[str], default: str = "") -> str:
    value = request.query_params.get(name, default)
    if value and value not in choices:
        raise ValidationError({name: [f"Choose one of: {', '.join(choices)}."]})
    return value


@extend_schema(
    tags=["adjudication"],
    summary="The project's disagreements, most contested first (reviewers and managers)",
    parameters=[
        OpenApiParameter("state", str, enum=Disagreement.State.values),
        OpenApiParameter("kind", str, enum=Disagreement.Kind.values),
        OpenApiParameter("record", int, description="Only this record's."),
    ],
)
class DisagreementList(ReviewerScoped, generics.ListAPIView):
    """Disagreements found as labels and verdicts arrive; `labels` says who said what."""

    serializer_class = DisagreementSerializer

    def get_queryset(self) -> QuerySet[Disagreement]:
        disagreements = self.access.project.disagreements.select_related("record")
        for name, choices in (
            ("state", Disagreement.State.values),
            ("kind", Disagreement.Kind.values),
        ):
            if value := _choice(self.request, name, choices):
                disagreements = disagreements.filter(**{name: value})
        if record := self.request.query_params.get("record"):
            if not record.isdigit():
                raise ValidationError({"record": ["A record's id."]})
            disagreements = disagreements.filter(record_id=int(record))
        return disagreements.order_by("-weight", "created_at", "id")


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
    parameters=[
        OpenApiParameter("reference", str, enum=reports.Reference.values, default="gold"),
        OpenApiParameter("runs", int, many=True, description="Run ids (default: the latest two)."),
    ],
    responses={200: QualityReportSerializer},
)
class QualityReport(ReviewerScoped, generics.GenericAPIView):
    """F1, recall, specificity and validity with unsafe as the positive class (an invalid
    output or an error counts as a wrong answer), overall and per category, scenario and attack
    type, with confusion matrices and 95% bootstrap intervals."""

    serializer_class = QualityReportSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        reference = _choice(request, "reference", reports.Reference.values, "gold")
        runs = reports.quality_runs(self.access.project)
        wanted = request.query_params.getlist("runs")
        if any(not run.isdigit() for run in wanted):
            raise ValidationError({"runs": ["Run ids."]})
        run_ids = [int(run) for run in wanted] or [run.pk for run in runs[:2]]
        report = reports.quality_report(self.access.project, run_ids=run_ids, reference=reference)
        return Response(QualityReportSerializer(report).data)


@extend_schema(
    tags=["metrics"],
    summary="Agreement between annotators (reviewers and managers)",
    parameters=[OpenApiParameter("scale", str, enum=reports.Scale.values, default="verdict")],
    responses={200: AgreementReportSerializer},
)
class AgreementReport(ReviewerScoped, generics.GenericAPIView):
    """Percent agreement, Fleiss' kappa, Krippendorff's alpha (nominal for verdicts, ordinal
    for scores) and Gwet's AC1 with 95% bootstrap intervals; Cohen's kappa for each pair of
    annotators and for each annotator against the consensus."""

    serializer_class = AgreementReportSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        scale = _choice(request, "scale", reports.Scale.values, "verdict")
        report = reports.agreement_report(self.access.project, scale=scale)
        return Response(AgreementReportSerializer(report).data)
