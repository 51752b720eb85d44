"""The REST API of the record list: the records with what was said about them, filtered,
sorted and paged as the record list page does it (hub/record_list.py), and its bulk action.

Served by the hub, at the address curation served the list from before the record became the
hub (docs/architecture.md): curation cannot see labels' consensus, disagreements or verdicts.
Records carry gold labels and everyone's labels and verdicts, which annotators must not see:
only reviewers and managers read them, only managers act on them.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.db.models import QuerySet
from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation.access import MANAGERS, RECORD_READERS
from curation.api import ProjectScoped
from curation.models import Record
from curation.requests import api_user
from curation.selectors import SEARCH_MATCH_LIMIT
from hub.exports import FORMATS, export_response
from hub.forms import RecordListForm
from hub.record_list import (
    COUNT_COLUMNS,
    FILTERS,
    listed_records,
    matching_record_ids,
    opinions,
    run_choices,
    shown_runs,
)
from hub.serializers import RecordBulkOutcomeSerializer, RecordBulkSerializer, RecordRowSerializer
from hub.services import records_bulk_apply

_HELP = {
    "category": "Only records of this category (its name, e.g. Program).",
    "scenario": "Only records of this scenario (its name, e.g. mail).",
    "gold_label": "Only records with this gold label; none: records without one.",
    "attack_type": "Only records of this attack type (e.g. unintended).",
    "agent": "Only records made by this agent (model), as their source names it.",
    "q": (
        "Only records whose interaction holds these words (a search box's syntax: every word, "
        '"a phrase", -excluded), or whose external id this is. At most '
        f"{SEARCH_MATCH_LIMIT + 1} records match a text search; more than {SEARCH_MATCH_LIMIT} "
        "means: narrow it. Records imported in the last minutes may not be found yet."
    ),
    "labels": "none: no label yet; some: fewer than needed; done: all needed (k, plus more "
    "asked of the record).",
    "consensus": "Only records of this human consensus by the project's rule; none: without.",
    "final": "Only records of this final label (a reviewer's, else the consensus); none: without.",
    "disputed": "yes: only records with an open disagreement; no: only those without.",
    "annotator": "Only records this person labelled (their username).",
    "run": "A run's id: its verdicts are among each record's `verdicts`, and `verdict` "
    "filters by them.",
    "verdict": "Only records that the run `run` judged so; `score:0` to `score:3`: that it "
    "scored so (an evaluator's or judge's valid 0-3 score); missing: that it has not judged.",
    "sort": "The order; import order (by id) when not given.",
    "per_page": "Records per page.",
}


def _parameter(name: str, field: forms.Field) -> OpenApiParameter:
    """A query parameter as the form that validates it takes it, so the two cannot drift."""
    integer = isinstance(field, forms.TypedChoiceField) and field.coerce is int
    choices = [value for value, _ in getattr(field, "choices", ()) if value != ""]
    return OpenApiParameter(
        name,
        OpenApiTypes.INT if integer else OpenApiTypes.STR,
        description=_HELP[name],
        enum=([int(v) for v in choices] if integer else choices) or None,
    )


LIST_PARAMETERS = [_parameter(name, field) for name, field in RecordListForm.base_fields.items()]
FILTER_PARAMETERS = [p for p in LIST_PARAMETERS if p.name in FILTERS]


def _valid_form(request: Request, runs: list[tuple[int, str]]) -> RecordListForm:
    """The list's filters in the query string, checked against the project's `runs`."""
    form = RecordListForm(request.query_params, runs=runs)
    if not form.is_valid():
        errors = form.errors.get_json_data()
        raise ValidationError(
            {field: [e["message"] for e in found] for field, found in errors.items()}
        )
    return form


@extend_schema(
    tags=["records"],
    summary="The project's records, filtered, with their labels and verdicts (reviewers, managers)",
    parameters=LIST_PARAMETERS,
    responses={
        200: RecordRowSerializer(many=True),
        400: OpenApiResponse(description="A filter is invalid; the body names it."),
    },
)
class RecordList(ProjectScoped, generics.ListAPIView):
    """Records without their interaction (fetch a record for that), with the columns of the
    record list page: labels (n of k), consensus, final label, open disagreements, and the
    verdicts of the latest runs."""

    allowed_roles = RECORD_READERS
    serializer_class = RecordRowSerializer

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        project = self.access.project
        runs = run_choices(project)
        filters = _valid_form(request, runs).cleaned_data
        # The API's pagination class (settings.REST_FRAMEWORK) pages by number: a page here
        # holds the filters' per_page.
        paginator = cast(PageNumberPagination, self.paginator)
        paginator.page_size = filters["per_page"]
        page_ids = self.paginate_queryset(
            listed_records(project, filters).values_list("id", flat=True)
        )
        # A paginator gives no page only when it has no page size, set just above.
        records = _records(cast("list[int]", page_ids))
        said = opinions(
            project,
            [{"id": r.pk, **{c: getattr(r, c) for c in COUNT_COLUMNS}} for r in records],
            shown_runs(runs, filters["run"]),
        )
        for record in records:
            # Read by the serializer's opinions.* sources: no field of the model, and the type
            # checker cannot be told of an attribute these instances alone are given.
            record.opinions = said[record.pk]  # type: ignore[attr-defined]
        return self.get_paginated_response(self.get_serializer(records, many=True).data)

    def get_queryset(self) -> QuerySet[Record]:
        # For the schema's sake: list() pages the ids of the filtered records.
        return self.access.project.records.none()


def _records(ids: list[int]) -> list[Record]:
    """The records of a page in its order, without what the list does not show (the raw
    source is most of a row)."""
    records = (
        Record.objects.filter(pk__in=ids)
        .select_related("category", "scenario")
        .defer("profile", "goal", "gold_risk_description", "raw", "metadata")
    )
    by_id = {record.pk: record for record in records}
    return [by_id[pk] for pk in ids if pk in by_id]


@extend_schema(
    tags=["records"],
    summary="Act on records: start a judge run, send to adjudication, ask for more labels "
    "(managers)",
    description=(
        "On the records given by id, or on every record that the query string's filters (the "
        "record list's) match when the request is handled. A run is judged by workers in the "
        "background: follow it at its URL in the runs API."
    ),
    parameters=FILTER_PARAMETERS,
    request=RecordBulkSerializer,
    responses={
        200: RecordBulkOutcomeSerializer,
        400: OpenApiResponse(description="The request is invalid or refused; the body says why."),
    },
)
class RecordBulk(ProjectScoped, APIView):
    allowed_roles = MANAGERS

    def post(self, request: Request, slug: str) -> Response:
        project = self.access.project
        body = RecordBulkSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        judge = None
        if data.get("judge") is not None:
            judge = project.judges.filter(pk=data["judge"]).first()
            if judge is None:
                raise ValidationError({"judge": ["No such judge in this project."]})
        chosen: dict[str, Any] = {"record_ids": data.get("records")}
        if data["all_matching"]:
            chosen = {"matching": _valid_form(request, run_choices(project)).cleaned_data}
        outcome = records_bulk_apply(
            actor=api_user(request),
            project=project,
            action=data["action"],
            judge=judge,
            more=data.get("more"),
            **chosen,
        )
        return Response(RecordBulkOutcomeSerializer(outcome).data)


@extend_schema(
    tags=["records"],
    summary="The records the filters match, with their labels as they stand (reviewers, managers)",
    parameters=FILTER_PARAMETERS,
    responses={
        (200, "application/jsonl"): OpenApiResponse(
            OpenApiTypes.BINARY,
            description="A record a line: its consensus, final label, the annotators' labels, "
            "their mean scores and the settled scores.",
        ),
        (200, "text/csv"): OpenApiResponse(OpenApiTypes.BINARY, description="A record a row."),
        400: OpenApiResponse(description="A filter is invalid; the body names it."),
    },
)
class RecordExport(ProjectScoped):
    """An export at any time of the records the list's filters match, streamed, with no
    release made: `export.jsonl` or `export.csv`."""

    allowed_roles = RECORD_READERS

    def get(self, request: Request, slug: str, file_format: str) -> HttpResponseBase:
        if file_format not in FORMATS:
            raise NotFound("Records are exported as jsonl or csv.")
        project = self.access.project
        filters = _valid_form(request, run_choices(project)).cleaned_data
        return export_response(project, matching_record_ids(project, filters), file_format)
