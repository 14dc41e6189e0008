"""A provider explorer: pick a provider and a scenario, see the normalised rounds and every criterion's result.

:func:`provider_explorer` returns an ipywidgets box that draws itself once
with its defaults (no click needed) and redraws on every change. Its plain-text
form is the same report as a text table, so a notebook executed headless
(nbclient, CI, ``jupyter nbconvert --to markdown``) shows the tables instead
of an empty widget placeholder. Without ipywidgets installed it returns the
text report object.

The table builders (:func:`rounds_rows`, :func:`criteria_rows`) are plain
functions, testable without a front-end.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any

from agentloops.comparison import compare, outcome_words
from agentloops.criteria import CRITERION_NAMES
from agentloops.i18n import N_, _
from agentloops.providers import FORMAT_TITLES, FORMATS
from agentloops.response import show_content
from agentloops.scenario import Scenario, list_scenarios, load_scenario
from agentloops.tables import text_table

ROUND_HEADERS = (N_("round"), N_("raw stop value"), N_("normalised"), "content", N_("tool calls"))
"""The rounds table's columns (English here; shown through ``_()``)."""
CRITERIA_HEADERS = (N_("criterion"), N_("steps"), N_("tools run"), N_("how it ended"))
"""The criteria table's columns (English here; shown through ``_()``)."""


