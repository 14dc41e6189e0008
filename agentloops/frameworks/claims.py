"""Claims about the frameworks, read from the shipped results, so notebooks never state what a run did not show.

:func:`langgraph_cap_behaviour` reads the prebuilt LangGraph agent's cap sweep
(the endless-repeat scenario at each ``recursion_limit`` of
:data:`~agentloops.frameworks.table.CAP_SWEEP_LIMITS`): at some limits its cap
raises ``GraphRecursionError``, at others ``create_react_agent``'s
``remaining_steps`` rule ends the run with a canned message that the caller
receives as the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentloops.frameworks.script import Outcome
from agentloops.frameworks.table import (
    CAP_SWEEP_FRAMEWORK,
    CAP_SWEEP_SCENARIO,
    FrameworksError,
    FrameworkTable,
    shipped_table,
)
from agentloops.i18n import _


@dataclass(frozen=True, slots=True)
class CapBehaviour:
    """What the prebuilt LangGraph agent's cap does to a run that would never end.

    Attributes:
        version: the LangGraph version measured.
        raises_at: the ``recursion_limit`` values at which the run raised.
        error: the exception's type there.
        answers_at: the values at which the run returned a canned answer instead.
        answer: that answer's text.
        default: the run at the default cap (``None`` when not in the table).
    """

    version: str
    raises_at: tuple[int, ...]
    error: str
    answers_at: tuple[int, ...]
    answer: str
    default: Outcome | None

    def sentence(self) -> str:
        """The behaviour in one sentence, in the language in use."""
        text = _("LangGraph {version}'s prebuilt create_react_agent, on a model that repeats one tool call forever: "
                 "at recursion_limit {raises} it raises {error}, but at {answers} it returns {answer} as if it were "
                 "the answer.").format(version=self.version, raises=_join(self.raises_at), error=self.error,
                                       answers=_join(self.answers_at), answer=self.answer)
        if self.default is not None and self.default.got == "exception":
            text += " " + _("At its default limit it raises after {n} model calls.").format(
                n=self.default.model_calls)
        return text

    def __str__(self) -> str:
        return self.sentence()


def _join(values: tuple[int, ...]) -> str:
    return ", ".join(str(v) for v in values)


def langgraph_cap_behaviour(table: FrameworkTable | None = None) -> CapBehaviour:
    """The prebuilt LangGraph agent's cap behaviour, read from ``table`` (default: the shipped results).

    Raises:
        FrameworksError: the table holds no cap sweep.
    """
    table = table if table is not None else shipped_table()
    if not table.cap_sweep:
        raise FrameworksError(_("the framework results hold no cap sweep; run agentloops frameworks --recompute "
                                "--full --save"))
    raised = [o for o in table.cap_sweep if o.got == "exception"]
    answered = [o for o in table.cap_sweep if o.got != "exception"]
    return CapBehaviour(
        version=table.cap_sweep[0].version,
        raises_at=tuple(_limit(o) for o in raised),
        error=raised[0].detail.split(":")[0] if raised else "",
        answers_at=tuple(_limit(o) for o in answered),
        answer=answered[0].detail if answered else "",
        default=table.get(CAP_SWEEP_FRAMEWORK, CAP_SWEEP_SCENARIO),
    )


def _limit(outcome: Outcome) -> int:
    return int(outcome.limit.rsplit("=", 1)[1])


__all__ = ["CapBehaviour", "langgraph_cap_behaviour"]
