"""Every exception agentloops raises, in two families; this module holds the first and the codes of the second.

    AgentLoopsError
    ├── UsageError                   you called the package wrongly; fix the call
    │   ├── ScenarioError            a scenario file or object is malformed (ValueError)
    │   │   └── ScenarioNotFound     no shipped scenario or file by that name (LookupError)
    │   │   └── providers.RawBodyError   a provider's raw body lacks a field its API documents
    │   └── CriterionError           unknown criterion, or a criterion returned nonsense (ValueError)
    └── RunError                     the loop ran and ended badly; carries the partial record
                                     (:mod:`agentloops.run_errors`: one subclass per :data:`ErrorCode`)

Other modules add their own ``UsageError`` subclasses for their own inputs (the
controller's, the lab's, ``providers.UnknownFormatError``…); every one of them is
still a ``UsageError``.

Keeping the families apart lets a caller catch "the run ended badly" without
also swallowing its own programming mistakes. The run errors live beside the
record they carry, so this module, which everything imports, imports nothing of the package.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import ValidationError

ErrorCode = Literal[
    "truncated", "content_filter", "refusal", "malformed_tool_call", "provider_error", "unknown_stop", "max_steps",
    "model_error",
]
"""Short, stable codes for the ways a run can end badly (the ``error`` field of a record)."""

ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)
"""Every :data:`ErrorCode`, in this order (each has its exception in :data:`agentloops.run_errors.ERROR_CLASSES`)."""


class AgentLoopsError(Exception):
    """Root of every exception raised by agentloops."""


class UsageError(AgentLoopsError):
    """The package was called wrongly; the message says how to call it."""


class ScenarioError(UsageError, ValueError):
    """A scenario file or object does not have the expected shape."""


class ScenarioNotFound(ScenarioError, LookupError):
    """No shipped scenario has that name and no file exists at that path."""


class CriterionError(UsageError, ValueError):
    """A criterion name is unknown, or a criterion returned something other than a decision."""




def N_(message: str) -> str:
    """Mark ``message`` for the catalog, as :func:`agentloops.i18n.N_` does (that module imports this one); the
    command line reads the English message back in the language in use."""
    return message


def describe_validation_error(exc: ValidationError) -> str:
    """The first problem of a pydantic error as ``field.path: expected …; got …``.

    pydantic's own report spans several lines per problem; a learner needs one
    line that names the field and what it should have been.
    """
    problems = exc.errors()
    # a list whose items failed also reports "too short": only the items' problems matter
    problems = [p for p in problems if p["type"] != "too_short"] or problems
    first = problems[0]
    where = "".join(
        f"[{part}]" if isinstance(part, int) else f".{_escaped(str(part))}" for part in first["loc"]
    ).lstrip(".") or "(top level)"
    kind, message, value = first["type"], first["msg"], first.get("input")
    if kind == "missing":
        text = N_("missing; this field is required")
    elif kind in ("extra_forbidden", "unexpected_keyword_argument"):  # (a model's; a dataclass's)
        text = N_("is not a known field (check the spelling)")
    elif kind == "too_short":
        text = f"expected at least {first.get('ctx', {}).get('min_length', 1)} item(s); got {len(value)}"
    elif kind in ("list_type", "tuple_type"):
        text = N_("expected a list; got {kind}").format(kind=type(value).__name__)
    elif kind in ("dict_type", "model_type", "model_attributes_type"):
        text = N_("expected an object; got {kind}").format(kind=type(value).__name__)
    else:
        text = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        text = text.replace("Input should be", "expected", 1)
        if kind != "value_error" and not isinstance(value, (dict, list)):
            shown = repr(value)
            text += f"; got {shown[:60] + '…' if len(shown) > 60 else shown}"
    if where == "(top level)" and kind == "value_error":
        return text + _more(problems)
    return f"{where}: {text}{_more(problems)}"


def _escaped(name: str) -> str:
    """A field name from the user's file with its line breaks and control characters escaped (``a\\nb``), so the
    error stays one line wherever it is shown, not only where the command line cleans it."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in name)


def _more(problems: list[Any]) -> str:
    extra = len(problems) - 1
    return f" (and {extra} more problem{'s' if extra > 1 else ''})" if extra else ""
