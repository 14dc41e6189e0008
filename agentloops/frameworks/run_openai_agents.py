"""The OpenAI Agents SDK's runner on a scripted scenario, through its own Chat Completions model.

The SDK reads a provider's stop value inside its model adapter, not in the
runner, so the scripted responses enter where a server's would: as Chat
Completions bodies returned by the official ``AsyncOpenAI`` client over an
in-process mock transport (no network), parsed by the SDK's
``OpenAIChatCompletionsModel``. ``Runner.run`` runs with its default
``max_turns`` (10) unless a limit is given; tracing is disabled.
"""

from __future__ import annotations

import importlib
from importlib.metadata import version
from importlib.util import find_spec
from typing import Any

from agentloops.frameworks.script import Outcome, Script, run_in_own_loop
from agentloops.response import Response
from agentloops.scenario import Scenario

NAME = "OpenAI Agents SDK"
PACKAGE = "openai-agents"
LIMIT = "max_turns"
SMALL = 3


def chat_body(response: Response, n: int) -> dict[str, Any]:
    """The scripted response as a Chat Completions body, as a server sends it."""
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls]
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": response.raw_finish_reason
                         or response.finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}


def _client(script: Script) -> Any:
    """The official client over an in-process transport (``httpx2`` for openai 3, ``httpx`` before)."""
    from openai import AsyncOpenAI

    http: Any = importlib.import_module("httpx2" if find_spec("httpx2") else "httpx")

    def reply(request: Any) -> Any:
        return http.Response(200, json=chat_body(script.next(), script.calls))

    return AsyncOpenAI(api_key="scripted", base_url="http://scripted.invalid/v1",
                       http_client=http.AsyncClient(transport=http.MockTransport(reply)), max_retries=0)


def _tool(script: Script, name: str) -> Any:
    """A tool made by the SDK's own ``function_tool``, so the SDK parses and validates the arguments."""
    from agents import function_tool

    recorded = script.tool(name)

    def tool(path: str = "") -> str:
        return recorded(path=path)

    return function_tool(tool, name_override=name, description_override=f"the {name} tool", strict_mode=False)


def run(scenario: Scenario, limit: int | None = None) -> Outcome:
    """Run ``scenario`` through ``Runner.run`` (``max_turns`` at its default unless given)."""
    script = Script(scenario)
    try:
        output = run_in_own_loop(_run(script, limit))
    except Exception as exc:  # what the framework raises is the measurement
        return script.outcome(NAME, version(PACKAGE), error=exc, limit=limit, limit_name=LIMIT)
    return script.outcome(NAME, version(PACKAGE), answer=output if isinstance(output, str) else str(output),
                          limit=limit, limit_name=LIMIT)


async def _run(script: Script, limit: int | None) -> Any:
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner

    client = _client(script)
    try:
        model = OpenAIChatCompletionsModel(model="scripted", openai_client=client)
        agent = Agent(name="scripted", model=model, tools=[_tool(script, name) for name in script.scenario.tools])
        extra: Any = {} if limit is None else {LIMIT: limit}
        result = await Runner.run(agent, script.scenario.prompt, run_config=RunConfig(tracing_disabled=True), **extra)
        return result.final_output
    finally:
        await client.close()
