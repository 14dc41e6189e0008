"""The stop vocabulary: how a round ended, what kind of end that is, and every provider's value mapped onto it.

Three questions, kept apart on purpose:

1. *How did the round end?* — the normalised :data:`FinishReason`, translated
   from the provider's own stop value by one table, :data:`STOP_VALUES`.
2. *What kind of end is that?* — :data:`KINDS`: ``go_on`` (tool calls to run,
   or a paused turn to send back), ``finished``, or ``abnormal``.
3. *What does the loop do?* — decided in :func:`agentloops.criteria.correct`,
   which aborts on every abnormal end before any tool call of the round runs,
   whatever the tool calls look like.

:data:`STOP_VALUES` lists every documented stop value of the five wire formats,
each with its source (an SDK type or a documentation page). The adapters in
:mod:`agentloops.providers` read their mapping from it through :func:`normalise`;
a value that is not in it is ``unknown``, and the adapter keeps the raw value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from agentloops.errors import ErrorCode
from agentloops.i18n import N_

FinishReason = Literal[
    "stop",
    "tool_calls",
    "length",
    "content_filter",
    "refusal",
    "pause",
    "malformed_tool_call",
    "provider_error",
    "unknown",
]
"""How a round ended, normalised across providers.

- ``stop``: the model finished its turn (a natural end or a stop sequence).
- ``tool_calls``: the model handed over to tools.
- ``length``: a token limit cut the round off.
- ``content_filter``: the provider withheld or removed output, or blocked the prompt.
- ``refusal``: the model explicitly declined.
- ``pause``: the provider paused a long turn and asks to be called again (Anthropic ``pause_turn``).
- ``malformed_tool_call``: the provider reports a tool call it could not produce (Gemini).
- ``provider_error``: the provider says the turn failed, was cancelled or never finished.
- ``unknown``: a value the package does not know; the raw value is in ``raw_finish_reason``.

The finish reason says *how* a round ended. Whether the loop goes on is decided
elsewhere — by the tool calls, in the correct loop (see :mod:`agentloops.criteria`).
"""

StopKind = Literal["go_on", "finished", "abnormal"]
"""The kind of end: more work to do, an answer, or an end the loop must not take for either."""

KINDS: dict[FinishReason, StopKind] = {
    "tool_calls": "go_on",
    "pause": "go_on",
    "stop": "finished",
    "length": "abnormal",
    "content_filter": "abnormal",
    "refusal": "abnormal",
    "malformed_tool_call": "abnormal",
    "provider_error": "abnormal",
    "unknown": "abnormal",
}
"""The kind of every normalised reason. Only ``go_on`` and ``finished`` may lead to a tool run or an answer."""

ABORT_CODES: dict[FinishReason, ErrorCode] = {
    "length": "truncated",
    "content_filter": "content_filter",
    "refusal": "refusal",
    "malformed_tool_call": "malformed_tool_call",
    "provider_error": "provider_error",
    "unknown": "unknown_stop",
}
"""The error code an abnormal end raises (the ``error`` of the run record)."""

ABNORMAL: frozenset[FinishReason] = frozenset(r for r, kind in KINDS.items() if kind == "abnormal")
"""The normalised reasons of the ``abnormal`` kind."""

FINISH_REASONS: tuple[FinishReason, ...] = get_args(FinishReason)
"""Every normalised reason, in the order of :data:`FinishReason`."""


def kind_of(reason: FinishReason) -> StopKind:
    """The kind of end ``reason`` is (see :data:`KINDS`)."""
    return KINDS[reason]


ProviderFormat = Literal["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]
"""The raw formats a scenario file may declare in its ``"format"`` field."""

FORMATS: tuple[ProviderFormat, ...] = get_args(ProviderFormat)
"""Every provider format, in the order tables show them."""

ABSENT = "(absent)"
"""The table's name for a stop field the body leaves out."""


@dataclass(frozen=True, slots=True)
class StopValue:
    """One documented stop signal of a provider and how the package normalises it.

    Attributes:
        format: the wire format.
        field: where the signal lives in the raw body (``choices[0].finish_reason``).
        value: the value as the provider sends it (:data:`ABSENT` when the field is left out).
        finish_reason: the normalised :data:`FinishReason`.
        meaning: what the provider's documentation says it means, in one line (English; shown through ``_()``).
        source: where that is documented (an SDK type or a documentation page).
    """

    format: ProviderFormat
    field: str
    value: str
    finish_reason: FinishReason
    meaning: str
    source: str

    @property
    def kind(self) -> StopKind:
        """The kind of end this value is."""
        return KINDS[self.finish_reason]


