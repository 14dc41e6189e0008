"""Record a real tool-calling run with the official SDKs, and save it as a scenario to replay offline.

This is the optional extra ``agentloops[record]`` (the ``openai`` and
``anthropic`` packages). A learner with a key runs a real task once::

    import openai
    from agentloops.providers.record import RecordTool, record

    tools = [RecordTool("read_file", "Read a text file.", PATH_SCHEMA, lambda a: open(a["path"]).read())]
    recording = record(openai.OpenAI(), "openai-chat", model="gpt-4.1-mini", tools=tools,
                       prompt="How many lines does notes.txt have?", name="my-run")
    recording.save("my-run.json")

and from then on replays it with no key and no network, through every
criterion: ``agentloops compare --scenarios my-run.json``.

What is saved is every response body **exactly as the API returned it**
(read from the SDK's raw-response wrapper, not re-serialised from its parsed
objects), in the provider's own format, so the file says what the server
said. Tool results are saved per tool (the first text each tool returned),
because a scenario replays one canned result per tool; the loop's decisions
never depend on the text of a tool result.

The live run is the package's own loop (:func:`agentloops.loop.run_loop`)
with a model that calls the API, so a real truncation or refusal ends the
recording exactly as it would end a replay; what was recorded up to that
point is still saved.

Three formats can be recorded: ``openai-chat`` (``client.chat.completions``,
also any OpenAI-compatible server through the client's ``base_url``: vLLM,
llama.cpp, Ollama's ``/v1``, Gemini's compatibility endpoint…),
``openai-responses`` (``client.responses``) and ``anthropic``
(``client.messages``). Assistant turns are sent back as the API returned
them (Responses output items, Anthropic content blocks) — Anthropic requires
a ``pause_turn`` turn to come back as-is, and thinking blocks must keep their
signatures.

The SDKs are imported here and nowhere else, and only when needed: without
the extra, :func:`openai_client` and :func:`anthropic_client` fail with one
line saying what to install.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from agentloops.errors import UsageError
from agentloops.loop import DEFAULT_MAX_STEPS, CriterionLike, run_loop
from agentloops.messages import Message
from agentloops.providers import adapt
from agentloops.record import RunRecord
from agentloops.response import Response
from agentloops.run_errors import RunError
from agentloops.scenario import Scenario, scenario_from_dict

RecordFormat = Literal["openai-chat", "openai-responses", "anthropic"]
"""The formats the recorder can call: the ones the two SDKs of the extra speak."""

RECORD_FORMATS: tuple[RecordFormat, ...] = ("openai-chat", "openai-responses", "anthropic")

_SDK_OF: dict[str, str] = {"openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic"}


class RecordExtraMissing(UsageError, ImportError):
    """The optional ``agentloops[record]`` extra (the provider SDKs) is not installed."""


def require(package: str) -> ModuleType:
    """Import an SDK of the extra, or fail with the one line that says how to get it."""
    try:
        return importlib.import_module(package)
    except ImportError:
        raise RecordExtraMissing(
            f"recording needs the optional extra: pip install 'agentloops[record]' (the {package} package is missing)"
        ) from None


def openai_client(**kwargs: Any) -> Any:
    """An ``openai.OpenAI`` client (keyword arguments as the SDK takes them: ``api_key``, ``base_url``…)."""
    return require("openai").OpenAI(**kwargs)


def anthropic_client(**kwargs: Any) -> Any:
    """An ``anthropic.Anthropic`` client (keyword arguments as the SDK takes them)."""
    return require("anthropic").Anthropic(**kwargs)


@dataclass(frozen=True)
class RecordTool:
    """A tool the real model may call while recording.

    Attributes:
        name: the tool's name, as the model will call it.
        description: one sentence the model reads to decide when to call it.
        parameters: the JSON schema of its arguments (an ``"object"`` schema).
        run: a function of the parsed arguments returning text, or a fixed text.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    run: Callable[[dict[str, Any]], str] | str

    def schema(self, format: str) -> dict[str, Any]:
        """The tool declaration in ``format``'s request shape."""
        parameters = dict(self.parameters)
        if format == "openai-chat":
            return {"type": "function",
                    "function": {"name": self.name, "description": self.description, "parameters": parameters}}
        if format == "openai-responses":
            return {"type": "function", "name": self.name, "description": self.description, "parameters": parameters}
        return {"name": self.name, "description": self.description, "input_schema": parameters}


