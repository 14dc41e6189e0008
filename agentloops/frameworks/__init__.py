"""Does my framework have this bug? The package's scenarios through LangGraph, LangChain, the OpenAI Agents SDK and
Pydantic AI.

Each framework runs its own loop with its own test double for the model
(:mod:`.run_langgraph` — a hand-built graph —, :mod:`.run_langgraph_prebuilt` —
``create_react_agent`` —, :mod:`.run_langchain` — ``create_agent`` —,
:mod:`.run_openai_agents`, :mod:`.run_pydantic_ai`), fed the package's scripted
responses (:mod:`.script`), each at its default cap and a small one;
:mod:`.table` tabulates model calls, tools run and what the caller got, and
:mod:`.claims` states what the results show (:func:`langgraph_cap_behaviour`).
The frameworks are the optional extra ``agentloops[frameworks]``; without it,
:func:`shipped_table` renders the results computed with the versions they name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentloops.frameworks.claims import CapBehaviour, langgraph_cap_behaviour
from agentloops.frameworks.script import Got, Outcome
from agentloops.frameworks.table import (
    REFERENCE,
    RUNNERS,
    SCENARIOS,
    SLOW,
    FrameworksError,
    FrameworkTable,
    compute_table,
    framework_scenario,
    installed,
    merge_slow,
    save_table,
    shipped_table,
)

if TYPE_CHECKING:
    import argparse


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``agentloops frameworks`` (see :mod:`agentloops.frameworks.cli`)."""
    from agentloops.frameworks.cli import add_commands as add

    add(sub)


__all__ = [
    "REFERENCE",
    "RUNNERS",
    "SCENARIOS",
    "SLOW",
    "CapBehaviour",
    "FrameworkTable",
    "FrameworksError",
    "Got",
    "Outcome",
    "add_commands",
    "compute_table",
    "framework_scenario",
    "installed",
    "langgraph_cap_behaviour",
    "merge_slow",
    "save_table",
    "shipped_table",
]
