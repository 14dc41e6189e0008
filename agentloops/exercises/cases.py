"""One case of a check, split where the trust boundary is: the learner's half runs their code and encodes what
came out; the judge's half turns that JSON into a verdict and never calls learner code. Also the results a
check gives a case it could not judge (stopped, skipped, tampered with), in both isolation modes of
:mod:`~agentloops.exercises.checking`.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentloops.exercises import outputs
from agentloops.exercises.failures import describe_raised, raised_summary, raised_text
from agentloops.exercises.outputs import JSON, WrongValue
from agentloops.exercises.results import CaseResult
from agentloops.i18n import _

MAX_TIMEOUTS = 2
"""Timed-out cases after which the rest are skipped."""

Verdict = tuple[bool, str]
"""What a judge returns: passed or not, and the message the learner reads."""


class CaseTimeout(BaseException):
    """Raised inside in-process learner code at the deadline.

    A ``BaseException`` so that a learner's ``except Exception`` cannot swallow it.
    """


class LearnerError(Exception):
    """Raised by a judge (or a call) when the learner's code misbehaved; the message is the verdict."""


@dataclass(frozen=True, slots=True)
class Case:
    """One named check, split where the trust boundary is.

    Attributes:
        name: how the learner sees the case (a scenario name, a situation…).
        call: runs the learner's code and returns its raw outputs (in the worker).
        judge: the decoded outputs → the verdict (in the notebook's process; never calls learner code).
    """

    name: str
    call: Callable[[], Any]
    judge: Callable[[JSON], Verdict]





def call_case(case: Case) -> JSON:
    """Run ``case.call`` and encode what came out: the outputs, an exception, or an exit (worker side)."""
    try:
        return {"$": "value", "value": outputs.encode(case.call())}
    except CaseTimeout:
        raise
    except SystemExit as exc:
        return {"$": "exit", "code": outputs.encode(exc.code)}
    except LearnerError as exc:
        return {"$": "learner", "text": str(exc)}
    except Exception as exc:
        return describe_raised(exc)


def judge_case(case: Case, output: JSON) -> CaseResult:
    """Turn one encoded output into a verdict (notebook side). A failure of the judge itself is ours."""
    kind = outputs.tag(output)
    if kind == "exit":
        return CaseResult(case.name, "failed", _("your code called sys.exit({code}); return a value instead").format(
            code=outputs.show_short(output.get("code"))))
    if kind == "learner":
        return CaseResult(case.name, "failed", str(output.get("text")))
    if kind == "raised":
        if output.get("learner"):
            return CaseResult(case.name, "failed", _("your code raised {error}").format(error=raised_text(output)))
        return checker_failed(case.name, raised_summary(output))
    if kind != "value":
        return tampered(case.name)
    try:
        passed, message = case.judge(output.get("value"))
    except (LearnerError, WrongValue) as exc:
        return CaseResult(case.name, "failed", str(exc))
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return checker_failed(case.name, detail)
    return CaseResult(case.name, "passed" if passed else "failed", message)


def checker_failed(name: str, detail: str) -> CaseResult:
    return CaseResult(name, "error", _("the checker itself failed ({detail}); this is not your fault — "
                                       "please report it").format(detail=detail))


def tampered(name: str) -> CaseResult:
    return CaseResult(name, "failed", _("the checker's worker sent something it never sends (malformed, too large "
                                        "or out of order) — does your code write to the checker's pipe? Return "
                                        "your answer instead"))


def timeout_result(name: str, limit: float) -> CaseResult:
    return CaseResult(name, "timeout", _("did not finish within {limit} s and was stopped — an infinite loop? "
                                         "Look for a loop whose condition never changes").format(limit=f"{limit:g}"))


def skipped(cases: Sequence[Case], start: int, why: str) -> list[CaseResult]:
    return [CaseResult(c.name, "skipped", _("not run: {why}").format(why=why)) for c in cases[start:]]


def too_many_timeouts() -> str:
    return _("{count} cases already ran out of time; fix the infinite loop first").format(count=MAX_TIMEOUTS)


def out_of_total(total: float) -> str:
    return _("the whole check ran out of its {total} s; make each case faster").format(total=f"{total:g}")


def guarded_call(function: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's function; an exception it raises becomes an output its judge can put in context."""
    try:
        return function(*args)
    except Exception as exc:
        return outputs.Encoded(describe_raised(exc))
