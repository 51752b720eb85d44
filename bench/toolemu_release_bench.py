"""Benchmark: a release of a ToolEmu study scored by two evaluators, with its preference pairs in
both formats, time and peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/studio_bench_toolemu \\
        .venv/bin/python bench/toolemu_release_bench.py [--agents 27] [--cases 144] [--runs 3]

On first use, fills the project "bench-toolemu-release" (later runs reuse it): a synthetic study
laid out as the "safety training persists" study publishes it, `<evaluator>/<agent>/...jsonl`
for two evaluators and --agents agents on --cases cases (27 x 144 = 3,888 trajectories, each
scored by both evaluators for safety and helpfulness: 15,552 scores), with ToolEmu's
all_toolkits.json, imported through the importer.

Each run then creates a release in a fresh process, through the same services as the page and
the worker: no safe/unsafe label, the scores of one evaluator (its safety and its helpfulness
run), pairs by safety; the content frozen (release_create), then every file built
(release_build), the flat and the conversational (TRL) pair files among them. A run's time is
the wall-clock time of both; its memory is the peak resident set size of that process. The
release is deleted after each run. Medians of --runs runs are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-" + os.urandom(16).hex())

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from bench.generate_toolemu import TOOLKITS, write_study  # noqa: E402
from bench.import_bench import peak_resident_mb  # noqa: E402
from bench.release_bench import runs_in_own_processes  # noqa: E402
from curation.models import ImportBatch, Project, Record  # noqa: E402
from curation.services.imports import import_path  # noqa: E402
from curation.services.projects import project_create  # noqa: E402
from judging.models import JudgeRun  # noqa: E402
from releases.build import release_folder  # noqa: E402
from releases.models import LabelBasis, Release  # noqa: E402
from releases.scores import score_sources  # noqa: E402
from releases.services import release_build, release_create, release_delete, release_options  # noqa: E402

SLUG = "bench-toolemu-release"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=27)
    parser.add_argument("--cases", type=int, default=144)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--run-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        print(json.dumps(run_one(args.run_one)))
        return
    call_command("migrate", verbosity=0)
    filled_project(args.agents, args.cases)
    results = runs_in_own_processes(__file__, args.runs)
    last = results[-1]
    print(f"\nrecords released: {last['records']:,}; files:")
    for name, size in last["files"].items():
        print(f"  {name:<32} {size / 1e6:8.1f} MB")
    print(f"pairs: {last['pairs']:,}, of which in TRL's format: {last['trl_pairs']:,}")
    print(f"medians of {len(results)} runs:")
    for key in ("freeze_s", "build_s", "total_s", "peak_mb"):
        print(f"  {key:<9} {statistics.median(r[key] for r in results):8.2f}")


def run_one(version: str) -> dict[str, object]:
    project = Project.objects.get(slug=SLUG)
    admin = get_user_model().objects.get(username="bench-toolemu-admin")
    runs = dict(JudgeRun.objects.filter(project=project).values_list("name", "id"))
    sources = score_sources(
        project,
        safety=runs["Qwen3-32B safe"],
        helpfulness=runs["Qwen3-32B help_ignore_safety"],
    )
    started = time.perf_counter()
    release = release_create(
        actor=admin,
        project=project,
        version=version,
        license="CC BY 4.0",
        label_basis=LabelBasis.SCORES,
        options=release_options(pairs_by="safety", scores=sources),
    )
    frozen = time.perf_counter()
    release = release_build(release.pk)
    done = time.perf_counter()
    assert release.state == Release.State.BUILT
    files = {entry["name"]: entry["size"] for entry in release.manifest["files"]}
    folder = release_folder(release)
    result = {
        "freeze_s": frozen - started,
        "build_s": done - frozen,
        "total_s": done - started,
        "peak_mb": peak_resident_mb(),
        "records": release.summary["records"],
        "files": files,
        "pairs": _lines(folder / "dpo_pairs.jsonl"),
        "trl_pairs": _lines(folder / "dpo_pairs_conversational.jsonl"),
    }
    release_delete(actor=admin, release=release)
    return result


def _lines(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as stream:
        return sum(1 for _ in stream)


def filled_project(agents: int, cases: int) -> Project:
    """The benchmark's project, filled on first use."""
    users = get_user_model()
    users.objects.get_or_create(username="bench-toolemu-admin", defaults={"is_superuser": True})
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None:
        have = Record.objects.filter(project=project).count()
        if have != agents * cases:
            sys.exit(f"Project {SLUG} holds {have:,} records, not {agents * cases:,}.")
        return project
    project = project_create(actor=None, name="ToolEmu release benchmark", slug=SLUG)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        write_study_with_toolkits(Path(folder), agents, cases)
        batch = import_path(actor=None, project=project, path=folder)
    if batch.state != ImportBatch.State.SUCCEEDED:
        sys.exit(f"The import failed: {batch.errors}")
    print(f"filled the project in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return project


def write_study_with_toolkits(root: Path, agents: int, cases: int) -> None:
    """The study's files (bench/generate_toolemu.py), and ToolEmu's all_toolkits.json for the
    toolkits its cases use, so that the TRL prompts describe their tools."""
    write_study(root, agents_count=agents, cases_count=cases)
    toolkits = [
        {
            "toolkit": name,
            "name_for_model": name,
            "description_for_model": f"The {name} toolkit, for the benchmark.",
            "tools": [
                {"name": f"{name}{verb}", "summary": f"{verb}s with {name}."}
                for verb in ("Search", "Execute", "Send", "Read")
            ],
        }
        for name in TOOLKITS
    ]
    (root / "assets").mkdir(parents=True)
    (root / "assets" / "all_toolkits.json").write_text(json.dumps(toolkits))


if __name__ == "__main__":
    main()
