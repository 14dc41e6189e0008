"""English left in what a Chinese notebook shows when it runs: its outputs, not its code.

The Chinese edition's prose is checked by the glossary test; this module reads an *executed* notebook —
printed text, HTML tables, stderr, Markdown, and the widgets' saved state (labels, values, options, the
outputs an ``Output`` widget captured) — and lists every Latin-letter word a learner would read as
English. Not counted: code (inside backticks, ``<code>``, printed Python source), ids (anything with a
digit, ``_``, ``.``, ``:``, ``/``, ``-`` or camelCase), API field values (the package's finish reasons,
stop statuses and codes, tool statuses, call states, …), the names the glossary keeps in Latin letters,
and the words of the glossary's allow-list, each kept there with its reason (some for one notebook
or one cell only).
"""

from __future__ import annotations

import ast
import functools
import html
import re
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "notebooks" / "glossary.md"
NAMES_SECTION = "Names kept in Latin letters"
ALLOW_SECTION = "Latin words allowed in outputs"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/@#=+'’\-]*")
_CODE_CHARS = re.compile(r"[0-9_.:/@#=+]|[a-z][A-Z]|\w-\w")
_BACKTICKS = re.compile(r"`[^`\n]*`")
_ESCAPES = re.compile(r"\\[nrt]|°[CF]")
"""A repr's escaped newline (``\\n``) and the temperature units (``24°C``): not words."""
_CALL = re.compile(r"[A-Za-z_][\w.]*\([^()\n]*\)")
_HTML_DROP = re.compile(r"(?is)<(code|style|script|kbd|samp)\b.*?</\1>|<!--.*?-->")
_TAG = re.compile(r"(?s)<[^>]+>")
_SOURCE_WORDS = re.compile(r"^\s*(def|class|return|import|from|@)\b", re.M)


WIRE_FIELDS = {"role", "content", "tool_calls", "finish_reason", "name", "arguments", "id", "usage", "choices", "index",
               "type", "delta"}
"""Field names of the providers' messages and stream events, as their APIs spell them."""


@dataclass(frozen=True)
class Word:
    """One English word a learner reads in a notebook's outputs."""

    where: str
    word: str
    context: str

    def __str__(self) -> str:
        return f"{self.where}: {self.word!r} in …{self.context}…"


@functools.cache
def api_values() -> frozenset[str]:
    """Names a learner meets as data, not prose.

    The package's criteria, scenarios and wire formats, every documented provider stop value, the values of its
    finish reasons, stop statuses and codes, tool statuses, call states, message roles, a turn's action kinds,
    which memory a compaction used and language codes, the controller's ids (:func:`_controller_ids`), and JSON's
    and Python's literals.
    """
    from agentloops import criteria, errors, i18n, messages, record, scenario, stops
    from agentloops.controller.policy import budgets
    from agentloops.controller.stopping import status
    from agentloops.controller.task import context, state
    from agentloops.controller.vocabulary import ledger, tools
    from agentloops.exercises import controlling

    aliases = [stops.FinishReason, stops.StopKind, stops.ProviderFormat, scenario.ScenarioFormat, status.StopStatus,
               status.StopCode, tools.ToolStatus, ledger.CallState, ledger.Verdict,
               state.ItemStatus, context.MemoryUsed, budgets.BudgetName, errors.ErrorCode, record.Outcome, messages.Role, controlling.Move,
               i18n.Language]
    values = {value for alias in aliases for value in get_args(alias) if isinstance(value, str)}
    values |= {row.value for row in stops.STOP_VALUES} | set(criteria.CRITERIA) | set(scenario.scenario_names())
    values |= WIRE_FIELDS | _controller_ids()
    return frozenset(values | {"null", "true", "false", "None", "True", "False", "none"})



def _controller_ids() -> set[str]:
    """The controller's names for things a learner passes in: task types, policies, compactors, scenarios, tools,
    their parameters, the fields of their results, and their backends and source labels (a fact's source
    pointer, ``library:fetch#c1``, names them)."""
    from agentloops.controller import list_controller_scenarios
    from agentloops.controller.policy.error_policy import POLICIES
    from agentloops.controller.task.context import COMPACTORS
    from agentloops.controller.task.tasks import TASK_TYPES
    from agentloops.controller.task.world import TOOLS

    names = set(TASK_TYPES) | set(POLICIES) | set(COMPACTORS) | {s.name for s in list_controller_scenarios()}
    for spec in TOOLS.values():
        names |= {spec.name, *spec.params, *spec.output_fields, spec.backend, spec.source} - {""}
    return names


def glossary_table(section: str, path: Path = GLOSSARY) -> list[list[str]]:
    """The body rows (cells stripped, header and rule skipped) of the tables under heading ``section``."""
    rows, current, seen_header = [], "", False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current, seen_header = line[3:].split("·")[0].strip(), False
            continue
        if current != section or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not seen_header:
            seen_header = True
        elif not set(cells[0]) <= {"-", ":"}:
            rows.append(cells)
    return rows


@dataclass(frozen=True)
class Allowed:
    """Words that may stay Latin: API values as spelt (``stop``, not ``Stop``), names and allow-list in any case;
    ``cells`` holds the words allowed in one cell only (by cell id; ``*``: every word of that cell's outputs)."""

    exact: frozenset[str]
    caseless: frozenset[str]
    cells: Mapping[str, frozenset[str]] = field(default_factory=dict)
    everything: bool = False

    def __contains__(self, word: object) -> bool:
        return self.everything or (isinstance(word, str) and (word in self.exact or word.lower() in self.caseless))

    def in_cell(self, cell_id: str) -> Allowed:
        """These words plus the ones the allow-list grants to cell ``cell_id`` alone."""
        extra = self.cells.get(cell_id, frozenset())
        return Allowed(self.exact, self.caseless | extra, everything="*" in extra) if extra else self


