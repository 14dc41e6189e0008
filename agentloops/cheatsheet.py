"""A one-page cheat sheet for the room, generated from the package's own tables so it can never drift.

Four sections, each read from the code that decides it:

- the correct loop — the numbered rules in :func:`agentloops.criteria.correct`'s docstring,
  and what the cap does;
- the stop classes — every normalised ``finish_reason`` with its kind
  (:data:`agentloops.stops.KINDS`), what the correct loop does with it, the error it raises
  (:data:`agentloops.run_errors.ERROR_CLASSES`) and what that stop calls for
  (:data:`agentloops.retry.ADVICE`);
- the stop statuses — :func:`agentloops.controller.stop_statuses`;
- error routing — :func:`agentloops.controller.error_routing` (real runs with injected faults).

:func:`build` writes ``cheatsheet.md`` and ``cheatsheet.png`` (a PDF too, when asked).
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentloops.errors import UsageError
from agentloops.i18n import _
from agentloops.run_errors import ERROR_CLASSES
from agentloops.tables import markdown_table

ROUTING_COLUMNS = ("fault", "routes", "stop")
"""The columns of the controller's error-routing table the sheet keeps (all of them if these are gone)."""

STATUS_COLUMNS_DROPPED = ("scenarios",)
"""Columns of the stop-status table left out: they list notebooks' scenarios, not rules."""

ROW_CHARACTERS = 300
"""About how many characters of the table font fit across the page: cells are shortened to their share."""


class CheatSheetError(UsageError):
    """The cheat sheet cannot be written where it was asked to go."""


@dataclass(frozen=True, slots=True)
class Section:
    """One titled block of the sheet: a few lines of text, a table, or both."""

    title: str
    lines: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


def correct_loop() -> Section:
    """The correct loop's rules, as :func:`agentloops.criteria.correct` states them."""
    from agentloops.criteria import correct

    doc = inspect.getdoc(correct) or ""
    rules, current = [], ""
    for line in doc.splitlines():
        numbered = re.match(r"^\d+\.\s+(.*)", line.strip())
        if numbered:
            if current:
                rules.append(current)
            current = numbered.group(1)
        elif current and line.strip():
            current += " " + line.strip()
        elif current:
            rules.append(current)
            current = ""
    if current:
        rules.append(current)
    rules = [re.sub(r":(data|func|class|mod):`[~.]?([^`]+)`", r"\2", rule).replace("``", "`") for rule in rules]
    cap = f"At the cap: raise {ERROR_CLASSES['max_steps'].__name__} — a loop that ran out of steps has no answer."
    return Section("The correct loop", tuple(f"{i}. {rule}" for i, rule in enumerate([*rules, cap], 1)))


def stop_classes() -> Section:
    """Every finish reason: its kind, what the correct loop does, the error it raises, what it calls for."""
    from agentloops.criteria import correct
    from agentloops.response import Response, ToolCall
    from agentloops.retry import ADVICE
    from agentloops.stops import ABORT_CODES, FINISH_REASONS, KINDS

    rows = []
    for reason in FINISH_REASONS:
        code = ABORT_CODES.get(reason)
        if code is not None:
            does, error, advice = f"abort: {code}", ERROR_CLASSES[code].__name__, ADVICE.get(code, "")
        else:
            with_call = Response(content=None, finish_reason=reason,
                                 tool_calls=(ToolCall(id="c", name="tool", arguments="{}"),))
            without = Response(content="text", finish_reason=reason)
            does = f"tool calls: {_kind(correct(with_call))}; none: {_kind(correct(without))}"
            error, advice = "-", ""
        rows.append((reason, KINDS[reason], does, error, advice))
    return Section("Stop classes: how a round ended, and what the loop does",
                   headers=("finish_reason", "kind", "the correct loop", "raises", "what it calls for"),
                   rows=tuple(rows))


def _kind(decision: Any) -> str:
    return {"Continue": "go on", "Finish": "answer", "Abort": "abort"}.get(type(decision).__name__, "?")


def _table_section(title: str, table: Any, keep: Sequence[str] | None = None,
                   drop: Sequence[str] = ()) -> Section:
    """A controller table (public ``headers`` and ``rows``) as a section, keeping or dropping columns by name."""
    headers = list(table.headers)
    wanted = [h for h in headers if h not in drop]
    if keep is not None and all(h in headers for h in keep):
        wanted = [h for h in wanted if h in keep]
    index = [headers.index(h) for h in wanted]
    rows = tuple(tuple(str(row[i]) for i in index) for row in table.rows)
    return Section(title, headers=tuple(wanted), rows=rows)


def stop_statuses() -> Section:
    """The controller's stop statuses."""
    from agentloops import controller

    return _table_section("Stop statuses: how a controlled run ends", controller.stop_statuses(),
                          drop=STATUS_COLUMNS_DROPPED)


