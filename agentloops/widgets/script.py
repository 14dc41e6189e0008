"""Scripts built round by round: what a learner can make a model say, and the scenario it becomes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentloops.errors import ScenarioError, describe_validation_error
from agentloops.i18n import N_, _, ngettext, shown
from agentloops.response import FinishReason, Response, ToolCall, show_content
from agentloops.scenario import DEFAULT_PROMPT, SCENARIO_SAYS, Group, Scenario, load_scenario

FINISH_REASONS: tuple[str, ...] = get_args(FinishReason)
"""Every finish reason a round can be given in the script builder."""

ContentKind = Literal["null", "empty", "text"]
"""The three kinds of content a naive test confuses: ``None``, ``""`` and text."""

CONTENT_LABELS: dict[str, str] = {"null": "null", "empty": N_('"" (empty)'), "text": N_("text")}
"""The content dropdown's option texts (translated when a dropdown is built; the values stay code)."""

MAX_ROUNDS = 12
"""Rounds the script builder offers (the long chain of the shipped scenarios needs 11)."""

MAX_TOOL_CALLS = 3
"""Tool calls per round the script builder offers."""

MAX_CAP = 12
"""The largest step cap the explorer's slider offers."""

CUSTOM = "custom"
"""The explorer's scenario value for a script built round by round."""

DEFAULT_SCENARIO = "truncated"
"""What the explorer opens on: the round that makes two tests spin and one report an empty answer."""

TALK = "Let me open the file first."
ANSWER = "notes.txt has 42 lines."
CUSTOM_TOOLS: tuple[str, ...] = ("read_file", "count_lines", "search")
"""Tools a built round calls, in order: the first call of a round reads the file, the second counts lines…"""

EXPLORER_GROUPS: tuple[Group, ...] = ("article", "extra")

_CELL = "padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"
_TABLE = "border-collapse:collapse;font-size:15px;margin:4px 0 10px 0"
_REPEATED_ROW = "#fbe3d4"  # a light tint of the vermillion that marks wasted calls in the charts


class RoundSpec(BaseModel):
    """One round of a hand-built script, as the explorer's controls describe it.

    Attributes:
        content: ``null``, ``empty`` (``""``) or ``text``.
        text: the round's text when ``content`` is ``text``.
        tool_calls: how many tool calls the round makes (0–3).
        finish_reason: how the round ended.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: ContentKind = "null"
    text: str = ANSWER
    tool_calls: int = Field(default=0, ge=0, le=MAX_TOOL_CALLS)
    finish_reason: FinishReason = "stop"

    def content_value(self) -> str | None:
        """The ``content`` field of the response this round produces."""
        if self.content == "null":
            return None
        if self.content == "empty":
            return ""
        return self.text

    @classmethod
    def from_response(cls, response: Response) -> RoundSpec:
        """Describe ``response`` as a round (more than three tool calls are shown as three)."""
        if response.content is None:
            kind: ContentKind = "null"
        elif response.content == "":
            kind = "empty"
        else:
            kind = "text"
        return cls(content=kind, text=response.content or ANSWER,
                   tool_calls=min(len(response.tool_calls), MAX_TOOL_CALLS), finish_reason=response.finish_reason)

    def label(self) -> str:
        """The round in a few words: ``content="Let me…" 1 call finish=tool_calls``."""
        calls = ngettext("{n} call", "{n} calls", self.tool_calls).format(n=self.tool_calls)
        return f"content={show_content(self.content_value(), 24)} {calls} finish={self.finish_reason}"


def text_read(shown_text: str) -> str:
    """The round's text a text box shows as ``shown_text``: a scenario's words (shown in the learner's language,
    :func:`~agentloops.i18n.shown`) go back to the scenario's own; text the learner typed stays as typed."""
    return next((said for said in SCENARIO_SAYS if shown(said) == shown_text), shown_text)


def _spec(value: RoundSpec | Mapping[str, Any], number: int) -> RoundSpec:
    if isinstance(value, RoundSpec):
        return value
    if not isinstance(value, Mapping):
        raise ScenarioError(_("round {n}: expected a RoundSpec or a dict; got {kind}").format(
            n=number, kind=type(value).__name__))
    try:
        return RoundSpec.model_validate(value)
    except ValidationError as exc:
        raise ScenarioError(_("round {n}: {problem}").format(n=number, problem=describe_validation_error(exc))) \
            from None


def _custom_tools() -> dict[str, str]:
    normal = load_scenario("normal").tools
    return {"read_file": normal.get("read_file", "(notes.txt)"), "count_lines": normal.get("count_lines", "42"),
            "search": "line 3: add a cap test"}


def build_scenario(rounds: Sequence[RoundSpec | Mapping[str, Any]], *, base: Scenario | None = None,
                   name: str = CUSTOM, title: str | None = None) -> Scenario:
    """Turn rounds described by the explorer's controls into a scenario the loop can run.

    A round whose tool-call count matches the same round of ``base`` keeps
    that round's calls (and a round identical to ``base``'s keeps the whole
    response), so editing a shipped scenario changes only what was edited.
    Other calls are generated: call ``j`` of round ``i`` calls
    ``CUSTOM_TOOLS[j]`` on page ``i``, so every round asks for something new
    — until the script runs out and its last round repeats.

    Args:
        rounds: one :class:`RoundSpec` (or dict of its fields) per round.
        base: the scenario the rounds were copied from, if any.
        name: the scenario name of the result.
        title: its title (default: "custom script").

    Raises:
        ScenarioError: no rounds, or a round with a field out of range (the message names the round).
    """
    specs = [_spec(r, i) for i, r in enumerate(rounds, 1)]
    if not specs:
        raise ScenarioError(_("a script needs at least one round"))
    tools = dict(base.tools) if base is not None else {}
    for tool, result in _custom_tools().items():
        tools.setdefault(tool, result)
    responses = []
    for i, spec in enumerate(specs, 1):
        original = base.responses[i - 1] if base is not None and i <= len(base.responses) else None
        unchanged = original is not None and RoundSpec.from_response(original) == spec
        if original is not None and unchanged and len(original.tool_calls) <= MAX_TOOL_CALLS:
            responses.append(original)
            continue
        if original is not None and len(original.tool_calls) == spec.tool_calls:
            calls = original.tool_calls
        else:
            calls = tuple(
                ToolCall(id=f"call_{i}_{j + 1}", name=CUSTOM_TOOLS[j % len(CUSTOM_TOOLS)],
                         arguments=json.dumps({"path": "notes.txt", "page": i}))
                for j in range(spec.tool_calls)
            )
        raw = None
        if spec.finish_reason == "unknown":
            raw = original.raw_finish_reason if original is not None and original.raw_finish_reason else "OTHER"
        responses.append(Response(content=spec.content_value(), tool_calls=calls, finish_reason=spec.finish_reason,
                                  raw_finish_reason=raw))
    default_title = (_("custom script (edited from {name})").format(name=base.name) if base is not None
                     else _("custom script"))
    return Scenario(
        name=name,
        title=title or default_title,
        teaches=_("A script built round by round; its last round repeats once the script runs out."),
        group="custom",
        prompt=base.prompt if base is not None else DEFAULT_PROMPT,
        tools=tools,
        responses=tuple(responses),
    )
