"""LangGraph's prebuilt agent on a scripted scenario: ``create_react_agent``, the loop most LangGraph users call.

It builds the same model → tools loop as the hand-built graph
(:mod:`.run_langgraph`) plus one rule of its own: a managed
``remaining_steps`` value, and when too few steps remain for another tool
round it ends the run with a canned ``AIMessage`` — "Sorry, need more steps
to process this request." — instead of raising. Whether a capped run raises
``GraphRecursionError`` or returns that text as its answer depends on where
the ``recursion_limit`` falls (the table's cap sweep measures it). The model
is the same scripted ``BaseChatModel``. ``create_react_agent`` is deprecated
in LangGraph 1.x in favour of LangChain's ``create_agent``
(:mod:`.run_langchain`); its warning is silenced here, not hidden from users.
"""

from __future__ import annotations

import warnings
from importlib.metadata import version
from typing import Any

from agentloops.frameworks.run_langgraph import PACKAGE, langchain_tools, scripted_model
from agentloops.frameworks.script import Outcome, Script
from agentloops.scenario import Scenario

NAME = "LangGraph prebuilt agent"
LIMIT = "recursion_limit"
SMALL = 10


def run(scenario: Scenario, limit: int | None = None) -> Outcome:
    """Run ``scenario`` through ``create_react_agent`` (``recursion_limit`` left at its default unless given)."""
    from langgraph.prebuilt import create_react_agent

    script = Script(scenario)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangGraphDeprecatedSinceV10: the prebuilt agent moved to langchain
        agent: Any = create_react_agent(scripted_model(script), langchain_tools(script))
    config: Any = {} if limit is None else {LIMIT: limit}
    try:
        state = agent.invoke({"messages": [("user", scenario.prompt)]}, config)
    except Exception as exc:  # what the framework raises is the measurement
        return script.outcome(NAME, version(PACKAGE), error=exc, limit=limit, limit_name=LIMIT)
    content = state["messages"][-1].content
    return script.outcome(NAME, version(PACKAGE), answer=content if isinstance(content, str) else str(content),
                          limit=limit, limit_name=LIMIT)
