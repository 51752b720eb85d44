"""Benchmark: making a panel of two runs over every record of a project, by either rule.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench_panel \\
        .venv/bin/python bench/panel_bench.py [--records 20000] [--runs 3]

Uses the project of bench/metrics_bench.py (filled on first use: synthetic records, three
labels each, two finished runs of judges right 85% and 75% of the time with a few invalid
answers and errors). Each run makes a panel of the two runs by majority, then one by unsafe if
any, in the two steps the studio takes: the request (`panel_create`, as the page and the API
call it: the members checked, the records they all judged found, the panel saved and its job
sent), then the worker's job (`panel_compute`, called here in this process: reading the
members' verdicts, writing one verdict per record, and looking for the disagreements the
panel's verdicts make). The panels are deleted after each run; medians of --runs runs are
reported.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from django.db import connection

# Imported first of the project's modules: it sets Django up.
from bench.metrics_bench import filled_project, timed
from judging.models import JudgeRun
from judging.services.panels import panel_compute, panel_create


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("Point DATABASE_URL at PostgreSQL: the figures are for the full stack.")
    project = filled_project(args.records)
    members = list(project.judge_runs.exclude(source=JudgeRun.Source.PANEL).order_by("id"))
    timings: dict[str, list[list[tuple[float, float, float]]]] = {"majority": [], "any_unsafe": []}
    for run in range(1, args.runs + 1):
        for rule, values in timings.items():
            made: list[JudgeRun] = []
            request = timed(
                lambda rule=rule, made=made: made.append(
                    panel_create(actor=None, project=project, members=members, rule=rule)
                )
            )
            job = timed(lambda made=made: panel_compute(run_id=made[0].pk))
            values.append([request, job])
        project.judge_runs.filter(source=JudgeRun.Source.PANEL).delete()
        print(f"run {run}/{args.runs}", file=sys.stderr)
    print(f"{args.records:,} records, a panel of {len(members)} runs; medians of {args.runs} runs")
    print(f"{'rule':<12} {'step':<8} {'wall':>7} {'CPU: Python':>12} {'CPU: PostgreSQL':>16}")
    for rule, values in timings.items():
        for index, step in enumerate(("request", "worker")):
            wall, python, postgres = (
                statistics.median(v[index][i] for v in values) for i in range(3)
            )
            print(f"{rule:<12} {step:<8} {wall:6.2f}s {python:11.2f}s {postgres:15.2f}s")


if __name__ == "__main__":
    main()
