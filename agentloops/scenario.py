"""Scenarios: a scripted model's responses and its tools' results, kept as data.

Each scenario is one JSON file under ``data/scenarios/``. The file is
validated once, on load, and a malformed file fails with a single line naming
the file, the field and what was expected.

A scenario's ``responses`` are in the package's own shape by default. With
``"format"`` set to a provider format (``openai-chat``, ``openai-responses``,
``anthropic``, ``gemini``, ``ollama``) they are raw response bodies exactly
as that API returns them, or ``{"stream": [chunk, ...]}`` as it streams them;
:mod:`agentloops.providers` converts them on load and the bodies stay
available in ``raw_responses``. ``max_tokens`` states the request's output
limit, so that a round whose output reached it reads as cut off.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError, model_validator

from agentloops.errors import ScenarioError, ScenarioNotFound, UsageError, describe_validation_error
from agentloops.i18n import N_
from agentloops.jsonfile import one_line, parse_json, quoted, read_text, shown_path
from agentloops.resources import data_dir
from agentloops.response import Response

DEFAULT_PROMPT = "How many lines does notes.txt have?"

SCENARIO_SAYS: tuple[str, ...] = (
    N_("How many lines does notes.txt have?"),
    N_("Meeting notes, 3 Nov\n- ship the loop fix\n- add a cap test\n(42 lines in total)"),
    N_("42"),
    N_("notes.txt"),
    N_("notes.txt has 42 lines."),
    N_("notes.txt has"),
    N_("Let me open the file first."),
    N_("I'll read the file."),
    N_("I'll check the project notes conventions first."),
    N_("The notes list two actions: ship the loop fix and"),
    N_("Say hello."),
    N_("Hello! How can I help?"),
    N_("Summarise report.txt, all ten pages."),
    N_("(one page of report.txt)"),
    N_("The report argues for raising, not returning, at the cap."),
)
"""What the shipped scenarios say — user prompts, model texts, tool results — marked for the catalog.

A scenario file stays as it is, in English: runs, traces and token counts use its text, which is data
(replays compare it byte for byte). A learner reads it in their language: wherever a text is shown
(:func:`~agentloops.response.show_content`, :func:`~agentloops.i18n.shown`), the catalog gives its
translation, like any other message. ``tests/test_i18n_run_texts.py`` checks that every text a shipped
scenario says is listed here and translated, so a new scenario file cannot slip through in English.
"""

ScenarioFormat = Literal["agentloops", "openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]
"""The shape of a scenario's ``responses``: the package's own (``agentloops``) or a provider's raw bodies."""

Group = Literal["article", "extra", "provider", "custom"]
"""``article``: the four scripts of the source article; ``extra``: the rounds it
leaves out; ``provider``: raw provider shapes; ``custom``: anything you write."""


