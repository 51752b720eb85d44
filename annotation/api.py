"""The annotation API: claim the next record, read the current lease, submit or skip it, and
list and edit your own labels. The same services and the same blindness as the labelling page;
only the project's annotators may use it.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors
from annotation.models import Annotation, Lease
from annotation.serializers import (
    AnnotationSerializer,
    LabelEditSerializer,
    LabelFieldsSerializer,
    LabelSerializer,
    LeaseSerializer,
    SkipSerializer,
)
from annotation.services.labels import annotation_submit, annotation_update
from annotation.services.queue import lease_next_record, lease_skip
from curation.access import ProjectAccess, annotator_access
from curation.requests import api_user

NOTHING_LEFT = OpenApiResponse(description="Nothing is left for you to label in this project.")
NO_SUCH_LEASE = "You hold no such lease that may still be labelled."
CONFLICT = OpenApiResponse(description="Refused in the current state; the body says why.")


class AnnotatorScoped(APIView):
    """A view inside the project named by the URL's slug, for the project's annotators."""

    access: ProjectAccess

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # After authentication, so that anonymous callers get 401 rather than 404.
        super().initial(request, *args, **kwargs)
        self.access = annotator_access(request.user, kwargs["slug"])

    def own_lease(self, lease_id: int) -> Lease:
        lease = selectors.own_lease(self.access.project, api_user(self.request), lease_id)
        if lease is None:
            raise NotFound(NO_SUCH_LEASE)
        return lease

    def lease_response(self, lease: Lease | None) -> Response:
        if lease is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(LeaseSerializer(lease).data)


@extend_schema(
    tags=["annotation"],
    summary="Claim the next record to label",
    request=None,
    responses={200: LeaseSerializer, 204: NOTHING_LEFT},
)
class LeaseClaim(AnnotatorScoped):
    """Your live lease if you hold one, else a lease on the next record you may label: one you
    have not labelled or skipped, with a free place, closest to completion first."""

    def post(self, request: Request, slug: str) -> Response:
        return self.lease_response(
            lease_next_record(project=self.access.project, annotator=api_user(request))
        )


@extend_schema(
    tags=["annotation"],
    summary="Your current lease",
    responses={
        200: LeaseSerializer,
        204: OpenApiResponse(description="You hold no lease: claim one."),
    },
)
class CurrentLease(AnnotatorScoped):
    """The record you are labelling (blind: no gold label, no other labels), with your draft."""

    def get(self, request: Request, slug: str) -> Response:
        return self.lease_response(selectors.live_lease(self.access.project, api_user(request)))


@extend_schema(
    tags=["annotation"],
    summary="Submit your label of a leased record",
    request=LabelSerializer,
    responses={
        201: AnnotationSerializer,
        400: OpenApiResponse(description="Invalid label."),
        409: CONFLICT,
    },
)
class LeaseSubmit(AnnotatorScoped):
    """A lease that expired is still accepted while its record has a free place (409 if not)."""

    def post(self, request: Request, slug: str, lease_id: int) -> Response:
        if not selectors.holds_lease(self.access.project, api_user(request), lease_id):
            raise NotFound(NO_SUCH_LEASE)
        label = LabelFieldsSerializer(data=request.data, context={"project": self.access.project})
        label.is_valid(raise_exception=True)
        try:
            # The service reads the lease itself, locked: its id is all it takes.
            annotation = annotation_submit(
                lease=Lease(pk=lease_id), actor=api_user(request), label=label.to_label()
            )
        except DjangoValidationError as error:
            # The rules that tie the label to its record are checked once, by the service,
            # on the record it read with the lease locked: reading it here too cost a query.
            raise ValidationError(error.message_dict) from error
        answer = AnnotationSerializer(
            annotation, context={"risk_types": label.validated_data.get("risk_types", [])}
        )
        return Response(answer.data, status=status.HTTP_201_CREATED)


@extend_schema(
    tags=["annotation"],
    summary="Skip a leased record, saying why",
    request=SkipSerializer,
    responses={204: OpenApiResponse(description="Skipped."), 409: CONFLICT},
)
class LeaseSkip(AnnotatorScoped):
    """The record is never offered to you again."""

    def post(self, request: Request, slug: str, lease_id: int) -> Response:
        lease = self.own_lease(lease_id)
        skip = SkipSerializer(data=request.data)
        skip.is_valid(raise_exception=True)
        lease_skip(lease=lease, actor=api_user(request), reason=skip.validated_data["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["annotation"], summary="Your labels in the project, newest first")
class MyAnnotationList(AnnotatorScoped, generics.ListAPIView):
    serializer_class = AnnotationSerializer

    def get_queryset(self) -> QuerySet[Annotation]:
        return selectors.own_annotations(self.access.project, api_user(self.request)).defer(
            "record__raw"
        )


@extend_schema(tags=["annotation"])
class MyAnnotationDetail(AnnotatorScoped, generics.RetrieveAPIView):
    serializer_class = AnnotationSerializer
    lookup_url_kwarg = "annotation_id"

    def get_queryset(self) -> QuerySet[Annotation]:
        return selectors.own_annotations(self.access.project, api_user(self.request))

    @extend_schema(summary="One of your labels")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        summary="Change one of your labels",
        description="Send the whole label with the `version` you read. If the label changed "
        "since (another tab, another script), the edit is refused with 409 and the newer "
        "label is kept: read it again and redo the edit on it.",
        request=LabelEditSerializer,
        responses={
            200: AnnotationSerializer,
            400: OpenApiResponse(description="Invalid label."),
            409: CONFLICT,
        },
    )
    def put(self, request: Request, slug: str, annotation_id: int) -> Response:
        annotation = self.get_object()
        edit = LabelEditSerializer(
            data=request.data,
            context={"project": self.access.project, "turn_count": len(annotation.record.turns)},
        )
        edit.is_valid(raise_exception=True)
        annotation = annotation_update(
            annotation=annotation,
            actor=api_user(request),
            label=edit.to_label(),
            version=edit.validated_data["version"],
        )
        answer = AnnotationSerializer(
            annotation, context={"risk_types": edit.validated_data.get("risk_types", [])}
        )
        return Response(answer.data)
