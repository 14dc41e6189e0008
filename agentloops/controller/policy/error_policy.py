"""The error policy: a swappable value that turns a tool result into the next move.

"Retry" is one move among several. Whose fault is it, and can it recover?

==================  ==========================================================
missing parameter   ask the user the smallest question; never let the model guess
invalid arguments   rejected by the schema before the tool runs; the model may
                    repair once; the same slip on the same tool again (before
                    that tool succeeds) stops
timeout, rate limit never retried for a tool with side effects (a person checks
                    whether it took effect); otherwise, when the tool marks the
                    result ``retryable``, bounded retry with back-off (the tool's
                    ``retry_after_s`` if longer) inside the *shared* retry budget,
                    then a fallback tool (also paid from that budget); a failure
                    the tool marks not retryable is treated as permanent
empty               "not found" only where the task accepts it; elsewhere try an
                    independent source, else give the item up with the reason
not found           give the item up (the resource does not exist)
permission denied   stop; never route around it through another tool
permanent error     switch to a fallback, else give the item up (retried first
                    if the tool marks it ``retryable``)
==================  ==========================================================

A fallback is only a fallback if it could be used without asking anyone: no side effects, no capability the
caller lacks, not high-risk, not on the same failing backend (the controller then runs the full pre-check —
schema, permission gate, task rules, risk — before switching, and gives the item up if that refuses).

:func:`route` is a pure function of the policy, the result and a small context, so it can be tested (and taught)
without a loop; the policy is a value, so replay can diff one trace under two policies
(:mod:`agentloops.controller.running.replaying`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, PositiveFloat, PositiveInt, ValidationError

from agentloops.controller.policy.budgets import RetryScope
from agentloops.controller.policy.routes import (
    Accept,
    AcceptNotFound,
    AskUser,
    Degrade,
    Fallback,
    Repair,
    Retry,
    ReturnToModel,
    Route,
    StopRun,
    route_name,
)
from agentloops.controller.vocabulary.errors import ConfigError
from agentloops.controller.vocabulary.render import Table
from agentloops.controller.vocabulary.tools import TOOL_STATUSES, ToolResult, ToolSpec
from agentloops.errors import describe_validation_error
from agentloops.i18n import N_, Phrase


class ErrorPolicy(BaseModel):
    """How the controller reacts to each kind of tool result (and a few loop-level rules).

    Attributes:
        name: how traces and tables label it.
        description: one line on the policy's intent.
        missing_parameter: ask the user, or hand the error back to the model (which may guess).
        invalid_argument_repairs: how many times the model may repair invalid arguments.
        transient: retry timeouts and rate limits, or hand them back to the model.
        attempts_per_tool: attempts of one tool per call before switching to its fallback.
        backoff_base_s / backoff_factor / backoff_max_s: retry delay ``base × factor^(n-1)``, capped.
        retry_side_effects: allow retrying a tool that changes the world (the default never does).
        use_fallback: switch to a tool's fallback after repeated transient or permanent failures.
        fallback_same_backend: also switch when the fallback uses the same downstream service.
        retry_scope: ``shared`` (one task-level allowance) or ``per_tool`` (the naive design).
        on_retries_exhausted: stop with ``budget_exhausted``, or give the item up and go on.
        empty: how to treat an empty result.
        not_found: give the item up (``fail``), ask the user, or hand it back to the model.
        permission_denied: stop, ask for authorization (a human), or hand it back to the model.
        permission_gate: ``uniform``: one capability check before every tool; ``tool_only``:
            each backend checks itself (or not).
        permanent_error: fall back or give the item up, or hand it back to the model.
        high_risk: send high-risk actions to a human before they run, or allow them.
        trust_model_claims: treat a reply without tool calls as success (the naive exit).
        premature_claims: how many unfounded "done" replies are answered with what is missing
            before the run stops as partially completed.
        detect_repeats: stop on a repeated action fingerprint with no new observation.
        idle_turns: stop after this many turns in a row without progress (``None``: off).
        max_consecutive_failures: hand off to a human after this many failed turns in a row.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="custom", min_length=1)
    description: str = ""
    missing_parameter: Literal["ask_user", "return_to_model"] = "ask_user"
    invalid_argument_repairs: NonNegativeInt = 1
    transient: Literal["retry", "return_to_model"] = "retry"
    attempts_per_tool: PositiveInt = 2
    backoff_base_s: PositiveFloat = 1.0
    backoff_factor: PositiveFloat = 2.0
    backoff_max_s: PositiveFloat = 8.0
    retry_side_effects: bool = False
    use_fallback: bool = True
    fallback_same_backend: bool = False
    retry_scope: RetryScope = "shared"
    on_retries_exhausted: Literal["stop", "degrade"] = "stop"
    empty: Literal["not_found_if_allowed", "retry", "return_to_model"] = "not_found_if_allowed"
    not_found: Literal["fail", "ask_user", "return_to_model"] = "fail"
    permission_denied: Literal["stop", "request_authorization", "return_to_model"] = "stop"
    permission_gate: Literal["uniform", "tool_only"] = "uniform"
    permanent_error: Literal["fallback_or_degrade", "return_to_model"] = "fallback_or_degrade"
    high_risk: Literal["handoff", "allow"] = "handoff"
    trust_model_claims: bool = False
    premature_claims: NonNegativeInt = 1
    detect_repeats: bool = True
    idle_turns: PositiveInt | None = 3
    max_consecutive_failures: PositiveInt | None = 3

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based) of one tool."""
        try:
            wait = self.backoff_base_s * self.backoff_factor ** (attempt - 1)
        except OverflowError:  # a long run of attempts: the cap has long been reached
            wait = self.backoff_max_s
        return round(min(wait, self.backoff_max_s), 6)


DEFAULT_POLICY = ErrorPolicy(
    name="default",
    description=N_("the article's policy: ask, repair once, retry within one shared budget, never route around a "
                   "denial"),
)
NAIVE_POLICY = ErrorPolicy(
    name="naive",
    description=N_("every error goes down one retry branch; the model's 'done' is trusted; per-tool retry budgets"),
    missing_parameter="return_to_model",
    invalid_argument_repairs=99,
    attempts_per_tool=3,
    retry_side_effects=True,
    fallback_same_backend=True,
    retry_scope="per_tool",
    on_retries_exhausted="degrade",
    empty="retry",
    not_found="return_to_model",
    permission_denied="return_to_model",
    permission_gate="tool_only",
    permanent_error="return_to_model",
    high_risk="allow",
    trust_model_claims=True,
    detect_repeats=False,
    idle_turns=None,
    max_consecutive_failures=None,
)
DEGRADE_POLICY = ErrorPolicy(
    name="degrade",
    description=N_("like default, but prefers partial answers and human exits: degrade when retries run out, "
                   "ask the user about a missing resource, request authorization on a denial"),
    on_retries_exhausted="degrade",
    not_found="ask_user",
    permission_denied="request_authorization",
)

POLICIES: dict[str, ErrorPolicy] = {p.name: p for p in (DEFAULT_POLICY, NAIVE_POLICY, DEGRADE_POLICY)}
"""The shipped policies by name."""

PolicyLike = ErrorPolicy | str | Mapping[str, Any]


def resolve_policy(policy: PolicyLike | None) -> ErrorPolicy:
    """A policy from itself, a shipped name, or a dict of fields (validated).

    Raises:
        ConfigError: unknown name or an invalid field, in one line.
    """
    if policy is None:
        return DEFAULT_POLICY
    if isinstance(policy, ErrorPolicy):
        return policy
    if isinstance(policy, str):
        try:
            return POLICIES[policy]
        except KeyError:
            raise ConfigError(N_("unknown policy {name}; expected one of: {names}").format(
                name=repr(policy), names=", ".join(POLICIES))) from None
    if isinstance(policy, Mapping):
        try:
            return ErrorPolicy.model_validate(dict(policy))
        except ValidationError as exc:
            raise ConfigError(f"policy: {describe_validation_error(exc)}") from None
    raise ConfigError(f"policy must be a name ({', '.join(POLICIES)}), a dict or an ErrorPolicy; "
                      f"got {type(policy).__name__}")


@dataclass(frozen=True, slots=True)
class RouteContext:
    """What :func:`route` needs to know besides the result.

    Attributes:
        spec: the tool that produced the result.
        attempts_on_tool: attempts of this tool for this call so far, this one included.
        retries_left: retries this call may still spend (``None``: unlimited).
        fallback: the tool's fallback if it has one and it was not tried yet for this call.
        allows_not_found: the task accepts "none found" as an answer for this item.
        repairs_used: invalid-argument repairs already granted for this kind of slip (the same tool,
            status and parameter) since that tool last succeeded — not per run: two unrelated slips
            are two first slips.
        granted: the caller's capabilities (``None``: none known), so a fallback that needs
            one the caller lacks is never chosen.
    """

    spec: ToolSpec
    attempts_on_tool: int = 1
    retries_left: float | None = None
    fallback: ToolSpec | None = None
    allows_not_found: bool = False
    repairs_used: int = 0
    granted: frozenset[str] | None = None


def _usable_fallback(policy: ErrorPolicy, ctx: RouteContext) -> ToolSpec | None:
    """The fallback, if switching to it needs nobody's approval; else ``None``."""
    fallback = ctx.fallback
    if fallback is None or not policy.use_fallback or fallback.side_effects or fallback.risk == "high":
        return None  # (an automatic switch must never change the world)
    if fallback.capability and fallback.capability not in (ctx.granted or frozenset()):
        return None  # a fallback is not a way around a missing permission
    if not policy.fallback_same_backend and fallback.backend and fallback.backend == ctx.spec.backend:
        return None  # a new name on the same failing service fixes nothing
    return fallback


