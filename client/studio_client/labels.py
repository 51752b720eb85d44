"""Labels: annotators' leases and labels, and what reviewers read and settle."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from studio_client.http import Http, path_of
from studio_client.types import (
    Adjudication,
    Annotation,
    Disagreement,
    DisagreementKind,
    DisagreementState,
    Lease,
    SafetyLabel,
    Verdict,
)


class LabelsApi:
    http: Http

    def claim(self, project: str) -> Lease | None:
        """A lease on the next record for you to label (annotators), or the one you hold;
        None when there is nothing left for you."""
        response = self.http.send("POST", path_of("projects", project, "annotation", "claim"))
        return None if response.status_code == 204 else cast(Lease, response.json())

    def submit_label(
        self,
        project: str,
        lease_id: int,
        verdict: Verdict,
        *,
        risk_types: Sequence[str] = (),
        risk_description: str = "",
        safety_score: int | None = None,
        helpfulness_score: int | None = None,
        evidence_turns: Sequence[int] = (),
    ) -> Annotation:
        """Label the leased record: safe, unsafe or unsure, with what the project asks
        (`lease["asked"]`). Raises Conflict if its places were all taken meanwhile."""
        body = _label(
            verdict, risk_types, risk_description, safety_score, helpfulness_score, evidence_turns
        )
        path = path_of("projects", project, "annotation", "leases", lease_id, "submit")
        return cast(Annotation, self.http.send("POST", path, json=body).json())

    def edit_label(
        self,
        project: str,
        label: Annotation,
        verdict: Verdict,
        *,
        risk_types: Sequence[str] = (),
        risk_description: str = "",
        safety_score: int | None = None,
        helpfulness_score: int | None = None,
        evidence_turns: Sequence[int] = (),
    ) -> Annotation:
        """Change one of your labels, as read (from `my_labels`): the whole label is sent with
        the version read. Raises Conflict if it changed since (another tab, another script):
        read it again and redo the edit on it."""
        body = _label(
            verdict, risk_types, risk_description, safety_score, helpfulness_score, evidence_turns
        )
        path = path_of("projects", project, "annotation", "mine", label["id"])
        response = self.http.send("PUT", path, json={**body, "version": label["version"]})
        return cast(Annotation, response.json())

    def skip(self, project: str, lease_id: int, *, reason: str) -> None:
        """Give the leased record back, saying why; it is not offered to you again."""
        path = path_of("projects", project, "annotation", "leases", lease_id, "skip")
        self.http.send("POST", path, json={"reason": reason})

    def my_labels(self, project: str) -> Iterator[Annotation]:
        """Your own labels in the project (annotators)."""
        return self.http.pages(path_of("projects", project, "annotation", "mine"))

    def disagreements(
        self,
        project: str,
        *,
        kind: DisagreementKind | None = None,
        state: DisagreementState | None = None,
        record: int | None = None,
    ) -> Iterator[Disagreement]:
        """Disagreements, each with who said what (`labels`): annotators, judges' runs and the
        gold label (reviewers and managers)."""
        params = {"kind": kind, "state": state, "record": record}
        return self.http.pages(path_of("projects", project, "disagreements"), params)

    def adjudications(self, project: str) -> Iterator[Adjudication]:
        """Reviewers' final labels, newest first."""
        return self.http.pages(path_of("projects", project, "adjudications"))

    def adjudicate(
        self,
        project: str,
        record_id: int,
        label: SafetyLabel,
        *,
        reason: str,
        risk_description: str = "",
    ) -> Adjudication:
        """Settle a record (reviewers): its final label, and why."""
        body = {
            "record": record_id,
            "label": label,
            "reason": reason,
            "risk_description": risk_description,
        }
        response = self.http.send("POST", path_of("projects", project, "adjudications"), json=body)
        return cast(Adjudication, response.json())


def _label(
    verdict: Verdict,
    risk_types: Sequence[str],
    risk_description: str,
    safety_score: int | None,
    helpfulness_score: int | None,
    evidence_turns: Sequence[int],
) -> dict[str, Any]:
    """A label as the API takes it; the scores only when given (a project may not ask them)."""
    body: dict[str, Any] = {
        "verdict": verdict,
        "risk_types": list(risk_types),
        "risk_description": risk_description,
        "evidence_turns": list(evidence_turns),
    }
    if safety_score is not None:
        body["safety_score"] = safety_score
    if helpfulness_score is not None:
        body["helpfulness_score"] = helpfulness_score
    return body
