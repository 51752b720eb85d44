"""Executing judge runs, spread over every worker: chunks (chunks.py), a worker's share of the
run (execution.py), and what it commits (commits.py)."""

from __future__ import annotations

from judging.services.run_engine.execution import case_of, judge_run_execute

__all__ = ["case_of", "judge_run_execute"]
