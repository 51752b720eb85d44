"""The REST API of benchmark tasks: tasks, their moves, revisions, reviews and the review queue.

The same services as the pages, with the same rules: a task someone may not read is not found
(404), a move they may never make is forbidden (403), a move the task's state or a concurrent
change forbids is a conflict (409) whose message says what happened.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from authoring.models import ReferenceFile, Review, Task, TaskRevision
from authoring.selectors import review_queue, roles_of, tasks_visible
from authoring.serializers import (
    AvailableSerializer,
    ReviewSerializer,
    ReviewWriteSerializer,
    RevisionDetailSerializer,
    RevisionSerializer,
    TaskSerializer,
    TaskWriteSerializer,
    TransitionSerializer,
)
from authoring.services.reviews import review_decide, review_release, review_take, review_take_next
from authoring.services.tasks import (
    task_create,
    task_reopen,
    task_submit,
    task_update,
    task_withdraw,
)
from authoring.workflow import Action, available_actions
from curation.access import REVIEWERS, TASK_MEMBERS
from curation.api import ProjectScoped
from curation.requests import api_user

_MOVES = {
    Action.SUBMIT: task_submit,
    Action.WITHDRAW: task_withdraw,
    Action.REOPEN: task_reopen,
    Action.TAKE: review_take,
    Action.RELEASE: review_release,
}
_REFUSED = {
    403: OpenApiResponse(description="You may never make this move on this task."),
    409: OpenApiResponse(
        description="The task's state or a change made meanwhile forbids it; the body says why."
    ),
}


class TaskScoped(ProjectScoped):
    """A view of the project's tasks, as the requesting user may read them."""

    allowed_roles = TASK_MEMBERS

    def tasks(self) -> QuerySet[Task]:
        files = Prefetch(
            "reference_files",
            queryset=ReferenceFile.objects.select_related("task__project").order_by("name"),
        )
        return (
            tasks_visible(self.access.project, api_user(self.request), roles_of(self.access))
            .select_related("author", "reviewer", "risk_category")
            .prefetch_related(files)
        )

    def task(self) -> Task:
        return generics.get_object_or_404(self.tasks(), pk=self.kwargs["task_id"])


@extend_schema(tags=["tasks"])
class TaskList(TaskScoped, generics.ListAPIView):
    """Tasks you may read: managers all, reviewers those submitted at least once, authors
    their own."""

    serializer_class = TaskSerializer

    def get_queryset(self) -> QuerySet[Task]:
        tasks = self.tasks().order_by("-updated_at", "-id")
        state = self.request.query_params.get("state")
        return tasks.filter(state=state) if state else tasks

    @extend_schema(
        summary="The tasks you may read",
        parameters=[OpenApiParameter("state", str, enum=Task.State.values)],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Write a new draft (authors and managers)",
        request=TaskWriteSerializer,
        responses={201: TaskSerializer, 400: OpenApiResponse(description="Invalid content.")},
    )
    def post(self, request: Request, slug: str) -> Response:
        data = TaskWriteSerializer(data=request.data, project=self.access.project)
        data.is_valid(raise_exception=True)
        task = task_create(
            actor=api_user(request), project=self.access.project, content=data.content()
        )
        return Response(TaskSerializer(self.tasks().get(pk=task.pk)).data, status.HTTP_201_CREATED)


@extend_schema(tags=["tasks"])
class TaskDetail(TaskScoped, generics.RetrieveAPIView):
    serializer_class = TaskSerializer

    def get_object(self) -> Task:
        return self.task()

    @extend_schema(summary="One task")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Change a draft or a task sent back for changes (its author)",
        request=TaskWriteSerializer,
        responses={200: TaskSerializer, **_REFUSED},
    )
    def patch(self, request: Request, slug: str, task_id: int) -> Response:
        task = self.task()
        data = TaskWriteSerializer(data=request.data, partial=True, project=self.access.project)
        data.is_valid(raise_exception=True)
        if "version" not in data.validated_data:
            raise ValidationError({"version": ["Send the version of the task you changed."]})
        task_update(
            actor=api_user(request),
            task=task,
            expected_version=data.validated_data["version"],
            content=data.content(task),
        )
        return Response(TaskSerializer(self.task()).data)