Router = Callable[[ToolResult, RouteContext], Route]
"""The route stage's shape (a learner's passes ``run_scenario(…, route=…)``; the package's is :func:`route`)."""


def route(policy: ErrorPolicy, result: ToolResult, ctx: RouteContext) -> Route:
    """Decide the next move for one tool result. Pure: no clock, no state, no I/O.

    Whether a failure is worth retrying is the *tool's* call (``result.retryable``, and
    ``result.retry_after_s`` for the back-off); how many retries the task may still spend is
    the task's (``ctx.retries_left``, from the one shared budget).
    """
    status = result.status
    if status == "ok":  # (nothing below matters to a result that is ok)
        return Accept()
    spec, can_retry = ctx.spec, ctx.retries_left is None or ctx.retries_left >= 1
    if status == "empty":
        return _empty(policy, ctx, can_retry)
    if status in ("invalid_arguments", "missing_parameter", "not_found"):
        return _model_or_user(policy, result, ctx)
    if status in ("timeout", "rate_limited") and spec.side_effects and not policy.retry_side_effects:
        return StopRun("handed_off", "unknown_outcome_side_effect",  # first: handing it back invites a repeat
                       Phrase(N_("{tool} changes the world and ended in {status}: whether it took effect is "
                                 "unknown, so a person must check before anything is repeated"), tool=spec.name,
                              status=status))
    if status in ("timeout", "rate_limited", "permanent_error") and result.retryable:
        return _transient(policy, result, ctx, can_retry)
    if status == "permission_denied":
        return _denied(policy, result)
    if status in ("timeout", "rate_limited", "permanent_error"):  # the tool says retrying cannot help
        if policy.permanent_error == "return_to_model":
            return ReturnToModel(N_("permanent error handed back to the model"))
        if can_retry and (fallback := _usable_fallback(policy, ctx)) is not None:
            return Fallback(fallback.name, Phrase(N_("{tool} failed ({status}, not retryable); switching"),
                                                   tool=spec.name, status=status))
        return Degrade(status, result.error or status)
    raise ValueError(f"unknown tool status {status!r}")  # pragma: no cover


