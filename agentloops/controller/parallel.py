"""Running a batch of parallel tool calls: arrivals in time order until the join rule is met or time is up.

The calls' ids, states and the ledger are in :mod:`~agentloops.controller.vocabulary.ledger`; the join rule a
task declares and the join stage are in :mod:`~agentloops.controller.task.joins`.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentloops.controller.task.joins import JoinCheck, JoinRule, joined
from agentloops.controller.vocabulary.ledger import ARRIVAL_ORDER, Arrival


class Batch:
    """Feeds a batch's arrivals in time order until its join rule is satisfied or its deadline passes.

    Two rules keep a join from wasting work. It asks only for the successes the *task* still
    needs (``still_needed``: a minimum-evidence task that already holds one fact waits for one
    more, not for the batch's full minimum). And it never ends early just because the batch
    alone can no longer meet its rule: the calls still running carry evidence the task needs,
    so cancelling them would only mean issuing them again next turn. Only a satisfied join (the
    rest is not needed) or the deadline (time is up) cancels what is still running.
    """

    def __init__(self, join: JoinRule, total: int, deadline: float | None, still_needed: int | None = None,
                 arrivals: Iterable[Arrival] = (), satisfied: JoinCheck = joined) -> None:
        self.join = join
        self.satisfied = satisfied
        """The join stage: the package's :func:`joined`, or a learner's function of the same shape."""
        self.total = total
        self.deadline = deadline
        self.arrivals: list[Arrival] = sorted(arrivals, key=ARRIVAL_ORDER)
        self.succeeded = 0
        self.finished = 0
        self.outcome: str | None = None
        self.short = False
        needed = join.needed(total)
        self.needed = min(needed, max(still_needed, 0)) if join.kind != "all" and still_needed is not None else needed
        """The successes that end the batch: the join's number, capped by what the task still needs."""

    def next(self) -> Arrival | None:
        """The next arrival to process, or ``None`` once decided (or past the deadline)."""
        if self.outcome is not None or not self.arrivals:
            if self.outcome is None:
                self.outcome = "impossible" if self.short else "all arrived"
            return None
        if self.deadline is not None and self.arrivals[0].at > self.deadline:
            self.outcome = "deadline"
            return None
        return self.arrivals.pop(0)

    def note(self, applied: bool, succeeded: bool) -> None:
        """Count a processed first delivery; end the batch once the join is satisfied."""
        if not applied:
            return
        self.finished += 1
        self.succeeded += int(succeeded)
        if self.satisfied(self.succeeded, self.finished, self.total, self.needed):
            self.outcome = "satisfied"
        elif self.succeeded + self.total - self.finished < self.needed:
            self.short = True  # noted, but the running calls are still needed: wait for them

    def leftover(self) -> list[Arrival]:
        """Arrivals not processed: they will land late."""
        rest, self.arrivals = self.arrivals, []
        return rest
