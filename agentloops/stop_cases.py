"""Three stops made measurable: stub models whose reply is a function of what the caller controls.

Each case is a task whose run with the correct loop ends with one kind of stop,
and a :class:`Setup` (the output-token limit, the prompt, whether the tool has
been fixed) that decides it: the answer needs a certain number of output tokens
and is cut off below it; the filter fires on what the prompt asks for; the tool
fails until it is fixed. So "raise the limit" and "change the input" are measured,
not assumed. :mod:`agentloops.retry` runs them under two policies and compares the bills.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentloops.errors import ErrorCode, UsageError
from agentloops.i18n import N_, _, shown
from agentloops.loop import DEFAULT_MAX_STEPS, Tools, run_loop
from agentloops.messages import Message
from agentloops.record import RunRecord
from agentloops.response import Response, ToolCall, Usage
from agentloops.run_errors import RunError
from agentloops.stubs import FunctionModel
from agentloops.tokens import estimate_tokens

NOTES = (
    "Meeting notes, 3 Nov\n"
    "- ship the loop fix (owner: Dana Li, +1 555 0100)\n"
    "- add a cap test (owner: Wei Zhang, +1 555 0199)\n"
    "(42 lines in total)"
)
"""What the stub ``read_file`` tool returns in the cases below."""

SUMMARY = N_(
    "The meeting on 3 November agreed on two actions. First, ship the fix to the agent loop: the stop test "
    "must separate whether to go on, which the tool calls decide, from how a round ended, which "
    "finish_reason reports, so that a round cut off by the token limit raises instead of being asked again. "
    "Second, add a test that scripts more tool rounds than the step cap allows and expects the loop to raise "
    "at the cap rather than return its last text. Dana Li owns the fix and Wei Zhang the test."
)
"""The long answer of the truncation case: it needs more output tokens than the first limit allows."""

CUT_SUMMARY = N_(
    "The meeting on 3 November agreed on two actions. First, ship the fix to the agent loop: the stop test "
    "must separate whether to go on, which the tool calls decide, from how a round ended, which "
    "finish_reason reports, so that a round cut off "
)
"""What the first attempt gets of :data:`SUMMARY` under its 64-token limit, listed so that it is shown translated
too (``tests/test_retry.py`` checks it is the cut)."""

ACTION_ITEMS = N_("Two action items: ship the loop fix (Dana Li) and add a cap test (Wei Zhang).")
TOOL_ERROR = N_("error: permission denied: notes.txt")



@dataclass(frozen=True, slots=True)
class Setup:
    """What the caller controls between two attempts.

    Attributes:
        max_tokens: the output-token limit of every model call.
        prompt: the user message.
        tool_fixed: whether someone has repaired the failing tool.
    """

    max_tokens: int
    prompt: str
    tool_fixed: bool = False

    def describe(self) -> str:
        """The setup in a few words, for tables."""
        tool = _("tool fixed") if self.tool_fixed else _("tool as is")
        return _("max_tokens={max_tokens}, prompt={prompt}, {tool}").format(max_tokens=self.max_tokens,
                                                                            prompt=repr(shown(self.prompt)), tool=tool)


@dataclass(frozen=True, slots=True)
class StopCase:
    """A task whose run ends with one kind of stop, and the knob that fixes it.

    Attributes:
        name: short identifier (``truncated``, ``content_filter``, ``failing_tool``).
        title: one line for tables and charts.
        stop: the error code the first attempt ends with.
        setup: the settings of the first attempt.
        model: builds the stub model for a setup (a :class:`~agentloops.stubs.FunctionModel`).
        tools: builds the tools for a setup.
        safer_prompt: the changed input, for a stop whose response is to change the input.
    """

    name: str
    title: str
    stop: ErrorCode
    setup: Setup
    model: Callable[[Setup], FunctionModel]
    tools: Callable[[Setup], Tools]
    safer_prompt: str | None = None


def _call(name: str, arguments: str = '{"path": "notes.txt"}') -> ToolCall:
    return ToolCall(id=f"call_{name}", name=name, arguments=arguments)


def _tool_results(messages: Sequence[Message]) -> list[str]:
    return [m.content or "" for m in messages if m.role == "tool"]


def _limited(reply: Response, max_tokens: int) -> Response:
    """``reply`` as a provider returns it under ``max_tokens``: whole, or cut off with finish_reason length.

    The reply needs as many output tokens as its message costs; below that,
    the text stops at the limit and the round bills the limit.
    """
    need = Message.from_response(reply).tokens(estimate_tokens)
    if need <= max_tokens:
        return reply.model_copy(update={"usage": Usage(completion_tokens=need)})
    text = reply.content or ""
    budget = max_tokens - (need - estimate_tokens(text))
    keep = 0
    while keep < len(text) and estimate_tokens(text[: keep + 1]) <= budget:
        keep += 1
    return Response(content=text[:keep] or None, finish_reason="length", usage=Usage(completion_tokens=max_tokens))


def _truncation_model(setup: Setup) -> FunctionModel:
    def summarise(messages: Sequence[Message]) -> Response:
        if not _tool_results(messages):
            reply = Response(content=None, tool_calls=(_call("read_file"),), finish_reason="tool_calls")
        else:
            reply = Response(content=SUMMARY, finish_reason="stop")
        return _limited(reply, setup.max_tokens)

    return FunctionModel(summarise)


def _filter_model(setup: Setup) -> FunctionModel:
    def answer_or_filter(messages: Sequence[Message]) -> Response:
        if not _tool_results(messages):
            return Response(content=None, tool_calls=(_call("read_file"),), finish_reason="tool_calls")
        asked = messages[0].content or ""
        if "phone" in asked.lower():  # the provider withholds personal data the prompt asks to list
            return Response(content=None, finish_reason="content_filter")
        return Response(content=ACTION_ITEMS, finish_reason="stop")

    return FunctionModel(answer_or_filter)


def _tool_model(setup: Setup) -> FunctionModel:
    def call_until_it_works(messages: Sequence[Message]) -> Response:
        results = _tool_results(messages)
        if not results or results[-1].startswith("error"):  # a model that tries the failing call again
            return Response(content=None, tool_calls=(_call("read_file"),), finish_reason="tool_calls")
        return Response(content="notes.txt has 42 lines.", finish_reason="stop")

    return FunctionModel(call_until_it_works)


def _notes(setup: Setup) -> Tools:
    return {"read_file": NOTES}


def _maybe_broken(setup: Setup) -> Tools:
    return {"read_file": NOTES if setup.tool_fixed else TOOL_ERROR}


CASES: dict[str, StopCase] = {
    "truncated": StopCase(
        "truncated", "answer cut off by max_tokens", "truncated",
        Setup(max_tokens=64, prompt=N_("Summarise notes.txt in one paragraph.")),
        _truncation_model, _notes,
    ),
    "content_filter": StopCase(
        "content_filter", "reply withheld by a content filter", "content_filter",
        Setup(max_tokens=256, prompt="List every phone number in notes.txt."),
        _filter_model, _notes, safer_prompt=N_("List the action items in notes.txt and who owns each."),
    ),
    "failing_tool": StopCase(
        "failing_tool", "a tool that keeps failing hits the cap", "max_steps",
        Setup(max_tokens=256, prompt="How many lines does notes.txt have?"),
        _tool_model, _maybe_broken,
    ),
}
"""The three kinds of stop of notebook 05, in teaching order."""


def load_case(case: str | StopCase) -> StopCase:
    """A case given itself or its name."""
    if isinstance(case, StopCase):
        return case
    try:
        return CASES[case]
    except (KeyError, TypeError):
        raise UsageError(_("unknown stop case {case}; expected one of: {names}").format(
            case=repr(case), names=", ".join(CASES))) from None


def attempt(case: str | StopCase, setup: Setup | None = None, *, max_steps: int = DEFAULT_MAX_STEPS) -> RunRecord:
    """Run the case once with the correct loop and return its record (a failed run is measured too)."""
    chosen = load_case(case)
    setup = setup or chosen.setup
    try:
        return run_loop(chosen.model(setup), chosen.tools(setup), criterion="correct", max_steps=max_steps,
                        prompt=setup.prompt, label=chosen.name)
    except RunError as error:
        if error.record is None:
            raise
        return error.record
