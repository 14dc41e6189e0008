"""The one loop: ask the model, act on the criterion's decision, measure everything.

The order inside a round is the order naive code uses, so the naive criteria
misbehave exactly as they do in the wild:

1. call the model with the whole transcript;
2. ask the criterion; an :class:`~agentloops.criteria.Abort` raises here,
   before the round is appended or any tool runs;
3. append the response and run its tool calls;
4. on :class:`~agentloops.criteria.Finish`, return the answer.

When the cap is reached the criterion's ``at_cap`` decides: naive criteria
return the last text, the correct loop raises :class:`~agentloops.errors.MaxStepsError`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

from agentloops.criteria import Abort, Criterion, CriterionFunction, Finish, resolve_criterion
from agentloops.errors import ERROR_CLASSES, ModelError, RunError, UsageError
from agentloops.messages import Message
from agentloops.record import Outcome, Round, RunRecord, classify
from agentloops.response import Response, ToolCall, shorten
from agentloops.scenario import DEFAULT_PROMPT, ScenarioLike, load_scenario
from agentloops.stubs import Model, ScriptedModel
from agentloops.tokens import Tokenizer, estimate_tokens

DEFAULT_MAX_STEPS = 8
"""The cap on model calls, as in the source article."""

MAX_STEPS_LIMIT = 1000
"""The largest cap accepted: every call's request is recorded, so memory grows with its square."""

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
    messages: list[Message] = [first]
    context = first.tokens(tokenizer)
    seen: set[tuple[Any, ...]] = {_key(first)}
    rounds: list[Round] = []
    completion = 0
    previous: Response | None = None
    new_input = True
    unseen_runs = 0

    def finish(outcome: Outcome, answer: str | None, error: RunError | None = None) -> RunRecord:
        record = RunRecord(
            scenario=label,
            criterion=rule.name,
            max_steps=max_steps,
            rounds=tuple(rounds),
            hit_cap=len(rounds) == max_steps and not isinstance(rounds[-1].decision, (Finish, Abort)),
            outcome=outcome,
            error=error.code if error else None,
            error_message=str(error) if error else None,
            answer=answer,
            wasted_tool_runs=unseen_runs,
            billed_completion_tokens=completion,
        )
        if error is not None:
            error.record = record
            raise error
        return record

    for step in range(1, max_steps + 1):
        request, sent = tuple(messages), context
        new_from = len(rounds[-1].request) if rounds else 0
        try:
            response = model(request)
        except (RunError, UsageError):
            raise
        except Exception as exc:  # a provider or a FunctionModel failed: the run ended badly, measure it
            error = ModelError(f"call {step}: the model raised {type(exc).__name__}: {shorten(str(exc))}")
            error.__cause__ = exc
            return finish("raised", None, error)
        repeated = not new_input and previous is not None and response.same_as(previous)
        new_input, unseen_runs, previous = False, 0, response
        reply = Message.from_response(response)
        reply_tokens = reply.tokens(tokenizer)
        completion += _completion_tokens(response, reply_tokens)
        decision = rule(response)

        if isinstance(decision, Abort):
            rounds.append(Round(step, request, new_from, sent, response, (), (), decision, repeated))
            return finish("raised", None, ERROR_CLASSES[decision.code](f"call {step}: {decision.reason}"))

        messages.append(reply)
        context += reply_tokens
        ran: list[str] = []
        rejected: list[str] = []
        for call in response.tool_calls:
            text, executed = execute(tools, call)
            result = Message("tool", text, tool_call_id=call.id, name=call.name)
            messages.append(result)
            context += result.tokens(tokenizer)
            (ran if executed else rejected).append(call.name)
            key = _key(result, call)
            if key not in seen:
                seen.add(key)
                new_input = True
        unseen_runs = len(ran)
        rounds.append(Round(step, request, new_from, sent, response, tuple(ran), tuple(rejected), decision, repeated))

        if isinstance(decision, Finish):
            return finish(classify(decision.answer, response, unseen_runs), decision.answer)

    if rule.at_cap == "raise":
        error = ERROR_CLASSES["max_steps"](f"reached max_steps={max_steps} without a final answer")
        return finish("raised", None, error)
    return finish("hit_cap", previous.content if previous else None)


def _key(message: Message, call: ToolCall | None = None) -> tuple[Any, ...]:
    """What makes a message new information: a tool result counts once per (tool, arguments, text)."""
    if call is None:
        return (message.role, message.content)
    return (message.role, call.name, call.arguments, message.content)


def _completion_tokens(response: Response, estimate: int) -> int:
    """Output tokens of one round: as the provider reported them, else the estimate."""
    if response.usage is not None and response.usage.completion_tokens is not None:
        return response.usage.completion_tokens
    return estimate


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
