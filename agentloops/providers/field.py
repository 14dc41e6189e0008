"""The field: abnormal rounds real servers have sent, each from a public report, and what each loop makes of them.

Every case in ``data/field/`` is one JSON file: the server and its version,
the report(s) it is rebuilt from (``sources``, public URLs), what the report
says (``what``), which details are ours (``reconstructed``), the
``expected`` verdict a careful client should reach, and a runnable scenario
holding the raw body or the streamed chunks. The verdict of a run is
``"answer"`` or the error code it raised.

:func:`field_table` runs every case through the three naive tests, the
article's own loop (:data:`agentloops.criteria.ARTICLE_LOOP`) and ours
(``correct``); ``frameworks_scenario`` names the framework-table scenario of
the same kind, so the notebook can say which frameworks would have caught it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentloops.criteria import ARTICLE_LOOP, NAIVE_CRITERIA, Criterion
from agentloops.errors import ErrorCode, ScenarioError, describe_validation_error
from agentloops.i18n import N_, Phrase, _, shown
from agentloops.jsonfile import one_line, parse_json, read_text, shown_path
from agentloops.loop import run
from agentloops.record import RunRecord
from agentloops.resources import data_dir
from agentloops.scenario import Scenario, scenario_from_dict

Verdict = Literal["answer"] | ErrorCode
"""What a run ends with: an answer, or the error code it raised."""


FIELD_SAYS: tuple[str, ...] = (
    N_("vLLM (OpenAI-compatible /v1/chat/completions, streaming, a tool parser on)"),
    N_("vLLM (OpenAI-compatible /v1/chat/completions, non-streaming)"),
    N_("main as of the report (chat_completion/serving.py)"),
    N_("vLLM serving DeepSeek-V4-Flash (DSpark recipe), OpenAI-compatible chat completions"),
    N_("recipe main, 2026-08"),
    N_("imp (a local inference server, OpenAI-compatible), Qwen3.8 thinking model"),
    N_("before pull request #1442"),
    N_("LM Studio local server, a reasoning model emitting <think> tags"),
    N_("vLLM serving Qwen3-8B, streaming chat completions"),
    N_("0.15 and 0.9.2"),
    N_("Azure OpenAI and OpenAI chat completions"),
    N_("as reported 2026-04"),
    N_("OmniRoute (OpenAI-compatible gateway)"),
    N_("vLLM (OpenAI-compatible streaming)"),
    N_("main as of 2026-09"),
    N_("an OpenAI-compatible gateway (as seen by the pi coding agent)"),
    N_("as reported 2026-08"),
    N_("Ollama /api/chat (streaming), llama3.2:3b"),
    N_("Ollama npm library 0.6.3"),
    N_("vLLM, Qwen coder with --tool-call-parser hermes"),
    N_("as reported 2025-07"),
    N_("llama.cpp llama-server (--jinja), OpenAI-compatible chat completions"),
    N_("docs/function-calling.md"),
    N_("Anthropic Messages via Amazon Bedrock Converse (streaming), claude-sonnet-4-5"),
    N_("as reported 2026-06"),
    N_("Gemini API (google-genai), gemini-2.5-flash, streaming"),
    N_("as reported 2025-10"),
    N_("Gemini on Vertex AI (via the DIAL adapter)"),
    N_("as reported 2025-11"),
    N_("a streamed tool call cut by max_tokens, labelled tool_calls"),
    N_("Once any tool-call delta has been streamed, vLLM's streaming handler rewrote the terminal finish_reason to "
       "tool_calls whatever the engine said, so a call cut off by max_tokens mid-arguments ended with tool_calls and "
       "arguments that do not parse; the non-streaming path reported length for the same request."),
    N_("The chunk sequence follows the report's description (tool_choice required, a sweep of max_tokens); the "
       "model, ids, tokens and argument text are ours."),
    N_("<think>\nThe user wants the number of lines in notes.txt. I should call read_file and then"),
    N_("The notes list two actions: ship the"),
    N_("The file"),
    N_("hello"),
)
"""The cases' words a notebook shows, for the catalog: every server and version, the first case's report, and the
answers the cases' own model texts make (a case's texts are phrases and :func:`describe` shows an answer through
the catalog, as :data:`agentloops.scenario.SCENARIO_SAYS` does for the shipped scenarios)."""


class FieldCase(BaseModel):
    """One abnormal round a real server sent, rebuilt from a public report.

    Attributes:
        name: the case's name (also its scenario's).
        title: one line.
        server: the server or provider, and how it was called.
        version: the version the report names.
        sources: the public reports and documentation it is rebuilt from (URLs).
        what: what the report says happened.
        reconstructed: which details are ours (ids, texts, counts), not the report's.
        expected: the verdict a careful client should reach.
        frameworks_scenario: the framework-table scenario of the same kind, if any.
        scenario: the runnable scenario (its responses raw bodies or streams).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=1)
    server: str = Field(min_length=1)
    version: str = Field(min_length=1)
    sources: tuple[str, ...] = Field(min_length=1)
    what: str = Field(min_length=1)
    reconstructed: str = Field(min_length=1)
    expected: Verdict
    frameworks_scenario: str | None = None
    scenario: Scenario

    @field_validator("title", "server", "version", "what", "reconstructed")
    @classmethod
    def _phrase(cls, text: str) -> str:
        return Phrase(text)

    @field_validator("sources")
    @classmethod
    def _urls(cls, sources: tuple[str, ...]) -> tuple[str, ...]:
        for url in sources:
            if not url.startswith("https://"):
                raise ValueError(f"expected an https:// URL of a public report; got {url!r}")
        return sources

    @field_validator("scenario", mode="before")
    @classmethod
    def _load(cls, value: Any) -> Any:
        return value if isinstance(value, Scenario) else scenario_from_dict(value, "scenario")

    @property
    def streamed(self) -> bool:
        """True when any response of the case arrives as a stream."""
        return any("stream" in body for body in self.scenario.raw_responses)


