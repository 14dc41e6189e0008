"""The ``agentloops`` command: compare, run, list scenarios, open the notebooks, serve the app pages,
render instructor solutions, and the controller group.

Every mistake a user can make on the command line (an unknown scenario or
criterion, a malformed file, a bad number) ends in one line on stderr and
exit status 2, never a traceback; a closed pipe or stream, a full disk or a
terminal's encoding are :mod:`~agentloops.terminal`'s.

The help and the error lines speak the language of :mod:`agentloops.i18n`: a
``--lang`` option anywhere on the line (``agentloops --lang zh compare``,
``agentloops lab --lang zh``), else ``AGENTLOOPS_LANG``, else the locale. argparse's
own words ("usage:", "the following arguments are required") come from the same
catalog while a command is parsed (:func:`argparse_speaks`). Output that is data
(``--json``, tables, traces) stays English.
"""

from __future__ import annotations

import argparse
import contextlib
import gettext
import importlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from agentloops import i18n
from agentloops.arguments import whole_number
from agentloops.comparison import compare
from agentloops.criteria import CRITERION_NAMES
from agentloops.errors import AgentLoopsError
from agentloops.i18n import N_, _, language, ngettext, shown
from agentloops.loop import DEFAULT_MAX_STEPS, MAX_STEPS_LIMIT, run
from agentloops.resources import find_tool, notebooks_dir
from agentloops.scenario import list_scenarios
from agentloops.tables import text_table
from agentloops.terminal import (
    EXIT_BROKEN_PIPE,
    EXIT_USAGE,
    discard_stdout,
    error_line,
    reopen_closed_streams,
    tolerate_any_encoding,
    write_output,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but its errors end in one line and status 2 like ours."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _CommandError(message)

    def format_help(self) -> str:
        """argparse's help, its section headings ending in the language's colon (argparse writes ``"%s:"``)."""
        titles = {group.title for group in self._action_groups if group.title}
        return "\n".join(_("{heading}:").format(heading=line[:-1]) if line[:-1] in titles and line.endswith(":")
                         else line for line in super().format_help().split("\n"))


class _CommandError(Exception):
    pass


def max_steps_int(text: str) -> int:
    """argparse type for ``--max-steps``: from 1 to the loop's :data:`~agentloops.loop.MAX_STEPS_LIMIT`."""
    return whole_number(text, 1, MAX_STEPS_LIMIT)


def _port(text: str) -> int:
    return whole_number(text, 1, 65535)


MAX_STEPS_HELP = N_("model calls before the loop gives up, from 1 to {limit} (default: {default})")
"""The ``--max-steps`` help (format it with :func:`max_steps_help`)."""


def max_steps_help() -> str:
    """The ``--max-steps`` help in the language in use."""
    return _(MAX_STEPS_HELP).format(limit=MAX_STEPS_LIMIT, default=DEFAULT_MAX_STEPS)


APP_PAGES: dict[str, str] = {"criteria": "criteria-explorer.ipynb", "controller": "controller-explorer.ipynb"}
"""App page name → its notebook under ``notebooks/app/`` (the Chinese edition's under ``notebooks/zh/app/``)."""

DEFAULT_APP_PORT = 8866
"""Voilà's own default port."""


APP_CULL_AFTER_S = 60
"""How long a page's kernel may sit idle with no page connected before Voilà shuts it down (seconds)."""

APP_CULL_EVERY_S = 15
"""How often Voilà looks for such kernels (seconds)."""


def app_command(voila: str, notebook: Path, port: int = DEFAULT_APP_PORT, no_browser: bool = False, *,
                cull_after_s: int = APP_CULL_AFTER_S, cull_every_s: int = APP_CULL_EVERY_S) -> list[str]:
    """The Voilà invocation that serves ``notebook`` as a page with no code cells shown.

    Every load of the page starts a kernel of about 130 MiB. Voilà's page asks the server to shut it
    down when it closes, but that request is refused (403, no ``_xsrf`` cookie: voila-dashboards/voila
    #1458), and turning the XSRF check off would let any web page post to the server. So the kernels are
    culled instead (jupyter-server's ``MappingKernelManager`` settings): a kernel with no page connected
    that has been idle ``cull_after_s`` seconds is shut down, checked every ``cull_every_s`` seconds; a
    kernel whose page is still open is never culled (``cull_connected=False``), however long it idles.
    """
    command = [voila, str(notebook), f"--port={port}", "--strip_sources=True", "--show_tracebacks=False",
               f"--MappingKernelManager.cull_idle_timeout={cull_after_s}",
               f"--MappingKernelManager.cull_interval={cull_every_s}",
               "--MappingKernelManager.cull_connected=False"]
    return command + (["--no-browser"] if no_browser else [])


def _csv_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests), its help in the language in use."""
    parser = _Parser(prog="agentloops", description=_("When does a tool-calling loop stop? Measure it."))
    parser.add_argument("--lang", type=_language_option, help=lang_help())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("compare", help=_("every scenario under every criterion, as a table"))
    p.add_argument("--format", choices=["text", "markdown", "csv", "json"], default="text")
    p.add_argument("--scenarios", type=_csv_list,
                   help=_("comma-separated names or paths (default: article + extra)"))
    p.add_argument("--criteria", type=_csv_list,
                   help=_("comma-separated, from {names}").format(names=", ".join(CRITERION_NAMES)))
    p.add_argument("--max-steps", type=max_steps_int, default=DEFAULT_MAX_STEPS, help=max_steps_help())

    p = sub.add_parser("run", help=_("one scenario under one criterion, step by step"))
    p.add_argument("scenario", help=_("a shipped scenario name or a path to a scenario .json file"))
    p.add_argument("--criterion", default="correct",
                   help=_("one of {names}").format(names=", ".join(CRITERION_NAMES)))
    p.add_argument("--max-steps", type=max_steps_int, default=DEFAULT_MAX_STEPS, help=max_steps_help())
    p.add_argument("--json", action="store_true", help=_("print the run record as one JSON object"))

    sub.add_parser("scenarios", help=_("list the shipped scenarios"))

    p = sub.add_parser("lab", help=_("open the notebooks in JupyterLab (--lang zh: the Chinese edition)"))
    p.add_argument("--dir", type=Path, default=None,
                   help=_("where to copy the notebooks (default: lab/ in a checkout, "
                          "./agentloops-notebooks from a wheel)"))
    p.add_argument("--no-browser", action="store_true", help=_("start the server without opening a browser"))

    p = sub.add_parser("app", help=_("serve an explorer as a page with no code shown (Voilà), for projecting"))
    p.add_argument("page", nargs="?", choices=list(APP_PAGES), default="criteria",
                   help=_("criteria: the criteria explorer (default); controller: the controller explorer"))
    p.add_argument("--port", type=_port, default=DEFAULT_APP_PORT,
                   help=_("from 1 to 65535 (default: {port})").format(port=DEFAULT_APP_PORT))
    p.add_argument("--no-browser", action="store_true", help=_("start the server without opening a browser"))

    p = sub.add_parser("solutions",
                       help=_("instructors: the exercise notebooks with the reference solutions filled in"))
    p.add_argument("--out", type=Path, required=True, help=_("the folder to write the instructor copies into"))
    p.add_argument("--force", action="store_true", help=_("overwrite copies already in that folder"))

    from agentloops.controller.teaching.cli import add_controller_commands

    add_controller_commands(sub)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(sub)
    _lang_everywhere(parser)
    return parser


LANG_HELP = N_("the language of the help, the messages and the notebooks: en or zh (default: AGENTLOOPS_LANG, "
               "else the locale, else en)")
"""The ``--lang`` help."""


def lang_help() -> str:
    """:data:`LANG_HELP` in the language in use."""
    return _(LANG_HELP)


def _language_option(text: str) -> str:
    """argparse type of ``--lang``: ``en``, ``zh`` or a locale such as ``zh_CN``."""
    chosen = i18n.normalize(text)
    if chosen is None:
        raise argparse.ArgumentTypeError(_("expected en or zh (or a locale such as zh_CN); got {text!r}").format(
            text=text))
    return chosen


def _lang_everywhere(parser: argparse.ArgumentParser) -> None:
    """Accept ``--lang`` after any subcommand too (``agentloops lab --lang zh``), without overriding the global one."""
    for action in parser._actions:  # argparse keeps its subcommands here; there is no public walk
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                if "--lang" not in child._option_string_actions:
                    child.add_argument("--lang", type=_language_option, default=argparse.SUPPRESS,
                                       help=lang_help())
                _lang_everywhere(child)


def requested_language(argv: Sequence[str]) -> str | None:
    """The value of the last ``--lang`` on the command line (before a ``--``), or ``None``.

    The help texts are written when the parser is built, so the language must be known before parsing.
    """
    found = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--lang="):
            found = arg.split("=", 1)[1]
    return found


COMMAND_MODULES: tuple[str, ...] = ("agentloops.doctor", "agentloops.cheatsheet", "agentloops.diagnose.cli",
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


SCENARIO_GROUPS = (N_("article"), N_("extra"), N_("provider"))
"""The groups of the shipped scenarios, in the catalog (``agentloops scenarios`` shows them)."""


def _scenarios(args: argparse.Namespace) -> str:
    rows = [[s.name, shown(s.group), shown(s.title)] for s in list_scenarios()]
    return text_table([_("name"), _("group"), _("title")], rows)


def _lab(args: argparse.Namespace) -> str:
    from agentloops.lab import open_lab

    open_lab(args.dir, no_browser=args.no_browser, lang=language())
    return ""


def _find_tool(name: str) -> str | None:
    return find_tool(name)


def app_notebook(page: str, lang: str = "en") -> Path:
    """The notebook that serves app ``page``: ``notebooks/app/…``, or its Chinese edition ``notebooks/zh/app/…``."""
    edition = notebooks_dir() / "zh" if lang == "zh" else notebooks_dir()
    return edition / "app" / APP_PAGES[page]


def _app(args: argparse.Namespace) -> str:
    notebook = app_notebook(args.page, language())
    if not notebook.is_file():
        raise _CommandError(_("{notebook}: the {page} page is missing from this installation").format(
            notebook=notebook, page=args.page))
    voila = _find_tool("voila")
    if voila is None:
        raise _CommandError(_("Voilà is not installed in this environment; run: pip install 'agentloops[app]'"))
    print(_("serving the {page} page on port {port} with Voilà; press Ctrl-C to stop").format(
        page=args.page, port=args.port), file=sys.stderr)
    from agentloops.lab import serve  # Ctrl-C or SIGTERM stop the Voilà server too, as they stop JupyterLab's

    return_code = serve(app_command(voila, notebook, args.port, args.no_browser), cwd=notebook.parent)
    if return_code:
        raise _CommandError(_("voila exited with status {status}").format(status=return_code))
    return ""


def _solutions(args: argparse.Namespace) -> str:
    from agentloops.exercises.notebooks import render_solutions

    written = render_solutions(args.out, force=args.force)
    head = _("wrote {n} instructor notebook(s) into {out}:").format(n=len(written), out=args.out)
    return head + "\n" + "\n".join(f"  {p}" for p in written)


def _controller(args: argparse.Namespace) -> str | tuple[str, int]:
    from agentloops.controller.teaching.cli import dispatch

    return dispatch(args)


_COMMANDS = {"compare": _compare, "run": _run, "scenarios": _scenarios, "lab": _lab, "app": _app,
             "solutions": _solutions, "controller": _controller}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agentloops`` and ``python -m agentloops``; returns the exit status.

    A user's mistake (the package's :class:`~agentloops.errors.AgentLoopsError`
    families, a bad argument, a path the system refuses) is one line on stderr
    and status 2; output into a closed pipe ends quietly with status 141; output
    that cannot be written (a full disk) is one line and status 2. Anything else
    is a bug and keeps its traceback.
    """
    reopen_closed_streams()
    tolerate_any_encoding(sys.stdout)
    tolerate_any_encoding(sys.stderr)
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        with command_language(requested_language(arguments)) as refused:
            if refused is not None:
                error_line(refused)
                return EXIT_USAGE
            output, status = _dispatch(arguments)
            return write_output(output, status)
    except BrokenPipeError:  # our output, --help, or a command printing as it goes, into a closed pipe
        discard_stdout()
        return EXIT_BROKEN_PIPE


