"""The ``agentloops`` command: compare, run, list scenarios, open the notebooks, and the controller group.

Every mistake a user can make on the command line (an unknown scenario or
criterion, a malformed file, a bad number) ends in one line on stderr and
exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from agentloops.comparison import compare
from agentloops.criteria import CRITERION_NAMES
from agentloops.errors import AgentLoopsError
from agentloops.loop import DEFAULT_MAX_STEPS, run
from agentloops.resources import copy_notebooks, is_checkout, notebooks_dir
from agentloops.scenario import list_scenarios
from agentloops.tables import text_table

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors end in one line and status 2 like ours."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _CommandError(message)


class _CommandError(Exception):
    pass


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1; got {value}")
    return value


def _csv_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(prog="agentloops", description="When does a tool-calling loop stop? Measure it.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("compare", help="every scenario under every criterion, as a table")
    p.add_argument("--format", choices=["text", "markdown", "csv", "json"], default="text")
    p.add_argument("--scenarios", type=_csv_list, help="comma-separated names or paths (default: article + extra)")
    p.add_argument("--criteria", type=_csv_list, help=f"comma-separated, from {', '.join(CRITERION_NAMES)}")
    p.add_argument("--max-steps", type=_positive, default=DEFAULT_MAX_STEPS)

    p = sub.add_parser("run", help="one scenario under one criterion, step by step")
    p.add_argument("scenario", help="a shipped scenario name or a path to a scenario .json file")
    p.add_argument("--criterion", default="correct", help=f"one of {', '.join(CRITERION_NAMES)}")
    p.add_argument("--max-steps", type=_positive, default=DEFAULT_MAX_STEPS)
    p.add_argument("--json", action="store_true", help="print the run record as one JSON object")

    sub.add_parser("scenarios", help="list the shipped scenarios")

    p = sub.add_parser("lab", help="open the notebooks in JupyterLab")
    p.add_argument("--dir", type=Path, default=None,
                   help="where to copy the notebooks when installed from a wheel (default: ./agentloops-notebooks)")
    p.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")

    from agentloops.controller.cli import add_controller_commands

    add_controller_commands(sub)
    return parser


def _compare(args: argparse.Namespace) -> str:
    table = compare(args.scenarios, args.criteria, args.max_steps)
    return table.render(args.format)


def _run(args: argparse.Namespace) -> str:
    record = run(args.scenario, args.criterion, args.max_steps)
    return json.dumps(record.to_dict(), ensure_ascii=False, indent=2) if args.json else str(record)


def _scenarios(args: argparse.Namespace) -> str:
    rows = [[s.name, s.group, s.title] for s in list_scenarios()]
    return text_table(["name", "group", "title"], rows)


def _lab(args: argparse.Namespace) -> str:
    if is_checkout() and args.dir is None:
        folder = notebooks_dir()
    else:
        folder = (args.dir or Path("agentloops-notebooks")).resolve()
        copied = copy_notebooks(folder)
        print(f"copied {len(copied)} notebook(s) into {folder}", file=sys.stderr)
    jupyter = shutil.which("jupyter", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if jupyter is None:
        raise _CommandError("JupyterLab is not installed in this environment; run: pip install jupyterlab")
    command = [jupyter, "lab", str(folder)] + (["--no-browser"] if args.no_browser else [])
    return_code = subprocess.call(command)
    if return_code:
        raise _CommandError(f"jupyter lab exited with status {return_code}")
    return ""


def _controller(args: argparse.Namespace) -> str | tuple[str, int]:
    from agentloops.controller.cli import dispatch

    return dispatch(args)


_COMMANDS = {"compare": _compare, "run": _run, "scenarios": _scenarios, "lab": _lab, "controller": _controller}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentloops`` and ``python -m agentloops``; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        output = _COMMANDS[args.command](args)
    except (_CommandError, AgentLoopsError) as exc:
        print(f"agentloops: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    status = 0
    if isinstance(output, tuple):  # a command may also set the exit status (controller check: 1 on a mismatch)
        output, status = output
    if output:
        print(output)
    return status
