"""The REST API of runs and their verdicts: reviewers and managers read them; only managers
start, cancel, resume, retry or import them."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response

from curation.access import MANAGERS, RECORD_READERS
from curation.api import ProjectScoped
from curation.requests import api_user
from judging.models import JudgeRun, Verdict
from judging.serializers.runs import (
    PanelCreateSerializer,
    PanelSerializer,
    RunCreateSerializer,
    RunDetailSerializer,
    RunSerializer,
    VerdictImportSerializer,
    VerdictSerializer,
)
from judging.services.panels import panel_create
from judging.services.runs import (
    judge_run_cancel,
    judge_run_create,
    judge_run_resume,
    judge_run_retry_errors,
)
from judging.services.verdict_import import verdict_import


class ReadOrManage(ProjectScoped):
    """Reviewers and managers read; managers change."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        self.allowed_roles = RECORD_READERS if request.method in SAFE_METHODS else MANAGERS
        super().initial(request, *args, **kwargs)


@extend_schema(tags=["runs"])
class RunList(ReadOrManage, generics.ListAPIView):
    """Runs of judges and imported verdict sets, newest first."""

    serializer_class = RunSerializer

    def get_queryset(self) -> QuerySet[JudgeRun]:
        return self.access.project.judge_runs.select_related("created_by").defer("record_ids")

    @extend_schema(summary="The project's runs (reviewers and managers)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Start a run of a judge over a selection of records (managers)",
        description=(
            "The run is judged by a worker in the background; follow its state and progress at "
            "the URL in the Location header."
        ),
        request=RunCreateSerializer,
        responses={
            202: RunSerializer,
            400: OpenApiResponse(description="The request is invalid; the body says why."),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        serializer = RunCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        project = self.access.project
        judge = project.judges.filter(pk=data.pop("judge")).first()
        if judge is None:
            raise ValidationError({"judge": ["No such judge in this project."]})
        names = set(data.pop("categories"))
        categories = list(project.categories.filter(name__in=names))
        if unknown := names - {category.name for category in categories}:
            raise ValidationError({"categories": [f"Unknown: {', '.join(sorted(unknown))}."]})
        run = judge_run_create(
            actor=api_user(request), project=project, judge=judge, categories=categories, **data
        )
        location = reverse("judging_api:run_detail", args=[slug, run.pk])
        body = RunSerializer(run).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": location})


@extend_schema(
    tags=["runs"], summary="One run: state, progress, counts, errors (reviewers, managers)"
)
class RunDetail(ProjectScoped, generics.RetrieveAPIView):
    allowed_roles = RECORD_READERS
    serializer_class = RunDetailSerializer
    lookup_url_kwarg = "run_id"

    def get_queryset(self) -> QuerySet[JudgeRun]:
        return self.access.project.judge_runs.select_related("created_by").defer("record_ids")


class RunAction(ProjectScoped, generics.GenericAPIView):
    allowed_roles = MANAGERS
    serializer_class = RunSerializer
    lookup_url_kwarg = "run_id"

    def get_queryset(self) -> QuerySet[JudgeRun]:
        return self.access.project.judge_runs.defer("record_ids")


@extend_schema(
    tags=["runs"],
    summary="Cancel a run (managers)",
    description="A worker running it stops within seconds; 409 if the run has ended.",
    request=None,
)
class RunCancel(RunAction):
    def post(self, request: Request, slug: str, run_id: int) -> Response:
        run = judge_run_cancel(actor=api_user(request), run=self.get_object())
        return Response(RunSerializer(run).data)


@extend_schema(
    tags=["runs"],
    summary="Resume a cancelled, failed or stalled run (managers)",
    description="A worker judges the records that have no verdict in the run yet.",
    request=None,
    responses={202: RunSerializer},
)
class RunResume(RunAction):
    def post(self, request: Request, slug: str, run_id: int) -> Response:
        run = judge_run_resume(actor=api_user(request), run=self.get_object())
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(
    tags=["runs"],
    summary="Judge a run's errored records again (managers)",
    description=(
        "A worker judges again the records whose verdict is an error, each new verdict "
        "replacing the error; 409 unless the run has ended with error verdicts."
    ),
    request=None,
    responses={202: RunSerializer},
)
class RunRetryErrors(RunAction):
    def post(self, request: Request, slug: str, run_id: int) -> Response:
        run = judge_run_retry_errors(actor=api_user(request), run=self.get_object())
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


@extend_schema(
    tags=["runs"],
    summary="A run's verdicts, in record order (reviewers and managers)",
    parameters=[
        OpenApiParameter(
            "parse_status",
            OpenApiTypes.STR,
            enum=list(Verdict.Parse.values),
            description="Only verdicts of this parse status.",
        )
    ],
)
class VerdictList(ProjectScoped, generics.ListAPIView):
    allowed_roles = RECORD_READERS
    serializer_class = VerdictSerializer

    def get_queryset(self) -> QuerySet[Verdict]:
        run = get_object_or_404(self.access.project.judge_runs.only("id"), pk=self.kwargs["run_id"])
        verdicts = run.verdicts.select_related("record").order_by("record_id")
        wanted = self.request.query_params.get("parse_status")
        if wanted:
            if wanted not in Verdict.Parse.values:
                raise ValidationError({"parse_status": [f"One of {', '.join(Verdict.Parse)}."]})
            verdicts = verdicts.filter(parse_status=wanted)
        return verdicts


@extend_schema(
    tags=["runs"],
    summary="Import evaluator outputs as a run of verdicts (managers)",
    description=(
        "JSONL, one evaluation a line, matched to records by `external_id`, `id` or "
        "`case_idx` (or the field named by `id_field`). The run's report lists the lines that "
        "matched no record."
    ),
    request=VerdictImportSerializer,
    responses={
        201: RunSerializer,
        400: OpenApiResponse(description="The file is refused; the body says why."),
    },
)
class VerdictImport(ProjectScoped, generics.GenericAPIView):
    allowed_roles = MANAGERS
    parser_classes = [MultiPartParser]
    serializer_class = VerdictImportSerializer

    def post(self, request: Request, slug: str) -> Response:
        upload = VerdictImportSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        data = upload.validated_data
        run = verdict_import(
            actor=api_user(request),
            project=self.access.project,
            upload=data["file"],
            protocol=data["protocol"],
            name=data["name"],
            id_field=data["id_field"],
        )
        location = reverse("judging_api:run_detail", args=[slug, run.pk])
        body = RunSerializer(run).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": location})


@extend_schema(tags=["runs"])
class PanelList(ReadOrManage, generics.ListAPIView):
    """Panels: runs whose verdicts combine their members' (majority, or unsafe if any)."""

    serializer_class = PanelSerializer

    def get_queryset(self) -> QuerySet[JudgeRun]:
        return (
            self.access.project.judge_runs.filter(source=JudgeRun.Source.PANEL)
            .select_related("created_by", "panel")
            .prefetch_related("panel__members")
            .defer("record_ids")
        )

    @extend_schema(summary="The project's panels (reviewers and managers)")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Combine ended runs into a panel (managers)",
        description=(
            "The panel covers the records every member judged; a worker combines their verdicts "
            "in the background: follow its state and progress at the URL in the Location "
            "header. A member's invalid answer or error abstains; by majority a tie is no answer."
        ),
        request=PanelCreateSerializer,
        responses={
            202: PanelSerializer,
            400: OpenApiResponse(description="The runs cannot be combined; the body says why."),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        serializer = PanelCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        members = list(self.access.project.judge_runs.filter(pk__in=data["runs"]))
        if missing := sorted(set(data["runs"]) - {run.pk for run in members}):
            raise ValidationError({"runs": [f"No run of this project has the id {missing[0]}."]})
        run = panel_create(
            actor=api_user(request),
            project=self.access.project,
            members=members,
            rule=data["rule"],
            name=data["name"],
        )
        location = reverse("judging_api:run_detail", args=[slug, run.pk])
        body = PanelSerializer(run).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": location})