@contextlib.contextmanager
def command_language(tag: str | None) -> Iterator[str | None]:
    """Speak ``tag`` (a ``--lang`` value; ``None``: the environment's choice) while a command runs, argparse
    included; the language in use before is restored after. Yields ``None``, or the one-line error for a
    language the package does not speak."""
    if tag is not None:
        try:
            _language_option(tag)
        except argparse.ArgumentTypeError as exc:
            yield _("argument --lang: {message}").format(message=exc)
            return
    with i18n.speaking(tag) if tag is not None else contextlib.nullcontext(), argparse_speaks():
        yield None


ARGPARSE_MESSAGES: tuple[str, ...] = (
    N_("usage: "), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("argument %(argument_name)s: %(message)s"), N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"), N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"), N_("expected one argument"), N_("expected at most one argument"),
    N_("expected at least one argument"), N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"), N_("ignored explicit argument %r"), N_("one of the arguments %s is required"),
    N_("unexpected option string: %s"), N_("can't open '%(filename)s': %(error)s"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
)
"""The words argparse itself writes into help and errors (it looks each up with ``gettext``), in our catalog."""


def _argparse_plural(n: int) -> str:
    """argparse's one plural message (``nargs=N``), written as a call so that it reaches the catalog as a plural."""
    return ngettext("expected %s argument", "expected %s arguments", n)


