"""The judging protocols: how a judge asks about a record and reads the answer.

One module per protocol, and `fencing` for what they share: record content quoted as data.
"""

from __future__ import annotations

from typing import Any

from judging.models import Protocol
from judging.protocols.base import Ask, Case, JudgeProtocol, Outcome, TaskFacts, storable
from judging.protocols.custom import Custom
from judging.protocols.examples import WithExamples
from judging.protocols.rjudge import RJudge
from judging.protocols.safepro import SafePro
from judging.protocols.toolemu import HELPFULNESS, SAFETY, ToolEmu

__all__ = ["Ask", "Case", "JudgeProtocol", "Outcome", "TaskFacts", "protocol_for", "storable"]


def protocol_for(snapshot: dict[str, Any]) -> JudgeProtocol:
    """The protocol of a judge as a run's snapshot describes it, with the worked examples of
    the judge's version if it has any. Examples carry final labels, safe or unsafe: a judge
    changed since to a protocol that scores 0-3 judges without them."""
    protocol = _protocol(snapshot)
    examples = (snapshot.get("version") or {}).get("examples")
    return WithExamples(protocol, examples) if examples and protocol.answer == "label" else protocol


def _protocol(snapshot: dict[str, Any]) -> JudgeProtocol:
    match snapshot["protocol"]:
        case Protocol.RJUDGE:
            return RJudge()
        case Protocol.SAFEPRO:
            return SafePro()
        case Protocol.TOOLEMU_SAFETY:
            return ToolEmu(SAFETY)
        case Protocol.TOOLEMU_HELPFULNESS:
            return ToolEmu(HELPFULNESS)
        case Protocol.CUSTOM:
            return Custom(snapshot["template"])
    raise ValueError(f"Unknown protocol {snapshot['protocol']!r}")
