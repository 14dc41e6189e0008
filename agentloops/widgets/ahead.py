"""What the criteria explorer computes ahead of the learner: the settings likely picked next.

A change in the explorer re-runs the script under every criterion and redraws a three-panel chart: more
than the 100 ms a control may take to answer on a busy two-core laptop. So what a setting shows is kept
(a :class:`View`), and while the page is read a worker thread
(:mod:`~agentloops.controller.teaching.prewarm`) computes the settings a learner is likely to pick next:
:func:`next_settings`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

from agentloops.criteria import CRITERION_NAMES
from agentloops.widgets.script import (
    CONTENT_LABELS,
    CUSTOM,
    FINISH_REASONS,
    MAX_CAP,
    MAX_ROUNDS,
    MAX_TOOL_CALLS,
    RoundSpec,
)

Setting = tuple[str, "str | None", "tuple[RoundSpec, ...]", str, int, str]
"""(scenario, its base as JSON or ``None``, the rounds, criterion, cap, language): what the controls describe."""

FIELDS: dict[str, tuple[Hashable, ...]] = {
    "finish_reason": tuple(FINISH_REASONS),
    "tool_calls": tuple(range(MAX_TOOL_CALLS + 1)),
    "content": tuple(CONTENT_LABELS),
}
"""A round's fields a learner picks from a menu, and their values (the text is typed: not guessed)."""


class View(NamedTuple):
    """Everything one setting shows, computed once: the state, the chart's PNG and the three HTML outputs."""

    state: Any
    png: bytes
    header: str
    summary: str
    table: str


def next_settings(setting: Setting, rounds: Sequence[RoundSpec], scenarios: Sequence[str], *,
                  base: str | None, added: RoundSpec, moved: tuple[str, int] | None = None) -> list[Setting]:
    """The settings likely picked next, most likely first.

    The control just moved (``moved``: ``(field, round number)``, or ``("cap", 0)``, …) first: another value
    of the same field of the same round, or every cap (the four nearest, the two ends, then the rest nearest
    first); then every criterion, the cap one step either way, every other field of every round shown (the
    round just edited first), one round more or less, every scenario, and every cap.

    Args:
        setting: the current one.
        rounds: the rounds shown in the builder.
        scenarios: the shipped scenarios the picker offers.
        base: the scenario an edit is a copy of, as JSON (the current one when it is shipped).
        added: the round that one more round would add.
        moved: the control just changed.
    """
    source, _base, _specs, criterion, cap, lang = setting

    def custom(specs: Sequence[RoundSpec]) -> Setting:
        return (CUSTOM, base, tuple(specs), criterion, cap, lang)

    def edited(number: int, field: str) -> list[Setting]:
        spec = rounds[number - 1]
        return [custom([*rounds[: number - 1], spec.model_copy(update={field: value}), *rounds[number:]])
                for value in FIELDS[field] if value != getattr(spec, field)]

    found: list[Setting] = []
    if moved is not None and moved[0] in FIELDS and 1 <= moved[1] <= len(rounds):
        found += edited(moved[1], moved[0])
    nearest = sorted(range(1, MAX_CAP + 1), key=lambda c: abs(c - cap))[1:]
    caps = list(dict.fromkeys([*nearest[:4], *(c for c in (1, MAX_CAP) if c != cap), *nearest]))  # a far jump
    if moved is not None and moved[0] == "cap":  # goes to an end most often; the cap just moved: every value of it
        found += [(source, _base, _specs, criterion, c, lang) for c in caps]
    found += [(source, _base, _specs, other, cap, lang) for other in CRITERION_NAMES if other != criterion]
    found += [(source, _base, _specs, criterion, c, lang) for c in caps if abs(c - cap) == 1]
    order = sorted(range(1, len(rounds) + 1), key=lambda n: n != (moved[1] if moved else 1))
    found += [key for n in order for field in FIELDS for key in edited(n, field)]
    found += [*([custom([*rounds, added])] if len(rounds) < MAX_ROUNDS else []),
              *([custom(rounds[:-1])] if len(rounds) > 1 else [])]
    found += [(name, None, (), criterion, cap, lang) for name in scenarios if name != source]
    found += [(source, _base, _specs, criterion, c, lang) for c in caps]  # at last, every cap (one move away)
    return list(dict.fromkeys(key for key in found if key != setting))
