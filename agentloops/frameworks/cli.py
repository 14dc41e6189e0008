"""``agentloops frameworks [--format text|markdown|json] [--recompute [--save]]``.

Without ``--recompute`` it prints the shipped table (no framework needed);
with it, it runs every installed framework of the ``frameworks`` extra, and
``--save`` writes the result as the shipped table.
"""

from __future__ import annotations

import argparse
from typing import Any

from agentloops.frameworks.table import (
    RUNNERS,
    FrameworksError,
    compute_table,
    installed,
    merge_slow,
    save_table,
    shipped_table,
)
from agentloops.i18n import _


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``frameworks`` subcommand to ``sub``."""
    parser = sub.add_parser("frameworks", help=_("what LangGraph, the OpenAI Agents SDK and Pydantic AI do on the "
                                                 "abnormal scenarios"),
                            description=_("The package's scenarios through each framework's own loop."))
    parser.add_argument("--format", default="text", choices=("text", "markdown", "json"))
    parser.add_argument("--recompute", action="store_true",
                        help=_("run the installed frameworks now (pip install 'agentloops[frameworks]')"))
    parser.add_argument("--save", action="store_true", help=_("with --recompute: write the shipped results file"))
    parser.add_argument("--full", action="store_true",
                        help=_("with --recompute: also the slow runs (LangGraph's default cap on an endless repeat)"))
    parser.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> str:
    """The handler: the table, shipped or recomputed."""
    if args.save and not args.recompute:
        raise FrameworksError(_("--save needs --recompute: only a table computed now can be saved"))
    if args.full and not args.recompute:
        raise FrameworksError(_("--full needs --recompute: it says which runs to compute"))
    if not args.recompute:
        return shipped_table().render(args.format)
    missing = [name for name in RUNNERS if not installed(name)]
    if missing:
        raise FrameworksError(_("not installed: {names}; pip install 'agentloops[frameworks]'").format(
            names=", ".join(missing)))
    table = compute_table(full=args.full)
    if not args.full:
        table = merge_slow(table, shipped_table())
    text = table.render(args.format)
    if args.save:
        text += "\n" + _("saved to {path}").format(path=save_table(table))
    return text