SCENARIO_TEXTS: tuple[str, ...] = (
    # the provider formats (agentloops.providers.FORMAT_TITLES)
    N_('OpenAI Chat Completions (and compatible servers)'),
    N_('OpenAI Responses'),
    N_('Anthropic Messages'),
    N_('Google Gemini generateContent'),
    N_('Ollama /api/chat'),
    # anthropic-normal
    N_('tool → tool → answer (Anthropic)'),
    N_("The article's happy path as Messages bodies: two turns of tool_use blocks with stop_reason "
       'tool_use, then a text answer with end_turn. Every criterion agrees, as in the article.'),
    # anthropic-talk-and-call
    N_('a turn with a text block and a tool_use block (Anthropic)'),
    N_("Claude often writes a sentence before a tool_use block in the same turn: the article's "
       'talk-and-call round is the native shape here. The content test stops after running read_file and '
       'its result never reaches the model.'),
    # anthropic-truncated
    N_('a turn cut off by max_tokens (Anthropic)'),
    N_('stop_reason max_tokens while the model was still thinking: the only block is a thinking block, so '
       'there is no text and no tool call. Two naive tests spin to the cap; the tool_calls test reports '
       'an empty answer.'),
    # anthropic-talk-only
    N_('talk only, no tools (Anthropic)'),
    N_('One text block with stop_reason end_turn. Every criterion stops after one call; like the normal '
       'run, it cannot tell the criteria apart.'),
    # anthropic-refusal
    N_('stop_reason refusal (Anthropic)'),
    N_('The classifiers stopped the turn: stop_reason refusal with no content and stop_details naming the '
       'category. Waiting for text spins to the cap; the tool_calls test calls nothing an answer; the '
       'correct loop raises refusal.'),
    # anthropic-pause-turn
    N_('pause_turn: a paused turn that asks to be continued (Anthropic)'),
    N_('A server tool (web search) ran long, so the API paused the turn: text plus server_tool_use '
       'blocks, stop_reason pause_turn, no client tool call. The content and tool_calls tests stop there '
       'with no answer; the correct loop sends the turn back and goes on.'),
    # anthropic-max-tokens-in-tool-use
    N_('max_tokens inside a tool_use block (Anthropic)'),
    N_('The limit struck while Claude wrote a tool call: the tool_use block is incomplete (its input '
       'empty) and stop_reason is max_tokens. The tool_calls test runs the broken call; the correct loop '
       'checks the stop value first and raises truncated.'),
    # anthropic-context-window-exceeded
    N_('model_context_window_exceeded (Anthropic)'),
    N_('After a tool round the next turn stops because the context window is full: stop_reason '
       'model_context_window_exceeded with half an answer. It is a token limit like max_tokens, so the '
       'correct loop raises truncated instead of returning the fragment.'),
    # gemini-normal
    N_('tool → tool → answer (Gemini)'),
    N_("The article's happy path as generateContent bodies. Gemini has no tool-call finish value: each "
       'functionCall round ends with STOP, like the answer. The finish_reason test stops after round one '
       'with its tool result unread; tool calls must decide.'),
    # gemini-talk-and-call
    N_('a round with a text part and a functionCall part (Gemini)'),
    N_('Text and a functionCall in one candidate, finishReason STOP. Both the content test and the '
       'finish_reason test stop after round one, the tool result unread; the tool_calls test and the '
       'correct loop go on.'),
    # gemini-truncated
    N_('a round cut off by MAX_TOKENS (Gemini)'),
    N_('finishReason MAX_TOKENS and a content with no parts: a thinking model spent maxOutputTokens on '
       'thoughts (thoughtsTokenCount). Two naive tests spin to the cap; the tool_calls test reports an '
       'empty answer.'),
    # gemini-talk-only
    N_('talk only, no tools (Gemini)'),
    N_('One text part with finishReason STOP. Every criterion stops after one call; like the normal run, '
       'it cannot tell the criteria apart.'),
    # gemini-safety
    N_('a candidate stopped by SAFETY (Gemini)'),
    N_('After one functionCall round the next candidate stops with finishReason SAFETY, no content and a '
       'blocked safety rating. Waiting for text spins to the cap; the correct loop raises content_filter at once.'),
    # gemini-prompt-blocked
    N_('a prompt blocked before any candidate (Gemini)'),
    N_('The prompt itself was blocked: no candidates at all, only promptFeedback.blockReason SAFETY. The '
       'adapter turns it into content_filter (raw blockReason:SAFETY); naive tests spin or report an '
       'empty answer, the correct loop raises.'),
    # gemini-malformed-function-call
    N_('MALFORMED_FUNCTION_CALL with no content (Gemini)'),
    N_('The model tried to call a tool and produced something unparseable: the candidate has only '
       "finishReason MALFORMED_FUNCTION_CALL and an index, as pydantic-ai's report quotes. Naive tests "
       'spin or call it an empty answer; the correct loop raises malformed_tool_call.'),
    # gemini-unexpected-tool-call
    N_('UNEXPECTED_TOOL_CALL (Gemini)'),
    N_('The model called a function the request never declared, so the candidate ends with '
       'UNEXPECTED_TOOL_CALL and carries no usable call. The adapter maps it to malformed_tool_call and '
       'the correct loop raises instead of waiting.'),
    # gemini-too-many-tool-calls
    N_('TOO_MANY_TOOL_CALLS with a functionCall part (Gemini)'),
    N_('The candidate ends with TOO_MANY_TOOL_CALLS, the system having exited execution, and still '
       'carries a functionCall part. The adapter maps the value to provider_error; the correct loop '
       'raises it and never runs the call, while the finish_reason test spins and the tool_calls test '
       'runs it again and again.'),
    # ollama-normal
    N_('tool → tool → answer (Ollama)'),
    N_("The article's happy path as /api/chat bodies, shaped like Ollama's documented tool example: "
       'content "", arguments as an object, done_reason stop. The finish_reason test stops after round '
       'one with its tool result unread; tool calls must decide.'),
    # ollama-talk-and-call
    N_('a round that talks and calls a tool (Ollama)'),
    N_('Text and tool_calls in one message, done_reason stop. Both the content and finish_reason tests '
       'stop after round one with the tool result unread; the tool_calls test and the correct loop go on.'),
    # ollama-truncated
    N_('a round cut off by num_predict (Ollama)'),
    N_('done_reason length while a thinking model was still thinking: content is an empty string (Ollama '
       'never sends null) and the words went to message.thinking. Two naive tests spin to the cap; the '
       'tool_calls test reports an empty answer.'),
    # ollama-talk-only
    N_('talk only, no tools (Ollama)'),
    N_('One message with done_reason stop and no tool calls. Every criterion stops after one call; like '
       'the normal run, it cannot tell the criteria apart.'),
    # ollama-load
    N_('done_reason load: a reply that answers nothing (Ollama)'),
    N_('An empty request only loads the model and comes back with content "" and done_reason load: '
       'nothing was generated. The adapter maps it to provider_error; the tool_calls test calls it an '
       'empty answer, the correct loop raises provider_error naming the value.'),
    # ollama-length-after-tools
    N_('a length stop after a tool round (Ollama)'),
    N_('After one tool round the answer is cut by num_predict: half a sentence and done_reason length. '
       'The content test returns the fragment as the answer; the correct loop raises truncated.'),
    # openai-chat-normal
    N_('tool → tool → answer (OpenAI Chat)'),
    N_('The article\'s happy path as Chat Completions bodies: two tool_calls rounds (content null, then "" '
       'as many compatible servers send) and an answer with finish_reason stop. Every criterion agrees, '
       'as in the article.'),
    # openai-chat-talk-and-call
    N_('a round that talks and calls a tool (OpenAI Chat)'),
    N_('Chat Completions allows text and tool_calls in one message. The content test stops after running '
       "read_file, so its result never reaches the model; the others take the second round's answer."),
    # openai-chat-truncated
    N_('a round cut off by max_tokens (OpenAI Chat)'),
    N_('finish_reason length with content null and no tool calls: a reasoning model spent '
       'max_completion_tokens on reasoning (reasoning_tokens equals completion_tokens). Two naive tests '
       'spin to the cap; the tool_calls test reports an empty answer.'),
    # openai-chat-talk-only
    N_('talk only, no tools (OpenAI Chat)'),
    N_('A plain reply with finish_reason stop and no tool calls. Every criterion stops after one call; '
       'like the normal run, it cannot tell the criteria apart.'),
    # openai-chat-content-filter
    N_('output withheld by a content filter (OpenAI Chat)'),
    N_('After one tool round the reply is filtered: content null, finish_reason content_filter, with '
       "Azure OpenAI's content_filter_results beside it. Waiting for text or stop spins; the correct loop "
       'raises content_filter at once.'),
    # openai-chat-refusal
    N_('an explicit refusal in message.refusal (OpenAI Chat)'),
    N_('The model refuses through message.refusal while finish_reason stays stop and content is null. The '
       'adapter normalises the round to refusal (raw value stop): the correct loop raises refusal instead '
       'of returning an empty answer.'),
    # openai-chat-tool-calls-with-stop
    N_('tool calls that arrive with finish_reason stop (OpenAI-compatible server)'),
    N_('A compatible server (vLLM, SGLang and others did this; OpenAI itself does when tool_choice forces '
       'a call) ends tool-call rounds with stop. The finish_reason test stops after round one and its '
       'tool result is never read; tool calls must decide.'),
    # openai-chat-legacy-function-call
    N_('the deprecated function_call (OpenAI Chat)'),
    N_('Before tool_calls, a round called one function through message.function_call and ended with '
       'finish_reason function_call. The adapter reads it as one tool call; every criterion but the '
       'content test runs it and reads the answer.'),
    # openai-chat-cut-off-arguments
    N_('a tool call cut off inside its arguments (OpenAI Chat)'),
    N_('max_tokens struck while the model wrote a tool call: the arguments text is half a JSON object and '
       'finish_reason is length. Naive loops send the same parse error back until the cap; the correct '
       'loop raises truncated at once.'),
    # openai-chat-unknown-with-tools
    N_('an unknown finish value with a tool call (OpenAI-compatible server)'),
    N_("mlx-lm's server once sent finish_reason tool_call (singular), a value no OpenAI client knows. The "
       'adapter keeps it as unknown; an unknown end is abnormal, so the correct loop raises unknown_stop '
       'naming it before the well-formed tool call runs, while the tool_calls test runs the call and goes on.'),
    # openai-chat-unknown-stop
    N_('an unknown finish value with no tool call (DeepSeek)'),
    N_('DeepSeek documents finish_reason insufficient_system_resource: the server ran out of capacity '
       'mid-answer. Unknown to OpenAI clients; with no tool call the correct loop raises unknown_stop '
       'naming the value instead of returning the fragment.'),
    # openai-chat-flat-tool-calls
    N_('tool calls without the function wrapper (OpenAI-compatible proxy)'),
    N_('Some proxies and compatible servers send each tool call as {id, name, arguments}, with no '
       'function object around name and arguments (and sometimes the arguments as an object). The adapter '
       'reads that shape like the standard one, so the correct loop runs read_file and count_lines and '
       'returns the answer.'),
    # openai-chat-tool-calls-finish-with-text
    N_('finish_reason tool_calls with text and no tool call (OpenAI-compatible server)'),
    N_('After the tool results the server answers in text but still says finish_reason tool_calls, with '
       'no tool call in the message. A loop that trusts the value asks the same thing until its cap; the '
       'correct loop takes the text as the answer and its decision notes that the fields disagree.'),
    # openai-responses-normal
    N_('tool → tool → answer (OpenAI Responses)'),
    N_("The article's happy path as Responses bodies. A round of function_call items ends with status "
       'completed, exactly like the answer, so the finish_reason test stops after round one with a tool '
       'result never read; tool calls must decide.'),
    # openai-responses-talk-and-call
    N_('a round that talks and calls a tool (OpenAI Responses)'),
    N_('A message item and a function_call item in one response, status completed. The content and '
       'finish_reason tests both stop after round one, the tool result unread; the tool_calls test and '
       'the correct loop go on.'),
    # openai-responses-truncated
    N_('a response cut off by max_output_tokens (OpenAI Responses)'),
    N_('status incomplete with incomplete_details.reason max_output_tokens: a reasoning model used the '
       'whole budget on its reasoning item and wrote no text. Two naive tests spin to the cap; the '
       'tool_calls test reports an empty answer.'),
    # openai-responses-talk-only
    N_('talk only, no tools (OpenAI Responses)'),
    N_('One message item, status completed, no function calls. Every criterion stops after one call; like '
       'the normal run, it cannot tell the criteria apart.'),
    # openai-responses-content-filter
    N_('a response stopped by a content filter (OpenAI Responses)'),
    N_('After one round of function calls, status incomplete with reason content_filter and no text. '
       'Waiting for text spins to the cap; the correct loop raises content_filter at once.'),
    # openai-responses-refusal
    N_('a refusal content part (OpenAI Responses)'),
    N_('The message item carries a refusal part instead of output_text, and the status is still '
       'completed. The adapter normalises the round to refusal; the correct loop raises refusal rather '
       'than returning an empty answer.'),
    # openai-responses-failed
    N_('a failed response (OpenAI Responses)'),
    N_('status failed with error.code server_error and no output. The provider says the turn failed, so '
       'the adapter maps it to provider_error (raw failed:server_error) and the correct loop raises '
       'provider_error instead of taking the empty round for an answer.'),
    # openai-responses-failed-with-call
    N_('a failed response that carries a function call (OpenAI Responses)'),
    N_('status failed with error.code server_error, yet the output already holds a well-formed '
       'function_call item. The provider disowned the turn, so the adapter says provider_error and the '
       'correct loop raises it before read_file runs; the tool_calls test runs the call and asks again, '
       'on a turn that failed.'),
    # openai-responses-in-progress-with-call
    N_('a background response polled while in progress (OpenAI Responses)'),
    N_('A background response retrieved too early: status in_progress, a function_call item already in '
       'the output. Nothing is finished, so the adapter says provider_error and the correct loop raises '
       'before running the call; poll again until the status is final.'),
)
"""The provider names and the title and lesson of every shipped provider scenario, marked for the catalog: the
data stays English, the explorer shows ``_(text)`` (``tests/test_i18n_core.py`` checks that each is listed)."""

