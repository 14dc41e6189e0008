"""The one strict JSON reader for every file the package reads.

Python's own ``json`` accepts things a learner's file should never contain and
fails on others with a traceback: ``NaN``, duplicate keys (the last silently
wins), lone surrogates that later break printing, nesting deep enough for a
``RecursionError``, integers long enough for a ``ValueError``. A FIFO given as
a file name hangs ``open``. Every reader here refuses all of these *before*
any other code sees the data, with one line that names the file, where it
failed and what was expected, raised as the caller's
:class:`~agentloops.errors.UsageError` subclass.

Limits (all documented, all refusals rather than crashes):

* :data:`MAX_BYTES` — a file larger than this is refused before it is read.
* :data:`MAX_DEPTH` — arrays and objects nested deeper than this are refused.
* :data:`MAX_INT_DIGITS` — an integer with more digits than this is refused.
* :data:`MAX_MESSAGE` — an error line is cut to this many characters.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentloops.errors import ScenarioError, UsageError
from agentloops.i18n import N_

MAX_BYTES = 16 * 1024 * 1024
"""Largest file read, in bytes (16 MiB): far above any scenario, policy, saved run or long trace."""

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted; the shipped files use fewer than ten levels."""

MAX_INT_DIGITS = 20
"""Most digits in an integer literal: enough for every 64-bit integer, far below Python's 4,300-digit limit."""

MAX_MESSAGE = 300
"""Longest error line, in characters; longer ones end in ``…``."""

CUT_TAIL = object()
"""Yielded by :func:`iter_json_lines` (with ``cut_tail=True``) for a last line cut off mid-write."""

