"""Columns of integers from SQL as numpy arrays, for statistics over whole projects.

The ORM writes every query; the rows are fetched past it, because it would convert every value
of every row in Python, which costs more than the query. On PostgreSQL they arrive as one
string of bytes that numpy reads in place, without a Python object per value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.db.models.lookups import In


class InArray(In):
    """`field IN (ids)` that sends the ids as one array on PostgreSQL: the driver would quote
    each value of an IN list in Python, which costs more than the query for many records."""

    def as_postgresql(self, compiler, connection) -> tuple[str, tuple[object, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        ids = "{" + ",".join(map(str, self.rhs)) + "}"
        return f"{lhs} = ANY(%s::bigint[])", (*lhs_params, ids)

    def get_prep_lookup(self) -> list[int]:
        # Ids already: preparing each through the field would cost more than the query.
        return list(map(int, self.rhs))


def code_of(field: str, codes: dict[str, int], default: int) -> Case:
    """A text column as its integer code, computed in SQL so that rows arrive as integers."""
    whens = [When(**{field: text}, then=Value(code)) for text, code in codes.items()]
    return Case(*whens, default=Value(default), output_field=IntegerField())


def fetch_rows(rows: QuerySet) -> list[tuple]:
    """The rows of a values_list as tuples, without the ORM's converters."""
    query = _sql(rows)
    if query is None:
        return []
    with connection.cursor() as cursor:
        cursor.execute(*query)
        return cursor.fetchall()


def int_matrix(rows: QuerySet, width: int) -> np.ndarray:
    """A values_list of `width` integer columns, none of them null, as an (n, width) array."""
    if connection.vendor != "postgresql":
        return np.array(fetch_rows(rows), dtype=np.int64).reshape(-1, width)
    query = _sql(rows)
    if query is None:
        return np.empty((0, width), dtype=np.int64)
    sql, params = query
    names = [f"c{i}" for i in range(width)]
    # All rows in one value: each row's columns as 8-byte big-endian integers, end to end.
    packed = " || ".join(f"int8send({name}::bigint)" for name in names)
    statement = f"SELECT string_agg({packed}, '') FROM ({sql}) AS t ({', '.join(names)})"  # noqa: S608 (the ORM's SQL, its parameters apart)
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        data = cursor.fetchone()[0] or b""
    return np.frombuffer(data, dtype=">i8").reshape(-1, width).astype(np.int64)


def _sql(rows: QuerySet) -> tuple[str, tuple[Any, ...]] | None:
    """The query's SQL and parameters, or None when it can match no row: the ORM writes no SQL
    for a filter such as `run_id__in=[]` (no run chosen, none in the project) and raises.

    The parameters are typed as the stubs type sql_with_params': values of any type the ORM
    hands the driver, which the cursor takes as they are.
    """
    try:
        return rows.query.sql_with_params()
    except EmptyResultSet:
        return None