def provider_scenarios(format: str) -> list[Scenario]:
    """The shipped scenarios in ``format``, in file order."""
    return [s for s in list_scenarios(["provider"]) if s.format == format]


def rounds_rows(scenario: Scenario) -> list[list[str]]:
    """One row per scripted round: the raw stop value next to what the adapter made of it."""
    rows = []
    for i, response in enumerate(scenario.responses, start=1):
        calls = ", ".join(f"{c.name}({c.arguments})" for c in response.tool_calls) or "—"
        raw = response.raw_finish_reason if response.raw_finish_reason is not None else _("(absent)")
        rows.append([str(i), raw, response.finish_reason, show_content(response.content, 36), calls])
    return rows


def criteria_rows(scenario: Scenario, max_steps: int = 8) -> list[list[str]]:
    """One row per criterion: steps, tools run, and how the run ended."""
    table = compare([scenario], CRITERION_NAMES, max_steps)
    rows = []
    for record in table.records:
        steps = _("{steps} (cap)").format(steps=record.steps) if record.hit_cap else f"{record.steps}"
        ending = _("raises {error}").format(error=record.error) if record.error else outcome_words(record.outcome)
        rows.append([record.criterion, steps, " ".join(record.tools_executed) or "—", ending])
    return rows


def report_text(scenario: Scenario, max_steps: int = 8) -> str:
    """The explorer's content as text tables."""
    head = f"{scenario.name} ({scenario.format}): {_(scenario.title)}"
    return "\n\n".join([
        head,
        text_table(_headers(ROUND_HEADERS), rounds_rows(scenario)),
        text_table(_headers(CRITERIA_HEADERS), criteria_rows(scenario, max_steps)),
    ])


