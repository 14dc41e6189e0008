"""Declarative fault injection: make a stub tool fail in a stated way, a stated number of times.

A fault is data, so a scenario file can carry it and a notebook widget can
build it::

    Fault(tool="get_weather", kind="timeout", times=1, match={"city": "Beijing"})

reads "the first call of get_weather for Beijing times out". ``times=None``
means every matching call; ``after=2`` skips the first two matching calls.

Kinds and what the tool then reports:

=================  ==============================================================
``timeout``        ``timeout`` after the tool's timeout (retryable)
``rate_limited``   ``rate_limited`` (retryable)
``empty``          ``empty``: ran and found nothing
``reject_arguments`` ``invalid_arguments``: the service refused the arguments
``missing_parameter`` ``missing_parameter``: the request is ambiguous; ask the user
``permission_denied`` ``permission_denied``
``not_found``      ``not_found``
``permanent_error`` ``permanent_error`` (not retryable)
``format_change``  the tool runs but its output fields are renamed; the output check fails
``slow``           the tool runs, taking ``latency_s`` seconds (for parallel timelines)
``duplicate``      the tool runs and its result is delivered twice
``crash``          raises :class:`~agentloops.controller.vocabulary.errors.ProcessKilled` (a simulated kill)
=================  ==============================================================

Write actions are only ever stubs here: nothing outside the process changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.tools import ToolResult, ToolSpec
from agentloops.errors import describe_validation_error
from agentloops.i18n import N_, Phrase, _

FaultKind = Literal[
    "timeout", "rate_limited", "empty", "reject_arguments", "missing_parameter", "permission_denied",
    "not_found", "permanent_error", "format_change", "slow", "duplicate", "crash",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]
_NO_RESULT_OF_THEIR_OWN = frozenset({"slow", "duplicate", "format_change", "crash"})
"""Kinds that do not replace the tool's result, so a ``retryable`` on them would mean nothing."""


class Fault(BaseModel):
    """One declared fault.

    Attributes:
        tool: the tool it affects.
        kind: what goes wrong (see the module table).
        times: how many matching calls it affects (``None``: all of them).
        after: matching calls to let through before it starts.
        match: only calls whose arguments include these values.
        latency_s: for ``slow``: how long the call takes.
        message: the error text to report instead of the default one.
        retryable: whether the tool marks the failure retryable (``None``: the kind's own answer, yes for
            ``timeout`` and ``rate_limited`` only). The router honours the tool's judgement, so a file can
            declare a timeout that must not be retried (a payment call that may have gone through).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1)
    kind: FaultKind
    times: PositiveInt | None = None
    after: NonNegativeInt = 0
    match: dict[str, Any] = Field(default_factory=dict)
    latency_s: PositiveFloat | None = None
    message: str | None = None
    retryable: bool | None = None

    @model_serializer(mode="wrap")
    def _retryable_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave ``retryable`` out while unset, so the traces of files written before it stay byte-identical."""
        data: dict[str, Any] = handler(self)
        if self.retryable is None:
            data.pop("retryable", None)
        return data

    @model_validator(mode="after")
    def _retryable_needs_a_failure(self) -> Fault:
        if self.retryable is not None and self.kind in _NO_RESULT_OF_THEIR_OWN:
            raise ValueError(f"retryable applies to a kind that replaces the tool's result, not {self.kind!r} "
                             "(the tool still runs, or the process dies)")
        return self

    def describe(self) -> str:
        """One line, e.g. ``get_weather(city=Beijing): timeout ×1``, in the language in use."""
        where = ", ".join(f"{k}={v}" for k, v in self.match.items())
        count = _("always") if self.times is None else f"×{self.times}"
        skip = _(" after {n}").format(n=self.after) if self.after else ""
        retry = "" if self.retryable is None else (_(" (retryable)") if self.retryable else _(" (not retryable)"))
        return f"{self.tool}({where}): {self.kind} {count}{skip}{retry}"


FaultLike = Fault | Mapping[str, Any]