def field_dir() -> Path:
    """The folder of the catalogue."""
    return data_dir() / "field"


def read_case(path: str | Path) -> FieldCase:
    """One case file, validated; a malformed file fails in one line naming it."""
    where = shown_path(path)
    data = parse_json(read_text(path, error=ScenarioError, what=N_("field case")), where=where, error=ScenarioError)
    try:
        return FieldCase.model_validate(data)
    except (ValidationError, ScenarioError) as exc:
        text = describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise ScenarioError(one_line(f"{where}: {text}")) from None


@cache
def field_cases() -> tuple[FieldCase, ...]:
    """Every case of the catalogue, in file order."""
    return tuple(read_case(path) for path in sorted(field_dir().glob("*.json")))


def verdict(record: RunRecord) -> Verdict:
    """``"answer"`` for a run that returned one, else the error code it raised."""
    return record.error or "answer"


def describe(record: RunRecord) -> str:
    """A run in a few words, in the language in use: what it raised, that it spun to the cap, or its answer."""
    if record.error:
        return _("raises {error}").format(error=record.error)
    if record.hit_cap:
        return _("spins {n} calls, returns {answer}").format(n=record.steps, answer=_shown(record.answer))
    return _("answers {answer}").format(answer=_shown(record.answer))


def _shown(answer: str | None) -> str:
    """An answer quoted and cut short, in the learner's language when it is one of the catalog's model texts."""
    if not answer:
        return "''"
    answer = shown(answer)
    return repr(answer if len(answer) <= 24 else answer[:23] + "…")


LOOPS: tuple[str, ...] = (*NAIVE_CRITERIA, "article", "correct")
"""The loops of the table, in column order: the three naive tests, the article's loop, ours."""


def _criterion(name: str) -> str | Criterion:
    return ARTICLE_LOOP if name == "article" else name


@dataclass(frozen=True, slots=True)
class FieldRow:
    """One case through every loop.

    Attributes:
        case: the case.
        records: loop name → its run record (see :data:`LOOPS`).
    """

    case: FieldCase
    records: dict[str, RunRecord]

    def verdict(self, loop: str) -> Verdict:
        """What ``loop`` ended with on this case."""
        return verdict(self.records[loop])

    @property
    def ours_right(self) -> bool:
        """True when our loop reaches the expected verdict."""
        return self.verdict("correct") == self.case.expected

    @property
    def article_right(self) -> bool:
        """True when the article's loop reaches the expected verdict."""
        return self.verdict("article") == self.case.expected

    def cells(self) -> list[str]:
        """The row as table cells."""
        return [self.case.name, _("stream") if self.case.streamed else _("body"), self.case.expected,
                *(describe(self.records[loop]) for loop in LOOPS)]


FIELD_HEADERS: tuple[str, ...] = ("case", "sent as", "expected", *LOOPS)


def field_row(case: FieldCase) -> FieldRow:
    """Run ``case`` through every loop of :data:`LOOPS`."""
    return FieldRow(case, {loop: run(case.scenario, _criterion(loop)) for loop in LOOPS})


@cache
def field_table() -> tuple[FieldRow, ...]:
    """Every case through every loop (computed once per process)."""
    return tuple(field_row(case) for case in field_cases())


def render_field_table(rows: tuple[FieldRow, ...] | None = None) -> str:
    """The table as aligned text."""
    from agentloops.tables import text_table

    return text_table(FIELD_HEADERS, [row.cells() for row in (rows if rows is not None else field_table())])


__all__ = [
    "FIELD_HEADERS",
    "LOOPS",
    "FieldCase",
    "FieldRow",
    "Verdict",
    "describe",
    "field_cases",
    "field_dir",
    "field_row",
    "field_table",
    "read_case",
    "render_field_table",
    "verdict",
]