class Scenario(BaseModel):
    """A scripted conversation: what the model will say, and what each tool returns.

    Attributes:
        name: short identifier, used on the command line (lowercase, digits, dashes).
        title: one line for tables.
        title_zh: the title in Chinese, as the source article names it (optional).
        teaches: one or two sentences on what the scenario shows.
        group: where it comes from (see :data:`Group`).
        prompt: the user message that starts the run.
        tools: tool name → the text it returns.
        responses: the model's replies in order; the last repeats once they run out.
        format: the shape the file gave ``responses`` in (see :data:`ScenarioFormat`).
        raw_responses: for a provider format, the raw bodies as the API returned them (a streamed
            response is kept as its ``{"stream": [...]}``).
        max_tokens: the request's output limit, when the scenario states it: output tokens equal to it
            are evidence of a cut (see :attr:`agentloops.response.Response.at_token_limit`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    title: str = Field(min_length=1)
    title_zh: str | None = None
    teaches: str = Field(min_length=1)
    group: Group = "custom"
    prompt: str = DEFAULT_PROMPT
    tools: dict[str, str] = Field(default_factory=dict)
    responses: tuple[Response, ...] = Field(min_length=1)
    format: ScenarioFormat = "agentloops"
    raw_responses: tuple[dict[str, Any], ...] = ()
    max_tokens: PositiveInt | None = None

    @model_validator(mode="before")
    @classmethod
    def _convert_raw_bodies(cls, data: Any) -> Any:
        try:
            return _stamp_limit(_convert_raw(data))
        except ScenarioError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _calls_name_known_tools(self) -> Scenario:
        for i, response in enumerate(self.responses):
            for j, call in enumerate(response.tool_calls):
                if call.name not in self.tools:
                    known = ", ".join(sorted(self.tools)) or "none"
                    where = f"responses[{i}].tool_calls[{j}].name" if self.format == "agentloops" else (
                        f"responses[{i}] (tool call {j + 1})")
                    raise ValueError(f"{where} {call.name!r} is not a tool of this scenario (tools: {known})")
        return self

    @model_validator(mode="after")
    def _raw_bodies_match(self) -> Scenario:
        if self.format == "agentloops" and self.raw_responses:
            raise ValueError("raw_responses: only a provider format keeps raw bodies; set format or drop them")
        if self.format != "agentloops" and len(self.raw_responses) != len(self.responses):
            raise ValueError(
                f"raw_responses: expected one raw body per response ({len(self.responses)}); "
                f"got {len(self.raw_responses)}"
            )
        return self


def _stamp_limit(data: Any) -> Any:
    """Give every response the request's ``max_tokens`` the scenario states (a response's own value wins)."""
    if not isinstance(data, dict):
        return data
    limit, responses = data.get("max_tokens"), data.get("responses")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1 or not isinstance(responses, (list, tuple)):
        return data  # nothing to stamp, or a bad value the field validators report
    stamped = [r.model_copy(update={"max_tokens": limit}) if isinstance(r, Response) and r.max_tokens is None
               else {**r, "max_tokens": limit} if isinstance(r, dict) and "max_tokens" not in r else r
               for r in responses]
    return {**data, "responses": stamped}


def _convert_raw(data: Any) -> Any:
    """Turn a provider-format scenario's raw bodies into responses, keeping the bodies.

    Anything that is not a provider-format scenario with raw bodies still to
    convert passes through unchanged, for the field validators to judge.
    """
    if not isinstance(data, dict) or data.get("raw_responses"):
        return data
    fmt = data.get("format", "agentloops")
    bodies = data.get("responses")
    if fmt == "agentloops" or not isinstance(bodies, (list, tuple)):
        return data
    import agentloops.providers as providers  # loaded only for a provider-format file (the core never needs it)

    if not providers.is_provider_format(fmt):
        allowed = ", ".join(repr(f) for f in get_args(ScenarioFormat))
        raise ScenarioError(f"format: expected one of {allowed}; got {fmt!r}")
    converted = providers.adapt_all(fmt, bodies)
    return {**data, "responses": converted, "raw_responses": tuple(providers.as_plain(b) for b in bodies)}


ScenarioLike = Scenario | str | Path | dict
"""A :class:`Scenario`, a shipped scenario's name, a path to a scenario file, or its dict."""


def scenario_from_dict(data: Any, source: str = "scenario") -> Scenario:
    """Validate ``data`` as a scenario; errors name ``source``, the field and what was expected."""
    if not isinstance(data, dict):
        raise ScenarioError(one_line(f"{source}: expected a JSON object at the top level; got {type(data).__name__}"))
    try:
        data = _convert_raw(data)
    except ScenarioError as exc:
        raise ScenarioError(one_line(f"{source}: {exc}")) from None
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(one_line(f"{source}: {describe_validation_error(exc)}")) from None


