"""Streamed responses: the server-sent chunks of one round, assembled into the round the whole body gives.

Real agents mostly stream, and some server bugs live only in the streamed path
(a cut tool call labelled ``tool_calls`` by vLLM's streaming handler,
vllm-project/vllm#53269; gateways whose stream never carries a
``finish_reason``). A scenario response may therefore be given as
``{"stream": [chunk, ...]}``: each chunk is one ``data:`` payload (or one
NDJSON line for Ollama), as an object or as its raw text; ``"[DONE]"`` ends
an OpenAI stream. Each format module knows its own stream shape
(``assemble_stream`` and, for tests and notebooks, ``stream_body``):

- ``openai-chat``: ``chat.completion.chunk`` objects, ``choices[0].delta``
  pieces, tool-call arguments by ``index``, ``finish_reason`` on the last chunk;
- ``openai-responses``: ``response.*`` events ending in ``response.completed``,
  ``response.incomplete`` or ``response.failed``;
- ``anthropic``: ``message_start``, ``content_block_start``/``_delta``
  (``text_delta``, ``input_json_delta``, ``thinking_delta``)/``_stop``,
  ``message_delta`` (the ``stop_reason``), ``message_stop``;
- ``gemini``: ``streamGenerateContent`` responses, ``finishReason`` on the last;
- ``ollama``: ``/api/chat`` lines, ``done: true`` and ``done_reason`` on the last.

**A broken stream is a decision, never a crash.** A chunk cut off mid-JSON,
events out of order, or a stream that ends without its format's stop value
assemble into a round whose ``finish_reason`` is ``provider_error`` and
whose ``stream_error`` says what broke (the text that did arrive is kept, so
the naive tests read it as a real client would). A chunk whose *shape* is
wrong (a list where an object belongs) is an error in the file: one line
naming it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from agentloops.i18n import N_, Phrase
from agentloops.providers._common import RawBodyError, StreamBroken, fail, kind
from agentloops.response import Response

STREAM_KEY = "stream"
"""The one key of a streamed response in a scenario file."""

DONE = "[DONE]"
"""The payload that ends an OpenAI stream."""


def is_stream(raw: object) -> bool:
    """True when ``raw`` is a streamed response: ``{"stream": [...]}`` and nothing else."""
    return isinstance(raw, (dict, Mapping)) and len(raw) == 1 and STREAM_KEY in raw  # dict first: no ABC check


def payloads(raw: object, where: str) -> tuple[list[Any], str | None]:
    """The stream's chunks as JSON values, and the break when a chunk is cut off mid-JSON.

    Raises:
        RawBodyError: the stream is not a list, or a chunk is neither an object nor text.
    """
    stream_at = f"{where}.{STREAM_KEY}"
    chunks = raw.get(STREAM_KEY) if isinstance(raw, Mapping) else None
    if not isinstance(chunks, list):
        raise fail(stream_at, "a list of chunks", chunks)
    parsed: list[Any] = []
    for i, chunk in enumerate(chunks):
        if isinstance(chunk, str):
            text = chunk.strip().removeprefix("data:").strip()
            if text == DONE:
                continue
            try:
                chunk = json.loads(text)
            except ValueError:
                return parsed, Phrase(N_("chunk {i} is cut off mid-JSON: {text}"), i=i, text=repr(text[:40]))
        if not isinstance(chunk, Mapping):
            raise RawBodyError(f"{stream_at}[{i}]: expected a chunk object or its JSON text; got {kind(chunk)}")
        parsed.append(chunk)
    return parsed, None


def assemble(adapter: ModuleType, raw: object, where: str = "response") -> Response:
    """The round a streamed response adds up to (see the module docstring for broken streams).

    Args:
        adapter: the format's module (:func:`agentloops.providers.module`).
        raw: ``{"stream": [chunk, ...]}``.
        where: the path of ``raw`` in error messages.

    Raises:
        RawBodyError: a chunk is not shaped as the format documents; the message names it.
    """
    chunks, problem = payloads(raw, where)
    read_body = getattr(adapter, "adapt_assembled", adapter.adapt)  # Anthropic keeps a cut tool input as text
    partial: dict[str, Any] | None = None
    try:
        body = adapter.assemble_stream(chunks, f"{where}.{STREAM_KEY}")
    except StreamBroken as broken:
        problem = problem or broken.problem
        partial = broken.partial
    else:
        if problem is None:
            whole: Response = read_body(body, where).response
            return whole
        partial = body
    if partial is None:
        cut = Response(content=None, finish_reason="provider_error", raw_finish_reason=None, stream_error=problem)
        return cut.model_copy(update={"stream_error": problem})  # validation made the phrase a plain str
    read: Response = read_body(partial, where).response
    return read.model_copy(update={"finish_reason": "provider_error", "raw_finish_reason": None,
                                   "stream_error": problem})


def stream_of(adapter: ModuleType, body: Mapping[str, Any], seed: int | None = None) -> dict[str, list[Any]]:
    """``body`` as a streamed response of ``adapter``'s format, its text split at points drawn from ``seed``."""
    rng = random.Random(seed) if seed is not None else None
    return {STREAM_KEY: adapter.stream_body(body, rng)}


def break_stream(stream: Mapping[str, Sequence[Any]], how: str, seed: int = 0) -> dict[str, list[Any]]:
    """A copy of ``stream`` broken one way, as networks and servers break them (for tests and the notebook).

    ``how``: ``"cut"`` (a chunk's text cut mid-JSON and the rest lost), ``"truncate"`` (the last chunks
    lost), ``"shuffle"`` (chunks out of order), ``"drop"`` (one chunk lost).
    """
    chunks = list(stream[STREAM_KEY])
    rng = random.Random(seed)
    if not chunks:
        return {STREAM_KEY: chunks}
    at = rng.randrange(len(chunks))
    if how == "cut":
        text = chunks[at] if isinstance(chunks[at], str) else json.dumps(chunks[at])
        return {STREAM_KEY: [*chunks[:at], text[: max(1, len(text) // 2)]]}
    if how == "truncate":
        return {STREAM_KEY: chunks[:at]}
    if how == "shuffle":
        rng.shuffle(chunks)
        return {STREAM_KEY: chunks}
    if how == "drop":
        return {STREAM_KEY: chunks[:at] + chunks[at + 1:]}
    raise ValueError(f"unknown way to break a stream {how!r}; expected cut, truncate, shuffle or drop")


BREAKS: tuple[str, ...] = ("cut", "truncate", "shuffle", "drop")
"""Every way :func:`break_stream` breaks a stream."""

__all__ = ["BREAKS", "DONE", "STREAM_KEY", "assemble", "break_stream", "is_stream", "payloads", "stream_of"]