_CHAT = "openai-python types/chat/chat_completion.py: Choice.finish_reason"
_LLAMA_CPP = "ggml-org/llama.cpp docs/function-calling.md: the server's tool-call response (finish_reason tool)"
_CHAT_REFUSAL = "openai-python types/chat/chat_completion_message.py: ChatCompletionMessage.refusal"
_STATUS = "openai-python types/responses/response_status.py: ResponseStatus"
_INCOMPLETE = "openai-python types/responses/response.py: IncompleteDetails.reason"
_RESPONSE_REFUSAL = "openai-python types/responses/response_output_refusal.py"
_ANTHROPIC = "anthropic-sdk-python types/stop_reason.py: StopReason; Messages API reference"
_ANTHROPIC_BETA = "anthropic-sdk-python types/beta/beta_stop_reason.py: BetaStopReason"
_GEMINI = "googleapis/python-genai google/genai/types.py: FinishReason"
_GEMINI_BLOCK = "googleapis/python-genai google/genai/types.py: BlockedReason"
_VERTEX = "Vertex AI REST reference: GoogleCloudAiplatformV1Candidate.finishReason"
_FIREBASE = "Firebase AI Logic reference (com.google.firebase.ai.type.FinishReason); googleapis kotlin-genai"
_OLLAMA = "ollama/ollama llm/server.go: DoneReason (its closed-connection member is written as an omitted field)"
_OLLAMA_API = "ollama/ollama docs/api.md: Load a model / Unload a model"
_OLLAMA_OLD = "ollama/ollama docs/api.md: the older chat examples carry no done_reason"

_C: ProviderFormat = "openai-chat"
_R: ProviderFormat = "openai-responses"
_A: ProviderFormat = "anthropic"
_G: ProviderFormat = "gemini"
_O: ProviderFormat = "ollama"
_FINISH, _STATUS_FIELD, _REASON = "choices[0].finish_reason", "status", "incomplete_details.reason"
_CANDIDATE, _BLOCK = "candidates[0].finishReason", "promptFeedback.blockReason"

