"""Where 0-3 scores come from, and the records they score, as arrays for the score reports.

A score source is one run that gives scores (a ToolEmu evaluator, an LLM judge, a panel: any
run with scores), the people's final score (a reviewer's settled score, else the consensus of
the annotators' scores by the project's rule), or one annotator. Its scores are one scale: a
run's is the scale its protocol scores, the others' the scale asked for. Sources are never
averaged together: each report names the ones it reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection
from django.db.models import Exists, F, Func, IntegerField, Min, OuterRef, QuerySet

from annotation.consensus import SCALES, consensus_codes
from annotation.models import Annotation
from curation.arrays import InArray, fetch_rows, int_matrix
from curation.formats.turns import test_case_of
from curation.models import Project, Record
from curation.selectors import usernames
from judging.models import JudgeRun, Verdict, name_shared
from judging.selectors import run_protocol, run_score_scale
from review.selectors import settled_scores
from stats import metrics

CONSENSUS = "consensus"
RUN_PREFIX = "run:"
PERSON_PREFIX = "person:"
# What a record with no source agent, or no case, is grouped under.
NO_SOURCE = "(none)"


class UnknownSource(ValueError):
    """A choice the project does not offer (a source on a scale, a toolkit): the message says
    why, and `field` names the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ScoreSource:
    key: str
    name: str


def score_runs(project: Project) -> QuerySet[JudgeRun]:
    """The project's runs that gave at least one score, newest first."""
    scored = Verdict.objects.filter(run=OuterRef("pk"), score__isnull=False)
    return project.judge_runs.filter(Exists(scored)).order_by("-created_at", "-id")


def run_scale(run: JudgeRun) -> str:
    return SCALES[run_score_scale(run_protocol(run))]


def run_sources(project: Project, scale: str) -> list[ScoreSource]:
    """The runs scoring on `scale`, newest first."""
    runs = score_runs(project).annotate(name_is_shared=name_shared()).select_related("judge")
    return [
        ScoreSource(f"{RUN_PREFIX}{run.pk}", run.display_name)
        for run in runs
        if run_scale(run) == scale
    ]


def score_sources(project: Project, scale: str, *, people: bool = True) -> list[ScoreSource]:
    """The sources offered on `scale`: its runs, the human consensus, and (with `people`) each
    annotator who gave such scores."""
    sources = [*run_sources(project, scale), ScoreSource(CONSENSUS, "Human consensus")]
    if people:
        scored = Annotation.objects.filter(project=project, **{f"{scale}_score__isnull": False})
        ids = list(scored.order_by().values_list("annotator_id", flat=True).distinct())
        names = usernames(ids)
        sources += [
            ScoreSource(f"{PERSON_PREFIX}{pk}", names[pk])
            for pk in sorted(ids, key=lambda pk: names[pk])
        ]
    return sources


def chosen_sources(
    project: Project, choices: dict[str, tuple[str, str]], *, people: bool = True
) -> dict[str, ScoreSource]:
    """{parameter: source} for {parameter: (scale, key)}; UnknownSource names the first
    parameter whose key the project does not offer on its scale."""
    chosen = {}
    for field, (scale, key) in choices.items():
        offered = {s.key: s for s in score_sources(project, scale, people=people)}
        if key not in offered:
            raise UnknownSource(
                field, f"No source gives {scale} scores in this project as {key!r}."
            )
        chosen[field] = offered[key]
    return chosen


