"""Describing what went wrong in a learner's code: one line, their line, and a hint — never a traceback.

Used on both sides of the checker: the worker describes an exception the
learner's code raised (:func:`describe_raised`), and the notebook's process
turns that description into the verdict a learner reads.
"""

from __future__ import annotations

import linecache
import os
import re
import sysconfig
from pathlib import Path
from types import TracebackType
from typing import Any

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


def learner_line(tb: TracebackType | None) -> str:
    """``in my_fn, line 4: `return x / 0``` for the innermost frame of learner code, or ``""``."""
    found = ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_learner_frame(code.co_filename):
            text = linecache.getline(code.co_filename, tb.tb_lineno).strip()
            found = f"in {code.co_name}, line {tb.tb_lineno}" + (f": `{text}`" if text else "")
        tb = tb.tb_next
    return found


def describe_exception(exc: BaseException) -> str:
    """``ZeroDivisionError: division by zero (in f, line 3: `1 / 0`)`` — one line, no traceback."""
    text = str(exc).strip().splitlines()
    summary = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    if len(summary) > 200:
        summary = summary[:199] + "…"
    where = learner_line(exc.__traceback__)
    return f"{summary} ({where})" if where else summary


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
        return f"{name} of {len(value)}"
    return name


_RAISE_CLASS = re.compile(r"^raise\s+([\w.]+)\s*$")


def mistake_hint(exc: BaseException) -> str:
    """A hint for a learner mistake Python reports confusingly, or ``""``.

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
            name = found.group(1)
            return (f"you raised the class {name} without its arguments, so Python could not build it; "
                    f"give it a message: raise {name}(\"why the run stopped\")")
    if isinstance(exc, MemoryError):
        return "your code ran out of the memory the checker allows; is something growing without end?"
    if isinstance(exc, RecursionError):
        return "a function that calls itself with no end; look for the case that should stop it"
    return ""


def describe_raised(exc: BaseException) -> dict[str, Any]:
    """An exception as plain data the worker can send: type name, one line, whose code raised it, a hint."""
    return {"$": "raised", "type": type(exc).__name__, "text": describe_exception(exc),
            "learner": raised_in_learner_code(exc) or isinstance(exc, MemoryError), "hint": mistake_hint(exc)}


def raised_text(raised: dict[str, Any]) -> str:
    """``ZeroDivisionError: … (in f, line 3: …)`` plus the hint, from a :func:`describe_raised` description."""
    text = str(raised.get("text", "an exception"))
    hint = str(raised.get("hint") or "")
    return f"{text} — {hint}" if hint else text
