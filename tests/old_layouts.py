"""Databases made at an older layout of the apps, for the tests of the migrations that moved
models between apps."""

from __future__ import annotations

from django.db.migrations.executor import MigrationExecutor

# (app, its last migration then), or (app, None) for an app that did not exist then.
Layout = list[tuple[str, str | None]]


def old_leaves(executor: MigrationExecutor, layout: Layout) -> list[tuple[str, str]]:
    """The last migration of every app as it was at `layout`: the apps it names as it names
    them, the others at their latest."""
    old = dict(layout)
    return [
        (app, old.get(app, name))
        for app, name in executor.loader.graph.leaf_nodes()
        if old.get(app, name) is not None
    ]