def read_json_file(path: str | Path, error: type[UsageError] = ScenarioError,
                   not_found: type[UsageError] = ScenarioNotFound, what: str = N_("JSON file")) -> Any:
    """Read a JSON file strictly (see :mod:`agentloops.jsonfile`), a missing one raising ``not_found``.

    Args:
        path: the file.
        error: the exception for a special, unreadable, oversized or non-UTF-8 file, or refused JSON.
        not_found: the exception for a missing file.
        what: what the file should be, for the messages.
    """
    text = read_text(path, error=error, what=what, not_found=not_found)
    return parse_json(text, where=shown_path(path), error=error)


def read_scenario_file(path: str | Path) -> Scenario:
    """Load and validate one scenario file."""
    return scenario_from_dict(read_json_file(path, what=N_("scenario file")), shown_path(path))


def scenarios_dir() -> Path:
    """Folder of the shipped scenario files."""
    return data_dir() / "scenarios"


@lru_cache(maxsize=1)
def _shipped() -> dict[str, Scenario]:
    found: dict[str, Scenario] = {}
    for path in sorted(scenarios_dir().rglob("*.json")):
        scenario = read_scenario_file(path)
        if scenario.name in found:
            raise ScenarioError(f"{path}: name {scenario.name!r} is used by another shipped scenario")
        found[scenario.name] = scenario
    return found


class ScenarioList(list[Scenario]):
    """A list of scenarios that shows as a table: one row per scenario, not every scripted reply.

    Still a plain ``list`` for callers (index it, loop over it, compare it with a list); only
    its ``repr`` (what a notebook or the REPL prints) and its HTML rendering change, because the
    scenarios' own reprs run to about 97,000 characters.
    """

    HEADERS = ("name", "group", "title", "replies")

    def rows(self) -> list[tuple[str, str, str, int]]:
        """One ``(name, group, title, replies)`` row per scenario; the Chinese title when the language is zh."""
        from agentloops.i18n import language

        return [(s.name, s.group, (s.title_zh if language() == "zh" and s.title_zh else s.title), len(s.responses))
                for s in self]

    def __repr__(self) -> str:
        from agentloops.tables import text_table

        return text_table(self.HEADERS, self.rows()) + f"\n({len(self)} scenarios; al.load_scenario(name) for one)"

    def _repr_html_(self) -> str:
        import html

        head = "".join(f"<th style='text-align:left'>{h}</th>" for h in self.HEADERS)
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(str(c))}</td>" for c in row)
                       + "</tr>" for row in self.rows())
        return f"<table class='agentloops-scenarios'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def list_scenarios(groups: Sequence[Group] | None = None) -> ScenarioList:
    """Shipped scenarios in teaching order, optionally only the given groups (a list that shows as a table)."""
    return ScenarioList(s for s in _shipped().values() if groups is None or s.group in groups)


def scenario_names(groups: Sequence[Group] | None = None) -> list[str]:
    """Names of the shipped scenarios (see :func:`list_scenarios`)."""
    return [s.name for s in list_scenarios(groups)]


def load_scenario(scenario: ScenarioLike) -> Scenario:
    """Return a scenario given itself, a shipped name, a path to a JSON file, or a dict.

    Raises:
        ScenarioNotFound: no shipped scenario by that name and no such file.
        ScenarioError: the file exists but is malformed.
    """
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, str) and scenario in _shipped():
        return _shipped()[scenario]
    if isinstance(scenario, dict):
        return scenario_from_dict(scenario)
    if not isinstance(scenario, (str, Path)):
        raise ScenarioError(f"expected a Scenario, a scenario name or a path; got {type(scenario).__name__}")
    path = Path(scenario)
    if path.suffix == ".json" or os.path.exists(scenario):  # False, not an error, for a NUL or a too-long name
        return read_scenario_file(path)
    core = ", ".join(scenario_names(["article", "extra"]))
    raise ScenarioNotFound(one_line(N_(
        "unknown scenario {name}: not a shipped name (such as {names}; `agentloops scenarios` lists them all) and "
        "not a .json file").format(name=quoted(scenario), names=core)))
