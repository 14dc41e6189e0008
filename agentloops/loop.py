"""The one loop: ask the model, act on the criterion's decision, measure everything.

The order inside a round is the order naive code uses, so the naive criteria
misbehave exactly as they do in the wild:

1. call the model with the whole transcript (a view onto the one stored copy);
2. ask the criterion; an :class:`~agentloops.criteria.Abort` raises here,
   before the round is appended or any tool runs;
3. append the response and run its tool calls;
4. on :class:`~agentloops.criteria.Finish`, return the answer.

When the cap is reached the criterion's ``at_cap`` decides: naive criteria
return the last text, the correct loop raises :class:`~agentloops.run_errors.MaxStepsError`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from agentloops.criteria import Abort, Criterion, CriterionFunction, Finish, resolve_criterion
from agentloops.errors import UsageError
from agentloops.messages import Message, TranscriptView
from agentloops.record import Outcome, Round, RunRecord, classify
from agentloops.response import Response, ToolCall, shorten
from agentloops.run_errors import ERROR_CLASSES, ModelError, RunError
from agentloops.scenario import DEFAULT_PROMPT, ScenarioLike, load_scenario
from agentloops.stubs import Model, ScriptedModel
from agentloops.tokens import Tokenizer, estimate_tokens

DEFAULT_MAX_STEPS = 8
"""The cap on model calls, as in the source article."""

MAX_STEPS_LIMIT = 1000
"""The largest cap accepted: a guard against a mistyped cap, not a cost limit.

