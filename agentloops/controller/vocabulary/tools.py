"""Tool results with meaning: a status class, retryable or not, data or a safe error, a source.

A tool that answers ``""`` leaves the loop guessing: no results? bad
arguments? a timeout? a broken parser? If every failure comes back as "no
result, try again", the model's easiest move is to call the same tool again.
Here every execution ends in a :class:`ToolResult` whose ``status`` says which
of nine things happened, and the error policy routes on it.

Three layers run in order, each able to answer without the next:

1. :func:`validate` — schema validation *before* the tool runs (wrong type,
   unknown argument, a required parameter only the user can supply);
2. fault injection (:mod:`agentloops.controller.sim.faults`) — the stub backend
   times out, returns nothing, denies, changes its output format…;
3. the handler itself; any exception it raises becomes a short, safe summary
   (the exception class only) — an internal traceback never reaches the context.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.i18n import N_, Phrase

ToolStatus = Literal[
    "ok", "empty", "invalid_arguments", "missing_parameter", "timeout", "rate_limited",
    "permission_denied", "not_found", "permanent_error",
]
"""What happened when a tool was asked to run.

- ``ok``: data came back and passed the output check.
- ``empty``: the tool ran and found nothing (which may or may not answer the task).
- ``invalid_arguments``: the arguments broke the schema or the service rejected them.
- ``missing_parameter``: a required value only the user can supply is missing or ambiguous.
- ``timeout`` / ``rate_limited``: transient; the same call may succeed later.
- ``permission_denied``: the caller may not do this; no rewording or other tool changes that.
- ``not_found``: the named resource does not exist.
- ``permanent_error``: the service failed in a way retrying will not fix (includes a changed output format).
"""

TOOL_STATUSES: tuple[ToolStatus, ...] = (
    "ok", "empty", "invalid_arguments", "missing_parameter", "timeout", "rate_limited",
    "permission_denied", "not_found", "permanent_error",
)
TRANSIENT: frozenset[str] = frozenset({"timeout", "rate_limited"})
"""Statuses that are retryable by nature."""

ASK_USER = "ask_user"
"""The control action a model calls to ask the user a question; the controller handles it, no tool runs."""

ParamType = Literal["string", "integer", "number", "boolean", "object", "array"]
Normalization = Literal["exact", "casefold"]
"""How a parameter's values are compared when fingerprinting a call (declared per parameter)."""
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict,), "array": (list,),
}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool execution (or of a rejection before it).

    Attributes:
        status: which of the nine outcomes (see :data:`ToolStatus`).
        data: the payload when ``ok`` (or the empty value when ``empty``).
        error: a short, safe summary for the model and the user — never a traceback.
        source: where the data came from (service name), for source pointers.
        retryable: whether repeating the same call may succeed — the tool's judgement, which the
            router honours (a timeout marked not retryable is not retried).
        retry_after_s: the back-off the tool asks for before a retry (a rate limit's ``Retry-After``).
        latency_s: simulated seconds the attempt took.
        hint: the next step the tool suggests, if any.
        ran: False when validation or the permission gate answered and nothing ran.
        deliveries: how many times the result is delivered (2 simulates a duplicate delivery).
        detail: internal detail for engineers; written to the trace, never sent to the model.
        question: for ``missing_parameter``, the smallest question that unblocks the call.
        parameter: for ``missing_parameter``, the parameter the question asks for.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")  # a trace's results are read back as this record

    status: ToolStatus
    data: Any = None
    error: str | None = None
    source: str = ""
    retryable: bool = False
    retry_after_s: Annotated[float, Field(ge=0)] | None = None
    latency_s: Annotated[float, Field(ge=0)] = 0.0
    hint: str = ""
    ran: bool = True
    deliveries: Annotated[int, Field(ge=1)] = 1
    detail: str | None = None
    question: str | None = None
    parameter: str | None = None

    @property
    def ok(self) -> bool:
        """True when the status is ``ok``."""
        return self.status == "ok"

    def observation(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """What the model is shown: status, data or safe error, source — no ``detail``."""
        out: dict[str, Any] = {"tool": tool, "args": dict(args), "status": self.status}
        if self.status in ("ok", "empty"):
            out["data"] = self.data
        if self.error:
            out["error"] = self.error
        if self.status not in ("ok", "empty"):
            out["retryable"] = self.retryable
        if self.source:
            out["source"] = self.source
        if self.hint:
            out["hint"] = self.hint
        return out


RESULT_JSON: TypeAdapter[ToolResult] = TypeAdapter(ToolResult)
"""Dumps a :class:`ToolResult` as its trace form, and validates one read back (replay)."""


class ToolFailure(Exception):
    """Raised by a stub tool's handler to report a classified failure (not a bug).

    Attributes:
        status: the :data:`ToolStatus` to report.
        message: the safe summary shown to the model.
    """

    def __init__(self, status: ToolStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a tool's schema.

    Attributes:
        type: JSON type.
        required: whether the call is invalid without it.
        enum: allowed values, if restricted.
        pattern: a regular expression a string must match.
        ask_user: the question to ask when the value is missing: only the user can supply it,
            so the model must not guess (``None`` means a missing value is the model's mistake).
        description: one line for the model.
        normalize: how a fingerprint compares values: ``exact`` (only surrounding spaces are
            ignored: ids are case-sensitive, ``a`` and ``A`` are two calls) or ``casefold``
            (free text such as a city name: case and inner spacing do not matter).
    """

    type: ParamType = "string"
    required: bool = True
    enum: tuple[Any, ...] | None = None
    pattern: str | None = None
    ask_user: str | None = None
    description: str = ""
    normalize: Normalization = "exact"


Handler = Callable[[dict[str, Any]], Any]
"""A stub tool's body: arguments in, data out; raises :class:`ToolFailure` for classified failures."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool: schema, behaviour and the operational facts the policy routes on.

    Attributes:
        name: the name the model calls.
        description: one line for the model.
        params: parameter name → :class:`Param`.
        handler: the stub implementation.
        side_effects: it changes the world; such a call is never retried blindly.
        capability: the permission it needs (``None``: none).
        checks_permission: the backend checks the capability itself. With the
            ``tool_only`` gate, a tool that does not is a hole another tool can route through.
        risk: ``high`` actions go to a human under the default policy.
        latency_s: simulated seconds of a normal call.
        timeout_s: seconds before a call is given up as a timeout.
        backend: the downstream service; two tools on the same backend fail together.
        fallback: a tool to switch to after transient or permanent failures.
        source: the source label written into facts.
        output_fields: fields a successful output must have (the output format check).
    """

    name: str
    description: str
    params: Mapping[str, Param]
    handler: Handler
    side_effects: bool = False
    capability: str | None = None
    checks_permission: bool = False
    risk: Literal["low", "high"] = "low"
    latency_s: float = 0.4
    timeout_s: float = 5.0
    backend: str = ""
    fallback: str | None = None
    source: str = ""
    output_fields: tuple[str, ...] = ()

    def signature(self) -> str:
        """``name(param, [optional])`` for prompts and tables."""
        parts = [p if spec.required else f"[{p}]" for p, spec in self.params.items()]
        return f"{self.name}({', '.join(parts)})"


@dataclass(frozen=True)
class Toolbox:
    """The tools offered to the model for one task, by name."""

    tools: Mapping[str, ToolSpec] = field(default_factory=dict)

    @classmethod
    def of(cls, specs: Iterable[ToolSpec]) -> Toolbox:
        """Build from specs (names must be unique)."""
        out: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in out or spec.name == ASK_USER:
                raise ConfigError(f"tool name {spec.name!r} is used twice or reserved")
            out[spec.name] = spec
        for spec in out.values():
            if spec.fallback is not None and spec.fallback not in out:
                raise ConfigError(f"tool {spec.name!r} falls back to {spec.fallback!r}, which is not in the toolbox")
        return cls(out)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __getitem__(self, name: str) -> ToolSpec:
        return self.tools[name]

    def names(self) -> list[str]:
        """Tool names in definition order."""
        return list(self.tools)

    def describe(self) -> str:
        """One line per tool, plus the ask_user action, for the system message."""
        lines = [f"- {spec.signature()}: {spec.description}" for spec in self.tools.values()]
        lines.append(f"- {ASK_USER}(question): ask the user for information only they have")
        return "\n".join(lines)


def validate(spec: ToolSpec, args: Mapping[str, Any]) -> ToolResult | None:
    """Check arguments against the schema before anything runs; ``None`` when they pass.

    A missing value that only the user can supply (``Param.ask_user``) is
    ``missing_parameter`` with the question to ask; every other problem is
    ``invalid_arguments`` with a one-line reason the model can act on and the
    offending ``parameter``. A pattern a value must match goes into ``hint``
    (for the model), not into ``error``: errors can reach a user, regexes should not.
    """
    def reject(reason: str, key: str | None = None, hint: str = "") -> ToolResult:
        return ToolResult("invalid_arguments", error=Phrase(N_("{tool}: {reason}"), tool=spec.name, reason=reason),
                          ran=False, parameter=key,
                          hint=hint or "fix the arguments and call again")

    for key in args:
        if key not in spec.params:
            expected = ", ".join(spec.params) or "no arguments"
            return reject(Phrase(N_("unexpected argument {key!r} (expected: {expected})"), key=key, expected=expected))
    for key, param in spec.params.items():
        value = args.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            if not param.required:
                continue
            if param.ask_user:
                needs = Phrase(N_("{tool} needs {key}, which only the user can give"), tool=spec.name, key=key)
                return ToolResult("missing_parameter", error=needs, ran=False, question=param.ask_user, parameter=key)
            return reject(Phrase(N_("missing required argument {key!r}"), key=key), key)
        types = _PY_TYPES[param.type]
        if (isinstance(value, bool) and param.type != "boolean") or not isinstance(value, types):
            return reject(Phrase(N_("{key} must be a {type}; got {kind} {value!r}"), key=key, type=param.type,
                                 kind=type(value).__name__, value=value), key)
        if param.enum is not None and value not in param.enum:
            return reject(Phrase(N_("{key} must be one of {allowed}; got {value!r}"), key=key, allowed=list(param.enum),
                                 value=value), key)
        if param.pattern is not None and not re.fullmatch(param.pattern, str(value)):
            return reject(Phrase(N_("{key} does not look right ({value!r})"), key=key, value=value), key,
                          hint=f"{key} must match the pattern {param.pattern}; fix the arguments and call again")
    return None


def action_label(tool: str, args: Mapping[str, Any] | None) -> str:
    """``tool(key=value, …)``: the action as tables and expected sequences write it."""
    if args is None:
        return f"{tool}(<unparseable>)"
    parts = []
    for key, value in args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        parts.append(f"{key}={text}")
    return f"{tool}({', '.join(parts)})"