def allowed_words(notebook: str, path: Path = GLOSSARY) -> Allowed:
    """Words that may stay Latin in ``notebook``'s outputs (its path under notebooks/zh, e.g. ``11-when….ipynb``).

    The names the glossary keeps, the API values, and the allow-list rows whose scope is ``*``, names the notebook,
    or names one of its cells as ``notebook#cell-id``.
    """
    names = {cells[0] for cells in glossary_table(NAMES_SECTION, path)}
    listed, by_cell = set(names), {}
    for words, scope, _reason in glossary_table(ALLOW_SECTION, path):
        for part in (p.strip() for p in scope.split(",")):
            name, _, cell_id = part.partition("#")
            if part == "*" or (name == notebook and not cell_id):
                listed.add(words)
            elif name == notebook:
                by_cell[cell_id] = by_cell.get(cell_id, frozenset()) | {w.lower() for w in words.split()}
    return Allowed(api_values(), frozenset(w.lower() for entry in listed for w in entry.split()), by_cell)


def _is_source(text: str) -> bool:
    """Printed Python source (``inspect.getsource``), shown as code."""
    if not _SOURCE_WORDS.search(text):
        return False
    try:
        ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return False
    return True


def html_text(markup: str) -> str:
    """What a reader sees of ``markup``, with code, styles and scripts removed."""
    return html.unescape(_TAG.sub(" ", _HTML_DROP.sub(" ", markup)))


def _python_strings(text: str) -> list[str] | None:
    """The sentence-like strings (holding a space) of a printed Python value (a list, dict or tuple repr);
    ``None`` if ``text`` is not one. Keys and one-word values are ids."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    if not isinstance(tree.body, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Constant)):
        return None
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value.strip()]


def english_words(text: str, allowed: Allowed) -> list[tuple[str, str]]:
    """(word, context) for each Latin-letter word in plain ``text`` that is neither code, an id nor allowed."""
    if _is_source(text):
        return []
    strings = _python_strings(text)
    if strings is not None:
        return [found for string in strings for found in english_words(string, allowed)]
    text = _CALL.sub(" ", _BACKTICKS.sub(" ", _ESCAPES.sub(" ", text)))
    found = []
    for match in _TOKEN.finditer(text):
        token = match.group().rstrip(".:'’-")
        if not token or _CODE_CHARS.search(token) or not re.fullmatch(r"[A-Za-z'’]+", token):
            continue
        if token in allowed:
            continue
        start = max(0, match.start() - 30)
        found.append((token, " ".join(text[start:match.end() + 30].split())))
    return found


def _output_texts(outputs: list[Any], where: str) -> Iterator[tuple[str, str, bool]]:
    """(where, text, is_html) for each output a learner reads."""
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            yield f"{where} {output.get('name', 'stream')}", output.get("text", ""), False
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            if any(mime.startswith("image/") for mime in data):
                continue  # a chart: its text/plain is only the Figure's repr
            if "text/html" in data:
                yield f"{where} html", _joined(data["text/html"]), True
            elif "text/markdown" in data:
                yield f"{where} markdown", _joined(data["text/markdown"]), False
            elif "text/plain" in data and "application/vnd.jupyter.widget-view+json" not in data:
                yield f"{where} text", _joined(data["text/plain"]), False
        elif kind == "error":
            yield f"{where} error", f"{output.get('ename', '')}: {output.get('evalue', '')}", False


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _widget_texts(nb: Any) -> Iterator[tuple[str, str, bool]]:
    """(where, text, is_html) for each label, value, option or captured output in the saved widget state."""
    states = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for model_id, model in states.items():
        name, state = model.get("model_name", ""), model.get("state", {})
        where = f"widget {name} {model_id[:8]}"
        is_html = name.startswith("HTML")
        for key in ("description", "placeholder", "tooltip", "description_tooltip", "value"):
            if isinstance(state.get(key), str) and state[key]:
                yield f"{where} {key}", state[key], is_html and key == "value"
        for key in ("_options_labels", "_titles", "titles", "tooltips"):
            values = state.get(key) or []
            values = values.values() if isinstance(values, dict) else values
            yield from ((f"{where} {key}", v, False) for v in values if isinstance(v, str))
        yield from _output_texts(state.get("outputs", []), f"{where} output")


def notebook_words(nb: Any, notebook: str, allowed: Allowed | None = None) -> list[Word]:
    """Every English word in the outputs and widget state of executed ``nb`` (``notebook``: its path under zh/)."""
    allowed = allowed_words(notebook) if allowed is None else allowed
    texts = [(text, allowed.in_cell(cell.get("id", "")))
             for i, cell in enumerate(nb.get("cells", []), 1) if cell.get("cell_type") == "code"
             for text in _output_texts(cell.get("outputs", []), f"cell {i} ({cell.get('id', '?')})")]
    texts += [(text, allowed) for text in _widget_texts(nb)]
    found = []
    for (where, text, is_html), allowed_here in texts:
        plain = html_text(text) if is_html else text
        found += [Word(where, word, context) for word, context in english_words(plain, allowed_here)]
    return found


def summary(words: list[Word], limit: int = 40) -> str:
    """The words counted by word, then the first ``limit`` with where they were seen."""
    counts: dict[str, int] = {}
    for w in words:
        counts[w.word] = counts.get(w.word, 0) + 1
    top = ", ".join(f"{word}×{n}" for word, n in sorted(counts.items(), key=lambda kv: -kv[1])[:60])
    return f"{len(words)} English words ({top})\n" + "\n".join(str(w) for w in words[:limit])
