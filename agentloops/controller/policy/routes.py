"""Routes: the tiny values the error policy returns and the controller dispatches on.

:func:`~agentloops.controller.policy.error_policy.route` turns a tool result into one of these; the
controller's call path acts on it (accept a fact, retry, switch to a fallback, give an item up,
ask the user, stop). Kept apart so a route can be read, tested and printed without the policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agentloops.i18n import N_


@dataclass(frozen=True, slots=True)
class Accept:
    """Use the data: it becomes a fact."""

    name: ClassVar[str] = "accept"
    """How tables and traces name this route."""

    reason: str = "ok"


@dataclass(frozen=True, slots=True)
class AcceptNotFound:
    """An empty result answers the item: record "none found" with its source."""

    name: ClassVar[str] = "accept_not_found"
    """How tables and traces name this route."""

    reason: str = N_("empty, and this task accepts 'not found'")


@dataclass(frozen=True, slots=True)
class Retry:
    """Try the same call again after ``delay_s`` (paid from the retry budget)."""

    name: ClassVar[str] = "retry"
    """How tables and traces name this route."""

    delay_s: float
    reason: str


@dataclass(frozen=True, slots=True)
class Fallback:
    """Switch to another tool for the same call (paid from the retry budget)."""

    name: ClassVar[str] = "fallback"
    """How tables and traces name this route."""

    tool: str
    reason: str


@dataclass(frozen=True, slots=True)
class Repair:
    """Show the safe error to the model so it can fix its arguments (counts a repair)."""

    name: ClassVar[str] = "repair"
    """How tables and traces name this route."""

    reason: str


@dataclass(frozen=True, slots=True)
class ReturnToModel:
    """Show the safe error to the model and let it decide."""

    name: ClassVar[str] = "return_to_model"
    """How tables and traces name this route."""

    reason: str


@dataclass(frozen=True, slots=True)
class AskUser:
    """Pause the task and ask the user the smallest question that unblocks it."""

    name: ClassVar[str] = "ask_user"
    """How tables and traces name this route."""

    question: str
    parameter: str
    reason: str


@dataclass(frozen=True, slots=True)
class Degrade:
    """Give this item up (kept as missing, with the reason) and go on with the rest."""

    name: ClassVar[str] = "degrade"
    """How tables and traces name this route."""

    code: str
    reason: str


@dataclass(frozen=True, slots=True)
class StopRun:
    """Stop the whole run with a status and a reason code."""

    status: str
    code: str
    reason: str
    budget: str | None = None

    @property
    def name(self) -> str:
        """``stop:<status>``."""
        return f"stop:{self.status}"


Route = Accept | AcceptNotFound | Retry | Fallback | Repair | ReturnToModel | AskUser | Degrade | StopRun


_ROUTE_NAMES: dict[type, str] = {kind: kind.name for kind in (Accept, AcceptNotFound, Retry, Fallback, Repair,
                                                               ReturnToModel, AskUser, Degrade)}


def route_name(route: Route) -> str:
    """``retry``, ``fallback``, ``stop:failed_unrecoverable``… for tables and traces."""
    return route.name
