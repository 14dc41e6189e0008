"""Running a learner's code safely: exceptions, infinite loops and odd values become verdicts.

A checker runs the learner's function on many cases. Any of them may raise,
loop forever or return something odd, and none of that may reach the
notebook as a traceback or a frozen kernel. Each case is a zero-argument
function that returns ``(passed, message)``; :func:`run_cases` runs them
under a time limit and always returns one :class:`CaseResult` per case.

How the time limit is enforced:

- ``fork`` (Linux, the default there): the cases run in a forked child
  process that streams one result per case back through a pipe. The parent
  waits at most ``time_limit`` seconds for each; at the deadline it kills the
  child (``SIGKILL``), reports that case as timed out and forks a fresh child
  for the cases after it. A runaway loop in C code, a ``sys.exit()`` or a
  crash are stopped too, and the kernel is never touched. What the learner's
  code prints is captured and shown with the verdict.
- ``inprocess`` (elsewhere, or on request): the cases run in the calling
  thread; a watchdog thread raises :class:`CaseTimeout` inside it at the
  deadline (``PyThreadState_SetAsyncExc``), and again every 50 ms if it is
  caught. It stops any loop of Python code, but not a thread stuck inside one
  long C call, nor a loop that catches ``BaseException`` and goes round again.

After :data:`MAX_TIMEOUTS` cases have timed out the remaining ones are
skipped: a learner with an infinite loop learns that in seconds, not minutes.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import linecache
import os
import pickle
import select
import signal
import struct
import sys
import sysconfig
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from agentloops.exercises.results import OUTPUT_LIMIT, CaseResult

Mode = Literal["auto", "fork", "inprocess"]
"""How cases are isolated: see the module docstring. ``auto`` forks on Linux, else runs in-process."""

TIME_LIMIT_S = 2.0
"""Seconds one case may take. Every shipped case needs milliseconds; two seconds is a hang."""

MAX_TIMEOUTS = 2
"""Timed-out cases after which the rest are skipped."""

Verdict = tuple[bool, str]
"""What a case returns: passed or not, and the message the learner reads."""

CaseFunction = Callable[[], Verdict]

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])
_LIBRARY_DIRS = tuple(
    {str(Path(p).resolve()) for key in ("stdlib", "platstdlib", "purelib", "platlib")
     if (p := sysconfig.get_paths().get(key))}
)


class CaseTimeout(BaseException):
    """Raised inside in-process learner code at the deadline.

    A ``BaseException`` so that a learner's ``except Exception`` cannot swallow it.
    """


class LearnerError(Exception):
    """Raised by a case when the learner's code misbehaved; the message is the verdict."""


@dataclass(frozen=True, slots=True)
class Case:
    """One named check.

    Attributes:
        name: how the learner sees the case (a scenario name, a situation…).
        run: computes the verdict; it calls the learner's code, which may raise or hang.
    """

    name: str
    run: CaseFunction


# --------------------------------------------------------------------------- describing failures


def is_learner_frame(filename: str) -> bool:
    """True for code the learner wrote: not this package, not the standard library, not an installed package."""
    if filename.startswith("<frozen") or filename.startswith("<string>"):
        return False
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return True  # an IPython cell such as <ipython-input-3-…> has no real path
    if resolved.startswith(_PACKAGE_DIR + os.sep):
        return False
    return not any(resolved.startswith(lib + os.sep) for lib in _LIBRARY_DIRS)


def learner_line(tb: TracebackType | None) -> str:
    """``in my_fn, line 4: `return x / 0``` for the innermost frame of learner code, or ``""``."""
    found = ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_learner_frame(code.co_filename):
            text = linecache.getline(code.co_filename, tb.tb_lineno).strip()
            found = f"in {code.co_name}, line {tb.tb_lineno}" + (f": `{text}`" if text else "")
        tb = tb.tb_next
    return found


def describe_exception(exc: BaseException) -> str:
    """``ZeroDivisionError: division by zero (in f, line 3: `1 / 0`)`` — one line, no traceback."""
    text = str(exc).strip().splitlines()
    summary = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    if len(summary) > 200:
        summary = summary[:199] + "…"
    where = learner_line(exc.__traceback__)
    return f"{summary} ({where})" if where else summary


