"""The terminal a command writes to, as it may be: a closed pipe, a closed stream, a full disk, any encoding.

What a command prints is never lost to a traceback: output into a closed pipe (``| head``) ends quietly
with status 141; a closed standard output or error (``>&-``, ``2>&-``) is the caller's choice to discard it,
for the servers and kernels a command starts too; output a full disk refuses is one line and status 2; a
terminal that cannot show a character gets a backslash escape.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

from agentloops.i18n import _
from agentloops.jsonfile import one_line

EXIT_USAGE = 2
"""A user's mistake: one line on stderr (exit 1 is left to commands that report findings)."""
EXIT_BROKEN_PIPE = 141
"""What a shell reports for a command killed by SIGPIPE (128 + 13): ``agentloops compare | head -1``."""


def write_output(output: str, status: int) -> int:
    """Print the command's output; a disk that refuses it is one line and status 2."""
    try:
        if output:
            print(output)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        discard_stdout()
        error_line(_("cannot write the output ({reason})").format(reason=exc.strerror or exc.__class__.__name__))
        return EXIT_USAGE
    return status


def error_line(message: str) -> None:
    """One line on stderr; the message is English (an exception's text), read back in the language in use through
    the catalog's templates (``{path}: no such file; expected a {what}``)."""
    from agentloops.controller.vocabulary.readback import read_back

    with contextlib.suppress(OSError):  # stderr is gone too: the status still says it failed
        print(_("agentloops: error: {message}").format(message=one_line(read_back(message))), file=sys.stderr)


def reopen_closed_streams() -> None:
    """Point a standard output or error the caller closed (``>&-``, ``2>&-``: their choice to discard it) at /dev/null,
    on its own descriptor and inheritably: a kernel or server a command starts would otherwise die on the closed one,
    and without a stderr ``print(file=None)`` would write an error line into the output."""
    for name, number in (("stdout", 1), ("stderr", 2)):
        if getattr(sys, name) is None:
            devnull = os.open(os.devnull, os.O_WRONLY)  # the lowest free descriptor: ``number``, or a lower one
            if devnull != number and not _in_use(number):
                devnull = os.dup2(devnull, number)
            os.set_inheritable(devnull, True)
            setattr(sys, name, open(devnull, "w", encoding="utf-8"))  # noqa: SIM115 (lives as long as the process)


def _in_use(number: int) -> bool:
    with contextlib.suppress(OSError):
        return os.fstat(number) is not None
    return False


def tolerate_any_encoding(stream: object) -> None:
    """Let a terminal that cannot show a character (``PYTHONIOENCODING=latin-1``) get an escape, not a crash."""
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(errors="backslashreplace")


def discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's own flush at exit does not fail a second time."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no real stdout (a test's capture): nothing to do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