def _model_or_user(policy: ErrorPolicy, result: ToolResult, ctx: RouteContext) -> Route:
    """What only the model or the user can fix: invalid arguments, a missing parameter, a resource not found."""
    if result.status == "invalid_arguments":
        if ctx.repairs_used < policy.invalid_argument_repairs:
            return Repair(N_("invalid arguments: the model may repair them"))
        return StopRun("failed_unrecoverable", "invalid_arguments_repeated",
                       Phrase(N_("invalid arguments again after {n} repair(s): {error}"), n=ctx.repairs_used,
                              error=result.error))
    if result.status == "missing_parameter":
        if policy.missing_parameter == "ask_user":
            question = result.question or "Could you give the missing detail?"
            return AskUser(question, result.parameter or "answer",
                           N_("only the user can supply it; guessing spreads errors"))
        return ReturnToModel(N_("missing parameter handed back to the model"))
    if policy.not_found == "fail":
        return Degrade("not_found", result.error or "not found")
    if policy.not_found == "ask_user":
        return AskUser(f"{result.error or 'Not found'}. Which one did you mean (check the identifier or version)?",
                       "identifier", N_("the resource does not exist as named; the user may know the right one"))
    return ReturnToModel(N_("not found handed back to the model"))


def _denied(policy: ErrorPolicy, result: ToolResult) -> Route:
    """A permission denial: stop, or ask for authorization — never a way around it through another tool."""
    if policy.permission_denied == "stop":
        return StopRun("failed_unrecoverable", "permission_denied",
                       Phrase(N_("{error}; no other tool may be used to get around it"), error=result.error))
    if policy.permission_denied == "request_authorization":
        return StopRun("handed_off", "authorization_required",
                       Phrase(N_("{error}; sent for authorization"), error=result.error))
    return ReturnToModel(N_("permission denied handed back to the model"))


