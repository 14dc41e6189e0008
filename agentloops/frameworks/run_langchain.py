"""LangChain's agent on a scripted scenario: ``langchain.agents.create_agent``, successor to LangGraph's prebuilt one.

It compiles a LangGraph model → tools loop from the same scripted chat model
and tools as :mod:`.run_langgraph`; ``recursion_limit`` is LangGraph's cap.
Needs the ``langchain`` package (in the ``frameworks`` extra).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from agentloops.frameworks.run_langgraph import langchain_tools, scripted_model
from agentloops.frameworks.script import Outcome, Script
from agentloops.scenario import Scenario

NAME = "LangChain create_agent"
PACKAGE = "langchain"
LIMIT = "recursion_limit"
SMALL = 10


def run(scenario: Scenario, limit: int | None = None) -> Outcome:
    """Run ``scenario`` through ``create_agent`` (``recursion_limit`` left at its default unless given)."""
    from langchain.agents import create_agent

    script = Script(scenario)
    agent: Any = create_agent(scripted_model(script), langchain_tools(script))
    config: Any = {} if limit is None else {LIMIT: limit}
    try:
        state = agent.invoke({"messages": [("user", scenario.prompt)]}, config)
    except Exception as exc:  # what the framework raises is the measurement
        return script.outcome(NAME, version(PACKAGE), error=exc, limit=limit, limit_name=LIMIT)
    content = state["messages"][-1].content
    return script.outcome(NAME, version(PACKAGE), answer=content if isinstance(content, str) else str(content),
                          limit=limit, limit_name=LIMIT)
