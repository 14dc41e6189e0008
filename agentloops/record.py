"""What a run leaves behind: one record per model call and a summary of the run.

Records are plain frozen dataclasses, cheap to build on every run. They turn
into JSON (:meth:`RunRecord.to_dict`), pandas (:meth:`RunRecord.to_frame`) and
readable text or HTML when displayed in a notebook.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from agentloops.criteria import Continue, Decision, Finish
from agentloops.errors import ErrorCode
from agentloops.messages import Message
from agentloops.response import ABNORMAL_FINISH, Response, show_content
from agentloops.tables import text_table

if TYPE_CHECKING:
    import pandas as pd

Outcome = Literal["answer", "empty_answer", "premature_answer", "abnormal_answer", "hit_cap", "raised"]
"""How a run ended, judged from what happened rather than from what the loop claimed.

- ``answer``: the loop returned text, and the model had seen every tool result.
- ``empty_answer``: the loop returned ``None`` or ``""`` as if it were an answer.
- ``premature_answer``: the loop returned while tool results it ran were never sent to the model.
- ``abnormal_answer``: the loop returned text from a round that ended abnormally (cut off, filtered…).
- ``hit_cap``: the loop ran out of steps and handed back whatever text it had.
- ``raised``: the loop raised; ``error`` says why.
"""

OUTCOME_LABELS: dict[Outcome, str] = {
    "answer": "answer",
    "empty_answer": "empty answer reported as success",
    "premature_answer": "premature answer (tool results never seen)",
    "abnormal_answer": "answer from an abnormal round",
    "hit_cap": "hit the cap, returned last text",
    "raised": "raised",
}


ROW_KEYS: tuple[str, ...] = (  # columns of the step-by-step table
    "step", "messages_sent", "new_since_last_call", "context_tokens", "content", "tool_calls",
    "finish_reason", "tools_run", "decision", "why", "repeated",
)


class Round(NamedTuple):
    """One model call: what was sent, what came back, what ran, what was decided.

    An immutable named tuple: the loop builds one per call, and a tuple is
    several times cheaper to build than a frozen dataclass.

    Attributes:
        step: 1-based call number.
        request: the messages sent on this call: an immutable sequence that compares equal to
            their tuple (the loop records a :class:`~agentloops.messages.TranscriptView`, no copy).
        new_from: index in ``request`` of the first message the previous call did not send.
        context_tokens: estimated prompt tokens of ``request``.
        response: what the model returned.
        tools_run: names of tools executed after this response, in order.
        rejected_calls: calls not executed: arguments that did not parse, or an unknown tool.
        decision: what the criterion said.
        repeated: the response equals the previous one and nothing new was sent in between.
    """

    step: int
    request: Sequence[Message]
    new_from: int
    context_tokens: int
    response: Response
    tools_run: tuple[str, ...]
    rejected_calls: tuple[str, ...]
    decision: Decision
    repeated: bool

    @property
    def added(self) -> str:
        """What this call sends that the previous one did not, in words: the first clue to a spin."""
        return describe_messages(self.request[self.new_from :])

    def to_row(self) -> dict[str, Any]:
        """One row of the step-by-step table."""
        response = self.response
        values = (
            self.step,
            len(self.request),
            self.added,
            self.context_tokens,
            show_content(response.content),
            ", ".join(c.name for c in response.tool_calls),
            response.finish_reason,
            ", ".join(self.tools_run),
            decision_kind(self.decision),
            self.decision.reason,
            self.repeated,
        )
        return dict(zip(ROW_KEYS, values, strict=True))


def describe_messages(added: Sequence[Message]) -> str:
    """Messages in a few words: ``its own last reply, result of read_file``."""
    parts = []
    for message in added:
        if message.role == "tool":
            parts.append(f"result of {message.name}")
        elif message.role == "assistant":
            parts.append("its own last reply")
        else:
            parts.append(f"{message.role} message")
    return ", ".join(parts)


def decision_kind(decision: Decision) -> str:
    """``continue``, ``finish`` or ``abort``."""
    if isinstance(decision, Continue):
        return "continue"
    if isinstance(decision, Finish):
        return "finish"
    return "abort"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The measured result of one run of the loop.

    Attributes:
        scenario: scenario name (``"custom"`` for a model you built yourself).
        criterion: criterion name.
        max_steps: the cap the loop ran with.
        rounds: one :class:`Round` per model call.
        hit_cap: the loop used every step without the criterion finishing or aborting.
        outcome: how the run ended (see :data:`Outcome`).
        error: ``None``, or the error code when the loop raised.
        error_message: the error's message, for people.
        answer: the text the loop returned (``None`` when it raised).
        wasted_tool_runs: tool results the model never saw.
        billed_completion_tokens: output tokens (reported by the response, else estimated).
    """

    scenario: str
    criterion: str
    max_steps: int
    rounds: tuple[Round, ...]
    hit_cap: bool
    outcome: Outcome
    error: ErrorCode | None
    error_message: str | None
    answer: str | None
    wasted_tool_runs: int
    billed_completion_tokens: int

    @property
    def steps(self) -> int:
        """Model calls made."""
        return len(self.rounds)

    @property
    def tools_executed(self) -> tuple[str, ...]:
        """Names of executed tools, in order."""
        return tuple(name for r in self.rounds for name in r.tools_run)

    @property
    def wasted_calls(self) -> int:
        """Calls whose response repeated the previous one with nothing new sent in between."""
        return sum(r.repeated for r in self.rounds)

    @property
    def context_tokens(self) -> tuple[int, ...]:
        """Estimated prompt tokens of each call."""
        return tuple(r.context_tokens for r in self.rounds)

    @property
    def context_messages(self) -> tuple[int, ...]:
        """Messages sent on each call."""
        return tuple(len(r.request) for r in self.rounds)

    @property
    def billed_prompt_tokens(self) -> int:
        """Prompt tokens paid over the run: every call resends the whole context.

        A round's own ``usage.prompt_tokens`` is used where the provider reported
        it (a recorded real run); the estimate ``context_tokens`` elsewhere.
        """
        return sum(
            r.response.usage.prompt_tokens
            if r.response.usage is not None and r.response.usage.prompt_tokens is not None
            else r.context_tokens
            for r in self.rounds
        )

    @property
    def succeeded(self) -> bool:
        """True only for a real answer: not empty, not premature, not cut off, not raised."""
        return self.outcome == "answer"

    def to_dict(self, rounds: bool = True) -> dict[str, Any]:
        """The JSON contract of ``agentloops run --json``."""
        data: dict[str, Any] = {
            "scenario": self.scenario,
            "criterion": self.criterion,
            "max_steps": self.max_steps,
            "steps": self.steps,
            "hit_cap": self.hit_cap,
            "tools_executed": list(self.tools_executed),
            "outcome": self.outcome,
            "error": self.error,
            "error_message": self.error_message,
            "answer": self.answer,
            "wasted_calls": self.wasted_calls,
            "wasted_tool_runs": self.wasted_tool_runs,
            "context_messages": list(self.context_messages),
            "context_tokens": list(self.context_tokens),
            "billed_prompt_tokens": self.billed_prompt_tokens,
            "billed_completion_tokens": self.billed_completion_tokens,
        }
        if rounds:
            data["rounds"] = [r.to_row() for r in self.rounds]
        return data

    def to_frame(self) -> pd.DataFrame:
        """One row per model call (imports pandas on first use)."""
        import pandas as pd

        return pd.DataFrame([r.to_row() for r in self.rounds]).set_index("step")

    def headline(self) -> str:
        """One line: steps, tools, outcome."""
        cap = " (cap)" if self.hit_cap else ""
        tools = ", ".join(self.tools_executed)
        ending = OUTCOME_LABELS[self.outcome]
        if self.error:
            ending = f"raised {self.error} at call {self.steps}"
        return f"{self.steps} step{'' if self.steps == 1 else 's'}{cap}  tools [{tools}]  {ending}"

    def __str__(self) -> str:
        head = f"{self.scenario} × {self.criterion} (max_steps={self.max_steps}): {self.headline()}"
        rows = [
            [r.step, len(r.request), r.context_tokens, show_content(r.response.content, 28),
             len(r.response.tool_calls), r.response.finish_reason, ", ".join(r.tools_run),
             decision_kind(r.decision), "yes" if r.repeated else ""]
            for r in self.rounds
        ]
        table = text_table(
            ["step", "sent", "tokens", "content", "calls", "finish", "ran", "decision", "repeat"], rows
        )
        tail = (
            f"answer: {show_content(self.answer)}   wasted calls: {self.wasted_calls}   "
            f"wasted tool runs: {self.wasted_tool_runs}   billed prompt tokens: {self.billed_prompt_tokens}"
        )
        if self.error_message:
            tail += f"\nerror: {self.error}: {self.error_message}"
        return f"{head}\n{table}\n{tail}"

    def __repr__(self) -> str:
        return f"<RunRecord {self.scenario} × {self.criterion}: {self.headline()}>"

    def _repr_html_(self) -> str:
        header = "".join(f"<th>{html.escape(key)}</th>" for key in ROW_KEYS)
        body = "".join(
            ("<tr style='background:#fde9c9'>" if r.repeated else "<tr>")
            + "".join(f"<td>{html.escape(str(value))}</td>" for value in r.to_row().values())
            + "</tr>"
            for r in self.rounds
        )
        error = f" · error: {self.error}: {self.error_message}" if self.error_message else ""
        return (
            f"<div><b>{html.escape(self.scenario)} × {html.escape(self.criterion)}</b> — "
            f"{html.escape(self.headline())}"
            f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"
            f"<small>answer: {html.escape(show_content(self.answer))} · wasted calls: {self.wasted_calls}"
            f" · wasted tool runs: {self.wasted_tool_runs}"
            f" · billed prompt tokens: {self.billed_prompt_tokens}{html.escape(error)}</small></div>"
        )




def classify(answer: str | None, last: Response, unseen_tool_runs: int) -> Outcome:
    """Judge a returned answer by what happened, not by what the criterion claimed."""
    if unseen_tool_runs:
        return "premature_answer"
    if not answer:
        return "empty_answer"
    if last.finish_reason in ABNORMAL_FINISH:
        return "abnormal_answer"
    return "answer"
