"""Placeholder: implemented in the foundation work in progress."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse


def _todo(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise NotImplementedError


record_list = record_detail = _todo
