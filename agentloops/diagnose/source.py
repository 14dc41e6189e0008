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

from agentloops.diagnose.model import LogError

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""Largest single-document log read whole (64 MiB); JSON Lines have no limit, being read line by line."""

Item = tuple[str, dict[str, Any]]
"""One JSON object of the log and where it is (``path:12``, or ``path[3]`` in a document)."""


def one_line(message: str, limit: int = 300) -> str:
    """``message`` on one line: control characters from the user's file escaped, the length capped."""
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)  # built once: json.loads with options builds one a call


def check_file(path: Path) -> None:
    """Refuse a missing, special (a FIFO would hang) or unreadable file before opening it."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise LogError(one_line(f"{path}: cannot read the log: {exc.strerror or exc}")) from None
    if not stat.S_ISREG(info.st_mode):
        raise LogError(one_line(f"{path}: not a regular file; expected a log file (JSON or JSON Lines)"))


def decode(where: str, raw: bytes, last: bool, document: bool = False) -> Any:
    """The JSON value of ``raw`` (a line, or a whole document), or the one-line error naming ``where``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LogError(f"{where}: not UTF-8 text (byte {exc.start + 1})") from None
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise LogError(f"{where}: nested too deeply to be a log entry") from None
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise LogError(one_line(f"{where}: not valid JSON: {exc}")) from None
        if document:
            at = f"{where}:{exc.lineno}"
            if exc.pos >= len(text.rstrip()):
                raise LogError(f"{at}: the document ends early (the log is cut off)") from None
            raise LogError(one_line(f"{at}: not valid JSON: {exc.msg} at column {exc.colno}")) from None
        if last and not raw.endswith(b"\n"):
            raise LogError(f"{where}: the line is cut off (the log ends mid-line)") from None
        raise LogError(one_line(f"{where}: not valid JSON: {exc.msg} at column {exc.colno}")) from None


def parse_line(where: str, raw: bytes, last: bool) -> dict[str, Any]:
    """One line of JSON Lines as a JSON object."""
    value = decode(where, raw, last)
    if not isinstance(value, dict):
        raise LogError(f"{where}: expected one JSON object per line; got {_kind(value)}")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {list: "a list", str: "a string", bool: "a boolean"}.get(type(value), "a number")


def iter_items(path: str | Path) -> Iterator[Item]:
    """Yield every JSON object of the log with where it is."""
    path = Path(path)
    check_file(path)
    with open(path, "rb") as handle:
        first = _first_line(handle)
        if first is None:
            raise LogError(f"{path}: the log is empty")
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
        raise LogError(f"{path}: a single JSON document over {MAX_DOCUMENT_BYTES >> 20} MiB; write it as JSON Lines")
    raw = path.read_bytes()
    value = decode(str(path), raw, last=False, document=True)
    if isinstance(value, dict):
        yield str(path), value
        return
    if not isinstance(value, list):
        raise LogError(f"{path}: expected a JSON object, a list of objects or JSON Lines; got {_kind(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise LogError(f"{path}[{i}]: expected a JSON object; got {_kind(item)}")
        yield f"{path}[{i}]", item