_BRACKETS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` as one printable line: control characters, line breaks and lone surrogates escaped, capped.

    Anything quoted in an error (a key, a tool name, a path) comes from the
    user's file and may hold a newline or a terminal escape; escaping them keeps
    the error on one line and the terminal intact.
    """
    out = []
    for ch in message[: limit + 1]:  # escaping only lengthens: nothing further could be shown
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    text = "".join(out)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_path(path: str | Path, limit: int = 120) -> str:
    """A path as an error names it: a very long one keeps its start and its end, so the problem still fits."""
    text = str(path)
    return text if len(text) <= limit else text[: limit // 2] + "…" + text[-(limit // 2 - 1):]


def quoted(value: object) -> str:
    """A short, escaped, quoted rendering of a value from the user's file, for an error line."""
    text = one_line(str(value), 60)
    return f"'{text}'"


class _Refusal(Exception):
    """Internal: why a text was refused and, when known, the character offset where."""

    def __init__(self, message: str, offset: int | None = None, *, syntax: bool = False,
                 token: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.syntax = syntax  # invalid JSON, as opposed to valid JSON this reader refuses
        self.token = token  # the literal refused, to find its place in the text


def read_json(path: str | Path, *, error: type[UsageError] = ScenarioError, what: str = N_("JSON file"),
              max_bytes: int = MAX_BYTES) -> Any:
    """Read one JSON file strictly (see the module docstring for what is refused).

    Args:
        path: the file.
        error: the exception raised for every refusal; its message is one line starting with the path.
        what: what the file should be, for the messages (``"scenario file"``, ``"policy file"``).
        max_bytes: files larger than this are refused before reading.
    """
    text = read_text(path, error=error, what=what, max_bytes=max_bytes)
    return parse_json(text, where=shown_path(path), error=error)


def read_text(path: str | Path, *, error: type[UsageError] = ScenarioError, what: str = N_("JSON file"),
              max_bytes: int = MAX_BYTES, not_found: type[UsageError] | None = None) -> str:
    """The UTF-8 text of a regular file, refusing missing, special, unreadable, oversized and non-UTF-8 files.

    The file is checked with ``os.stat`` before it is opened, and opened
    non-blocking, so a FIFO (even one swapped in after the check) never hangs.
    """
    name = shown_path(path)

    def refuse(problem: str, kind: type[UsageError] = error) -> UsageError:
        return kind(one_line(f"{name}: {problem}"))

    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise refuse(N_("no such file; expected a {what}").format(what=what), not_found or error) from None
    except PermissionError:
        raise refuse(N_("permission denied; expected a readable {what}").format(what=what)) from None
    except (OSError, ValueError) as exc:
        raise refuse(N_("cannot be opened as a {what} ({reason})").format(what=what, reason=_reason(exc))) from None
    _check_regular(info, refuse, what, max_bytes)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except PermissionError:
        raise refuse(N_("permission denied; expected a readable {what}").format(what=what)) from None
    except OSError as exc:
        raise refuse(N_("cannot be opened as a {what} ({reason})").format(what=what, reason=_reason(exc))) from None
    try:
        _check_regular(os.fstat(fd), refuse, what, max_bytes)  # it may have been swapped since the stat
        data = _read_all(fd, max_bytes)
    except OSError as exc:
        raise refuse(N_("cannot be read ({reason})").format(reason=_reason(exc))) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise refuse(N_("is larger than {limit} bytes; expected a smaller {what}").format(limit=f"{max_bytes:,}",
                                                                                          what=what))
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # RFC 8259 lets a reader ignore a byte-order mark
    except UnicodeDecodeError as exc:
        raise refuse(N_("is not UTF-8 text (byte {start} is {byte}); save it as UTF-8").format(
            start=exc.start, byte=f"{data[exc.start]:#04x}")) from None


def _check_regular(info: os.stat_result, refuse: Any, what: str, max_bytes: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise refuse(N_("is a directory; expected a {what}").format(what=what))
    if not stat.S_ISREG(info.st_mode):
        kind = (N_("a FIFO") if stat.S_ISFIFO(info.st_mode) else N_("a device") if stat.S_ISCHR(info.st_mode)
                or stat.S_ISBLK(info.st_mode) else N_("a socket") if stat.S_ISSOCK(info.st_mode)
                else N_("a special file"))
        raise refuse(N_("is {kind}, not a regular file; expected a {what}").format(kind=kind, what=what))
    if info.st_size > max_bytes:
        raise refuse(N_("is {size} bytes, larger than the {limit}-byte limit; expected a smaller {what}").format(
            size=f"{info.st_size:,}", limit=f"{max_bytes:,}", what=what))


def _read_all(fd: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__


def parse_json(text: str, *, where: str, error: type[UsageError] = ScenarioError) -> Any:
    """Parse ``text`` strictly into plain dicts, lists, strings, numbers, booleans and ``None``.

    Args:
        text: the JSON text.
        where: what to name in the error (a path, ``path:line``, an argument).
        error: the exception raised for every refusal.

    Raises:
        error: too deep, a too-long integer, ``NaN``/``Infinity``, a lone
            surrogate, a duplicate key, or invalid JSON — one line saying where.
    """
    try:
        return _parse(text)
    except _Refusal as exc:
        raise error(_message(where, text, exc)) from None


def _message(where: str, text: str, exc: _Refusal) -> str:
    if exc.offset is None:
        return one_line(f"{where}: {exc}")
    line = text.count("\n", 0, exc.offset) + 1
    column = exc.offset - (text.rfind("\n", 0, exc.offset) + 1) + 1
    several = "\n" in text.rstrip("\n")
    if exc.syntax:
        template = (N_("{where}: not valid JSON at line {line}, column {column}: {problem}") if several
                    else N_("{where}: not valid JSON at column {column}: {problem}"))
    else:
        template = (N_("{where}: {problem} (at line {line}, column {column})") if several
                    else N_("{where}: {problem} (at column {column})"))
    return one_line(template.format(where=where, line=line, column=column, problem=exc))


JSON_MESSAGES = (N_("Expecting value"), N_("Expecting property name enclosed in double quotes"),
                 N_("Expecting ',' delimiter"), N_("Expecting ':' delimiter"), N_("Extra data"),
                 N_("Unterminated string"), N_("Invalid \\uXXXX escape"))
"""What :mod:`json` says of invalid JSON (its words end a refusal's message), in the catalog."""

OS_MESSAGES = (N_("No such file or directory"), N_("Permission denied"), N_("Is a directory"), N_("Not a directory"))
"""What the system says of a path it refuses (``strerror``; an error line may end with it), in the catalog."""


def _parse(text: str) -> Any:
    if not text.strip():
        raise _Refusal(N_("empty; expected a JSON value"), syntax=True)
    _check_depth(text)
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_int=_bounded_int,
                           parse_float=_finite_float, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _Refusal(exc.msg.removesuffix(" at").removesuffix(" starting"), exc.pos, syntax=True) from None
    except RecursionError:  # _check_depth should make this unreachable; never let it escape
        raise _Refusal(f"nested deeper than {MAX_DEPTH} levels") from None
    except _Refusal as exc:
        if exc.token is not None and exc.offset is None:
            found = text.find(exc.token)
            exc.offset = found if found >= 0 else None
        raise
    _check_strings(value)
    return value


def _check_depth(text: str) -> None:
    depth = 0
    for match in _BRACKETS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refusal(f"nested deeper than {MAX_DEPTH} levels of arrays and objects", match.start())
        elif token in "]}":
            depth -= 1


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refusal(N_("duplicate key {key} in one object; expected each key once").format(key=quoted(key)))
        result[key] = value
    return result


def _bounded_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        digits = len(literal.lstrip("-"))
        raise _Refusal(f"an integer with {digits:,} digits; expected at most {MAX_INT_DIGITS}", token=literal)
    return int(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refusal(f"the number {quoted(literal)} is too large to be finite; expected a finite number",
                       token=literal)
    return value


def _no_constant(name: str) -> Any:
    raise _Refusal(f"{name} is not JSON; expected a finite number or null", token=name)


def _check_strings(value: Any) -> None:
    """Refuse lone surrogates in any string or key, naming the path to it inside the value."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            _no_surrogate(item, path or "(top level)")
        elif isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{path}.{key}" if path else key
                _no_surrogate(key, f"a key in {path or '(top level)'}")
                stack.append((child, child_path))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))


def _no_surrogate(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _Refusal(f"{path}: the string holds a lone surrogate (U+{ord(text[exc.start]):04X}); "
                       "expected valid Unicode text") from None


def iter_json_lines(path: str | Path, *, error: type[UsageError] = ScenarioError, what: str = N_("JSON Lines file"),
                    max_bytes: int = MAX_BYTES, cut_tail: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each line of a JSON Lines file, each line checked like :func:`parse_json`.

    The file itself is checked as by :func:`read_json` before the first line
    is yielded. An empty line is refused. With ``cut_tail``, a last line with
    no newline that is not complete JSON (a writer killed mid-line) yields
    :data:`CUT_TAIL` instead of failing, so a reader can keep everything before it.
    """
    text = read_text(path, error=error, what=what, max_bytes=max_bytes)
    lines = text.split("\n")
    ended = lines[-1] == ""
    if ended:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        where = f"{shown_path(path)}:{number}"
        if not line.strip():
            raise error(one_line(f"{where}: empty line; expected one JSON value per line"))
        try:
            value = _parse(line)
        except _Refusal as exc:
            if cut_tail and exc.syntax and number == len(lines) and not ended:
                yield number, CUT_TAIL
                return
            raise error(_message(where, line, exc)) from None
        yield number, value