def raised_in_learner_code(exc: BaseException) -> bool:
    """True when the traceback passes through code the learner wrote."""
    tb = exc.__traceback__
    while tb is not None:
        if is_learner_frame(tb.tb_frame.f_code.co_filename):
            return True
        tb = tb.tb_next
    return False


def type_name(value: object) -> str:
    """``str ('done')``, ``bool (True)``, ``None``, ``list of 3`` — a value's type as a learner reads it."""
    if value is None:
        return "None"
    name = type(value).__name__
    if isinstance(value, (str, int, float)):
        shown = repr(value)
        return f"{name} ({shown[:40] + '…' if len(shown) > 40 else shown})"
    if isinstance(value, (list, tuple, set, dict)):
        return f"{name} of {len(value)}"
    return name


# --------------------------------------------------------------------------- running one case


def run_one(case: Case) -> CaseResult:
    """Run one case in this process, turning every exception into a verdict (no time limit here)."""
    try:
        passed, message = case.run()
    except CaseTimeout:
        raise
    except LearnerError as exc:
        return CaseResult(case.name, "failed", str(exc))
    except (Exception, SystemExit) as exc:  # the learner's code raised, or called sys.exit()
        if isinstance(exc, SystemExit):
            return CaseResult(case.name, "failed", f"your code called sys.exit({exc.code!r}); return a value instead")
        if raised_in_learner_code(exc):
            return CaseResult(case.name, "failed", f"your code raised {describe_exception(exc)}")
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return CaseResult(case.name, "error", f"the checker itself failed ({detail}); this is not your fault — "
                                              "please report it")
    return CaseResult(case.name, "passed" if passed else "failed", message)


def _timeout_result(name: str, limit: float) -> CaseResult:
    return CaseResult(name, "timeout", f"did not finish within {limit:g} s and was stopped — an infinite loop? "
                                       "Look for a loop whose condition never changes")


def _skipped(cases: Sequence[Case], start: int) -> list[CaseResult]:
    return [CaseResult(c.name, "skipped", f"not run: {MAX_TIMEOUTS} cases already ran out of time; "
                                          "fix the infinite loop first") for c in cases[start:]]


# --------------------------------------------------------------------------- fork mode


class _CappedWriter(io.TextIOBase):
    """A text stream that keeps the first :data:`OUTPUT_LIMIT` characters and counts the rest."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = OUTPUT_LIMIT - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(len(text), room)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts.clear()
        return text


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message)
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _child(fd: int, cases: Sequence[Case], start: int) -> None:
    """Body of the forked process: run cases from ``start``, streaming each verdict. Never returns."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        writer = _CappedWriter()
        sys.stdout = sys.stderr = writer  # type: ignore[assignment]
        for index in range(start, len(cases)):
            result = run_one(cases[index])
            _send(fd, ("case", index, result, writer.take()))
        _send(fd, ("done", writer.dropped))
    except BaseException:  # nothing may escape a forked child into the notebook's code
        pass
    finally:
        os._exit(0)


class _Reader:
    """Reads length-prefixed pickles from a pipe, each with its own deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def next(self, timeout: float) -> Any | None:
        """The next message, or ``None`` on timeout or when the pipe closes first."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= 4:
                size = struct.unpack(">I", self.buffer[:4])[0]
                if len(self.buffer) >= 4 + size:
                    data, self.buffer = self.buffer[4:4 + size], self.buffer[4 + size:]
                    return pickle.loads(data)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return _CLOSED
            self.buffer += chunk


_CLOSED = ("closed",)


def _fork(cases: Sequence[Case], start: int) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() in a threaded process (a kernel is one)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which reports through the pipe
        os.close(read_fd)
        _child(write_fd, cases, start)
    os.close(write_fd)
    return pid, read_fd


def _reap(pid: int, kill: bool) -> int:
    """Wait for the child (killing it first if asked); returns its exit status."""
    if kill:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return 0
    return status


