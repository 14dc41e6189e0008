"""Faults a widget can inject: the menu of choices and the fault each one puts on a task."""


from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentloops.controller.sim.faults import Fault
from agentloops.controller.task.tasks import Task
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.i18n import N_, _


@dataclass(frozen=True, slots=True)
class FaultChoice:
    """One entry of the fault menu: what to inject into the task's main tool.

    Attributes:
        kind: the :class:`~agentloops.controller.sim.faults.Fault` kind.
        times: how many matching calls fail (``None``: every one).
        fallback_too: inject the same fault into the tool's fallback (an outage of both services).
        note: what it simulates, in a few words.
    """

    kind: str
    times: int | None
    fallback_too: bool
    note: str


FAULT_CHOICES: dict[str, FaultChoice | None] = {
    "none": None,
    N_("timeout once"): FaultChoice("timeout", 1, False, N_("the service is slow once, then answers")),
    N_("timeout always"): FaultChoice("timeout", None, True, N_("the service and its fallback never answer")),
    "empty": FaultChoice("empty", None, True, N_("both services answer with nothing")),
    N_("invalid arguments"): FaultChoice("reject_arguments", None, False, N_("the service rejects the arguments")),
    N_("missing parameter"): FaultChoice("missing_parameter", 1, False, N_("the request is ambiguous: ask which one")),
    N_("permission denied"): FaultChoice("permission_denied", None, False, N_("the caller may not use this tool")),
    N_("rate limited once"): FaultChoice("rate_limited", 1, False, N_("too many requests, once")),
    N_("not found"): FaultChoice("not_found", None, False, N_("the resource does not exist")),
    N_("permanent error"): FaultChoice("permanent_error", None, True, N_("the service is down for maintenance")),
    N_("format change"): FaultChoice("format_change", None, False, N_("the service renamed its output fields")),
}
"""The fault menu, by the name a learner picks."""

SIX_FAULTS: tuple[str, ...] = ("timeout once", "timeout always", "empty", "invalid arguments", "permission denied",
                               "format change")
"""The six faults the source article injects, as menu names.

In its words: 一次超时、持续超时、空结果、参数错误、权限拒绝、格式变化."""

OUR_FAULTS: tuple[str, ...] = ("missing parameter",)
"""Faults this package adds to the article's six (the article routes a missing parameter, but does not inject it)."""


def fault_target(task: Task) -> tuple[str, dict[str, Any]]:
    """The (tool, arguments) a fault is aimed at: the call that settles the task's *last* item.

    Aiming at the last item lets the first items succeed, so a fault shows
    what happens to work that is already done (it is kept).
    """
    return task.kind.action(task.items[-1], task.kind.inputs())


def inject(task: Task, choice: str) -> tuple[Fault, ...]:
    """The faults that the menu entry ``choice`` declares for ``task``.

    Raises:
        ConfigError: an unknown menu entry (the message lists them).
    """
    if choice not in FAULT_CHOICES:
        raise ConfigError(_("unknown fault {choice!r}; expected one of: {names}").format(
            choice=choice, names=", ".join(FAULT_CHOICES)))
    entry = FAULT_CHOICES[choice]
    if entry is None:
        return ()
    tool, args = fault_target(task)
    match = {k: v for k, v in args.items() if isinstance(v, (str, int, float))}
    faults = [Fault(tool=tool, kind=entry.kind, times=entry.times, match=match)]  # type: ignore[arg-type]
    fallback = task.toolbox()[tool].fallback
    if entry.fallback_too and fallback is not None:
        faults.append(Fault(tool=fallback, kind=entry.kind, times=entry.times, match=match))  # type: ignore[arg-type]
    return tuple(faults)
