"""Pydantic AI's own agent loop on a scripted scenario, through its ``FunctionModel``.

Each scripted response becomes a ``ModelResponse`` with a ``TextPart`` for the
content, a ``ToolCallPart`` per tool call (arguments as the raw text the model
sent, cut off or not) and the normalised ``finish_reason`` Pydantic AI uses
(``stop``, ``length``, ``content_filter``, ``tool_call``). The agent runs with
its defaults (``UsageLimits()``: 50 requests) unless a ``request_limit`` is
given, awaited as ``run_sync`` would.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from agentloops.frameworks.script import TOOL_SCHEMA, Outcome, Script, run_in_own_loop
from agentloops.response import Response
from agentloops.scenario import Scenario

NAME = "Pydantic AI"
PACKAGE = "pydantic-ai-slim"
LIMIT = "request_limit"
SMALL = 3

_FINISH: dict[str, Any] = {"stop": "stop", "length": "length", "content_filter": "content_filter",
                           "tool_calls": "tool_call", "refusal": "content_filter"}


def model_response(response: Response) -> Any:
    """The scripted response as Pydantic AI's ``ModelResponse``."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    parts: list[Any] = [TextPart(response.content)] if response.content else []
    parts += [ToolCallPart(c.name, c.arguments, tool_call_id=c.id) for c in response.tool_calls]
    finish: Any = _FINISH.get(response.finish_reason, "error")
    return ModelResponse(parts=parts, finish_reason=finish)


def run(scenario: Scenario, limit: int | None = None) -> Outcome:
    """Run ``scenario`` through ``Agent.run`` (``UsageLimits()`` unless a ``request_limit`` is given)."""
    from pydantic_ai import Agent, Tool, UsageLimits
    from pydantic_ai.models.function import FunctionModel

    script = Script(scenario)
    tools = [Tool.from_schema(script.tool(name), name=name, description=f"the {name} tool",
                              json_schema=TOOL_SCHEMA) for name in scenario.tools]
    agent = Agent(FunctionModel(lambda messages, info: model_response(script.next())), tools=tools)
    try:
        limits = UsageLimits() if limit is None else UsageLimits(request_limit=limit)
        result = run_in_own_loop(agent.run(scenario.prompt, usage_limits=limits))
    except Exception as exc:  # what the framework raises is the measurement
        return script.outcome(NAME, version(PACKAGE), error=exc, limit=limit, limit_name=LIMIT)
    return script.outcome(NAME, version(PACKAGE), answer=result.output, limit=limit, limit_name=LIMIT)