def _headers(names: tuple[str, ...]) -> list[str]:
    return [_(name) for name in names]


def report_html(scenario: Scenario, max_steps: int = 8) -> str:
    """The explorer's content as HTML tables."""

    def table(headers: tuple[str, ...], rows: list[list[str]]) -> str:
        head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in _headers(headers))
        body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in row) + "</tr>"
                       for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    rounds_title = _("Rounds as the adapter normalised them")
    criteria_title = _("Every criterion on these rounds (cap {cap})").format(cap=max_steps)
    return (f"<p><b>{html.escape(_(scenario.title))}</b> — {html.escape(_(scenario.teaches))}</p>"
            f"<p><i>{rounds_title}</i></p>{table(ROUND_HEADERS, rounds_rows(scenario))}"
            f"<p><i>{criteria_title}</i></p>"
            f"{table(CRITERIA_HEADERS, criteria_rows(scenario, max_steps))}")


@dataclass(frozen=True)
class ProviderReport:
    """The explorer's output without a widget: text in terminals, HTML in notebooks."""

    scenario: Scenario
    max_steps: int = 8

    def __str__(self) -> str:
        return report_text(self.scenario, self.max_steps)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return report_html(self.scenario, self.max_steps)


def _scenario_options(format: str) -> list[tuple[str, str]]:
    """The scenario dropdown's options for ``format``: the title (translated) → the scenario name."""
    return [(_(s.title), s.name) for s in provider_scenarios(format)]


