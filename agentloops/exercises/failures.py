"""Describing what went wrong in a learner's code: one line, their line, and a hint — never a traceback.

Used on both sides of the checker: the worker describes an exception the
learner's code raised (:func:`describe_raised`) as plain facts — the exception's
own line, where in the learner's code, which known mistake it is — and the
notebook's process turns them into the sentence a learner reads
(:func:`raised_text`), in the language in use there. No sentence is written in the worker.
"""

from __future__ import annotations

import linecache
import os
import re
import sysconfig
from pathlib import Path
from types import TracebackType
from typing import Any

from agentloops.i18n import N_, _

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
_LIBRARY_DIRS = tuple(
    {str(Path(p).resolve()) for key in ("stdlib", "platstdlib", "purelib", "platlib")
     if (p := sysconfig.get_paths().get(key))}
)



def is_learner_frame(filename: str) -> bool:
    """True for code the learner wrote: not this package, not the standard library, not an installed package."""
    if filename.startswith("<frozen") or filename.startswith("<string>"):
        return False
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return True  # an IPython cell such as <ipython-input-3-…> has no real path
    if resolved.startswith(_PACKAGE_DIR + os.sep):
        return False
    return not any(resolved.startswith(lib + os.sep) for lib in _LIBRARY_DIRS)


def learner_frame(tb: TracebackType | None) -> dict[str, Any] | None:
    """The innermost frame of learner code as facts: ``{"function", "line", "source"}``, or ``None``."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_learner_frame(code.co_filename):
            found = {"function": code.co_name, "line": tb.tb_lineno,
                     "source": linecache.getline(code.co_filename, tb.tb_lineno).strip()}
        tb = tb.tb_next
    return found


def where_text(where: Any) -> str:
    """``in my_fn, line 4: `return x / 0``` from :func:`learner_frame`'s facts (``""`` when there are none)."""
    if type(where) is not dict:
        return ""
    function, line = str(where.get("function", "?")), str(where.get("line", "?"))
    source = str(where.get("source") or "")
    if source:
        return _("in {function}, line {line}: `{source}`").format(function=function, line=line, source=source)
    return _("in {function}, line {line}").format(function=function, line=line)


def learner_line(tb: TracebackType | None) -> str:
    """``in my_fn, line 4: `return x / 0``` for the innermost frame of learner code, or ``""``."""
    return where_text(learner_frame(tb))


def exception_summary(exc: BaseException) -> str:
    """``ZeroDivisionError: division by zero``: the exception's type and the first line of its own text."""
    text = str(exc).strip().splitlines()
    summary = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return summary[:199] + "…" if len(summary) > 200 else summary


def _summary_and_where(summary: str, where: str) -> str:
    return _("{error} ({where})").format(error=summary, where=where) if where else summary


def describe_exception(exc: BaseException) -> str:
    """``ZeroDivisionError: division by zero (in f, line 3: `1 / 0`)`` — one line, no traceback."""
    return _summary_and_where(exception_summary(exc), learner_line(exc.__traceback__))


def raised_in_learner_code(exc: BaseException) -> bool:
    """True when the traceback passes through code the learner wrote."""
    tb = exc.__traceback__
    while tb is not None:
        if is_learner_frame(tb.tb_frame.f_code.co_filename):
            return True
        tb = tb.tb_next
    return False


def type_name(value: object) -> str:
    """``str ('done')``, ``bool (True)``, ``None``, ``list of 3`` — a value's type as a learner reads it."""
    if value is None:
        return "None"
    name = type(value).__name__
    if isinstance(value, (str, int, float)):
        shown = repr(value)
        return f"{name} ({shown[:40] + '…' if len(shown) > 40 else shown})"
    if isinstance(value, (list, tuple, set, dict)):
        return _("{kind} of {count}").format(kind=name, count=len(value))
    return name


_RAISE_CLASS = re.compile(r"^raise\s+([\w.]+)\s*$")

MISTAKE_HINTS: dict[str, str] = {
    "raised-a-class": N_("you raised the class {name} without its arguments, so Python could not build it; "
                         "give it a message: raise {name}(\"why the run stopped\")"),
    "memory": N_("your code ran out of the memory the checker allows; is something growing without end?"),
    "recursion": N_("a function that calls itself with no end; look for the case that should stop it"),
}
"""The mistakes Python reports confusingly, by key; the worker names the key, the notebook writes the hint."""


def mistake(exc: BaseException) -> tuple[str, str]:
    """(key in :data:`MISTAKE_HINTS`, the class it names) for a mistake Python reports confusingly, else ``("", "")``.

    ``raise al.MaxStepsError`` (the class, without its message) makes Python call the class with no
    arguments; the ``TypeError`` that follows names ``__init__``, which helps no one.
    """
    if isinstance(exc, TypeError) and "__init__()" in str(exc) and "missing" in str(exc):
        tb = exc.__traceback__
        line = ""
        while tb is not None:
            if is_learner_frame(tb.tb_frame.f_code.co_filename):
                line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
            tb = tb.tb_next
        found = _RAISE_CLASS.match(line)
        if found:
            return "raised-a-class", found.group(1)
    if isinstance(exc, MemoryError):
        return "memory", ""
    if isinstance(exc, RecursionError):
        return "recursion", ""
    return "", ""


def hint_text(key: Any, name: Any = "") -> str:
    """The hint for mistake ``key``, in the language in use (``""`` for an unknown key)."""
    template = MISTAKE_HINTS.get(key) if type(key) is str else None
    return _(template).format(name=str(name)) if template else ""


def mistake_hint(exc: BaseException) -> str:
    """A hint for a learner mistake Python reports confusingly, or ``""``."""
    return hint_text(*mistake(exc))


def describe_raised(exc: BaseException) -> dict[str, Any]:
    """An exception as plain facts the worker can send — no sentence: the notebook writes those.

    ``{"$": "raised", "type", "summary" (the exception's own line), "where" (:func:`learner_frame`),
    "learner" (whose code raised it), "hint" (a :data:`MISTAKE_HINTS` key or ``""``), "name"}``.
    """
    key, name = mistake(exc)
    return {"$": "raised", "type": type(exc).__name__, "summary": exception_summary(exc),
            "where": learner_frame(exc.__traceback__),
            "learner": raised_in_learner_code(exc) or isinstance(exc, MemoryError), "hint": key, "name": name}


def raised_summary(raised: dict[str, Any]) -> str:
    """``ZeroDivisionError: … (in f, line 3: …)`` from a :func:`describe_raised` description (notebook side)."""
    summary = raised.get("summary")
    if type(summary) is not str or not summary:
        summary = _("an exception")
    return _summary_and_where(summary, where_text(raised.get("where")))


def raised_text(raised: dict[str, Any]) -> str:
    """``ZeroDivisionError: … (in f, line 3: …)`` plus the hint, from a :func:`describe_raised` description."""
    text = raised_summary(raised)
    hint = hint_text(raised.get("hint"), raised.get("name", ""))
    return _("{error} — {hint}").format(error=text, hint=hint) if hint else text
