"""Budgets per task type, and the meter that enforces them on a simulated clock.

A step cap is one budget among seven. Each number carries its *basis* — the
reasoning that produced it — because "why 6?" is the interviewer's next
question, and because a number without a basis cannot be reviewed when runs
start hitting it.

The meter checks *before* spending (pydantic-ai's ``UsageLimits`` idea): a
model call is not made if its prompt plus the reserved output would break the
token budget; a tool is not started if its timeout could break the wall-time
budget. So a run never exceeds a budget; it stops with status
``budget_exhausted`` and names the budget instead.

Time is simulated, and it is the wall-time budget's own: spending wall time
(a tool's latency, a timeout, a retry's back-off) moves the meter's clock,
:attr:`BudgetMeter.now`, so tests never sleep and runs are reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveInt,
    ValidationError,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict  # (pydantic reads typing's only from Python 3.12)

from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.errors import describe_validation_error

BudgetName = Literal["steps", "wall_time_s", "model_calls", "tool_calls", "tokens", "context_tokens", "retries"]
"""The seven budgets, in the order tables show them."""

BUDGET_NAMES: tuple[BudgetName, ...] = (
    "steps", "wall_time_s", "model_calls", "tool_calls", "tokens", "context_tokens", "retries",
)

BUDGET_LABELS: dict[BudgetName, str] = {
    "steps": "turns of the loop",
    "wall_time_s": "simulated wall time (s)",
    "model_calls": "model calls",
    "tool_calls": "tool executions (every attempt)",
    "tokens": "tokens billed (prompt + output)",
    "context_tokens": "largest single request (tokens)",
    "retries": "retries, shared by all tools (a fallback switch counts)",
}


class Limit(BaseModel):
    """One budget number and the reasoning behind it.

    Attributes:
        value: the limit (``None`` switches this budget off).
        basis: why this number — task structure, failure allowance, service target or cost.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: NonNegativeInt | NonNegativeFloat | None
    basis: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _bare_number(cls, data: Any) -> Any:
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return {"value": data, "basis": "set by the caller, no basis given"}
        if data is None:
            return {"value": None, "basis": "switched off by the caller"}
        return data

    def __str__(self) -> str:
        return "off" if self.value is None else f"{self.value:g}"


class Budget(BaseModel):
    """All seven limits of one task type, each with its basis.

    Attributes:
        steps: turns of the loop (one decision each).
        wall_time_s: simulated seconds from start (time spent waiting for the user is not counted).
        model_calls: calls to the model.
        tool_calls: tool executions, every attempt and every parallel call counted.
        tokens: prompt plus output tokens billed over the run.
        context_tokens: the largest request the loop may send.
        retries: re-attempts of failed tool calls, shared by every tool; switching to a
            fallback tool is a retry too.
        output_reserve: tokens reserved for each reply when checking ``tokens`` before a call
            (what a real client passes as ``max_tokens``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: Limit
    wall_time_s: Limit
    model_calls: Limit
    tool_calls: Limit
    tokens: Limit
    context_tokens: Limit
    retries: Limit
    output_reserve: PositiveInt = 200

    @cached_property
    def limits(self) -> dict[str, float | None]:
        """Every budget's value (read once: the budget is frozen; a meter asks on every check)."""
        return {name: getattr(self, name).value for name in BUDGET_NAMES}

    def limit(self, name: BudgetName) -> float | None:
        """The value of one budget (``None`` when it is off)."""
        return getattr(self, name).value

    def with_values(self, **values: Any) -> Budget:
        """A copy with some limits replaced (numbers, ``None``, or ``{"value", "basis"}``).

        Raises:
            ConfigError: an unknown budget name or a value that is not a number.
        """
        data = self.model_dump()
        for name, value in values.items():
            if name not in data:
                known = ", ".join((*BUDGET_NAMES, "output_reserve"))
                raise ConfigError(f"unknown budget {name!r}; expected one of: {known}")
            data[name] = value
        return budget_from_dict(data, "budget override")

    def rows(self) -> list[tuple[str, str, str]]:
        """(budget, value, basis) rows for tables."""
        return [(name, str(getattr(self, name)), getattr(self, name).basis) for name in BUDGET_NAMES]


def budget_from_dict(data: Any, source: str) -> Budget:
    """Validate ``data`` as a :class:`Budget`; errors are one line naming ``source`` and the field."""
    try:
        return Budget.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {describe_validation_error(exc)}") from None


RetryScope = Literal["shared", "per_tool"]

EPSILON = 1e-6
"""The clock keeps microseconds; comparisons allow that much rounding."""

_NOTHING_USED: dict[str, float] = {name: 0 for name in BUDGET_NAMES if name != "wall_time_s"}
"""A new meter's usage (time is read off the meter's clock, not counted here)."""


BudgetCheck = Callable[[str, float, float, "float | None"], bool]
"""The budget stage's shape: (budget name, used so far, amount to spend, limit or ``None``) → may it be spent?"""


def within(name: str, used: float, amount: float, limit: float | None) -> bool:
    """The package's budget stage, asked *before* each spend: spending ``amount`` more keeps ``used``
    within ``limit`` (``None``: that budget is off). Reaching the limit exactly is allowed."""
    return limit is None or used + amount <= limit + EPSILON


