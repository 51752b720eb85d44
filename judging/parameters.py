"""The sampling parameters a judge may send with every call, and their bounds.

The ranges are those the OpenAI chat completions API documents, which compatible servers
follow; `max_tokens` is bounded by the judge's connection, whose administrator says how long an
answer may be. A value out of bounds is refused when the judge is saved (pages and API alike)
and when a run starts, so that no call asks for what a provider would refuse, and none draws
more from the connection's shared limits than one answer may take.
"""

from __future__ import annotations

from collections.abc import Callable

# Seeds are 64-bit integers.
_SEED_BOUND = 2**63
# OpenAI takes at most four stop sequences.
MAX_STOP_SEQUENCES = 4
MAX_STOP_LENGTH = 200


def _number(low: float, high: float) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"a number from {low:g} to {high:g}"
        return None if low <= value <= high else f"from {low:g} to {high:g}"

    return check


def _seed(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return "a whole number"
    return None if -_SEED_BOUND <= value < _SEED_BOUND else "a 64-bit whole number"


def _stop(value: object) -> str | None:
    sequences = [value] if isinstance(value, str) else value
    if (
        not isinstance(sequences, list)
        or not 1 <= len(sequences) <= MAX_STOP_SEQUENCES
        or not all(isinstance(item, str) and 0 < len(item) <= MAX_STOP_LENGTH for item in sequences)
    ):
        return (
            f"a text or a list of 1 to {MAX_STOP_SEQUENCES} texts of at most "
            f"{MAX_STOP_LENGTH} characters"
        )
    return None


_BOUNDED: dict[str, Callable[[object], str | None]] = {
    "temperature": _number(0, 2),
    "top_p": _number(0, 1),
    "presence_penalty": _number(-2, 2),
    "frequency_penalty": _number(-2, 2),
    "seed": _seed,
    "stop": _stop,
}
# Sampling parameters a judge may set; anything else would be refused by the client.
PARAMETERS = frozenset({*_BOUNDED, "max_tokens"})


def parameter_errors(parameters: dict[str, object], *, max_tokens: int) -> list[str]:
    """What is wrong with a judge's parameters whose connection allows answers of at most
    `max_tokens` tokens, one sentence each; none when they may be sent."""
    unknown = sorted(set(parameters) - PARAMETERS)
    if unknown:
        return [
            f"Unknown parameters {', '.join(unknown)}; allowed: {', '.join(sorted(PARAMETERS))}."
        ]
    errors = []
    for name, value in parameters.items():
        if name == "max_tokens":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                errors.append("max_tokens must be a whole number of at least 1.")
            elif value > max_tokens:
                errors.append(
                    f"max_tokens must be at most {max_tokens:,}: the most its connection allows."
                )
        elif (problem := _BOUNDED[name](value)) is not None:
            errors.append(f"{name} must be {problem}.")
    return errors
