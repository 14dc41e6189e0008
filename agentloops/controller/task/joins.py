"""Join rules: when a batch of parallel calls has given the task what it needs.

A task declares its :class:`JoinRule` — all calls, any one, or a minimum number of successes (the
"minimum evidence set"); :func:`joined` is the package's join stage, which a learner can replace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, PositiveFloat, PositiveInt, model_validator

from agentloops.i18n import N_, Phrase

_KINDS = {"all": N_("all"), "any": N_("any")}
"""A join's kind as its description names it (the English text is the kind itself)."""


class JoinRule(BaseModel):
    """When a batch of parallel calls is done.

    Attributes:
        kind: ``all`` (every call), ``any`` (one success) or ``minimum`` (``minimum`` successes).
        minimum: successes needed for ``minimum``.
        timeout_s: the longest the join waits for a batch of parallel calls (``None``: until the wall-time
            budget); a lone call — a batch of one — has nothing to join and waits for its tool's own timeout.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["all", "any", "minimum"] = "all"
    minimum: PositiveInt | None = None
    timeout_s: PositiveFloat | None = None

    @model_validator(mode="after")
    def _minimum_needs_a_number(self) -> JoinRule:
        if self.kind == "minimum" and self.minimum is None:
            raise ValueError("a 'minimum' join needs minimum: the number of successes to wait for")
        return self

    def needed(self, total: int, still_needed: int | None = None) -> int:
        """Successes that end the wait for a batch of ``total`` calls: the rule's number, capped by the successes
        the task ``still_needed`` (a minimum-evidence task that holds one fact waits for one more, not for the
        batch's full minimum); ``all`` waits for every call whatever the task needs."""
        if self.kind == "all":
            return total
        needed = min(1 if self.kind == "any" else self.minimum or total, total)
        return needed if still_needed is None else min(needed, max(still_needed, 0))

    def describe(self) -> str:
        """``all``, ``any`` or ``minimum 2``, plus the timeout."""
        kind = Phrase(N_("minimum {n}"), n=self.minimum) if self.kind == "minimum" else Phrase(_KINDS[self.kind])
        return Phrase(N_("{join} within {seconds} s"), join=kind, seconds=f"{self.timeout_s:g}") if self.timeout_s \
            else kind


JoinCheck = Callable[[int, int, int, int], bool]
"""The join stage's shape: (successes so far, results so far, calls in the batch, successes needed) → stop waiting?"""


def joined(succeeded: int, finished: int, total: int, needed: int) -> bool:
    """The package's join stage: the batch is done once the successes the task still needs have arrived —
    never before (a running call that carries needed evidence is not cancelled), never later (what is still
    running is then not needed, and is cancelled)."""
    return succeeded >= needed