def _empty(policy: ErrorPolicy, ctx: RouteContext, can_retry: bool) -> Route:
    """An empty result: "none found" where the task accepts it; else an independent source, else give up."""
    if policy.empty == "not_found_if_allowed":
        if ctx.allows_not_found:
            return AcceptNotFound()
        if can_retry and (fallback := _usable_fallback(policy, ctx)) is not None:
            return Fallback(fallback.name, N_("empty here; an independent source may have it"))
        return Degrade("empty", Phrase(N_("empty result, and this task does not accept 'not found'")))
    if policy.empty == "return_to_model":
        return ReturnToModel(N_("empty result handed back to the model"))
    if can_retry:  # the naive policy retries an empty result as if it were transient
        return Retry(policy.backoff(ctx.attempts_on_tool), N_("empty treated as a transient failure"))
    return Degrade("empty", Phrase(N_("empty result; retries spent")))


def _transient(policy: ErrorPolicy, result: ToolResult, ctx: RouteContext, can_retry: bool) -> Route:
    """A failure the tool marked ``retryable``: bounded retry with back-off, then a fallback."""
    status, spec = result.status, ctx.spec
    if policy.transient == "return_to_model":
        return ReturnToModel(Phrase(N_("{status} handed back to the model"), status=status))
    if not can_retry:
        if policy.on_retries_exhausted == "stop":
            return StopRun("budget_exhausted", "budget:retries",
                           Phrase(N_("retry budget spent; last error: {error}"), error=result.error),
                           budget="retries")
        return Degrade(status, Phrase(N_("gave up after the retry budget was spent ({status})"), status=status))
    if ctx.attempts_on_tool >= policy.attempts_per_tool:
        if (fallback := _usable_fallback(policy, ctx)) is not None:
            return Fallback(fallback.name, Phrase(N_("{tool} failed {n}× ({status}); switching"), tool=spec.name,
                                                       n=ctx.attempts_on_tool, status=status))
        if ctx.retries_left is None:  # no shared budget is on: the tool's own attempts are the only bound
            return Degrade(status, Phrase(N_("{tool} failed {n}× ({status}) and no retry budget allows more "
                                             "attempts"), tool=spec.name, n=ctx.attempts_on_tool, status=status))
    backoff = policy.backoff(ctx.attempts_on_tool)  # the tool's own retry_after_s, when it gives one, is a floor
    delay = backoff if result.retry_after_s is None else max(backoff, result.retry_after_s)
    if spec.side_effects:
        return Retry(delay, Phrase(N_("{status}; the policy allows retrying side effects"), status=status))
    return Retry(delay, Phrase(N_("{status} is transient and {tool} has no side effects"), status=status,
                               tool=spec.name))


