"""Anthropic Messages (``POST /v1/messages``): content blocks and a ``stop_reason``.

The shape: ``content`` is a list of blocks. ``text`` blocks carry the words,
``tool_use`` blocks the tool calls (``id``, ``name`` and ``input`` — an
already-parsed JSON *object*, not text). Text and ``tool_use`` blocks often
arrive in one turn ("Let me open the file." plus a call): the article's
"talk and call" round is the native shape here. Other blocks (``thinking``,
``server_tool_use`` and the results of tools Anthropic runs itself) are not
the loop's to execute and are skipped. ``usage`` counts ``input_tokens`` (plus
``cache_creation_input_tokens`` and ``cache_read_input_tokens``, all of which
are prompt) and ``output_tokens``.

Documented ``stop_reason`` values (every one, from the SDK's ``StopReason``):
``end_turn``, ``max_tokens``, ``stop_sequence``, ``tool_use``, ``pause_turn``,
``refusal``, ``model_context_window_exceeded``; the beta Messages API adds
``compaction``. "In non-streaming mode this value is always non-null", so a
missing or ``null`` value is a malformed body here.

Mapping choices (the ``anthropic`` rows of :data:`agentloops.stops.STOP_VALUES`):

- ``end_turn`` and ``stop_sequence`` → ``stop``; ``tool_use`` → ``tool_calls``.
- ``max_tokens`` and ``model_context_window_exceeded`` → ``length``: both are
  token limits (a ``tool_use`` block cut off by ``max_tokens`` arrives with an
  incomplete ``input``; the correct loop refuses to run it).
- ``refusal`` → ``refusal``.
- ``pause_turn`` → ``pause``: "we paused a long-running turn. You may provide
  the response back as-is in a subsequent request to let the model continue."
  No tool calls, yet the turn is not over. The SDK's own beta tool runner
  (``lib/tools/_beta_runner.py``) treats ``pause_turn`` and ``compaction``
  alike ("resume": send the turn back, run nothing), so ``compaction`` →
  ``pause`` too.

Sources:
    - anthropics/anthropic-sdk-python ``src/anthropic/types/stop_reason.py``,
      ``src/anthropic/types/message.py`` (``stop_reason`` docstring, ``content``,
      ``usage``), ``src/anthropic/types/beta/beta_stop_reason.py``; the same
      files in the installed ``anthropic`` 2.14.0, whose
      ``anthropic/lib/tools/_beta_runner.py`` (``_STOP_REASON_STEPS``) maps
      every stop reason to "run_tools", "resume" or "stop".
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from agentloops.i18n import N_
from agentloops.providers._common import (
    OBJECT,
    StreamBroken,
    build,
    count,
    fail,
    field,
    items,
    join_text,
    make_usage,
    need_object,
    pieces,
    string,
    tool_call,
)
from agentloops.providers.reply import Call, Reply
from agentloops.stops import normalise

FORMAT = "anthropic"
FIELD = "stop_reason"


def adapt(raw: object, where: str = "response") -> Reply:
    """Convert one non-streaming Messages body into a :class:`~agentloops.providers.reply.Reply`.

    Args:
        raw: the JSON body exactly as the API returned it (extra keys are ignored).
        where: the path of ``raw`` in error messages.

    Raises:
        RawBodyError: a field the adapter needs is missing or has the wrong type.
    """
    return _read(raw, where, OBJECT)


def adapt_assembled(raw: object, where: str = "response") -> Reply:
    """Like :func:`adapt`, for a body assembled from a stream: a tool input may be the JSON text that never closed."""
    return _read(raw, where, (*OBJECT, str))


def _read(raw: object, where: str, input_types: tuple[type, ...]) -> Reply:
    body = need_object(raw, where)
    stop = string(body, "stop_reason", where)
    if not stop:
        raise fail(f"{where}.stop_reason", "a stop_reason (never empty in a non-streaming body)", stop)
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[Call] = []
    for i, block in enumerate(items(body, "content", where, "a list of content blocks")):
        block_at = f"{where}.content[{i}]"
        if type(block) is not dict:  # a parsed body's object passes without a check
            block = need_object(block, block_at)
        kind = string(block, "type", block_at)
        if kind == "text":
            texts.append(string(block, "text", block_at) or "")
        elif kind == "thinking":
            thoughts.append(string(block, "thinking", block_at, optional=True) or "")
        elif kind == "tool_use":
            tool_input = field(block, "input", block_at, "the tool input object", types=input_types)
            calls.append(tool_call(block_at, call_id=block.get("id"), name=block.get("name"),
                                   arguments=tool_input, arguments_field="input"))

    usage_body = body.get("usage")
    if usage_body is not None and type(usage_body) is not dict:  # a parsed body's object passes without a check
        usage_body = field(body, "usage", where, "a usage object", types=OBJECT, optional=True)
    usage_at = f"{where}.usage"
    prompt_parts = [count(usage_body, key, usage_at)
                    for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    known = [n for n in prompt_parts if n is not None]
    usage = make_usage(sum(known) if known else None, count(usage_body, "output_tokens", usage_at))
    return build(where, content=join_text(texts), calls=calls, finish=normalise(FORMAT, FIELD, stop), raw=stop,
                 usage=usage, reasoning=join_text(thoughts))


def assemble_stream(events: Sequence[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """The whole Message a stream of Messages events adds up to.

    ``message_start`` opens the message; ``content_block_start`` opens block
    ``index``; ``content_block_delta`` adds ``text_delta``, ``thinking_delta``
    or ``input_json_delta`` (the tool input as JSON *text*, parsed when the
    block is complete — a block cut off by ``max_tokens`` keeps its text,
    which is how a cut-off call shows); ``message_delta`` carries the
    ``stop_reason`` and the output ``usage``. ``ping`` is ignored; an ``error``
    event breaks the stream.

    Raises:
        StreamBroken: an event before ``message_start`` or for a block never
            opened, an ``error`` event, or no ``stop_reason`` at all.
        RawBodyError: an event is not shaped as documented.
    """
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    json_text: dict[int, str] = {}
    for i, raw in enumerate(events):
        at = f"{where}[{i}]"
        event = need_object(raw, at)
        kind = string(event, "type", at)
        if kind == "ping":
            continue
        if kind == "error":
            error: Mapping[str, Any] = event["error"] if isinstance(event.get("error"), Mapping) else {}
            raise StreamBroken(N_("event {i} is an error: {error}"), _partial(message, blocks, json_text), i=i,
                               error=error.get("type", "error"))
        if kind == "message_start":
            start = need_object(event.get("message"), f"{at}.message")
            message = {**start, "content": [], "stop_reason": start.get("stop_reason")}
            continue
        if message is None:
            raise StreamBroken(N_("event {i} ({kind}) arrived before message_start"), i=i, kind=kind)
        if kind == "content_block_start":
            index = field(event, "index", at, "the block's index", types=(int,))
            blocks[index] = dict(need_object(event.get("content_block"), f"{at}.content_block"))
        elif kind == "content_block_delta":
            index = field(event, "index", at, "the block's index", types=(int,))
            if index not in blocks:
                raise StreamBroken(N_("event {i} adds to block {index} before content_block_start opened it"),
                                   _partial(message, blocks, json_text), i=i, index=index)
            _add_delta(blocks[index], json_text, index, need_object(event.get("delta"), f"{at}.delta"),
                       f"{at}.delta")
        elif kind == "message_delta":
            delta = need_object(event.get("delta"), f"{at}.delta")
            message["stop_reason"] = string(delta, "stop_reason", f"{at}.delta", optional=True) or \
                message["stop_reason"]
            usage = field(event, "usage", at, "a usage object", types=OBJECT, optional=True)
            if usage is not None:
                message["usage"] = {**(message.get("usage") or {}), **usage}
    body = _partial(message, blocks, json_text)
    if body is None or message is None or not message.get("stop_reason"):
        raise StreamBroken(N_("the stream ended without a stop_reason"), body)
    return body


def _add_delta(block: dict[str, Any], json_text: dict[int, str], index: int, delta: Mapping[str, Any],
               at: str) -> None:
    kind = string(delta, "type", at)
    if kind == "text_delta":
        block["text"] = block.get("text", "") + (string(delta, "text", at) or "")
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + (string(delta, "thinking", at) or "")
    elif kind == "input_json_delta":
        json_text[index] = json_text.get(index, "") + (string(delta, "partial_json", at) or "")


def _partial(message: dict[str, Any] | None, blocks: dict[int, dict[str, Any]],
             json_text: dict[int, str]) -> dict[str, Any] | None:
    """The Message so far: blocks in index order, each tool input parsed when its JSON text is complete."""
    if message is None:
        return None
    content = []
    for index in sorted(blocks):
        block = dict(blocks[index])
        if block.get("type") == "tool_use" and json_text.get(index):
            try:
                block["input"] = json.loads(json_text[index])
            except ValueError:
                block["input"] = json_text[index]
        content.append(block)
    return {**message, "content": content, "stop_reason": message.get("stop_reason") or "end_turn"}


def stream_body(body: Mapping[str, Any], rng: random.Random | None = None) -> list[dict[str, Any]]:
    """``body`` as the Messages events a server streams (text and tool input split at ``rng``'s points)."""
    usage = dict(body.get("usage") or {})
    start = {**{k: v for k, v in body.items() if k not in ("content", "usage")}, "content": [], "stop_reason": None}
    if usage:
        start["usage"] = {**usage, **({"output_tokens": 1} if "output_tokens" in usage else {})}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(body.get("content") or []):
        kind = block.get("type")
        if kind == "tool_use":
            opened = {**block, "input": {}}
            text = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(text, rng)]
        elif kind in ("text", "thinking"):
            opened = {**block, kind: ""}
            deltas = [{"type": f"{kind}_delta", kind: p} for p in pieces(block.get(kind, ""), rng) if p]
        else:
            opened, deltas = dict(block), []
        events.append({"type": "content_block_start", "index": index, "content_block": opened})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    final: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": body["stop_reason"],
                                                                "stop_sequence": body.get("stop_sequence")}}
    if "output_tokens" in usage:
        final["usage"] = {"output_tokens": usage["output_tokens"]}
    events.append(final)
    return [*events, {"type": "message_stop"}]


__all__ = ["FIELD", "FORMAT", "adapt", "adapt_assembled", "assemble_stream", "stream_body"]
