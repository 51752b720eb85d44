"""LLM judges, their runs and verdicts, the disagreements found, and how reviewers settle them."""

from __future__ import annotations

from judging.models.connections import ConnectionCheck, ModelConnection
from judging.models.judges import Judge, JudgeEvaluation, JudgeVersion, PromptTemplate, Protocol
from judging.models.panels import Panel, PanelMember
from judging.models.review import Adjudication, Disagreement, PendingCheck
from judging.models.runs import JudgeRun, PlainJSONField, RunChunk, Verdict

__all__ = [
    "Adjudication",
    "ConnectionCheck",
    "Disagreement",
    "Judge",
    "JudgeEvaluation",
    "JudgeRun",
    "JudgeVersion",
    "ModelConnection",
    "Panel",
    "PanelMember",
    "PendingCheck",
    "PlainJSONField",
    "PromptTemplate",
    "Protocol",
    "RunChunk",
    "Verdict",
]