class BudgetMeter:
    """Counts what a run has used — time included: its clock is the wall-time budget's — and answers
    "may I spend this?" before each spend.

    ``retry_scope="per_tool"`` gives every tool its own retry allowance — the
    naive design the article warns about: with fallbacks, total attempts grow
    with the number of tools (the retry storm hidden in the routing layer).
    """

    def __init__(self, budget: Budget, retry_scope: RetryScope = "shared", *, now: float = 0.0,
                 used: dict[str, float] | None = None, retries_by_tool: dict[str, int] | None = None,
                 started_at: float | None = None, check: BudgetCheck | None = None) -> None:
        self.check: BudgetCheck = check or within
        """The budget stage: the package's :func:`within`, or a learner's function of the same shape."""
        self.budget = budget
        self.limits: dict[str, float | None] = budget.limits
        """Each budget's limit, read once (the budget is frozen; the meter asks on every check)."""
        self.now = float(now)
        """Simulated seconds: spending wall time moves it forward; nothing sleeps."""
        self.retry_scope: RetryScope = retry_scope
        self.started_at = self.now if started_at is None else started_at
        self.used: dict[str, float] = {**_NOTHING_USED, **used} if used else dict(_NOTHING_USED)
        self.retries_by_tool: dict[str, int] = dict(retries_by_tool or {})
        """Retries spent per tool (what ``retry_scope="per_tool"`` limits; kept under either scope)."""

    def elapsed(self) -> float:
        """Simulated seconds of work so far (a resumed run's clock continues from its pause, so time
        spent waiting for the user is never counted)."""
        return round(self.now - self.started_at, 6)

    def used_of(self, name: BudgetName) -> float:
        """How much of one budget the run has used (the largest request for ``context_tokens``)."""
        return self.elapsed() if name == "wall_time_s" else self.used[name]

    def allows(self, name: BudgetName, amount: float = 1, tool: str | None = None) -> bool:
        """True when spending ``amount`` more of ``name`` keeps the run within its limit (the budget stage
        decides, from what is used so far: a request's size stands alone, a per-tool retry counts its tool's)."""
        if name == "context_tokens":
            used: float = 0
        elif name == "retries" and self.retry_scope == "per_tool" and tool is not None:
            used = self.retries_by_tool.get(tool, 0)
        else:  # (as :meth:`used_of` reads it)
            used = round(self.now - self.started_at, 6) if name == "wall_time_s" else self.used[name]
        return self.check(name, used, amount, self.limits[name])

    def spend(self, name: BudgetName, amount: float = 1, tool: str | None = None) -> None:
        """Record use of a budget; spending wall time moves the clock forward (never back)."""
        if name == "wall_time_s":
            if amount < 0:
                raise ValueError(f"a clock cannot go back {amount} s")
            self.now = round(self.now + amount, 6)
            return
        if name == "context_tokens":
            self.used[name] = max(self.used[name], amount)
            return
        self.used[name] += amount
        if name == "retries" and tool is not None:
            self.retries_by_tool[tool] = self.retries_by_tool.get(tool, 0) + int(amount)

    def remaining(self, name: BudgetName) -> float | None:
        """What remains of one budget, unrounded (``None`` when it is off)."""
        limit = self.limits[name]
        if limit is None:
            return None
        if name == "wall_time_s":
            return limit - round(self.now - self.started_at, 6)
        return limit if name == "context_tokens" else limit - self.used[name]

    def left(self) -> dict[str, float | None]:
        """What remains of every budget, rounded for people and the model (``None`` for a budget that is off)."""
        out: dict[str, float | None] = {}
        used, elapsed = self.used, round(self.now - self.started_at, 6)
        for name, limit in self.limits.items():
            if limit is None or name == "context_tokens":
                out[name] = limit
                continue
            left = limit - (elapsed if name == "wall_time_s" else used[name])
            out[name] = left if type(left) is int else round(left, 3)  # (rounding an int changes nothing)
        return out

    def retries_left(self, tool: str, reserved: Mapping[str, int] | None = None) -> float | None:
        """Retries ``tool`` may still spend (``None``: no limit), minus any ``reserved`` by earlier calls of a batch."""
        limit = self.limits["retries"]
        if limit is None:
            return None
        if self.retry_scope == "per_tool":
            taken = reserved.get(tool, 0) if reserved else 0
            left = limit - self.retries_by_tool.get(tool, 0) - taken
        else:
            taken = sum(reserved.values()) if reserved else 0
            left = limit - self.used["retries"] - taken
        # the budget stage decides whether one more may be spent (the package's: exactly when left >= 1)
        return max(left, 1) if self.allows("retries", 1 + taken, tool) else min(left, 0)

    def usage(self) -> dict[str, float]:
        """What the run used of every budget."""
        used, elapsed = self.used, self.elapsed()
        return {name: elapsed if name == "wall_time_s" else  # (rounding it again, or an int, changes nothing)
                value if type(value := used[name]) is int else round(value, 6) for name in BUDGET_NAMES}

    def within_limits(self) -> dict[str, bool]:
        """Per budget: did usage stay within the limit? (The property tests assert all True.)"""
        used, elapsed = self.used, self.elapsed()
        return {name: limit is None or (elapsed if name == "wall_time_s" else used[name]) <= limit + EPSILON
                for name, limit in self.limits.items()}

    def state(self) -> MeterUse:
        """What a saved run keeps of this meter besides its clock (a resume passes it back:
        ``BudgetMeter(budget, scope, now=clock, **kept)``)."""
        return {"used": dict(self.used), "retries_by_tool": dict(self.retries_by_tool), "started_at": self.started_at}


@with_config(ConfigDict(extra="forbid"))
class MeterUse(TypedDict):
    """What a meter has used: the arguments that rebuild it (:meth:`BudgetMeter.state`)."""

    used: dict[str, int | float]  # counts stay ints: they are shown to the model in the TASK STATE block
    retries_by_tool: dict[str, int]
    started_at: float