def faults_from(items: Iterable[FaultLike] | None, source: str = "faults") -> tuple[Fault, ...]:
    """Validate faults given as :class:`Fault` objects or dicts; one-line errors naming ``source``."""
    out = []
    for i, item in enumerate(items or ()):
        if isinstance(item, Fault):
            out.append(item)
            continue
        try:
            out.append(Fault.model_validate(item))
        except ValidationError as exc:
            raise ConfigError(f"{source}[{i}]: {describe_validation_error(exc)}") from None
    return tuple(out)


class FaultInjector:
    """Applies declared faults to tool attempts, counting matching calls per fault.

    The counters (:attr:`seen`, fault index → matching calls) are the only state; a saved run keeps
    them, so a resume meets the same remaining faults.
    """

    def __init__(self, faults: Iterable[FaultLike] = ()) -> None:
        self.faults = faults_from(faults)
        self.seen: Counter[int] = Counter()

    def effect(self, tool: str, args: Mapping[str, Any]) -> Fault | None:
        """The fault that applies to this attempt (the first declared one wins), else ``None``."""
        chosen: Fault | None = None
        for index, fault in enumerate(self.faults):
            if fault.tool != tool or any(_norm(args.get(k)) != _norm(v) for k, v in fault.match.items()):
                continue
            self.seen[index] += 1
            n = self.seen[index]
            if chosen is None and n > fault.after and (fault.times is None or n <= fault.after + fault.times):
                chosen = fault
        return chosen


def _norm(value: Any) -> Any:
    return value.strip().casefold() if isinstance(value, str) else value


def fault_result(fault: Fault, spec: ToolSpec) -> ToolResult:
    """The result a failing kind reports, marked retryable as the fault declares (else as the kind is)."""
    result = _kind_result(fault, spec)
    return result if fault.retryable is None else replace(result, retryable=fault.retryable)


def _kind_result(fault: Fault, spec: ToolSpec) -> ToolResult:
    """The result a failing kind reports by default (kinds that still run the tool are handled by the caller)."""
    name = spec.name
    text = fault.message
    if fault.kind == "timeout":
        return ToolResult("timeout", error=text or Phrase(N_("{tool} gave no answer within {seconds:g} s"), tool=name,
                                                        seconds=spec.timeout_s),
                          source=spec.source, retryable=True, latency_s=spec.timeout_s,
                          hint="transient: the same call may succeed later")
    if fault.kind == "rate_limited":
        return ToolResult("rate_limited", error=text or Phrase(N_("{tool}: too many requests, slow down"), tool=name),
                          source=spec.source, retryable=True, latency_s=0.1,
                          hint="transient: retry after a pause")
    if fault.kind == "empty":
        return ToolResult("empty", data=[], source=spec.source, latency_s=spec.latency_s,
                          hint="nothing matched; decide whether 'not found' answers the task")
    if fault.kind == "reject_arguments":
        return ToolResult("invalid_arguments", error=text or Phrase(N_("{tool}: the service rejected the arguments"),
                                                                  tool=name),
                          source=spec.source, latency_s=spec.latency_s, hint="fix the arguments and call again")
    if fault.kind == "missing_parameter":
        return ToolResult("missing_parameter", error=text or Phrase(N_("{tool}: the request is ambiguous"), tool=name),
                          source=spec.source, latency_s=spec.latency_s,
                          question=text or N_("Which one do you mean? Please give the exact identifier."),
                          parameter=next(iter(spec.params), "value"))
    if fault.kind == "permission_denied":
        return ToolResult("permission_denied", error=text or Phrase(N_("{tool}: permission denied"), tool=name),
                          source=spec.source, latency_s=spec.latency_s)
    if fault.kind == "not_found":
        return ToolResult("not_found", error=text or Phrase(N_("{tool}: no such resource"), tool=name),
                          source=spec.source, latency_s=spec.latency_s)
    if fault.kind == "permanent_error":
        failed = Phrase(N_("{tool}: the service failed (HTTP 503, maintenance)"), tool=name)
        return ToolResult("permanent_error", error=text or failed,
                          source=spec.source, latency_s=spec.latency_s,
                          hint="do not retry the same call; the failure is on the tool's side")
    raise ValueError(f"fault kind {fault.kind!r} does not replace the result")  # pragma: no cover
