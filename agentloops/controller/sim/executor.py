"""Running one stub tool attempt in the simulated world: the declared faults applied, the outcome classified.

The tool layer (:mod:`agentloops.controller.vocabulary.tools`) says what a tool and a result are; this module is
the simulation's side of it — what the stub backends return when a fault is injected — so the engine
reaches the simulated world through one executor (:func:`execute`), and a replay swaps in another.
:func:`call_tool` and :func:`as_plain_tools` are the same tools as a naive loop would call them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from agentloops.controller.sim.faults import FaultInjector, fault_result
from agentloops.controller.vocabulary.errors import ProcessKilled
from agentloops.controller.vocabulary.tools import (
    ASK_USER,
    TRANSIENT,
    Toolbox,
    ToolFailure,
    ToolResult,
    ToolSpec,
    validate,
)
from agentloops.i18n import N_, Phrase

_STILL_RUNS = frozenset({"slow", "duplicate", "format_change"})
"""Fault kinds after which the tool still runs (slower, delivered twice, reshaped); every other kind replaces it."""


def execute(spec: ToolSpec, args: Mapping[str, Any], *, injector: FaultInjector | None = None,
            granted: frozenset[str] = frozenset()) -> ToolResult:
    """Run one attempt of a tool (arguments already validated) and classify the outcome.

    Args:
        spec: the tool.
        args: validated arguments.
        injector: declarative faults to apply to this attempt, if any.
        granted: the caller's capabilities, for backends that check permissions themselves.
    """
    args = dict(args)
    fault = injector.effect(spec.name, args) if injector is not None and injector.faults else None
    kind = None if fault is None else fault.kind
    if kind == "crash":
        raise ProcessKilled(Phrase(N_("simulated kill inside {tool}"), tool=spec.name))
    if fault is not None and kind not in _STILL_RUNS:
        return fault_result(fault, spec)
    latency = (fault.latency_s or spec.timeout_s) if fault is not None and kind == "slow" else spec.latency_s
    deliveries, source = 2 if kind == "duplicate" else 1, spec.source
    if latency > spec.timeout_s:  # slower than its timeout: the caller gives up at the timeout
        return ToolResult("timeout", error=Phrase(N_("{tool} gave no answer within {seconds:g} s"), tool=spec.name,
                                                   seconds=spec.timeout_s), source=source,
                          retryable=True, latency_s=spec.timeout_s, hint="transient: the same call may succeed later")
    if spec.checks_permission and spec.capability and spec.capability not in granted:
        return ToolResult("permission_denied", error=Phrase(N_("{tool}: the caller lacks {capability}"), tool=spec.name,
                                                             capability=spec.capability),
                          source=source, latency_s=latency)
    try:
        data = spec.handler(args)
    except ToolFailure as failure:
        return ToolResult(failure.status, error=failure.message, source=source, latency_s=latency,
                          retryable=failure.status in TRANSIENT, deliveries=deliveries)
    except Exception as exc:  # a bug in the backend: keep the class, hide the rest from the model
        return ToolResult("permanent_error", error=f"{spec.name} failed with an internal error ({type(exc).__name__})",
                          source=source, latency_s=latency, detail=f"{type(exc).__name__}: {str(exc)[:200]}",
                          hint="do not retry the same call; the failure is on the tool's side")
    if kind == "format_change" and isinstance(data, dict):
        data = {f"v2_{key}": value for key, value in data.items()}
    # what came back, checked: nothing (empty), a changed format, or usable data (ok)
    if data is None or (isinstance(data, (str, list, dict, tuple)) and len(data) == 0):
        return ToolResult("empty", data=data, source=source, latency_s=latency, deliveries=deliveries,
                          hint="nothing matched; decide whether 'not found' answers the task")
    missing = [name for name in spec.output_fields if not isinstance(data, dict) or name not in data]
    if missing:
        return ToolResult("permanent_error", error=f"{spec.name}: the output format changed (no {', '.join(missing)})",
                          source=source, latency_s=latency, deliveries=deliveries,
                          hint="the output cannot be used as it is; do not retry the same call")
    return ToolResult("ok", data=data, source=source, latency_s=latency, deliveries=deliveries)


def call_tool(toolbox: Toolbox, name: str, args: Mapping[str, Any] | None, *,
              injector: FaultInjector | None = None, granted: frozenset[str] = frozenset()) -> ToolResult:
    """Validate then execute, as a naive loop's tool wrapper would (no gate, no policy)."""
    if name not in toolbox:
        return ToolResult("invalid_arguments", error=f"there is no tool named {name!r}", ran=False)
    if args is None:
        return ToolResult("invalid_arguments", error=f"the arguments of {name} are not a JSON object", ran=False)
    spec = toolbox[name]
    return validate(spec, args) or execute(spec, args, injector=injector, granted=granted)


def as_plain_tools(toolbox: Toolbox, *, injector: FaultInjector | None = None,
                   granted: frozenset[str] = frozenset()) -> dict[str, Callable[[dict[str, Any]], str]]:
    """The same stub tools as text functions for the core :func:`agentloops.run_loop`.

    The cap-only baseline sees exactly the observations the controller's model
    sees (JSON with status and data); it just has no state, policy or budgets.
    """
    def make(name: str) -> Callable[[dict[str, Any]], str]:
        def run(args: dict[str, Any]) -> str:
            result = call_tool(toolbox, name, args, injector=injector, granted=granted)
            return json.dumps(result.observation(name, args), ensure_ascii=False)
        run.__name__ = name
        return run

    tools = {name: make(name) for name in toolbox.names()}
    tools[ASK_USER] = lambda args: json.dumps({"tool": ASK_USER, "status": "ok", "data": "(no user is listening)"})
    return tools