@contextlib.contextmanager
def argparse_speaks() -> Iterator[None]:
    """Let argparse's own words ("usage:", "error:" …) come from our catalog while a command is parsed.

    argparse looks every message up through its module-level ``_`` and ``ngettext`` (the
    :mod:`gettext` functions); they are swapped for the package's lookup and put back afterwards. In
    English nothing changes: the lookup hands every message to :mod:`gettext`, as before.
    """
    saved = argparse._, argparse.ngettext  # type: ignore[attr-defined]

    def lookup(message: str) -> str:
        return gettext.gettext(message) if language() == "en" else _(message)

    def plural(singular: str, plural_: str, n: int) -> str:
        return gettext.ngettext(singular, plural_, n) if language() == "en" else i18n.ngettext(singular, plural_, n)

    argparse._, argparse.ngettext = lookup, plural  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved  # type: ignore[attr-defined]


def _dispatch(argv: Sequence[str] | None) -> tuple[str, int]:
    """Parse and run one command; a user's mistake becomes one line on stderr and status 2."""
    try:
        args = build_parser().parse_args(argv)
        handler = getattr(args, "handler", None) or _COMMANDS[args.command]
        output = handler(args)
    except (_CommandError, AgentLoopsError) as exc:
        error_line(str(exc))
        return "", EXIT_USAGE
    except OSError as exc:
        if exc.filename is None or isinstance(exc, BrokenPipeError):
            raise
        error_line(f"{exc.filename}: {exc.strerror or exc.__class__.__name__}")  # a path the user gave was refused
        return "", EXIT_USAGE
    except KeyboardInterrupt:
        return "", 130
    if isinstance(output, tuple):  # a command may also set the exit status (controller check: 1 on a mismatch)
        return output[0], output[1]
    return output, 0
