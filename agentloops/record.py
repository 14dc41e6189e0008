"""What a run leaves behind: one record per model call and a summary of the run.

Records are plain frozen dataclasses, cheap to build on every run. They turn
into JSON (:meth:`RunRecord.to_dict`), pandas (:meth:`RunRecord.to_frame`) and
readable text or HTML when displayed in a notebook.

The record's fields stay English (they are data: compared, written to JSON,
diffed); what a learner reads — ``print(record)``, :meth:`RunRecord.headline`,
the HTML table, :meth:`Round.shown_row` — is in the language in use.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from agentloops.criteria import Continue, Decision, Finish
from agentloops.errors import ErrorCode
from agentloops.i18n import N_, Phrase, _, language, ngettext, shown
from agentloops.messages import Message
from agentloops.response import ABNORMAL_FINISH, Response, quote_content, show_content
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
    "answer": N_("answer"),
    "empty_answer": N_("empty answer reported as success"),
    "premature_answer": N_("premature answer (tool results never seen)"),
    "abnormal_answer": N_("answer from an abnormal round"),
    "hit_cap": N_("hit the cap, returned last text"),
    "raised": N_("raised"),
}
"""How each outcome reads, in English (shown through ``_()``: :meth:`RunRecord.ending`)."""


ROW_KEYS: tuple[str, ...] = (  # columns of the step-by-step table
    "step", "messages_sent", "new_since_last_call", "context_tokens", "content", "tool_calls",
    "finish_reason", "tools_run", "decision", "why", "repeated",
)

ROW_TITLES: dict[str, str] = {
    "step": N_("call"), "messages_sent": N_("messages sent"), "new_since_last_call": N_("new since last call"),
    "context_tokens": N_("context tokens"), "content": "content", "tool_calls": N_("tool calls"),
    "finish_reason": "finish_reason", "tools_run": N_("tools run"), "decision": N_("decision"), "why": N_("why"),
    "repeated": N_("repeated"),
}
"""Row key → the column a learner reads (English here, shown through ``_()``; field names stay code)."""


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
            quote_content(response.content),
            ", ".join(c.name for c in response.tool_calls),
            response.finish_reason,
            ", ".join(self.tools_run),
            decision_kind(self.decision),
            self.decision.reason,
            self.repeated,
        )
        return dict(zip(ROW_KEYS, values, strict=True))

    def shown_row(self) -> dict[str, Any]:
        """:meth:`to_row` as a learner reads it: the content, the reason and what was new in the language in use."""
        row = self.to_row()
        return {**row, "content": show_content(self.response.content), "why": shown(row["why"]),
                "new_since_last_call": shown(row["new_since_last_call"]), "decision": shown_decision(self.decision)}


_MODEL_RAISED = re.compile(r"call (\d+): the model raised (\w+): (.*)", re.S)
"""How the loop words a model call that raised (:mod:`agentloops.loop`)."""

_OWN_REPLY = Phrase(N_("its own last reply"))


def describe_messages(added: Sequence[Message]) -> str:
    """Messages in a few words: ``its own last reply, result of read_file`` (a :class:`Phrase`: English as data)."""
    text: Phrase | None = None
    for message in added:
        if message.role == "tool":
            part = Phrase(N_("result of {name}"), name=message.name)
        elif message.role == "assistant":
            part = _OWN_REPLY
        else:
            part = Phrase(N_("{role} message"), role=message.role)
        text = part if text is None else Phrase(N_("{first}, {second}"), first=text, second=part)
    return text if text is not None else ""


def decision_kind(decision: Decision) -> str:
    """``continue``, ``finish`` or ``abort``."""
    if isinstance(decision, Continue):
        return "continue"
    if isinstance(decision, Finish):
        return "finish"
    return "abort"


DECISION_WORDS: dict[str, str] = {"continue": N_("Continue"), "finish": N_("Finish"), "abort": N_("Abort")}
"""Each decision kind's message id: the decision's class name (``finish`` alone already heads a column)."""


def shown_decision(decision: Decision) -> str:
    """:func:`decision_kind` as a learner reads it: the value itself in English, a word in other languages."""
    kind = decision_kind(decision)
    return kind if language() == "en" else _(DECISION_WORDS[kind])


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
        from agentloops.frames import shown_frame

        return shown_frame([r.to_row() for r in self.rounds], [r.shown_row() for r in self.rounds], "step")

    def headline(self) -> str:
        """One line in the language in use: steps, tools, how it ended."""
        steps = ngettext("{n} step", "{n} steps", self.steps).format(n=self.steps)
        if self.hit_cap:
            steps = _("{steps} (cap)").format(steps=steps)
        return _("{steps}  tools [{tools}]  {ending}").format(steps=steps, tools=", ".join(self.tools_executed),
                                                            ending=self.ending())

    def ending(self) -> str:
        """How the run ended, in words: ``raised truncated at call 1``, or the outcome's label."""
        if self.error:  # a model that raised left no round: the call that failed is the one after the last round
            call = self.steps + 1 if self.error == "model_error" else self.steps
            return _("raised {error} at call {step}").format(error=self.error, step=call)
        return _(OUTCOME_LABELS[self.outcome])

    def shown_error(self) -> str | None:
        """:attr:`error_message` as a learner reads it: in the language in use, rebuilt from the run itself.

        The loop words the message as ``call N: <the abort's reason>`` or ``reached max_steps=N without a
        final answer``; any other message (a model that raised, a record read back from JSON) is shown as it is.
        """
        message = self.error_message
        if message is None:
            return None
        last = self.rounds[-1].decision if self.rounds else None
        if last is not None and not isinstance(last, (Continue, Finish)) and \
                message == f"call {self.steps}: {last.reason}":
            return _("call {n}: {base}").format(n=self.steps, base=shown(last.reason))
        raised = _MODEL_RAISED.fullmatch(message)
        if raised:
            return _("call {n}: the model raised {kind}: {detail}").format(n=raised[1], kind=raised[2],
                                                                            detail=raised[3])
        if message == f"reached max_steps={self.max_steps} without a final answer":
            return _("reached max_steps={n} without a final answer").format(n=self.max_steps)
        return message

    def __str__(self) -> str:
        head = _("{scenario} × {criterion} (max_steps={cap}): {headline}").format(
            scenario=self.scenario, criterion=self.criterion, cap=self.max_steps, headline=self.headline())
        yes = _("yes")
        rows = [
            [r.step, len(r.request), r.context_tokens, show_content(r.response.content, 28),
             len(r.response.tool_calls), r.response.finish_reason, ", ".join(r.tools_run),
             shown_decision(r.decision), yes if r.repeated else ""]
            for r in self.rounds
        ]
        table = text_table([_(h) for h in _TEXT_HEADERS], rows)
        tail = _("answer: {answer}   wasted calls: {wasted}   wasted tool runs: {unseen}   "
                 "billed prompt tokens: {billed}").format(answer=show_content(self.answer), wasted=self.wasted_calls,
                                                          unseen=self.wasted_tool_runs,
                                                          billed=self.billed_prompt_tokens)
        if self.error_message:
            tail += "\n" + _("error: {error}: {message}").format(error=self.error, message=self.shown_error())
        return f"{head}\n{table}\n{tail}"

    def __repr__(self) -> str:
        return f"<RunRecord {self.scenario} × {self.criterion}: {self.headline()}>"

    def _repr_html_(self) -> str:
        # English heads the columns with the row keys, as to_dict() names them; other languages with their titles
        header = "".join(f"<th>{html.escape(key if language() == 'en' else _(ROW_TITLES[key]))}</th>"
                         for key in ROW_KEYS)
        body = "".join(
            ("<tr style='background:#fde9c9'>" if r.repeated else "<tr>")
            + "".join(f"<td>{html.escape(str(value))}</td>" for value in r.shown_row().values())
            + "</tr>"
            for r in self.rounds
        )
        error = (" · " + _("error: {error}: {message}").format(error=self.error, message=self.shown_error())
                 if self.error_message else "")
        tail = _("answer: {answer} · wasted calls: {wasted} · wasted tool runs: {unseen} · billed prompt tokens: "
                 "{billed}").format(answer=html.escape(show_content(self.answer)), wasted=self.wasted_calls,
                                    unseen=self.wasted_tool_runs, billed=self.billed_prompt_tokens)
        return (
            f"<div><b>{html.escape(self.scenario)} × {html.escape(self.criterion)}</b> — "
            f"{html.escape(self.headline())}"
            f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"
            f"<small>{tail}{html.escape(error)}</small></div>"
        )


_TEXT_HEADERS: tuple[str, ...] = (
    N_("step"), N_("sent"), N_("tokens"), "content", N_("calls"), N_("finish"), N_("ran"), N_("decision"),
    N_("repeat"),
)
"""The columns of ``print(record)`` (English here, shown through ``_()``; ``content`` is the field's name)."""




def classify(answer: str | None, last: Response, unseen_tool_runs: int) -> Outcome:
    """Judge a returned answer by what happened, not by what the criterion claimed."""
    if unseen_tool_runs:
        return "premature_answer"
    if not answer:
        return "empty_answer"
    if last.finish_reason in ABNORMAL_FINISH:
        return "abnormal_answer"
    return "answer"