class SDKModel:
    """A model for :func:`~agentloops.loop.run_loop` that calls a provider through its official SDK.

    Every raw response body is kept in :attr:`raw_responses` and every request
    body in :attr:`requests`, in call order.
    """

    def __init__(self, client: Any, format: RecordFormat, *, model: str, tools: Sequence[RecordTool],
                 options: Mapping[str, Any] | None = None) -> None:
        if format not in RECORD_FORMATS:
            raise UsageError(f"cannot record format {format!r}; expected one of: {', '.join(RECORD_FORMATS)}")
        self.client = client
        self.format: RecordFormat = format
        self.model = model
        self.tools = tuple(tools)
        self.options = dict(options or {})
        self.raw_responses: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []

    def __call__(self, messages: Sequence[Message]) -> Response:
        body = self.request_body(messages)
        self.requests.append(body)
        raw = _read_json(self._send(body))
        if not isinstance(raw, dict):
            raise UsageError(f"the {self.format} endpoint returned {type(raw).__name__}, not a JSON object")
        self.raw_responses.append(raw)
        return adapt(self.format, raw, f"responses[{len(self.raw_responses) - 1}]")

    def _send(self, body: dict[str, Any]) -> Any:
        if self.format == "openai-chat":
            return self.client.chat.completions.with_raw_response.create(**body)
        if self.format == "openai-responses":
            return self.client.responses.with_raw_response.create(**body)
        return self.client.messages.with_raw_response.create(**body)

    def request_body(self, messages: Sequence[Message]) -> dict[str, Any]:
        """The request for ``messages`` in this format (assistant turns replayed from the raw bodies)."""
        body: dict[str, Any] = {"model": self.model}
        if self.tools:
            body["tools"] = [t.schema(self.format) for t in self.tools]
        if self.format == "openai-chat":
            body["messages"] = [m.to_dict() for m in messages]
        elif self.format == "openai-responses":
            body["input"] = self._responses_input(messages)
        else:
            body["messages"] = self._anthropic_messages(messages)
            body.setdefault("max_tokens", 1024)
        body.update(self.options)
        return body

    def _responses_input(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        turn = 0
        for message in messages:
            if message.role == "assistant":
                items.extend(self.raw_responses[turn].get("output", []))
                turn += 1
            elif message.role == "tool":
                items.append({"type": "function_call_output", "call_id": message.tool_call_id,
                              "output": message.content or ""})
            else:
                items.append({"role": message.role, "content": message.content or ""})
        return items

    def _anthropic_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        turn = 0
        for message in messages:
            if message.role == "assistant":
                out.append({"role": "assistant", "content": self.raw_responses[turn].get("content", [])})
                turn += 1
            elif message.role == "tool":
                block = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content or ""}
                if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                    out[-1]["content"].append(block)
                else:
                    out.append({"role": "user", "content": [block]})
            else:
                out.append({"role": "user", "content": message.content or ""})
        return out


def _read_json(raw_response: Any) -> Any:
    """The body of an SDK raw-response wrapper, parsed from the bytes the server sent."""
    read = getattr(raw_response, "read", None)
    data = read() if callable(read) else raw_response.content
    return json.loads(data)


