"""OpenAI Responses (``POST /v1/responses``): a list of output items and a status.

The shape: ``output`` is a list of items. A ``message`` item holds content
parts, ``output_text`` (the answer) or ``refusal``; a ``function_call`` item
is one tool call, with ``call_id`` (what the tool result must quote),
``name`` and ``arguments`` as JSON *text*. Other items (``reasoning``,
hosted tools such as ``web_search_call``) run on the server and are not the
loop's business. ``usage`` counts ``input_tokens`` and ``output_tokens``.

There is no ``finish_reason``. The round's end is ``status``, documented as
``completed``, ``failed``, ``in_progress``, ``cancelled``, ``queued`` or
``incomplete``; an incomplete response says why in
``incomplete_details.reason``: ``max_output_tokens``, ``content_filter`` and,
in the SDK installed here (``openai`` 3.57.0), ``max_messages`` and
``steered``.

The quirk that matters: **a round of function calls ends with status
``completed``**, exactly like a final answer. The normalised value is
``stop`` in both cases (the raw value is ``completed``), because that is what
the API says; a loop that stops on "completed" stops before its first tool
result is ever read. Tool calls decide whether to go on.

Mapping choices that need a word (the ``openai-responses`` rows of
:data:`agentloops.stops.STOP_VALUES`):

- ``completed`` with a ``refusal`` content part → ``refusal``.
- ``incomplete`` / ``max_messages``: the SDK documents only the name; a limit
  cut the response short, so it is treated like a token limit (``length``).
- ``incomplete`` / ``steered``: "stopped at a safe output boundary after a
  WebSocket response.steer event; the server can create a successor response"
  — the turn is not over and asks to be continued (``pause``).
- ``failed``, ``cancelled``, ``in_progress``, ``queued``, and an
  ``incomplete`` with no reason: the provider says the response failed, was
  cancelled or is not finished → ``provider_error`` (raw ``failed:<error.code>``
  for a failure). A function call in such a body is never run: the correct
  loop aborts first.

Raw values are written ``completed`` or ``incomplete:<reason>``.

Sources:
    - openai/openai-python ``src/openai/types/responses/response.py``
      (``status``, ``IncompleteDetails.reason``, ``output``),
      ``response_status.py``, ``response_output_message.py``,
      ``response_output_refusal.py``, ``response_function_tool_call.py``,
      ``response_usage.py``; the same files in the installed ``openai``
      3.57.0, which add ``max_messages`` and ``steered`` (with the docstring
      quoted above) and the ``cancelled`` and ``queued`` statuses.
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
from agentloops.response import FinishReason
from agentloops.stops import ABSENT, normalise

FORMAT = "openai-responses"
FIELD = "status"
REASON_FIELD = "incomplete_details.reason"


def adapt(raw: object, where: str = "response") -> Reply:
    """Convert one non-streaming Responses body into a :class:`~agentloops.providers.reply.Reply`.

    Args:
        raw: the JSON body exactly as the API returned it (extra keys are ignored).
        where: the path of ``raw`` in error messages.

    Raises:
        RawBodyError: a field the adapter needs is missing or has the wrong type.
    """
    body = need_object(raw, where)
    status = string(body, "status", where)
    assert status is not None
    texts: list[str] = []
    calls: list[Call] = []
    refused = False
    for i, item_raw in enumerate(items(body, "output", where, "a list of output items")):
        item_at = f"{where}.output[{i}]"
        item = need_object(item_raw, item_at)
        kind = string(item, "type", item_at)
        if kind == "message":
            for j, part_raw in enumerate(items(item, "content", item_at, "a list of content parts")):
                part_at = f"{item_at}.content[{j}]"
                part = need_object(part_raw, part_at)
                part_kind = string(part, "type", part_at)
                if part_kind == "output_text":
                    texts.append(string(part, "text", part_at) or "")
                elif part_kind == "refusal":
                    refused = True
        elif kind == "function_call":
            calls.append(tool_call(item_at, call_id=string(item, "call_id", item_at), name=item.get("name"),
                                   arguments=string(item, "arguments", item_at), id_field="call_id"))
        elif kind == "custom_tool_call":
            text = string(item, "input", item_at) or ""
            calls.append(tool_call(item_at, call_id=string(item, "call_id", item_at), name=item.get("name"),
                                   arguments=json.dumps({"input": text}, ensure_ascii=False),
                                   id_field="call_id", arguments_field="input"))

    finish, raw_value = _status(body, status, where, refused)
    usage_body = field(body, "usage", where, "a usage object", types=OBJECT, optional=True)
    usage = make_usage(count(usage_body, "input_tokens", f"{where}.usage"),
                       count(usage_body, "output_tokens", f"{where}.usage"))
    return build(where, content=join_text(texts), calls=calls, finish=finish, raw=raw_value, usage=usage)


def _status(body: Mapping[str, object], status: str, where: str, refused: bool) -> tuple[FinishReason, str]:
    """The normalised reason and the raw value written ``status`` or ``status:detail``."""
    if status == "completed" and refused:
        return "refusal", status
    if status == "incomplete":
        details = field(body, "incomplete_details", where, "an object with the reason", types=OBJECT,
                        optional=True)
        reason = string(details, "reason", f"{where}.incomplete_details", optional=True) if details else None
        raw = status if reason is None else f"{status}:{reason}"
        return normalise(FORMAT, REASON_FIELD, ABSENT if reason is None else reason), raw
    if status == "failed":
        error = field(body, "error", where, "an error object", types=OBJECT, optional=True)
        code = string(error, "code", f"{where}.error", optional=True) if error else None
        return normalise(FORMAT, FIELD, status), f"{status}:{code}" if code else status
    return normalise(FORMAT, FIELD, status), status


_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def assemble_stream(events: Sequence[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """The whole Response a stream of ``response.*`` events adds up to.

    ``response.output_item.added`` opens item ``output_index``;
    ``response.content_part.added`` opens a part of a message item;
    ``response.output_text.delta``, ``response.refusal.delta`` and
    ``response.function_call_arguments.delta`` add text to them. The terminal
    event (``response.completed``, ``response.incomplete`` or
    ``response.failed``) gives the status, its details and ``usage``; the
    output is the one the deltas built. ``sequence_number`` must grow.

    Raises:
        StreamBroken: events out of order (a falling ``sequence_number``, a
            delta for an item never added), an ``error`` event, or no terminal event.
        RawBodyError: an event is not shaped as documented.
    """
    output: dict[int, dict[str, Any]] = {}
    terminal: Mapping[str, Any] | None = None
    last = -1
    for i, raw in enumerate(events):
        at = f"{where}[{i}]"
        event = need_object(raw, at)
        kind = string(event, "type", at) or ""
        number = field(event, "sequence_number", at, "a whole number", types=(int,), optional=True)
        if number is not None:
            if number <= last:
                raise StreamBroken(N_("event {i} has sequence_number {number} after {last}"), _partial(output), i=i,
                                   number=number, last=last)
            last = number
        if kind == "error":
            raise StreamBroken(N_("event {i} is an error: {error}"), _partial(output), i=i,
                               error=event.get("code") or event.get("message"))
        if kind in _TERMINAL:
            terminal = need_object(event.get("response"), f"{at}.response")
            continue
        if kind == "response.output_item.added":
            index = field(event, "output_index", at, "the item's index", types=(int,))
            item = dict(need_object(event.get("item"), f"{at}.item"))
            output[index] = {**item, "content": list(item.get("content") or [])} if item.get("type") == "message" \
                else item
            continue
        if not kind.endswith(".delta") and kind != "response.content_part.added":
            continue
        index = field(event, "output_index", at, "the item's index", types=(int,))
        if index not in output:
            raise StreamBroken(N_("event {i} ({kind}) adds to output item {index} before it was added"),
                               _partial(output), i=i, kind=kind, index=index)
        _add(output[index], kind, event, at, i)
    body = _partial(output)
    if terminal is None:
        raise StreamBroken(N_("the stream ended without response.completed, response.incomplete or response.failed"),
                           body)
    return {**terminal, "output": body["output"]}


def _add(item: dict[str, Any], kind: str, event: Mapping[str, Any], at: str, n: int) -> None:
    if kind == "response.function_call_arguments.delta":
        item["arguments"] = (item.get("arguments") or "") + (string(event, "delta", at) or "")
        return
    parts = item.setdefault("content", [])
    if kind == "response.content_part.added":
        parts.append(dict(need_object(event.get("part"), f"{at}.part")))
        return
    index = field(event, "content_index", at, "the part's index", types=(int,))
    if not 0 <= index < len(parts):
        raise StreamBroken(N_("event {n} ({kind}) adds to content part {index} before it was added"), n=n, kind=kind,
                           index=index)
    key = "refusal" if kind == "response.refusal.delta" else "text"
    parts[index][key] = parts[index].get(key, "") + (string(event, "delta", at) or "")


def _partial(output: dict[int, dict[str, Any]]) -> dict[str, Any]:
    return {"status": "completed", "output": [output[k] for k in sorted(output)]}


def stream_body(body: Mapping[str, Any], rng: random.Random | None = None) -> list[dict[str, Any]]:
    """``body`` as the events the Responses API streams (text and arguments split at ``rng``'s points)."""
    events: list[dict[str, Any]] = [{"type": "response.created",
                                     "response": {**body, "status": "in_progress", "output": []}}]
    for index, item in enumerate(body.get("output") or []):
        kind = item.get("type")
        if kind == "message":
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {**item, "content": []}})
            for j, part in enumerate(item.get("content") or []):
                key = "refusal" if part.get("type") == "refusal" else "text"
                events.append({"type": "response.content_part.added", "output_index": index, "content_index": j,
                               "part": {**part, key: ""}})
                events += [{"type": f"response.{'refusal' if key == 'refusal' else 'output_text'}.delta",
                            "output_index": index, "content_index": j, "delta": p}
                           for p in pieces(part.get(key) or "", rng) if p]
        elif kind == "function_call":
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {**item, "arguments": ""}})
            events += [{"type": "response.function_call_arguments.delta", "output_index": index, "delta": p}
                       for p in pieces(item.get("arguments") or "", rng) if p]
        else:
            events.append({"type": "response.output_item.added", "output_index": index, "item": dict(item)})
        events.append({"type": "response.output_item.done", "output_index": index, "item": dict(item)})
    status = body.get("status")
    terminal = {"completed": "response.completed", "failed": "response.failed"}.get(str(status),
                                                                                   "response.incomplete")
    events.append({"type": terminal, "response": dict(body)})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


__all__ = ["FIELD", "FORMAT", "REASON_FIELD", "adapt", "assemble_stream", "stream_body"]
