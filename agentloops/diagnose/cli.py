"""``agentloops diagnose FILE [--format F] [--json] [--html OUT] [--max-steps N]``.

Exit status: 0 when no stop bug was found, 1 when there are findings (so a
CI step can fail on them, and nothing else exits 1), 2 when the log could not
be read to its end — the report then covers what was read and says where
reading stopped, or one line says why nothing could be read — and 3 when
diagnose itself failed (a bug in the package: one line, no traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agentloops.diagnose import LOG_FORMATS, diagnose
from agentloops.diagnose.model import log_error
from agentloops.diagnose.source import one_line
from agentloops.errors import AgentLoopsError
from agentloops.i18n import N_, _

EXIT_FINDINGS = 1
EXIT_STOPPED = 2
EXIT_CRASHED = 3


def _steps(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise argparse.ArgumentTypeError(_("expected a whole number from 1 to 10000; got {text}").format(
            text=repr(text)))
    return int(text)


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add the ``diagnose`` subcommand to ``sub``."""
    parser = sub.add_parser("diagnose", help=_("find the stop bugs in your own agent's log"),
                            description=_("Read an agent log and report the stop bugs the package teaches."),
                            epilog=_("exit status: 0 no stop bug found; 1 findings; 2 the log could not be read to its "
                                     "end (the report says where); 3 diagnose itself failed (a bug: please report "
                                     "it)"))
    parser.add_argument("file", help=_("the log: agentloops run --json output, a scenario file, "
                                       "request/response JSON Lines or OTLP JSON spans"))
    parser.add_argument("--format", default="auto", choices=("auto", *LOG_FORMATS),
                        help=_("how to read the file (default: told from its first entry)"))
    parser.add_argument("--json", action="store_true", help=_("print the report as JSON"))
    parser.add_argument("--html", metavar="OUT", help=_("also write an HTML report with a chart to OUT"))
    parser.add_argument("--max-steps", type=_steps, default=None,
                        help=_("the agent's step cap, if known (a run that used every step counts as capped)"))
    parser.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> tuple[str, int]:
    """The handler: the report as text or JSON, and the exit status.

    A failure of diagnose itself is one line and :data:`EXIT_CRASHED`, never status 1:
    a CI step that fails on findings must not take a crash for one.
    """
    try:
        return _report(args)
    except (AgentLoopsError, OSError):
        raise  # the user's file or path: one line and status 2, from the command line's handler
    except Exception as exc:  # any other exception is a bug, reported as one
        message = _("{path}: diagnose failed inside the package ({kind}: {detail}); this is a bug, please report "
                    "it").format(path=args.file, kind=type(exc).__name__, detail=str(exc)[:160])
        print(_("agentloops: error: {message}").format(message=one_line(message)), file=sys.stderr)
        return "", EXIT_CRASHED


def _report(args: argparse.Namespace) -> tuple[str, int]:
    report = diagnose(args.file, args.format, max_steps=args.max_steps)
    text = json.dumps(report.to_dict(), ensure_ascii=False, indent=2) if args.json else str(report)
    if args.html:
        target = Path(args.html)
        try:
            target.write_text(report.to_html(), encoding="utf-8")
        except OSError as exc:
            raise log_error(N_("{path}: cannot write the HTML report: {reason}"), path=str(target),
                            reason=str(exc.strerror or exc)) from None
        if not args.json:
            text += "\n" + _("wrote the HTML report to {path}").format(path=target)
    status = EXIT_STOPPED if report.stopped else EXIT_FINDINGS if report.findings else 0
    return text, status
