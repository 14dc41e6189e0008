"""The ``agentloops`` command: compare, run, list scenarios, open the notebooks, serve the app pages,
render instructor solutions, and the controller group.

Every mistake a user can make on the command line (an unknown scenario or
criterion, a malformed file, a bad number) ends in one line on stderr and
exit status 2, never a traceback. Output into a closed pipe (``| head``) ends
quietly with status 141; output a full disk refuses is one line and status 2;
a terminal that cannot show a character gets a backslash escape.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from agentloops.comparison import compare
from agentloops.criteria import CRITERION_NAMES
from agentloops.errors import AgentLoopsError
from agentloops.jsonfile import one_line
from agentloops.loop import DEFAULT_MAX_STEPS, MAX_STEPS_LIMIT, run
from agentloops.resources import find_tool, notebooks_dir
from agentloops.scenario import list_scenarios
from agentloops.tables import text_table

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors end in one line and status 2 like ours."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _CommandError(message)


class _CommandError(Exception):
    pass


_DIGITS = re.compile(r"[0-9]+")


def _whole_number(text: str, low: int, high: int | None) -> int:
    """``text`` as a whole number from ``low`` to ``high``, written in plain ASCII digits only.

    ``int()`` also takes ``+3``, `` 3``, ``3_0`` and ``٣``; a command line
    that means something else by them should fail, not run with a guess.
    """
    expected = f"a whole number from {low} to {high}" if high is not None else f"a whole number of at least {low}"
    if not _DIGITS.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected {expected}, in digits 0-9; got {text!r}")
    digits = text.lstrip("0") or "0"
    if len(digits) > 18:  # int() of thousands of digits is slow, and no option here means that many
        raise argparse.ArgumentTypeError(f"expected {expected}; got a number with {len(digits)} digits")
    value = int(digits)
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"expected {expected}; got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1, plain ASCII digits only, with a one-line error otherwise."""
    return _whole_number(text, 1, None)


def max_steps_int(text: str) -> int:
    """argparse type for ``--max-steps``: from 1 to the loop's :data:`~agentloops.loop.MAX_STEPS_LIMIT`."""
    return _whole_number(text, 1, MAX_STEPS_LIMIT)


def _port(text: str) -> int:
    return _whole_number(text, 1, 65535)


MAX_STEPS_HELP = f"model calls before the loop gives up, from 1 to {MAX_STEPS_LIMIT} (default: {DEFAULT_MAX_STEPS})"


APP_PAGES: dict[str, str] = {"criteria": "criteria-explorer.ipynb", "controller": "controller-explorer.ipynb"}
"""App page name → its notebook under ``notebooks/app/``."""

DEFAULT_APP_PORT = 8866
"""Voilà's own default port."""


def app_command(voila: str, notebook: Path, port: int = DEFAULT_APP_PORT, no_browser: bool = False) -> list[str]:
    """The Voilà invocation that serves ``notebook`` as a page with no code cells shown."""
    command = [voila, str(notebook), f"--port={port}", "--strip_sources=True", "--show_tracebacks=False"]
    return command + (["--no-browser"] if no_browser else [])


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
    p.add_argument("--max-steps", type=max_steps_int, default=DEFAULT_MAX_STEPS, help=MAX_STEPS_HELP)

    p = sub.add_parser("run", help="one scenario under one criterion, step by step")
    p.add_argument("scenario", help="a shipped scenario name or a path to a scenario .json file")
    p.add_argument("--criterion", default="correct", help=f"one of {', '.join(CRITERION_NAMES)}")
    p.add_argument("--max-steps", type=max_steps_int, default=DEFAULT_MAX_STEPS, help=MAX_STEPS_HELP)
    p.add_argument("--json", action="store_true", help="print the run record as one JSON object")

    sub.add_parser("scenarios", help="list the shipped scenarios")

    p = sub.add_parser("lab", help="open the notebooks in JupyterLab")
    p.add_argument("--dir", type=Path, default=None,
                   help="where to copy the notebooks (default: lab/ in a checkout, "
                        "./agentloops-notebooks from a wheel)")
    p.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")

    p = sub.add_parser("app", help="serve an explorer as a page with no code shown (Voilà), for projecting")
    p.add_argument("page", nargs="?", choices=list(APP_PAGES), default="criteria",
                   help="criteria: the criteria explorer (default); controller: the controller explorer")
    p.add_argument("--port", type=_port, default=DEFAULT_APP_PORT,
                   help=f"from 1 to 65535 (default: {DEFAULT_APP_PORT})")
    p.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")

    p = sub.add_parser("solutions", help="instructors: the exercise notebooks with the reference solutions filled in")
    p.add_argument("--out", type=Path, required=True, help="the folder to write the instructor copies into")
    p.add_argument("--force", action="store_true", help="overwrite copies already in that folder")

    from agentloops.controller.cli import add_controller_commands

    add_controller_commands(sub)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(sub)
    return parser