@dataclass
class Recording:
    """A recorded run: the live run's record, the raw bodies, and the scenario that replays them.

    Attributes:
        scenario: the replayable scenario (provider format, raw bodies kept).
        live: the record of the live run (the correct loop, unless told otherwise).
        error: the error code the live run ended with, or ``None``.
        requests: every request body sent, in order.
    """

    scenario: Scenario
    live: RunRecord
    error: str | None
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def raw_responses(self) -> tuple[dict[str, Any], ...]:
        """Every response body, exactly as the API returned it."""
        return self.scenario.raw_responses

    def to_dict(self) -> dict[str, Any]:
        """The scenario file's content."""
        data = self.scenario.model_dump(exclude={"responses", "raw_responses"}, exclude_none=True)
        data["responses"] = list(self.scenario.raw_responses)
        return data

    def save(self, path: str | Path) -> Path:
        """Write the scenario file (UTF-8 JSON) and return its path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        return target


def record(
    client: Any,
    format: RecordFormat,
    *,
    model: str,
    tools: Sequence[RecordTool],
    prompt: str,
    name: str,
    title: str | None = None,
    teaches: str | None = None,
    criterion: CriterionLike = "correct",
    max_steps: int = DEFAULT_MAX_STEPS,
    options: Mapping[str, Any] | None = None,
) -> Recording:
    """Run a real tool-calling task once and keep every raw response as a scenario.

    Args:
        client: an ``openai.OpenAI`` client (for ``openai-chat`` and ``openai-responses``;
            point ``base_url`` at any compatible server) or an ``anthropic.Anthropic`` client.
        format: which API to call (see :data:`RecordFormat`).
        model: the model name the API expects.
        tools: the tools the model may call, with real implementations.
        prompt: the user message that starts the run.
        name: the scenario's name (lowercase letters, digits, dashes).
        title: one line for tables (default: derived from ``name``).
        teaches: what the recording shows (default: a sentence naming model and format).
        criterion: the stop criterion of the live run (default: the correct loop).
        max_steps: the cap on model calls.
        options: extra request fields (``max_tokens``, ``temperature``, ``tool_choice``…).

    Returns:
        The recording; call :meth:`Recording.save` to write the scenario file.

    Raises:
        RecordExtraMissing: the SDK for ``format`` is not installed.
    """
    require(_SDK_OF.get(format, "openai"))
    results: dict[str, str] = {}

    def tool_function(tool: RecordTool) -> Callable[[dict[str, Any]], str]:
        def call(arguments: dict[str, Any]) -> str:
            text = tool.run if isinstance(tool.run, str) else str(tool.run(arguments))
            results.setdefault(tool.name, text)
            return text
        return call

    sdk_model = SDKModel(client, format, model=model, tools=tools, options=options)
    error: str | None = None
    try:
        live = run_loop(sdk_model, {t.name: tool_function(t) for t in tools}, criterion=criterion,
                        max_steps=max_steps, prompt=prompt, label=name)
    except RunError as exc:
        if exc.record is None:
            raise
        live, error = exc.record, exc.code
    if not sdk_model.raw_responses:
        raise UsageError("the live run made no model call, so there is nothing to record")
    data = {
        "name": name,
        "title": title or name.replace("-", " "),
        "teaches": teaches or (
            f"A real run of {model} recorded through the {format} API: {len(sdk_model.raw_responses)} raw "
            f"response(s), replayed offline through every criterion."),
        "group": "custom",
        "format": format,
        "prompt": prompt,
        "tools": {t.name: results.get(t.name, "(not called during the recording)") for t in tools},
        "responses": list(sdk_model.raw_responses),
    }
    scenario = scenario_from_dict(data, f"recording {name!r}")
    return Recording(scenario=scenario, live=live, error=error, requests=sdk_model.requests)


__all__ = [
    "RECORD_FORMATS",
    "RecordExtraMissing",
    "RecordFormat",
    "RecordTool",
    "Recording",
    "SDKModel",
    "anthropic_client",
    "openai_client",
    "record",
    "require",
]