def _default_scenario(format: str) -> Scenario:
    found = provider_scenarios(format)
    if not found:
        raise ValueError(_("no shipped scenario in format {format}").format(format=repr(format)))
    return found[0]


def provider_explorer(format: str = "gemini", scenario: str | Scenario | None = None, max_steps: int = 8) -> Any:
    """Pick a provider and a scenario; see the normalised rounds, a raw body, and every criterion's result.

    Args:
        format: the provider format shown first (one of :data:`~agentloops.providers.FORMATS`).
        scenario: the scenario shown first (default: the format's first shipped scenario).
        max_steps: the cap for every run.

    Returns:
        An ipywidgets ``VBox`` whose plain-text form is the text report, or a
        :class:`ProviderReport` when ipywidgets is not installed.
    """
    if format not in FORMATS:
        raise ValueError(_("unknown provider format {format}; expected one of: {allowed}").format(
            format=repr(format), allowed=", ".join(FORMATS)))
    chosen = load_scenario(scenario) if scenario is not None else _default_scenario(format)
    try:
        import ipywidgets as widgets
    except ImportError:  # pragma: no cover - ipywidgets is a core dependency
        return ProviderReport(chosen, max_steps)
    return _build(widgets, chosen.format if chosen.format in FORMATS else format, chosen, max_steps)


