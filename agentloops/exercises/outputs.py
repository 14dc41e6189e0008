"""A learner function's raw outputs as JSON, with exact types — the only thing a worker sends back.

The checker's worker process runs learner code, so nothing it sends can be
trusted to *judge*: it sends what the learner's function returned, and the
notebook's process compares that with the expected values itself. To keep
that comparison honest the encoding is strict:

- only the exact built-in types pass as themselves: ``type(v) is int``, not
  ``isinstance`` — a subclass of ``int``, ``str`` or ``bool`` (or an object
  whose ``__eq__`` always answers ``True``) arrives as
  ``{"$": "unsupported", …}`` and can never equal an expected value;
- the package's own small values (decisions, responses, retry setups) travel
  as tagged objects and are rebuilt and re-validated on the notebook's side;
- an exception the learner's code raised travels as a description (its type's
  name, one line of text, whether the learner's code raised it, a hint).

JSON, never pickle: un-pickling would run code the worker chose inside the
notebook's kernel.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from agentloops.criteria import Abort, Continue, Decision, Finish
from agentloops.errors import ERROR_CODES
from agentloops.exercises.failures import raised_summary
from agentloops.i18n import N_, _
from agentloops.response import Response
from agentloops.stop_cases import Setup

JSON = Any
"""A value as :func:`json.loads` returns it."""

MAX_DEPTH = 20
"""Nesting deeper than this is reported as unsupported rather than followed."""

_SCALARS = (type(None), bool, int, float, str)
_BUILTIN_BASES = (bool, int, float, str, list, tuple, dict, set)
_TOO_DEEP = N_("nested too deeply")


TAGGED: dict[str, type] = {"Continue": Continue, "Finish": Finish, "Abort": Abort, "Setup": Setup}
"""The package's dataclass values that may cross the pipe, by tag."""


@dataclass(frozen=True, slots=True)
class Encoded:
    """Outputs a case's call has already encoded piece by piece (a run's decisions, say): sent as they are."""

    data: JSON


def encode(value: Any, depth: int = 0) -> JSON:
    """``value`` as JSON-ready data with exact types (runs in the worker, on learner values)."""
    kind = type(value)
    if kind is Encoded:
        return value.data
    if kind in _SCALARS:
        return value
    if depth > MAX_DEPTH:
        return {"$": "unsupported", "type": kind.__name__, "base": "", "why": _TOO_DEEP}  # an id: see show()
    if kind is list or kind is tuple:
        return {"$": kind.__name__, "items": [encode(v, depth + 1) for v in value]}
    if kind is dict and all(type(k) is str for k in value):
        return {"$": "dict", "items": {k: encode(v, depth + 1) for k, v in value.items()}}
    if kind is Response:
        return {"$": "Response", "data": value.model_dump(mode="json")}
    for tag_name, cls in TAGGED.items():
        if kind is cls and is_dataclass(value):
            return {"$": tag_name, "fields": {f.name: encode(getattr(value, f.name), depth + 1) for f in fields(value)}}
    base = next((b.__name__ for b in _BUILTIN_BASES if isinstance(value, b)), "")
    return {"$": "unsupported", "type": kind.__name__, "base": base, "why": ""}


def dumps(value: Any) -> str:
    """Encode and serialise; what the worker writes to the pipe."""
    return json.dumps(value, ensure_ascii=False, allow_nan=True)


def roundtrip(value: JSON) -> JSON:
    """``value`` as the notebook's side will read it (what a worker checks its own outputs with)."""
    return json.loads(dumps(value))


def tag(value: JSON) -> str:
    """The tag of an encoded value: ``int``, ``str``, ``Finish``, ``unsupported``…"""
    if isinstance(value, dict):
        return str(value.get("$", "?"))
    return "None" if value is None else type(value).__name__