STOP_VALUES: tuple[StopValue, ...] = (
    # OpenAI Chat Completions: every member of the SDK's Literal, plus the refusal field.
    StopValue(_C, _FINISH, "stop", "stop", N_("a natural stop point or a provided stop sequence"), _CHAT),
    StopValue(_C, _FINISH, "length", "length", N_("the max_tokens of the request (or the model's limit) was reached"),
              _CHAT),
    StopValue(_C, _FINISH, "tool_calls", "tool_calls", N_("the model called a tool"), _CHAT),
    StopValue(_C, _FINISH, "content_filter", "content_filter", N_("content was omitted by a content filter flag"),
              _CHAT),
    StopValue(_C, _FINISH, "function_call", "tool_calls",
              N_("deprecated: the model called a function (message.function_call)"), _CHAT),
    StopValue(_C, _FINISH, "tool", "tool_calls", N_("llama.cpp's server: the model called a tool"), _LLAMA_CPP),
    StopValue(_C, "choices[0].message.refusal", "(non-null text)", "refusal",
              N_("the model refused; finish_reason is still stop"), _CHAT_REFUSAL),
    # OpenAI Responses: status, and the reason of an incomplete response.
    StopValue(_R, _STATUS_FIELD, "completed", "stop",
              N_("the response finished: an answer, or a round of function calls"), _STATUS),
    StopValue(_R, _STATUS_FIELD, "failed", "provider_error",
              N_("the model failed to generate a response (error.code says why)"), _STATUS),
    StopValue(_R, _STATUS_FIELD, "cancelled", "provider_error", N_("the response was cancelled"), _STATUS),
    StopValue(_R, _STATUS_FIELD, "in_progress", "provider_error", N_("not finished yet (background mode: poll for it)"),
              _STATUS),
    StopValue(_R, _STATUS_FIELD, "queued", "provider_error", N_("not started yet (background mode: poll for it)"),
              _STATUS),
    StopValue(_R, _REASON, "max_output_tokens", "length", N_("status incomplete: max_output_tokens was reached"),
              _INCOMPLETE),
    StopValue(_R, _REASON, "content_filter", "content_filter", N_("status incomplete: a content filter stopped it"),
              _INCOMPLETE),
    StopValue(_R, _REASON, "max_messages", "length", N_("status incomplete: a message limit was reached"), _INCOMPLETE),
    StopValue(_R, _REASON, "steered", "pause",
              N_("status incomplete: stopped at a safe boundary after a steer event; a successor may continue"),
              _INCOMPLETE),
    StopValue(_R, _REASON, ABSENT, "provider_error",
              N_("status incomplete with no reason: the response never finished"),
              _STATUS),
    StopValue(_R, "output[].content[].type", "refusal", "refusal",
              N_("a refusal part in a message item; status completed"), _RESPONSE_REFUSAL),
    # Anthropic Messages: every member of StopReason and BetaStopReason.
    StopValue(_A, "stop_reason", "end_turn", "stop", N_("the model reached a natural stopping point"), _ANTHROPIC),
    StopValue(_A, "stop_reason", "stop_sequence", "stop", N_("one of your custom stop_sequences was generated"),
              _ANTHROPIC),
    StopValue(_A, "stop_reason", "tool_use", "tool_calls", N_("the model invoked one or more tools"), _ANTHROPIC),
    StopValue(_A, "stop_reason", "max_tokens", "length",
              N_("the requested max_tokens or the model's maximum was exceeded"),
              _ANTHROPIC),
    StopValue(_A, "stop_reason", "model_context_window_exceeded", "length",
              N_("the model's context window was exceeded"),
              _ANTHROPIC),
    StopValue(_A, "stop_reason", "pause_turn", "pause",
              N_("a long-running turn was paused; send it back as-is to continue"), _ANTHROPIC),
    StopValue(_A, "stop_reason", "refusal", "refusal",
              N_("streaming classifiers intervened on a potential policy violation"), _ANTHROPIC),
    StopValue(_A, "stop_reason", "compaction", "pause",
              N_("beta: paused after compacting the context; send it back to continue"), _ANTHROPIC_BETA),
    # Gemini: every member of FinishReason (google-genai), the values other SDKs add, and BlockedReason.
    StopValue(_G, _CANDIDATE, "STOP", "stop",
              N_("a natural stop or a stop sequence; also ends a round of function calls"), _GEMINI),
    StopValue(_G, _CANDIDATE, "MAX_TOKENS", "length", N_("the configured maximum output tokens was reached"), _GEMINI),
    StopValue(_G, _CANDIDATE, "SAFETY", "content_filter", N_("the content potentially contains safety violations"),
              _GEMINI),
    StopValue(_G, _CANDIDATE, "RECITATION", "content_filter", N_("stopped because of potential recitation"), _GEMINI),
    StopValue(_G, _CANDIDATE, "LANGUAGE", "content_filter", N_("stopped because of an unsupported language"), _GEMINI),
    StopValue(_G, _CANDIDATE, "BLOCKLIST", "content_filter", N_("the content contains forbidden terms"), _GEMINI),
    StopValue(_G, _CANDIDATE, "PROHIBITED_CONTENT", "content_filter",
              N_("the content potentially contains prohibited content"), _GEMINI),
    StopValue(_G, _CANDIDATE, "SPII", "content_filter",
              N_("the content potentially contains sensitive personal information"), _GEMINI),
    StopValue(_G, _CANDIDATE, "IMAGE_SAFETY", "content_filter", N_("generated images have safety violations"), _GEMINI),
    StopValue(_G, _CANDIDATE, "IMAGE_PROHIBITED_CONTENT", "content_filter",
              N_("generated images have prohibited content"),
              _GEMINI),
    StopValue(_G, _CANDIDATE, "IMAGE_RECITATION", "content_filter", N_("a generated image may be a recitation"),
              _GEMINI),
    StopValue(_G, _CANDIDATE, "MODEL_ARMOR", "content_filter", N_("Vertex AI: the response was blocked by Model Armor"),
              _VERTEX),
    StopValue(_G, _CANDIDATE, "MALFORMED_FUNCTION_CALL", "malformed_tool_call",
              N_("the function call generated is invalid"), _GEMINI),
    StopValue(_G, _CANDIDATE, "UNEXPECTED_TOOL_CALL", "malformed_tool_call", N_("the tool call generated is invalid"),
              _GEMINI),
    StopValue(_G, _CANDIDATE, "TOO_MANY_TOOL_CALLS", "provider_error",
              N_("too many consecutive tool calls; the system exited execution"), _GEMINI),
    StopValue(_G, _CANDIDATE, "MALFORMED_RESPONSE", "provider_error", N_("the response was malformed"), _FIREBASE),
    StopValue(_G, _CANDIDATE, "MISSING_THOUGHT_SIGNATURE", "provider_error",
              N_("the request lacks a thought signature"),
              _FIREBASE),
    StopValue(_G, _CANDIDATE, "NO_IMAGE", "provider_error", N_("an image was expected but none was generated"),
              _GEMINI),
    StopValue(_G, _CANDIDATE, "IMAGE_OTHER", "provider_error", N_("image generation stopped for another reason"),
              _GEMINI),
    StopValue(_G, _CANDIDATE, "OTHER", "provider_error", N_("all other reasons that stopped the token generation"),
              _GEMINI),
    StopValue(_G, _CANDIDATE, "FINISH_REASON_UNSPECIFIED", "unknown", N_("the finish reason is unspecified"), _GEMINI),
    StopValue(_G, _BLOCK, "SAFETY", "content_filter", N_("no candidates: the prompt was blocked for safety"),
              _GEMINI_BLOCK),
    StopValue(_G, _BLOCK, "OTHER", "content_filter", N_("no candidates: the prompt was blocked for other reasons"),
              _GEMINI_BLOCK),
    StopValue(_G, _BLOCK, "BLOCKLIST", "content_filter", N_("no candidates: the prompt contains a blocklisted term"),
              _GEMINI_BLOCK),
    StopValue(_G, _BLOCK, "PROHIBITED_CONTENT", "content_filter",
              N_("no candidates: the prompt has prohibited content"),
              _GEMINI_BLOCK),
    StopValue(_G, _BLOCK, "IMAGE_SAFETY", "content_filter", N_("no candidates: the prompt is unsafe for images"),
              _GEMINI_BLOCK),
    StopValue(_G, _BLOCK, "MODEL_ARMOR", "content_filter", N_("no candidates: Vertex AI Model Armor blocked it"),
              _GEMINI_BLOCK),
    StopValue(_G, _BLOCK, "JAILBREAK", "content_filter", N_("no candidates: Vertex AI saw a jailbreak attempt"),
              _GEMINI_BLOCK),
    StopValue(_G, _BLOCK, "BLOCKED_REASON_UNSPECIFIED", "content_filter", N_("no candidates: reason unspecified"),
              _GEMINI_BLOCK),
    # Ollama /api/chat: the server's DoneReason, the load/unload replies, and older bodies without the field.
    StopValue(_O, "done_reason", "stop", "stop",
              N_("the completion stopped naturally; also ends a round of tool calls"),
              _OLLAMA),
    StopValue(_O, "done_reason", "length", "length",
              N_("the completion stopped at a length limit (num_predict or the context)"), _OLLAMA),
    StopValue(_O, "done_reason", "load", "provider_error",
              N_("an empty request loaded the model; nothing was generated"),
              _OLLAMA_API),
    StopValue(_O, "done_reason", "unload", "provider_error",
              N_("an empty request with keep_alive 0 unloaded the model; nothing was generated"), _OLLAMA_API),
    StopValue(_O, "done_reason", ABSENT, "stop", N_("older servers wrote no done_reason on a finished chat"),
              _OLLAMA_OLD),
)
"""Every documented stop signal of every format: the one table the adapters and the stop table read."""

_INDEX: dict[tuple[str, str, str], FinishReason] = {(v.format, v.field, v.value): v.finish_reason
                                                    for v in STOP_VALUES}


def stop_values(format: str) -> tuple[StopValue, ...]:
    """Every documented stop signal of ``format``, in table order."""
    return tuple(v for v in STOP_VALUES if v.format == format)


def normalise(format: str, field: str, value: str) -> FinishReason:
    """The normalised reason of a documented value of ``format`` in ``field``; anything else is ``unknown``."""
    return _INDEX.get((format, field, value), "unknown")


__all__ = [
    "ABNORMAL",
    "ABORT_CODES",
    "ABSENT",
    "FINISH_REASONS",
    "FORMATS",
    "KINDS",
    "STOP_VALUES",
    "FinishReason",
    "ProviderFormat",
    "StopKind",
    "StopValue",
    "kind_of",
    "normalise",
    "stop_values",
]