A run costs time and memory linear in its steps (requests are views onto one
stored transcript; ``benchmarks/bench_long_run.py``), but a scripted model
repeats its last response forever, so an absurd cap would spin that long.
"""

ToolFunction = Callable[[dict[str, Any]], str]
Tools = Mapping[str, str | ToolFunction]
"""Tool name → a canned result, or a function of the parsed arguments that returns text."""

CriterionLike = str | Criterion | CriterionFunction


def execute(tools: Tools, call: ToolCall) -> tuple[str, bool]:
    """Run one tool call; return the text sent back and whether the tool really ran.

    Unparseable arguments and unknown tools are answered with an error message
    without running anything, and a tool that raises is answered with its error:
    that is how agent frameworks report tool failures to the model (the model
    can react; the run does not crash).
    """
    arguments = call.parsed_arguments
    if arguments is None:
        return f"error: the arguments of {call.name} are not a JSON object: {shorten(call.arguments)}", False
    tool = tools.get(call.name)
    if tool is None:
        return f"error: there is no tool named {call.name!r}", False
    if isinstance(tool, str):
        return tool, True
    try:
        result = tool(copy.deepcopy(arguments))  # a tool may not edit the scenario's own arguments
    except Exception as exc:
        return f"error: {call.name} raised {type(exc).__name__}: {shorten(str(exc))}", True
    return (result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)), True


def run_loop(
    model: Model,
    tools: Tools,
    *,
    criterion: CriterionLike = "correct",
    max_steps: int = DEFAULT_MAX_STEPS,
    prompt: str = DEFAULT_PROMPT,
    tokenizer: Tokenizer = estimate_tokens,
    label: str = "custom",
) -> RunRecord:
    """Run a tool-calling loop on ``model`` and measure it.

    Args:
        model: any callable from messages to a :class:`~agentloops.response.Response`.
        tools: tool name → canned text or a function of the arguments.
        criterion: a built-in name, a :class:`~agentloops.criteria.Criterion`, or a plain function.
        max_steps: the cap on model calls.
        prompt: the user message that starts the run.
        tokenizer: counts tokens of a text, for context size and billing.
        label: the scenario name written into the record.

    Returns:
        The run record when the loop returns an answer (whatever its quality).

    Raises:
        RunError: a subclass per error code, with the partial record in ``.record``.
    """
    rule = resolve_criterion(criterion)
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or not 1 <= max_steps <= MAX_STEPS_LIMIT:
        raise UsageError(f"max_steps must be a whole number from 1 to {MAX_STEPS_LIMIT}; got {max_steps!r}")

    first = Message("user", prompt)
    transcript: list[Message] = [first]  # stored once; each request is a view onto a prefix of it
    context = first.tokens(tokenizer)
    seen: set[tuple[Any, ...]] = {(first.role, first.content)}
    rounds: list[Round] = []
    completion, new_from, unseen_runs = 0, 0, 0
    previous: Response | None = None
    new_input = True

    for step in range(1, max_steps + 1):
        sent = len(transcript)
        request = TranscriptView(transcript, sent)
        try:
            response = model(request)
        except (RunError, UsageError):
            raise
        except Exception as exc:  # a provider or a FunctionModel failed: the run ended badly, measure it
            failed = ModelError(f"call {step}: the model raised {type(exc).__name__}: {shorten(str(exc))}")
            failed.__cause__ = exc
            return _finish(label, rule, max_steps, rounds, "raised", None, unseen_runs, completion, failed)
        repeated = not new_input and previous is not None and response.same_as(previous)
        new_input, previous = False, response
        reply = Message("assistant", response.content, response.tool_calls)
        reply_tokens = reply.tokens(tokenizer)
        usage = response.usage  # output tokens as the provider reported them, else the estimate
        reported = usage.completion_tokens if usage is not None else None
        completion += reported if reported is not None else reply_tokens
        decision = rule(response)

        if isinstance(decision, Abort):
            rounds.append(Round(step, request, new_from, context, response, (), (), decision, repeated))
            error = ERROR_CLASSES[decision.code](f"call {step}: {decision.reason}")
            return _finish(label, rule, max_steps, rounds, "raised", None, 0, completion, error)

        transcript.append(reply)
        ran, rejected, new_input, tool_tokens = _run_tools(tools, response.tool_calls, transcript, seen, tokenizer)
        rounds.append(Round(step, request, new_from, context, response, ran, rejected, decision, repeated))
        context += reply_tokens + tool_tokens
        unseen_runs, new_from = len(ran), sent

        if isinstance(decision, Finish):
            outcome = classify(decision.answer, response, unseen_runs)
            return _finish(label, rule, max_steps, rounds, outcome, decision.answer, unseen_runs, completion)

    if rule.at_cap == "raise":
        error = ERROR_CLASSES["max_steps"](f"reached max_steps={max_steps} without a final answer")
        return _finish(label, rule, max_steps, rounds, "raised", None, unseen_runs, completion, error)
    answer = previous.content if previous else None
    return _finish(label, rule, max_steps, rounds, "hit_cap", answer, unseen_runs, completion)


def _run_tools(
    tools: Tools, calls: tuple[ToolCall, ...], transcript: list[Message], seen: set[tuple[Any, ...]],
    tokenizer: Tokenizer,
) -> tuple[tuple[str, ...], tuple[str, ...], bool, int]:
    """Append the reply's tool results; return (ran, rejected, anything new, their tokens).

    The caller appends the assistant reply first (``transcript[-1]`` is it).
    A tool result counts as new information once per (tool, arguments, text).
    """
    if not calls:
        return (), (), False, 0
    ran: list[str] = []
    rejected: list[str] = []
    fresh = False
    tokens = 0
    for call in calls:
        text, executed = execute(tools, call)
        result = Message("tool", text, (), call.id, call.name)
        transcript.append(result)
        tokens += result.tokens(tokenizer)
        (ran if executed else rejected).append(call.name)
        key = ("tool", call.name, call.arguments, text)
        if key not in seen:
            seen.add(key)
            fresh = True
    return tuple(ran), tuple(rejected), fresh, tokens


def _finish(
    label: str, rule: Criterion, max_steps: int, rounds: list[Round], outcome: Outcome, answer: str | None,
    unseen_runs: int, completion: int, error: RunError | None = None,
) -> RunRecord:
    """Build the record; raise ``error`` with the record attached when there is one."""
    hit_cap = len(rounds) == max_steps and not isinstance(rounds[-1].decision, (Finish, Abort))
    record = RunRecord(  # positional: a third cheaper than keywords, and the loop builds one per run
        label, rule.name, max_steps, tuple(rounds), hit_cap, outcome,
        error.code if error else None, str(error) if error else None, answer, unseen_runs, completion,
    )
    if error is not None:
        error.record = record
        raise error
    return record


def run(
    scenario: ScenarioLike,
    criterion: CriterionLike = "correct",
    max_steps: int = DEFAULT_MAX_STEPS,
    *,
    tokenizer: Tokenizer = estimate_tokens,
    raise_errors: bool = False,
) -> RunRecord:
    """Run a scenario under a criterion and return the measured record.

    A run that raised is still measured: its record has ``outcome="raised"`` and
    the error code in ``error``. Pass ``raise_errors=True`` to get the exception
    instead (it carries the same record in ``.record``).
    """
    loaded = load_scenario(scenario)
    try:
        return run_loop(
            ScriptedModel(loaded.responses),
            loaded.tools,
            criterion=criterion,
            max_steps=max_steps,
            prompt=loaded.prompt,
            tokenizer=tokenizer,
            label=loaded.name,
        )
    except RunError as error:
        if raise_errors or error.record is None:
            raise
        return error.record