def _build(widgets: Any, format: str, chosen: Scenario, max_steps: int) -> Any:
    class ProviderExplorer(widgets.VBox):  # type: ignore[misc, name-defined]
        """The explorer box; headless, its text form is the report."""

        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            data = super()._repr_mimebundle_(**kwargs)
            if data is None:  # a closed widget has no view; the text still stands
                return {"text/plain": report_text(state["scenario"], max_steps)}
            if isinstance(data, tuple):  # (data, metadata)
                data[0]["text/plain"] = report_text(state["scenario"], max_steps)
                return data
            data["text/plain"] = report_text(state["scenario"], max_steps)
            return data

        @property
        def scenario(self) -> Scenario:
            """The scenario on show."""
            return state["scenario"]

        def report(self) -> str:
            """What the explorer shows, as text."""
            return report_text(state["scenario"], max_steps)

    state: dict[str, Scenario] = {"scenario": chosen}
    provider = widgets.Dropdown(options=[(_(FORMAT_TITLES[f]), f) for f in FORMATS], value=format,
                                description=_("provider"))
    picker = widgets.Dropdown(options=_scenario_options(format) or [(_(chosen.title), chosen.name)],
                              value=chosen.name, description=_("scenario"), layout=widgets.Layout(width="40em"))
    round_pick = widgets.Dropdown(description=_("raw body of"), layout=widgets.Layout(width="16em"))
    tables = widgets.HTML()
    raw_view = widgets.HTML()

    def show_raw(*changes: Any) -> None:
        scenario = state["scenario"]
        index = round_pick.value or 0
        body = scenario.raw_responses[index] if index < len(scenario.raw_responses) else None
        text = json.dumps(body, ensure_ascii=False, indent=2) if body is not None else _("(no raw body)")
        raw_view.value = f"<pre style='max-height:22em;overflow:auto'>{html.escape(text)}</pre>"

    def redraw(*changes: Any) -> None:
        scenario = state["scenario"]
        tables.value = report_html(scenario, max_steps)
        round_pick.options = [(_("round {n}").format(n=i + 1), i) for i in range(len(scenario.responses))]
        round_pick.value = 0
        show_raw()

    def on_scenario(change: dict[str, Any]) -> None:
        if change.get("new"):
            state["scenario"] = load_scenario(change["new"])
            redraw()

    def on_provider(change: dict[str, Any]) -> None:
        options = _scenario_options(change["new"])
        picker.options = options
        if options:
            picker.value = options[0][1]

    picker.observe(on_scenario, names="value")
    provider.observe(on_provider, names="value")
    round_pick.observe(show_raw, names="value")
    redraw()
    return ProviderExplorer([widgets.HBox([provider, picker]), tables, round_pick, raw_view])


__all__ = [
    "CRITERIA_HEADERS",
    "ROUND_HEADERS",
    "ProviderReport",
    "criteria_rows",
    "provider_explorer",
    "provider_scenarios",
    "report_html",
    "report_text",
    "rounds_rows",
]
