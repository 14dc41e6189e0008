"""Reading a log file one JSON value at a time, so memory never grows with the file.

A log is JSON Lines (one object per line: what SDK hooks, proxies and the
OpenTelemetry collector's file exporter write) or one JSON document (what
``agentloops run --json`` prints, a scenario file, an OTLP export written by
hand); a document that is a list is read item by item. Which one is decided
by the first non-blank line: if it parses alone, the file is JSON Lines.

Every problem is one line naming the file, the line and what was expected.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentloops.diagnose.model import LogError, log_error
from agentloops.i18n import N_, Phrase

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest single-document log read whole (64 MiB); JSON Lines have no limit, being read line by line."""

Item = tuple[str, dict[str, Any]]
"""One JSON object of the log and where it is (``path:12``, or ``path[3]`` in a document)."""


def one_line(message: str, limit: int = 300) -> str:
    """``message`` on one line: control characters from the user's file escaped, the length capped."""
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error(template: str, /, **fields: object) -> LogError:
    """A :class:`LogError` whose fields from the user's file (a path, a parser's message) are made one line."""
    return log_error(template, **{k: one_line(v) if isinstance(v, str) else v for k, v in fields.items()})


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)  # built once: json.loads with options builds one a call


def check_file(path: Path) -> None:
    """Refuse a missing, special (a FIFO would hang) or unreadable file before opening it."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _error(N_("{path}: cannot read the log: {reason}"), path=str(path), reason=str(exc.strerror or exc)) \
            from None
    if not stat.S_ISREG(info.st_mode):
        raise _error(N_("{path}: not a regular file; expected a log file (JSON or JSON Lines)"), path=str(path))


def decode(where: str, raw: bytes, last: bool, document: bool = False) -> Any:
    """The JSON value of ``raw`` (a line, or a whole document), or the one-line error naming ``where``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise log_error(N_("{where}: not UTF-8 text (byte {byte})"), where=where, byte=exc.start + 1) from None
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise log_error(N_("{where}: nested too deeply to be a log entry"), where=where) from None
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise _error(N_("{where}: not valid JSON: {problem}"), where=where, problem=str(exc)) from None
        if document:
            at = f"{where}:{exc.lineno}"
            if exc.pos >= len(text.rstrip()):
                raise log_error(N_("{where}: the document ends early (the log is cut off)"), where=at) from None
            raise _error(N_("{where}: not valid JSON: {problem} at column {column}"), where=at, problem=exc.msg,
                         column=exc.colno) from None
        if last and not raw.endswith(b"\n"):
            raise log_error(N_("{where}: the line is cut off (the log ends mid-line)"), where=where) from None
        raise _error(N_("{where}: not valid JSON: {problem} at column {column}"), where=where, problem=exc.msg,
                     column=exc.colno) from None


def parse_line(where: str, raw: bytes, last: bool) -> dict[str, Any]:
    """One line of JSON Lines as a JSON object."""
    value = decode(where, raw, last)
    if not isinstance(value, dict):
        raise log_error(N_("{where}: expected one JSON object per line; got {kind}"), where=where, kind=_kind(value))
    return value


_KINDS: dict[type, Phrase] = {list: Phrase(N_("a list")), str: Phrase(N_("a string")), bool: Phrase(N_("a boolean"))}
_NUMBER = Phrase(N_("a number"))


def _kind(value: object) -> str:
    """What a JSON value is, in words (a :class:`Phrase`: English as data)."""
    if value is None:
        return "null"
    return _KINDS.get(type(value), _NUMBER)


def iter_items(path: str | Path) -> Iterator[Item]:
    """Yield every JSON object of the log with where it is."""
    path = Path(path)
    check_file(path)
    with open(path, "rb") as handle:
        first = _first_line(handle)
        if first is None:
            raise log_error(N_("{path}: the log is empty"), path=str(path))
        number, raw = first
        try:
            json.loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            if raw.lstrip()[:1] in (b"{", b"["):
                yield from _document(path)
                return
        yield from _lines(path, handle, number, raw)


def _first_line(handle: Any) -> tuple[int, bytes] | None:
    for number, raw in enumerate(handle, start=1):
        if raw.strip():
            return number, raw
    return None


def _lines(path: Path, handle: Any, number: int, raw: bytes) -> Iterator[Item]:
    """Parse each line once the next one is seen, so the last line is known as last (it may be cut off)."""
    pending = (number, raw)
    for later, line in enumerate(handle, start=number + 1):
        if line.strip():
            yield f"{path}:{pending[0]}", parse_line(f"{path}:{pending[0]}", pending[1], last=False)
            pending = (later, line)
    yield f"{path}:{pending[0]}", parse_line(f"{path}:{pending[0]}", pending[1], last=True)


def _document(path: Path) -> Iterator[Item]:
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        raise log_error(N_("{path}: a single JSON document over {mib} MiB; write it as JSON Lines"), path=str(path),
                        mib=MAX_DOCUMENT_BYTES >> 20)
    raw = path.read_bytes()
    value = decode(str(path), raw, last=False, document=True)
    if isinstance(value, dict):
        yield str(path), value
        return
    if not isinstance(value, list):
        raise log_error(N_("{path}: expected a JSON object, a list of objects or JSON Lines; got {kind}"),
                        path=str(path), kind=_kind(value))
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise log_error(N_("{where}: expected a JSON object; got {kind}"), where=f"{path}[{i}]", kind=_kind(item))
        yield f"{path}[{i}]", item
