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

from collections.abc import Mapping

from agentloops.providers._common import (
    build,
    count,
    fail,
    field,
    items,
    join_text,
    make_usage,
    need_object,
    string,
    tool_call,
)
from agentloops.response import Response, ToolCall
from agentloops.stops import normalise

FORMAT = "anthropic"
FIELD = "stop_reason"


def adapt(raw: object, where: str = "response") -> Response:
    """Convert one non-streaming Messages body into a :class:`Response`.

    Args:
        raw: the JSON body exactly as the API returned it (extra keys are ignored).
        where: the path of ``raw`` in error messages.

    Raises:
        RawBodyError: a field the adapter needs is missing or has the wrong type.
    """
    body = need_object(raw, where)
    stop = string(body, "stop_reason", where)
    if not stop:
        raise fail(f"{where}.stop_reason", "a stop_reason (never empty in a non-streaming body)", stop)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, block_raw in enumerate(items(body, "content", where, "a list of content blocks")):
        block_at = f"{where}.content[{i}]"
        block = need_object(block_raw, block_at)
        kind = string(block, "type", block_at)
        if kind == "text":
            texts.append(string(block, "text", block_at) or "")
        elif kind == "tool_use":
            tool_input = field(block, "input", block_at, "the tool input object", types=(Mapping,))
            calls.append(tool_call(block_at, call_id=block.get("id"), name=block.get("name"),
                                   arguments=tool_input, arguments_field="input"))

    usage_body = field(body, "usage", where, "a usage object", types=(Mapping,), optional=True)
    usage_at = f"{where}.usage"
    prompt_parts = [count(usage_body, key, usage_at)
                    for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    known = [n for n in prompt_parts if n is not None]
    usage = make_usage(sum(known) if known else None, count(usage_body, "output_tokens", usage_at))
    return build(where, content=join_text(texts), calls=calls, finish=normalise(FORMAT, FIELD, stop), raw=stop,
                 usage=usage)


__all__ = ["FIELD", "FORMAT", "adapt"]