def error_routing() -> Section:
    """The controller's error routes, from real runs with injected faults."""
    from agentloops import controller

    return _table_section("Error routing: each fault, the routes taken, where the run stopped",
                          controller.error_routing(), keep=ROUTING_COLUMNS)


def sections() -> list[Section]:
    """The sheet's four sections, in reading order."""
    return [correct_loop(), stop_classes(), stop_statuses(), error_routing()]


def render_markdown(parts: Sequence[Section]) -> str:
    """The sheet as Markdown."""
    out = ["# agentloops — cheat sheet", "",
           "_Generated by `agentloops cheatsheet` from the package's own tables; do not edit by hand._", ""]
    for part in parts:
        out += [f"## {part.title}", ""]
        out += [*part.lines, ""] if part.lines else []
        if part.headers:
            out += [markdown_table(part.headers, [list(r) for r in part.rows]), ""]
    return "\n".join(out).rstrip() + "\n"


def render_figure(parts: Sequence[Section], path: Path) -> Path:
    """The sheet as one landscape page (PNG or PDF, by ``path``'s suffix).

    It draws with the charts' fonts, the CJK one shipped with the dependencies included.
    """
    import warnings

    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from agentloops.plots import installed_fonts

    families = list(installed_fonts())  # the charts' fonts: DejaVu Sans, then the shipped CJK font
    figure = plt.figure(figsize=(16.5, 11.7))  # A3 landscape: four dense tables stay readable
    with warnings.catch_warnings(), matplotlib.rc_context({"font.family": families}):
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        _draw(figure, parts)
        figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _draw(figure: Any, parts: Sequence[Section]) -> None:
    """Lay the sections out top to bottom on ``figure``."""
    import textwrap

    y = 0.98
    figure.text(0.02, y, "agentloops — cheat sheet (generated from the package's own tables)", fontsize=14,
                weight="bold", va="top")
    y -= 0.03
    for part in parts:
        figure.text(0.02, y, part.title, fontsize=10.5, weight="bold", va="top")
        y -= 0.018
        for line in part.lines:
            for piece in textwrap.wrap(line, 190) or [""]:
                figure.text(0.03, y, piece, fontsize=7.5, va="top", family="monospace")
                y -= 0.0135
        if part.headers:
            height = 0.0135 * (len(part.rows) + 1)
            axes = figure.add_axes((0.02, y - height, 0.96, height))
            axes.axis("off")
            longest = [max([len(h), *(len(r[i]) for r in part.rows)]) for i, h in enumerate(part.headers)]
            widths = [min(n, 90) / sum(min(m, 90) for m in longest) for n in longest]
            limits = [longest[0], *(max(8, int(w * ROW_CHARACTERS)) for w in widths[1:])]  # keys stay whole
            cells = [[textwrap.shorten(c, limit, placeholder="…") for c, limit in zip(row, limits)]
                     for row in part.rows]
            table = axes.table(cellText=cells, colLabels=list(part.headers), colWidths=widths, cellLoc="left",
                               bbox=(0, 0, 1, 1))
            table.auto_set_font_size(False)
            table.set_fontsize(6.5)
            y -= height
        y -= 0.012


def build(out_dir: Path, *, pdf: bool = False) -> list[Path]:
    """Write ``cheatsheet.md`` and ``cheatsheet.png`` (and ``cheatsheet.pdf``) into ``out_dir``.

    Raises:
        CheatSheetError: the folder cannot be created or written (one line naming it).
    """
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        parts = sections()
        markdown = out_dir / "cheatsheet.md"
        markdown.write_text(render_markdown(parts), encoding="utf-8")
        written = [markdown, render_figure(parts, out_dir / "cheatsheet.png")]
        if pdf:
            written.append(render_figure(parts, out_dir / "cheatsheet.pdf"))
    except OSError as exc:
        raise CheatSheetError(_("cheatsheet --out {out}: cannot write there ({reason}); expected a folder you can "
                                "write into").format(out=out_dir, reason=exc.strerror or exc)) from None
    return written


def _cheatsheet(args: argparse.Namespace) -> str:
    return "\n".join(_("wrote {path}").format(path=path) for path in build(args.out, pdf=args.pdf))


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``agentloops cheatsheet`` to the command line."""
    parser = sub.add_parser("cheatsheet", help=_("write the one-page cheat sheet (Markdown and PNG) from the code"))
    parser.add_argument("--out", type=Path, default=Path("."), help=_("the folder to write into (default: here)"))
    parser.add_argument("--pdf", action="store_true", help=_("a PDF as well"))
    parser.set_defaults(handler=_cheatsheet)


__all__ = ["CheatSheetError", "Section", "add_commands", "build", "render_markdown", "sections"]