def routing_table(policy: PolicyLike | None = None) -> Table:
    """How the policy routes each status, computed by calling :func:`route` (not written by hand); each row states
    the situation (retries left, a fallback, "not found" accepted, side effects) because the route depends on it."""
    chosen = resolve_policy(policy)
    rows = []
    for situation, result, ctx in _routing_cases(chosen):
        decision = route(chosen, result, ctx)
        detail = getattr(decision, "reason", "")
        retryable = Phrase(N_("yes") if result.retryable else N_("no"))
        rows.append((result.status, retryable, situation, route_name(decision), detail))
    return Table.build(Phrase(N_("Error routing under policy {policy!r}"), policy=chosen.name),
                       [N_("status"), N_("retryable"), N_("situation"), N_("route"), N_("why")], rows,
                       note=chosen.description)


def _routing_cases(chosen: ErrorPolicy) -> list[tuple[str, ToolResult, RouteContext]]:
    """One (situation, result, context) per row of :func:`routing_table`: every status, in the situations
    its route depends on."""
    def noop(args: dict[str, Any]) -> Any:
        return None

    read = ToolSpec("read_tool", "a read-only tool", {}, noop, backend="svc-a", fallback="backup_tool")
    backup = ToolSpec("backup_tool", "an independent fallback", {}, noop, backend="svc-b")
    locked = ToolSpec("admin_tool", "a fallback that needs the admin capability", {}, noop, backend="svc-c",
                      capability="admin")
    write = ToolSpec("write_tool", "a tool with side effects", {}, noop, side_effects=True)
    transient = {"timeout": True, "rate_limited": True}
    cases: list[tuple[str, ToolResult, RouteContext]] = []
    for status in TOOL_STATUSES:
        result = ToolResult(status, retryable=transient.get(status, False), error=f"({status})", question="Which one?",
                        parameter="id")
        if status == "empty":
            cases.append((N_("task accepts 'not found'"), result,
                          RouteContext(read, allows_not_found=True, retries_left=3)))
            cases.append((N_("task needs data; fallback exists"), result,
                          RouteContext(read, retries_left=3, fallback=backup)))
            cases.append((N_("task needs data; no fallback"), result, RouteContext(read, retries_left=3)))
        elif status in transient:
            cases.append((N_("1st attempt, retries left"), result, RouteContext(read, 1, 3, backup)))
            cases.append((Phrase(N_("{n} attempts on this tool"), n=chosen.attempts_per_tool), result,
                          RouteContext(read, chosen.attempts_per_tool, 2, backup)))
            cases.append((N_("retry budget spent"), result, RouteContext(read, 1, 0, backup)))
            cases.append((N_("tool has side effects"), result, RouteContext(write, 1, 3)))
        elif status == "invalid_arguments":
            cases.append((N_("first time"), result, RouteContext(read, repairs_used=0)))
            cases.append((N_("after one repair"), result, RouteContext(read, repairs_used=1)))
        elif status == "permanent_error":
            cases.append((N_("fallback exists"), result, RouteContext(read, retries_left=3, fallback=backup)))
            cases.append((N_("fallback needs a permission the caller lacks"), result,
                          RouteContext(read, retries_left=3, fallback=locked)))
            cases.append((N_("no fallback"), result, RouteContext(read, retries_left=3)))
        else:
            cases.append(("", result, RouteContext(read, retries_left=3, fallback=backup)))
    return cases
