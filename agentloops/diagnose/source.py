"""Reading a log file one JSON value at a time, so memory never grows with the file.

A log is JSON Lines (one object per line: what SDK hooks, proxies and the
OpenTelemetry collector's file exporter write) or JSON documents (what
``agentloops run --json`` prints, a scenario file, an OTLP export written by
hand, ``jq .`` output: pretty-printed documents one after another); a list
of objects, on one line or as a document, is read item by item. Which one is
decided by the first non-blank line: if it parses alone, the file is JSON Lines.
A UTF-8 byte order mark (what Windows editors write first) is skipped, and a
file that opens with a UTF-16 one (what Windows PowerShell's ``>`` writes) is
read as UTF-16.

Every problem is one line naming the file, the line and what was expected.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agentloops.diagnose.model import STRICT, LogError, log_error
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
    return log_error(template, **{k: one_line(v) if isinstance(v, str) and not isinstance(v, Phrase) else v
                                 for k, v in fields.items()})


_DECODER = STRICT  # built once: json.loads with options builds one a call
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]  # set by __init__
"""What ``_DECODER.decode`` calls after skipping whitespace: the value at an index and where it ends."""
_JSON_SPACE = " \t\n\r"
"""JSON's whitespace (RFC 8259), the only text ``_DECODER.decode`` lets around a value."""


def check_file(path: Path) -> None:
    """Refuse a missing, special (a FIFO would hang) or unreadable file before opening it."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _error(N_("{path}: cannot read the log: {reason}"), path=str(path),
                     reason=Phrase(str(exc.strerror or exc))) from None
    if not stat.S_ISREG(info.st_mode):
        raise _error(N_("{path}: not a regular file; expected a log file (JSON or JSON Lines)"), path=str(path))


def decode(where: str, raw: bytes, last: bool) -> Any:
    """The JSON value of one line ``raw``, or the one-line error naming ``where``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise log_error(N_("{where}: not UTF-8 text (byte {byte})"), where=where, byte=exc.start + 1) from None
    try:
        value, end = _SCAN(text, 0)  # a line that opens with its value, the common case, scanned at once
        if end == len(text) or not text[end:].strip(_JSON_SPACE):  # only what JSON calls whitespace after it
            return value
    except (ValueError, StopIteration, RecursionError):
        pass  # decoded again below, for the error the decoder words
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise log_error(N_("{where}: nested too deeply to be a log entry"), where=where) from None
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise _error(N_("{where}: not valid JSON: {problem}"), where=where, problem=str(exc)) from None
        if "\0" in text:  # never in JSON, even escaped in a string: say why, not where the parser gave up
            raise log_error(NUL_BYTES, where=where) from None
        if last and not raw.endswith(b"\n"):
            raise log_error(N_("{where}: the line is cut off (the log ends mid-line)"), where=where) from None
        raise _error(N_("{where}: not valid JSON: {problem} at column {column}"), where=where, problem=Phrase(exc.msg),
                     column=exc.colno) from None


NUL_BYTES = N_("{where}: NUL bytes, which JSON text never has: UTF-16 written without a byte order mark, or not "
                "text at all; save the log as UTF-8")


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
        if handle.peek(2)[:2] in UTF16_BOMS:
            handle = _utf16_lines(path, handle)  # type: ignore[assignment]  # iterated like the file: UTF-8 lines
        first = _first_line(handle)
        if first is None:
            raise log_error(N_("{path}: the log is empty"), path=str(path))
        number, raw = first
        items = _document(path) if _opens_a_document(raw) else _lines(path, handle, number, raw)
        first_item = next(items, None)
        if first_item is None:
            raise log_error(N_("{where}: the log holds no JSON object (only empty lists)"), where=f"{path}:{number}")
        yield first_item
        yield from items


def _opens_a_document(raw: bytes) -> bool:
    """The first line does not parse alone but opens an object or a list: the file is JSON documents."""
    try:
        json.loads(raw)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return raw.lstrip()[:1] in (b"{", b"[")
    return False


BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark."""

UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
"""The byte order marks a UTF-16 file opens with (little-endian is what Windows writes)."""


def _utf16_lines(path: Path, handle: Any) -> Iterator[bytes]:
    """The lines of a UTF-16 file as UTF-8 bytes, what the rest of the reader reads."""
    try:
        with io.TextIOWrapper(handle, encoding="utf-16", newline="") as text:  # closing it closes the file
            for line in text:
                yield line.encode("utf-8")
    except UnicodeDecodeError:
        raise log_error(N_("{where}: not valid UTF-16 text, though it opens with a UTF-16 byte order mark"),
                        where=str(path)) from None


def _first_line(handle: Any) -> tuple[int, bytes] | None:
    for number, raw in enumerate(handle, start=1):
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM):]
        if raw.strip():
            return number, raw
    return None


def _lines(path: Path, handle: Any, number: int, raw: bytes) -> Iterator[Item]:
    """Parse each line once the next one is seen, so the last line is known as last (it may be cut off)."""
    name = str(path)
    pending = (number, raw)
    for later, line in enumerate(handle, start=number + 1):
        if not line.isspace():  # blank lines are skipped (a line read is never empty)
            where = f"{name}:{pending[0]}"
            value = decode(where, pending[1], last=False)
            if isinstance(value, dict):  # the common case, yielded without a generator of its own
                yield where, value
            else:
                yield from _objects(where, value)
            pending = (later, line)
    where = f"{name}:{pending[0]}"
    yield from _objects(where, decode(where, pending[1], last=True))


def _objects(where: str, value: object) -> Iterator[Item]:
    """The object of a line, or each object of a line that is a list of records (``where[3]``)."""
    if isinstance(value, dict):
        yield where, value
        return
    if not isinstance(value, list):
        raise log_error(N_("{where}: expected one JSON object per line (or a list of objects); got {kind}"),
                        where=where, kind=_kind(value))
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise log_error(N_("{where}: expected a JSON object; got {kind}"), where=f"{where}[{i}]",
                            kind=_kind(item))
        yield f"{where}[{i}]", item


def _document(path: Path) -> Iterator[Item]:
    """The objects of one or more JSON documents one after another (pretty-printed, as ``jq .`` writes them)."""
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        raise log_error(N_("{path}: a single JSON document over {mib} MiB; write it as JSON Lines"), path=str(path),
                        mib=MAX_DOCUMENT_BYTES >> 20)
    raw = path.read_bytes()
    raw = raw[len(BOM):] if raw.startswith(BOM) else raw
    try:
        text = raw.decode("utf-16" if raw[:2] in UTF16_BOMS else "utf-8")
    except UnicodeDecodeError as exc:
        raise log_error(N_("{where}: not UTF-8 text (byte {byte})"), where=str(path), byte=exc.start + 1) from None
    documents = list(_split_documents(path, text))
    for line, value in documents:
        where = str(path) if len(documents) == 1 else f"{path}:{line}"
        if isinstance(value, dict):
            yield where, value
            continue
        if not isinstance(value, list):
            raise log_error(N_("{path}: expected a JSON object, a list of objects or JSON Lines; got {kind}"),
                            path=where, kind=_kind(value))
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise log_error(N_("{where}: expected a JSON object; got {kind}"), where=f"{where}[{i}]",
                                kind=_kind(item))
            yield f"{where}[{i}]", item


def _split_documents(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """Each JSON document of ``text`` with the line it starts on; the first one's error when it has one."""
    position, end = 0, len(text)
    while True:
        while position < end and text[position] in " \t\r\n":
            position += 1
        if position >= end:
            return
        line = text.count("\n", 0, position) + 1
        try:
            value, position = _DECODER.raw_decode(text, position)
        except RecursionError:
            raise log_error(N_("{where}: nested too deeply to be a log entry"), where=f"{path}:{line}") from None
        except ValueError as exc:
            if not isinstance(exc, json.JSONDecodeError):
                raise _error(N_("{where}: not valid JSON: {problem}"), where=f"{path}:{line}", problem=str(exc)) \
                    from None
            at = f"{path}:{exc.lineno}"
            if "\0" in text:
                raise log_error(NUL_BYTES, where=at) from None
            if exc.pos >= len(text.rstrip()):
                raise log_error(N_("{where}: the document ends early (the log is cut off)"), where=at) from None
            raise _error(N_("{where}: not valid JSON: {problem} at column {column}"), where=at, problem=Phrase(exc.msg),
                         column=exc.colno) from None
        yield line, value
