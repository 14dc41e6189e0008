"""LangGraph's tool loop on a scripted scenario: a chat-model node, a ``ToolNode`` and ``tools_condition``.

The model is a ``BaseChatModel`` whose ``bind_tools`` returns itself and whose
reply is the next scripted response as an ``AIMessage``, shaped as
``ChatOpenAI`` shapes one: parsed calls in ``tool_calls``, calls whose
arguments do not parse in ``invalid_tool_calls``, and the provider's stop value
in ``response_metadata["finish_reason"]``. The graph is the loop the LangGraph
docs build by hand (and ``create_react_agent`` builds): model → tools while the
last message has tool calls, else end; ``recursion_limit`` is left at its
default unless a limit is given.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from agentloops.frameworks.script import TOOL_SCHEMA, Outcome, Script
from agentloops.response import Response
from agentloops.scenario import Scenario

NAME = "LangGraph"
PACKAGE = "langgraph"
LIMIT = "recursion_limit"
SMALL = 10


def ai_message(response: Response) -> Any:
    """The scripted response as LangChain's ``AIMessage``."""
    from langchain_core.messages import AIMessage

    parsed = [c for c in response.tool_calls if c.parsed_arguments is not None]
    broken = [c for c in response.tool_calls if c.parsed_arguments is None]
    return AIMessage(
        content=response.content or "",
        tool_calls=[{"name": c.name, "args": c.parsed_arguments, "id": c.id, "type": "tool_call"} for c in parsed],
        invalid_tool_calls=[{"name": c.name, "args": c.arguments, "id": c.id, "error": "arguments are not valid JSON",
                             "type": "invalid_tool_call"} for c in broken],
        response_metadata={"finish_reason": response.raw_finish_reason or response.finish_reason},
    )


def scripted_model(script: Script) -> Any:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChatModel(BaseChatModel):
        """A chat model that replays the script; binding tools changes nothing."""

        @property
        def _llm_type(self) -> str:
            return "agentloops-scripted"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=ai_message(script.next()))])

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    return ScriptedChatModel()


def langchain_tools(script: Script) -> list[Any]:
    """The scenario's tools as LangChain ``StructuredTool`` objects that record their runs."""
    from langchain_core.tools import StructuredTool

    return [StructuredTool.from_function(script.tool(name), name=name, description=f"the {name} tool",
                                         args_schema=TOOL_SCHEMA) for name in script.scenario.tools]


def run(scenario: Scenario, limit: int | None = None) -> Outcome:
    """Run ``scenario`` through a compiled ``StateGraph`` (``recursion_limit`` at its default unless given)."""
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    script = Script(scenario)
    tools = langchain_tools(script)
    model = scripted_model(script).bind_tools(tools)
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    try:
        inputs: Any = {"messages": [("user", scenario.prompt)]}
        config: Any = {} if limit is None else {LIMIT: limit}
        state = graph.compile().invoke(inputs, config)
    except Exception as exc:  # what the framework raises is the measurement
        return script.outcome(NAME, version(PACKAGE), error=exc, limit=limit, limit_name=LIMIT)
    content = state["messages"][-1].content
    return script.outcome(NAME, version(PACKAGE), answer=content if isinstance(content, str) else str(content),
                          limit=limit, limit_name=LIMIT)