def scores_of(
    project: Project, key: str, scale: str, record_ids: list[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(record ids in order, their scores) of a source, on the records that it scored."""
    if key.startswith(RUN_PREFIX):
        verdicts = Verdict.objects.filter(
            run_id=int(key.removeprefix(RUN_PREFIX)),
            parse_status=Verdict.Parse.VALID,
            score__isnull=False,
        )
        if record_ids is not None:
            verdicts = verdicts.filter(InArray(F("record_id"), record_ids))
        m = int_matrix(verdicts.order_by("record_id").values_list("record_id", "score"), 2)
        return m[:, 0], m[:, 1]
    annotations = Annotation.objects.filter(project=project, **{f"{scale}_score__isnull": False})
    if record_ids is not None:
        annotations = annotations.filter(InArray(F("record_id"), record_ids))
    if key.startswith(PERSON_PREFIX):
        mine = annotations.filter(annotator_id=int(key.removeprefix(PERSON_PREFIX)))
        m = int_matrix(mine.order_by("record_id").values_list("record_id", f"{scale}_score"), 2)
        return m[:, 0], m[:, 1]
    m = int_matrix(annotations.order_by().values_list("record_id", f"{scale}_score"), 2)
    records, item = np.unique(m[:, 0], return_inverse=True)
    counts = metrics.category_counts(item, m[:, 1], len(records), metrics.SCORE_CATEGORIES)
    agreed = consensus_codes(counts, project.overlap, rule=project.consensus_rule, scale=scale)
    keep = agreed != metrics.MISSING
    # A reviewer's settled score is the people's final word on the record, consensus or not.
    final = dict(zip(records[keep].tolist(), agreed[keep].tolist(), strict=True))
    settled = settled_scores(project, record_ids)
    final.update(
        (record_id, scores[scale]) for record_id, scores in settled.items() if scale in scores
    )
    ids = np.array(sorted(final), dtype=np.int64)
    return ids, np.array([final[record_id] for record_id in ids.tolist()], dtype=np.int64)


def case_toolkits(project: Project) -> dict[str, list[str]]:
    """Each case's toolkits, read from one record of the case (all of a case's records carry
    the same test case)."""
    firsts = (
        Record.objects.filter(project=project)
        .exclude(source_case="")
        .order_by()
        .values("source_case")
        .annotate(first=Min("id"))
        .values_list("first", flat=True)
    )
    rows = Record.objects.filter(pk__in=list(firsts)).values_list(
        "source_case", "source_format", "raw"
    )
    return {
        case: list((test_case_of(source_format, raw) or {}).get("Toolkits") or [])
        for case, source_format, raw in rows
    }


def toolkit_names(project: Project) -> list[str]:
    return sorted({name for names in case_toolkits(project).values() for name in names})


@dataclass(frozen=True)
class RecordGroups:
    """The project's records in id order, with their source agent's and case's codes, and each
    case's toolkits: what the score reports break their figures down by."""

    ids: np.ndarray
    agent: np.ndarray
    agents: list[str]
    case: np.ndarray
    cases: list[str]
    toolkits: dict[str, list[str]]

    @classmethod
    def load(
        cls, project: Project, *, toolkit: str = "", record_ids: list[int] | None = None
    ) -> RecordGroups:
        """The records, of the cases that use `toolkit` if given, of `record_ids` if given."""
        toolkits = case_toolkits(project)
        records = Record.objects.filter(project=project)
        if toolkit:
            records = records.filter(
                source_case__in=[case for case, names in toolkits.items() if toolkit in names]
            )
        if record_ids is not None:
            records = records.filter(InArray(F("id"), record_ids))
        ids, agent_names, case_names = _sources(records)
        agents, agent = _codes(agent_names)
        cases, case = _codes(case_names)
        return cls(
            ids=ids,
            agent=agent,
            agents=[name or NO_SOURCE for name in agents],
            case=case,
            cases=[name or NO_SOURCE for name in cases],
            toolkits=toolkits,
        )

    def at(self, record_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(where each of `record_ids` is among the records, whether it is one of them)."""
        index = np.searchsorted(self.ids, record_ids)
        index = np.minimum(index, max(len(self.ids) - 1, 0))
        found = (
            (self.ids[index] == record_ids) if len(self.ids) else np.zeros(len(record_ids), bool)
        )
        return index, found


def _sources(records: QuerySet[Record]) -> tuple[np.ndarray, list[str], list[str]]:
    """The records' ids in order, with each one's source agent and case.

    On PostgreSQL each name comes as its hash, an integer (numpy reads 100,000 rows of
    integers at once, where rows of names cost a Python object each, and ranking the names in
    SQL sorted them twice, on disk); the names are then looked up by hash, unless two of them
    share one.
    """
    if connection.vendor == "postgresql":
        agent_hash, case_hash = (
            Func(F(field), function="hashtext", output_field=IntegerField())
            for field in ("source_agent", "source_case")
        )
        pairs = records.order_by().values_list(agent_hash, "source_agent", case_hash, "source_case")
        agents, cases = {}, {}
        for agent_key, agent, case_key, case in pairs.distinct():
            agents[agent_key], cases[case_key] = agent, case
        # Only if no two names share a hash; else read the names themselves.
        if len(agents) == len(set(agents.values())) and len(cases) == len(set(cases.values())):
            m = int_matrix(records.order_by("id").values_list("id", agent_hash, case_hash), 3)
            return (
                m[:, 0],
                [agents[key] for key in m[:, 1].tolist()],
                [cases[key] for key in m[:, 2].tolist()],
            )
    rows = fetch_rows(records.order_by("id").values_list("id", "source_agent", "source_case"))
    ids = np.array([row[0] for row in rows], dtype=np.int64)
    return ids, [row[1] for row in rows], [row[2] for row in rows]


def _codes(names: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct names in order, and each name's position among them."""
    distinct = sorted(set(names))
    position = {name: index for index, name in enumerate(distinct)}
    return distinct, np.array([position[name] for name in names], dtype=np.int64)


def first_two(project: Project, scale: str) -> tuple[str, str]:
    """The sources compared when none are chosen: the first two offered (the latest runs)."""
    sources = score_sources(project, scale)
    return sources[0].key, sources[min(1, len(sources) - 1)].key