def _run_forked(cases: Sequence[Case], time_limit: float) -> tuple[list[CaseResult], str]:
    results: list[CaseResult] = []
    printed: list[str] = []
    timeouts = 0
    start = 0
    while start < len(cases):
        try:
            pid, fd = _fork(cases, start)
        except OSError:  # no fork today (a process limit, say): run the rest here rather than fail
            rest, _ = _run_in_process(cases[start:], time_limit)
            return results + rest, "".join(printed)
        reader = _Reader(fd)
        killed = True
        try:
            while True:
                message = reader.next(time_limit)
                if message is None:  # the case at `start` hung: stop the child, move past it
                    results.append(_timeout_result(cases[start].name, time_limit))
                    timeouts += 1
                    start += 1
                    break
                if message is _CLOSED or message == _CLOSED:  # the child died without a word
                    status = _reap(pid, kill=False)
                    killed = False
                    code = os.waitstatus_to_exitcode(status) if status else 0
                    why = f"signal {-code}" if code < 0 else f"exit status {code}"
                    results.append(CaseResult(cases[start].name, "failed",
                                              f"your code crashed the checker's worker process ({why})"))
                    start += 1
                    break
                if message[0] == "done":
                    if message[1]:
                        printed.append(f"\n… ({message[1]} more characters)")
                    start = len(cases)
                    break
                _, index, result, output = message
                results.append(result)
                if output:
                    printed.append(output)
                start = index + 1
        except KeyboardInterrupt:  # the learner pressed stop: end the child, report, no traceback
            results += [CaseResult(c.name, "skipped", "not run: the check was interrupted") for c in cases[start:]]
            start = len(cases)
        finally:
            os.close(fd)
            if killed:
                _reap(pid, kill=True)
        if timeouts >= MAX_TIMEOUTS and start < len(cases):
            results += _skipped(cases, start)
            break
    return results, "".join(printed)


# --------------------------------------------------------------------------- in-process mode


@contextlib.contextmanager
def _deadline(limit: float) -> Iterator[None]:
    """Raise :class:`CaseTimeout` in this thread once ``limit`` seconds have passed (and again if caught)."""
    ident = threading.get_ident()
    lock = threading.Lock()
    done = threading.Event()
    running = [True]

    def set_exception(exc: type[BaseException] | None) -> None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                                   ctypes.py_object(exc) if exc is not None else None)

    def watchdog() -> None:
        wait = limit
        while not done.wait(wait):
            with lock:
                if not running[0]:
                    return
                set_exception(CaseTimeout)
            wait = 0.05  # a learner's `except BaseException` caught it: raise it again soon

    thread = threading.Thread(target=watchdog, name="agentloops-check-deadline", daemon=True)
    thread.start()
    try:
        yield
    finally:
        with lock:
            running[0] = False
            set_exception(None)  # withdraw an exception that was raised but not yet delivered
        done.set()
        thread.join()


def _run_in_process(cases: Sequence[Case], time_limit: float) -> tuple[list[CaseResult], str]:
    results: list[CaseResult] = []
    timeouts = 0
    for index, case in enumerate(cases):
        try:
            with _deadline(time_limit):
                result = run_one(case)
        except CaseTimeout:
            result = _timeout_result(case.name, time_limit)
            timeouts += 1
        results.append(result)
        if timeouts >= MAX_TIMEOUTS and index + 1 < len(cases):
            results += _skipped(cases, index + 1)
            break
    return results, ""


# --------------------------------------------------------------------------- the entry point


def default_mode() -> Literal["fork", "inprocess"]:
    """``fork`` on Linux (where forking a kernel is safe enough), else ``inprocess``."""
    return "fork" if sys.platform.startswith("linux") and hasattr(os, "fork") else "inprocess"


def run_cases(cases: Sequence[Case], *, time_limit: float = TIME_LIMIT_S,
              mode: Mode = "auto") -> tuple[list[CaseResult], str]:
    """Run every case under a time limit; never raises because of the learner's code.

    Args:
        cases: the checks, in order.
        time_limit: seconds each case may take before it is stopped.
        mode: ``fork``, ``inprocess`` or ``auto`` (see the module docstring).

    Returns:
        One result per case, in order, and what the learner's code printed (fork mode only;
        in-process the output goes straight to the notebook).
    """
    if not cases:
        return [], ""
    chosen = default_mode() if mode == "auto" else mode
    if chosen == "fork":
        return _run_forked(cases, time_limit)
    return _run_in_process(cases, time_limit)