COMMAND_MODULES: tuple[str, ...] = ("agentloops.doctor", "agentloops.cheatsheet", "agentloops.diagnose",
                                    "agentloops.frameworks")
"""Modules that add their own subcommands.

Each defines ``add_commands(sub)``, which adds its parsers to ``sub`` and sets
``handler`` on each (``parser.set_defaults(handler=fn)``); ``fn(args)`` returns
the text to print, or ``(text, exit_status)``, and raises a
:class:`~agentloops.errors.UsageError` for a user's mistake.
"""


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
    from agentloops.lab import open_lab

    open_lab(args.dir, no_browser=args.no_browser)
    return ""


def _find_tool(name: str) -> str | None:
    return find_tool(name)


def _app(args: argparse.Namespace) -> str:
    notebook = notebooks_dir() / "app" / APP_PAGES[args.page]
    if not notebook.is_file():
        raise _CommandError(f"{notebook}: the {args.page} page is missing from this installation")
    voila = _find_tool("voila")
    if voila is None:
        raise _CommandError("Voilà is not installed in this environment; run: pip install 'agentloops[app]'")
    print(f"serving the {args.page} page on port {args.port} with Voilà; press Ctrl-C to stop", file=sys.stderr)
    return_code = subprocess.call(app_command(voila, notebook, args.port, args.no_browser))
    if return_code:
        raise _CommandError(f"voila exited with status {return_code}")
    return ""


def _solutions(args: argparse.Namespace) -> str:
    from agentloops.exercises.notebooks import render_solutions

    written = render_solutions(args.out, force=args.force)
    return f"wrote {len(written)} instructor notebook(s) into {args.out}:\n" + "\n".join(f"  {p}" for p in written)


def _controller(args: argparse.Namespace) -> str | tuple[str, int]:
    from agentloops.controller.cli import dispatch

    return dispatch(args)


_COMMANDS = {"compare": _compare, "run": _run, "scenarios": _scenarios, "lab": _lab, "app": _app,
             "solutions": _solutions, "controller": _controller}


EXIT_BROKEN_PIPE = 141
"""What a shell reports for a command killed by SIGPIPE (128 + 13): ``agentloops compare | head -1``."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentloops`` and ``python -m agentloops``; returns the exit status.

    A user's mistake (the package's :class:`~agentloops.errors.AgentLoopsError`
    families, a bad argument, a path the system refuses) is one line on stderr
    and status 2; output into a closed pipe ends quietly with status 141; output
    that cannot be written (a full disk) is one line and status 2. Anything else
    is a bug and keeps its traceback.
    """
    _tolerate_any_encoding(sys.stdout)
    _tolerate_any_encoding(sys.stderr)
    try:
        output, status = _dispatch(argv)
        return _write(output, status)
    except BrokenPipeError:  # our output, --help, or a command printing as it goes, into a closed pipe
        _discard_stdout()
        return EXIT_BROKEN_PIPE


def _write(output: str, status: int) -> int:
    """Print the command's output; a disk that refuses it is one line and status 2."""
    try:
        if output:
            print(output)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _discard_stdout()
        _error(f"cannot write the output ({exc.strerror or exc.__class__.__name__})")
        return EXIT_USAGE
    return status


def _dispatch(argv: Sequence[str] | None) -> tuple[str, int]:
    """Parse and run one command; a user's mistake becomes one line on stderr and status 2."""
    try:
        args = build_parser().parse_args(argv)
        handler = getattr(args, "handler", None) or _COMMANDS[args.command]
        output = handler(args)
    except (_CommandError, AgentLoopsError) as exc:
        _error(str(exc))
        return "", EXIT_USAGE
    except OSError as exc:
        if exc.filename is None or isinstance(exc, BrokenPipeError):
            raise
        _error(f"{exc.filename}: {exc.strerror or exc.__class__.__name__}")  # a path the user gave was refused
        return "", EXIT_USAGE
    except KeyboardInterrupt:
        return "", 130
    if isinstance(output, tuple):  # a command may also set the exit status (controller check: 1 on a mismatch)
        return output[0], output[1]
    return output, 0


def _error(message: str) -> None:
    with contextlib.suppress(OSError):  # stderr is gone too: the status still says it failed
        print(f"agentloops: error: {one_line(message)}", file=sys.stderr)


def _tolerate_any_encoding(stream: object) -> None:
    """Let a terminal that cannot show a character (``PYTHONIOENCODING=latin-1``) get an escape, not a crash."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="backslashreplace")


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's own flush at exit does not fail a second time."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no real stdout (a test's capture): nothing to do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
