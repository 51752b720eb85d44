"""Model instances from the rows of the queue's and the labels' hand-written statements."""

from __future__ import annotations

from django.db import connection
from django.db.models import Model


def instance_from_row[M: Model](model: type[M], row: object, prefix: str, **known: object) -> M:
    """An instance of `model` from the `prefix__` columns of a raw row: the fields read are set,
    the others are deferred (read from the database if ever asked for)."""
    values = dict(known)
    for field in model._meta.concrete_fields:
        column = getattr(row, f"{prefix}__{field.attname}", None)
        if column is not None:
            values[field.attname] = field.to_python(column)
    names = [field.attname for field in model._meta.concrete_fields if field.attname in values]
    return model.from_db(connection.alias, names, [values[name] for name in names])