@extend_schema(tags=["tasks"])
class TaskTransitions(TaskScoped, generics.GenericAPIView):
    """The moves of the workflow other than decisions: submit, withdraw, reopen, take a task
    for review and give it back."""

    serializer_class = TransitionSerializer

    @extend_schema(summary="The moves you may make now", responses=AvailableSerializer)
    def get(self, request: Request, slug: str, task_id: int) -> Response:
        task = self.task()
        available = available_actions(task, api_user(request), roles_of(self.access))
        body = {
            "state": task.state,
            "version": task.version,
            "available": [action.value for action in available],
            "rubric": self.access.project.rubric_checks.filter(active=True),
        }
        return Response(AvailableSerializer(body).data)

    @extend_schema(
        summary="Make a move",
        request=TransitionSerializer,
        responses={200: TaskSerializer, **_REFUSED},
    )
    def post(self, request: Request, slug: str, task_id: int) -> Response:
        move = TransitionSerializer(data=request.data)
        move.is_valid(raise_exception=True)
        _MOVES[move.validated_data["action"]](
            actor=api_user(request),
            task=self.task(),
            expected_version=move.validated_data["version"],
        )
        return Response(TaskSerializer(self.task()).data)


@extend_schema(tags=["tasks"], summary="A task's revisions, first first")
class RevisionList(TaskScoped, generics.ListAPIView):
    serializer_class = RevisionSerializer
    pagination_class = None

    def get_queryset(self) -> QuerySet[TaskRevision]:
        return self.task().revisions.select_related("created_by").order_by("number")


@extend_schema(tags=["tasks"], summary="One revision, with its diff against the previous one")
class RevisionDetail(TaskScoped, generics.RetrieveAPIView):
    serializer_class = RevisionDetailSerializer

    def get_object(self) -> TaskRevision:
        return generics.get_object_or_404(
            self.task().revisions.select_related("created_by"), number=self.kwargs["number"]
        )


@extend_schema(tags=["reviews"])
class ReviewList(TaskScoped, generics.ListAPIView):
    serializer_class = ReviewSerializer
    pagination_class = None

    def get_queryset(self) -> QuerySet[Review]:
        return self.task().reviews.select_related("reviewer", "revision").order_by("created_at")

    @extend_schema(summary="A task's reviews, oldest first")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Decide on the task you hold: approve, request changes or reject",
        request=ReviewWriteSerializer,
        responses={
            201: ReviewSerializer,
            400: OpenApiResponse(description="Invalid review."),
            **_REFUSED,
        },
    )
    def post(self, request: Request, slug: str, task_id: int) -> Response:
        data = ReviewWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        review = review_decide(
            actor=api_user(request),
            task=self.task(),
            expected_version=data.validated_data["version"],
            decision=data.validated_data["decision"],
            comments=data.validated_data["comments"],
            rubric=data.validated_data["rubric"],
            summary=data.validated_data["summary"],
        )
        return Response(ReviewSerializer(review).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["reviews"])
class ReviewQueue(ProjectScoped, generics.ListAPIView):
    """Tasks of others waiting for your review, oldest submission first (reviewers)."""

    allowed_roles = REVIEWERS
    serializer_class = TaskSerializer

    def get_queryset(self) -> QuerySet[Task]:
        return (
            review_queue(self.access.project, api_user(self.request))
            .select_related("author", "reviewer", "risk_category")
            .prefetch_related("reference_files__task__project")
        )

    @extend_schema(summary="The review queue")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Take the next task to review (or the one you hold)",
        request=None,
        responses={
            200: TaskSerializer,
            204: OpenApiResponse(description="No task waits for your review."),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        task = review_take_next(actor=api_user(request), project=self.access.project)
        if task is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(TaskSerializer(task).data)
