"""The REST API of a judge's versions and their evaluations, through the services the pages
call: reviewers and managers read them; managers make versions and start evaluations."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from alignment import selectors
from alignment.serializers import (
    EvaluationCreateSerializer,
    EvaluationDetailSerializer,
    EvaluationSerializer,
    VersionCreateSerializer,
    VersionSerializer,
)
from alignment.services import judge_evaluation_start, judge_version_create
from curation.requests import api_user
from judging.api.runs import ReadOrManage
from judging.models import Judge, JudgeEvaluation, JudgeVersion
from judging.services.runs import is_finished

REFUSED = OpenApiResponse(description="Refused; the body says why.")


class JudgeScoped(ReadOrManage, generics.GenericAPIView):
    """Inside one judge of the project: reviewers and managers read; managers change."""

    def judge(self) -> Judge:
        judge = getattr(self, "_judge", None)
        if judge is None:
            judge = get_object_or_404(
                self.access.project.judges.select_related("active_version"),
                pk=self.kwargs["judge_id"],
            )
            self._judge = judge
        return judge

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "judge": self.judge()}


def _version(judge: Judge, number: int) -> JudgeVersion | None:
    """Version `number` of the judge; None for version 1 (the prompt as written)."""
    if number == 1:
        return None
    return _later_version(judge, number)


def _later_version(judge: Judge, number: int) -> JudgeVersion:
    """Version `number` of the judge, one of those made after the prompt as written."""
    version = judge.versions.filter(number=number).first()
    if version is None:
        raise NotFound(f"{judge.name} has no version {number}.")
    return version


def _first(judge: Judge) -> JudgeVersion:
    """Version 1, the prompt as written, which has no row, as the API shows it."""
    return JudgeVersion(judge=judge, number=1, picked="", examples=[], created_at=judge.created_at)


@extend_schema(tags=["judges"])
class VersionList(JudgeScoped, generics.ListAPIView):
    """A judge's versions, version 1 (the prompt as written) first."""

    serializer_class = VersionSerializer

    # A list: version 1 is no row of the table. ListAPIView pages and serializes a list as it
    # does a queryset; the stubs want a queryset.
    def get_queryset(self) -> list[JudgeVersion]:  # type: ignore[override]
        judge = self.judge()
        return [_first(judge), *judge.versions.select_related("created_by")]

    @extend_schema(summary="A judge's versions (reviewers and managers)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Make a version quoting settled cases as worked examples (managers)",
        description=(
            "By hand (the settled records listed) or automatically (the most contested settled "
            "cases, one per category). The cases are copied into the version as they are now."
        ),
        request=VersionCreateSerializer,
        responses={201: VersionSerializer, 400: REFUSED},
    )
    def post(self, request: Request, slug: str, judge_id: int) -> Response:
        serializer = VersionCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        by_hand = data["picked"] == JudgeVersion.Picked.BY_HAND
        version = judge_version_create(
            actor=api_user(request),
            judge=self.judge(),
            record_ids=data["records"] if by_hand else None,
            count=data["count"],
            note=data["note"],
        )
        location = reverse("alignment_api:judge_version", args=[slug, judge_id, version.number])
        body = self.get_serializer(version).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})


@extend_schema(tags=["judges"], summary="One version of a judge (reviewers and managers)")
class VersionDetail(JudgeScoped, generics.GenericAPIView):
    serializer_class = VersionSerializer

    def get(self, request: Request, slug: str, judge_id: int, number: int) -> Response:
        judge = self.judge()
        return Response(self.get_serializer(_version(judge, number) or _first(judge)).data)


@extend_schema(tags=["judges"])
class EvaluationList(JudgeScoped, generics.ListAPIView):
    """Evaluations of a judge's versions, newest first: each two runs over the settled records
    that neither version quotes."""

    serializer_class = EvaluationSerializer

    def get_queryset(self) -> QuerySet[JudgeEvaluation]:
        return self.judge().evaluations.select_related("baseline", "candidate", "created_by")

    @extend_schema(summary="A judge's evaluations (reviewers and managers)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Evaluate a version against another (managers)",
        description=(
            "Starts a run of each version over the settled records that neither quotes; a "
            "worker judges them in the background. Follow the comparison at the URL in the "
            "Location header."
        ),
        request=EvaluationCreateSerializer,
        responses={202: EvaluationSerializer, 400: REFUSED, 404: REFUSED},
    )
    def post(self, request: Request, slug: str, judge_id: int) -> Response:
        serializer = EvaluationCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        judge = self.judge()
        active = judge.active_version.number if judge.active_version else 1
        # The serializer takes 2 or later: version 1 is the prompt as written.
        candidate = _later_version(judge, data["candidate"])
        baseline = _version(judge, data["baseline"] or active)
        evaluation = judge_evaluation_start(
            actor=api_user(request), candidate=candidate, baseline=baseline
        )
        location = reverse("alignment_api:judge_evaluation", args=[slug, judge_id, evaluation.pk])
        body = self.get_serializer(evaluation).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": location})


@extend_schema(
    tags=["judges"],
    summary="An evaluation's comparison of two versions (reviewers and managers)",
    description=(
        "Both versions' F1, recall, specificity and validity with their 95% intervals over the "
        "held-out records both runs have judged so far, and the records each gets right that "
        "the other gets wrong; `finished` once both runs have ended."
    ),
)
class EvaluationDetail(JudgeScoped, generics.RetrieveAPIView):
    serializer_class = EvaluationDetailSerializer
    lookup_url_kwarg = "evaluation_id"

    def get_queryset(self) -> QuerySet[JudgeEvaluation]:
        return self.judge().evaluations.select_related(
            "judge__project", "baseline", "candidate", "baseline_run", "candidate_run"
        )

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        evaluation = self.get_object()
        context = {
            **self.get_serializer_context(),
            "finished": is_finished(evaluation.baseline_run)
            and is_finished(evaluation.candidate_run),
            "comparison": selectors.comparison(evaluation),
        }
        return Response(EvaluationDetailSerializer(evaluation, context=context).data)
