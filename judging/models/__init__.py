"""LLM judges: their connections, prompts, versions, runs, panels and verdicts."""

from __future__ import annotations

from judging.models.connections import ConnectionCheck, ModelConnection
from judging.models.judges import (
    SCORE_PROTOCOLS,
    Judge,
    JudgeEvaluation,
    JudgeVersion,
    PromptTemplate,
    Protocol,
)
from judging.models.panels import Panel, PanelMember
from judging.models.runs import JudgeRun, PlainJSONField, RunChunk, Verdict, name_shared

__all__ = [
    "SCORE_PROTOCOLS",
    "ConnectionCheck",
    "Judge",
    "JudgeEvaluation",
    "JudgeRun",
    "JudgeVersion",
    "ModelConnection",
    "Panel",
    "PanelMember",
    "PlainJSONField",
    "PromptTemplate",
    "Protocol",
    "RunChunk",
    "Verdict",
    "name_shared",
]
