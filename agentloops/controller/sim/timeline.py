"""The simulated timeline: when the user cancels, and when a call's results land.

A real controller learns of a cancel from outside the loop; the simulation states it up front (a turn, or a
moment on the simulated clock), and every place a turn waits — its start, a tool attempt, a retry's back-off,
a running call, a parallel batch — asks :class:`Controls` instead of reading the times itself. When a
launched call's deliveries arrive (after its latency; a duplicate a moment after the one before) is
:func:`arrivals`.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentloops.controller.policy.budgets import EPSILON
from agentloops.controller.vocabulary.ledger import Arrival
from agentloops.controller.vocabulary.tools import ToolResult


@dataclass(frozen=True, slots=True)
class Controls:
    """Signals from outside the loop, on the simulated timeline.

    Attributes:
        cancel_at_turn: the user cancels before this turn starts.
        cancel_at_s: the user cancels at this simulated time: checked at turn starts, before
            every tool attempt (retries and fallback switches included), during a retry's
            back-off, while a call runs (it is cancelled; its result arrives late and is
            ignored) and during a parallel batch.
    """

    cancel_at_turn: int | None = None
    cancel_at_s: float | None = None

    def cancelled(self, now: float, turn: int | None = None) -> bool:
        """Has the user cancelled by ``now`` (or, given ``turn``, before that turn starts)?"""
        return (turn is not None and self.cancel_at_turn is not None and turn >= self.cancel_at_turn) or \
            (self.cancel_at_s is not None and now >= self.cancel_at_s - EPSILON)

    def cancel_within(self, start: float, seconds: float) -> float | None:
        """The cancel time if it falls strictly inside a wait from ``start`` of ``seconds``: the wait ends there."""
        at = self.cancel_at_s
        return at if at is not None and start < at < start + seconds else None


def arrivals(start: float, call_id: str, result: ToolResult, owner: str) -> list[Arrival]:
    """When the deliveries of a call launched at ``start`` land: after its latency, each duplicate 50 ms after
    the one before."""
    return [Arrival(round(start + result.latency_s + 0.05 * (n - 1), 6), call_id, result, n, owner)
            for n in range(1, result.deliveries + 1)]