def show(value: JSON) -> str:
    """An encoded value as a learner reads it: ``int (3)``, ``MyInt (a subclass of int)``, ``Finish(42)``."""
    kind = tag(value)
    if value is None:
        return "None"
    if not isinstance(value, dict):
        text = repr(value)
        return f"{kind} ({text[:40] + '…' if len(text) > 40 else text})"
    if kind == "unsupported":
        base = value.get("base") or ""
        if value.get("why"):
            why = _(_TOO_DEEP) if value["why"] == _TOO_DEEP else str(value["why"])
            return f"{value.get('type')} ({why})"
        return (_("{kind} (a subclass of {base})").format(kind=value.get("type"), base=base) if base
                else str(value.get("type")))
    if kind in ("list", "tuple", "dict"):
        return _("{kind} of {count}").format(kind=kind, count=len(value.get("items") or ()))
    if kind in TAGGED:
        values = list((value.get("fields") or {}).values())
        if kind in ("Finish", "Abort"):
            values = values[:1]  # the answer, the code: what a learner recognises
        elif kind == "Continue":
            values = []
        return f"{kind}({', '.join(show_short(v) for v in values)})"
    if kind == "raised":
        return _("an exception ({error})").format(error=raised_summary(value))
    return kind


def show_short(value: JSON) -> str:
    """A field inside a tagged value: ``42``, ``'text'``, ``None``."""
    if value is None or not isinstance(value, dict):
        text = repr(value)
        return text[:40] + "…" if len(text) > 40 else text
    return show(value)


class WrongValue(Exception):
    """An encoded value is not what the exercise asks for; the message says what was expected."""


def exact(value: JSON, kind: type, expected: str) -> Any:
    """``value`` itself when it is exactly of ``kind`` (``bool`` is not an ``int``), else :class:`WrongValue`."""
    if type(value) is kind:
        return value
    raise WrongValue(_("returned {value}; expected {expected}").format(value=show(value), expected=expected))


def decision(value: JSON, *, allow_bool: bool = True) -> Decision | bool:
    """Rebuild a decision (or a bool) the learner returned, checking every field's exact type."""
    if type(value) is bool and allow_bool:
        return bool(value)
    kind = tag(value)
    what = (_("True/False, or al.Continue(), al.Finish(answer), al.Abort(code, reason)") if allow_bool
            else _("al.Continue(), al.Finish(answer) or al.Abort(code, reason)"))
    if kind not in ("Continue", "Finish", "Abort"):
        raise WrongValue(_("returned {value}; return {what}").format(value=show(value), what=what))
    got = value.get("fields") or {}
    reason = got.get("reason", "")
    if type(reason) is not str:
        raise WrongValue(_("returned {value}: the reason must be text (a str); got {reason}").format(
            value=show(value), reason=show(reason)))
    if kind == "Continue":
        return Continue(reason)
    if kind == "Finish":
        answer = got.get("answer")
        if answer is not None and type(answer) is not str:
            raise WrongValue(_("returned {value}: the answer of a Finish is the round's text (a str or None), "
                               "not {answer} — write al.Finish(response.content)").format(value=show(value),
                                                                                          answer=show(answer)))
        flags = {f.name: got[f.name] for f in fields(Finish) if type(got.get(f.name)) is bool}
        return Finish(answer, reason, **flags)
    code = got.get("code")
    if type(code) is not str or code not in ERROR_CODES:
        raise WrongValue(_("aborted with code {code}; the codes are: {codes}").format(
            code=show_short(code), codes=", ".join(ERROR_CODES)))
    return Abort(code, reason)  # type: ignore[arg-type]  # checked against ERROR_CODES just above


def boolean(value: JSON) -> bool:
    """A True/False answer, exactly (``1`` and a subclass of ``bool`` are not)."""
    if type(value) is bool:
        return value
    raise WrongValue(_("returned {value}; return exactly True (stop: this is the answer) or False (go on)").format(
        value=show(value)))


def response(value: JSON) -> Response:
    """Rebuild a :class:`Response` the learner returned (re-validated on this side)."""
    if tag(value) != "Response":
        raise WrongValue(_("returned {value}; expected an al.Response(content=…, tool_calls=…, "
                           "finish_reason=…)").format(value=show(value)))
    return Response.model_validate(value.get("data"))


def rebuild(value: JSON, tag_name: str, factory: Callable[..., Any], expected: str) -> Any:
    """Rebuild a tagged dataclass value (``Setup``…) whose fields are plain scalars."""
    if tag(value) != tag_name:
        raise WrongValue(_("returned {value}; expected {expected}").format(value=show(value), expected=expected))
    got = value.get("fields") or {}
    if any(isinstance(v, dict) for v in got.values()):
        raise WrongValue(_("returned {value}: its fields must be plain values").format(value=show(value)))
    return factory(**got)
