"""agentloops — when does a tool-calling loop stop?

A teaching package: scripted models, the three naive stop tests and the
correct loop, each run measured (steps, tools executed, wasted calls, context
growth, tokens billed).

    >>> from agentloops import run
    >>> run("truncated", criterion="content").wasted_calls
    7

Importing the package loads pydantic only; pandas, matplotlib and the
notebook widgets are imported by the functions that need them.
"""

from __future__ import annotations

from agentloops.comparison import Comparison, compare
from agentloops.criteria import (
    CRITERIA,
    CRITERION_NAMES,
    NAIVE_CRITERIA,
    Abort,
    Continue,
    Criterion,
    Decision,
    Finish,
    by_content,
    by_finish_reason,
    by_tool_calls,
    correct,
)
from agentloops.errors import AgentLoopsError, CriterionError, ScenarioError, ScenarioNotFound, UsageError
from agentloops.i18n import language, set_language
from agentloops.loop import DEFAULT_MAX_STEPS, run, run_loop
from agentloops.messages import Message
from agentloops.record import Outcome, Round, RunRecord
from agentloops.response import FinishReason, Response, ToolCall, Usage
from agentloops.run_errors import (
    ContentFilterError,
    MalformedToolCallError,
    MaxStepsError,
    ModelError,
    ProviderError,
    RefusalError,
    RunError,
    TruncatedError,
    UnknownStopError,
)
from agentloops.scenario import Scenario, list_scenarios, load_scenario, scenario_names
from agentloops.stubs import FunctionModel, Model, ScriptedModel
from agentloops.tokens import Tokenizer, estimate_tokens

__version__ = "0.1.0"

__all__ = [
    "CRITERIA",
    "CRITERION_NAMES",
    "DEFAULT_MAX_STEPS",
    "NAIVE_CRITERIA",
    "Abort",
    "AgentLoopsError",
    "Comparison",
    "ContentFilterError",
    "Continue",
    "Criterion",
    "CriterionError",
    "Decision",
    "Finish",
    "FinishReason",
    "FunctionModel",
    "MalformedToolCallError",
    "MaxStepsError",
    "Message",
    "Model",
    "ModelError",
    "Outcome",
    "ProviderError",
    "RefusalError",
    "Response",
    "Round",
    "RunError",
    "RunRecord",
    "Scenario",
    "ScenarioError",
    "ScenarioNotFound",
    "ScriptedModel",
    "Tokenizer",
    "ToolCall",
    "TruncatedError",
    "UnknownStopError",
    "Usage",
    "UsageError",
    "__version__",
    "by_content",
    "by_finish_reason",
    "by_tool_calls",
    "compare",
    "correct",
    "estimate_tokens",
    "language",
    "list_scenarios",
    "load_scenario",
    "run",
    "run_loop",
    "scenario_names",
    "set_language",
]
