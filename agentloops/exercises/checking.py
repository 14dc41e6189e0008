"""Running a learner's code safely, and judging what it returned in the notebook's own process.

Each :class:`Case` has two halves. ``call`` runs the learner's code and
returns its raw outputs; ``judge`` compares those outputs with the expected
values and says passed or failed. Only ``call`` ever runs learner code, and
``judge`` only ever sees the outputs as JSON (:mod:`agentloops.exercises.outputs`).

How it is isolated:

- ``fork`` (Linux, the default there): the calls run in a forked worker
  process, in its own process group, with about :data:`MEMORY_LIMIT` bytes of
  address space more than the notebook already uses. The worker writes one
  length-prefixed JSON message per case to a pipe — the learner function's
  outputs and what it printed, nothing else — and the notebook's process
  judges them. The parent waits at most ``time_limit`` seconds per case and
  :data:`TOTAL_LIMIT_S` for the whole check; at a deadline it kills the
  worker's whole process group and, after a per-case timeout, forks a fresh
  worker for the cases after it. A case that ran out of time while its worker
  barely used the processor (a busy machine, or a copy stuck on a lock another
  thread held at the fork) is run once more in a fresh worker before it is
  called a timeout: a loop uses the processor, and it alone reads as one at once.
  The time the fork waits for the kernel's own threads is not the learner's. A worker that dies is reported as a crash
  even when a child it forked still holds the pipe open. When the check ends
  the process group is killed, so no child the learner's code started
  survives it. A message the worker never sends (extra, out of order,
  malformed) fails that case; a forged one can only claim outputs, which are
  judged like any other.
- ``inprocess`` (elsewhere, or on request): the calls run in the calling
  thread; a watchdog thread raises :class:`CaseTimeout` inside it at the
  deadline (``PyThreadState_SetAsyncExc``), and again every 50 ms if it is
  caught. The outputs still go through JSON before they are judged.

What is *not* protected — the learner owns the kernel. Code run at the top of
a notebook cell can replace this module's functions or the expected values
before a check; a worker's code can compute the right outputs any way it
likes (hard-coding them, or writing them to the pipe itself) and they will be
judged correct; a child that calls ``setsid()`` leaves the process group and
outlives the check; the memory limit bounds address space, not a disk or a
network. In-process mode stops neither a thread stuck in one long C call nor
a loop that catches ``BaseException`` and goes round again, and shares the
kernel's memory. The checker catches mistakes and cheap tricks, not a
determined cheat.

After :data:`MAX_TIMEOUTS` cases have timed out the remaining ones are
skipped: a learner with an infinite loop learns that in seconds, not minutes.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import select
import signal
import struct
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentloops.exercises import outputs
from agentloops.exercises.failures import (
    describe_exception,
    describe_raised,
    is_learner_frame,
    raised_summary,
    raised_text,
    type_name,
)
from agentloops.exercises.outputs import JSON, WrongValue
from agentloops.exercises.results import OUTPUT_LIMIT, CaseResult, more_characters
from agentloops.i18n import _

__all__ = ["MAX_TIMEOUTS", "MEMORY_LIMIT", "TIME_LIMIT_S", "TOTAL_LIMIT_S", "Case", "CaseTimeout", "LearnerError",
           "Mode", "Verdict", "default_mode", "describe_exception", "guarded_call", "is_learner_frame", "run_cases",
           "type_name"]

Mode = Literal["auto", "fork", "inprocess"]
"""How cases are isolated: see the module docstring. ``auto`` forks on Linux, else runs in-process."""

TIME_LIMIT_S = 2.0
"""Seconds one case may take. Every shipped case needs milliseconds; two seconds is a hang."""

TOTAL_LIMIT_S = 12.0
"""Seconds a whole check may take, however many cases each stay under their own limit."""

MAX_TIMEOUTS = 2
"""Timed-out cases after which the rest are skipped."""

MEMORY_LIMIT = 1 << 30
"""Bytes of address space a worker may add to what the notebook's process already uses (1 GiB)."""

MAX_MESSAGE = 4 << 20
"""Largest message a worker may send, in bytes; a larger length prefix is treated as tampering."""

Verdict = tuple[bool, str]
"""What a judge returns: passed or not, and the message the learner reads."""


class CaseTimeout(BaseException):
    """Raised inside in-process learner code at the deadline.

    A ``BaseException`` so that a learner's ``except Exception`` cannot swallow it.
    """


class LearnerError(Exception):
    """Raised by a judge (or a call) when the learner's code misbehaved; the message is the verdict."""


@dataclass(frozen=True, slots=True)
class Case:
    """One named check, split where the trust boundary is.

    Attributes:
        name: how the learner sees the case (a scenario name, a situation…).
        call: runs the learner's code and returns its raw outputs (in the worker).
        judge: the decoded outputs → the verdict (in the notebook's process; never calls learner code).
    """

    name: str
    call: Callable[[], Any]
    judge: Callable[[JSON], Verdict]


# --------------------------------------------------------------------------- the two halves of a case


def call_case(case: Case) -> JSON:
    """Run ``case.call`` and encode what came out: the outputs, an exception, or an exit (worker side)."""
    try:
        return {"$": "value", "value": outputs.encode(case.call())}
    except CaseTimeout:
        raise
    except SystemExit as exc:
        return {"$": "exit", "code": outputs.encode(exc.code)}
    except LearnerError as exc:
        return {"$": "learner", "text": str(exc)}
    except Exception as exc:
        return describe_raised(exc)


def judge_case(case: Case, output: JSON) -> CaseResult:
    """Turn one encoded output into a verdict (notebook side). A failure of the judge itself is ours."""
    kind = outputs.tag(output)
    if kind == "exit":
        return CaseResult(case.name, "failed", _("your code called sys.exit({code}); return a value instead").format(
            code=outputs.show_short(output.get("code"))))
    if kind == "learner":
        return CaseResult(case.name, "failed", str(output.get("text")))
    if kind == "raised":
        if output.get("learner"):
            return CaseResult(case.name, "failed", _("your code raised {error}").format(error=raised_text(output)))
        return _checker_failed(case.name, raised_summary(output))
    if kind != "value":
        return _tampered(case.name)
    try:
        passed, message = case.judge(output.get("value"))
    except (LearnerError, WrongValue) as exc:
        return CaseResult(case.name, "failed", str(exc))
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return _checker_failed(case.name, detail)
    return CaseResult(case.name, "passed" if passed else "failed", message)


def _checker_failed(name: str, detail: str) -> CaseResult:
    return CaseResult(name, "error", _("the checker itself failed ({detail}); this is not your fault — "
                                       "please report it").format(detail=detail))


def _tampered(name: str) -> CaseResult:
    return CaseResult(name, "failed", _("the checker's worker sent something it never sends (malformed, too large "
                                        "or out of order) — does your code write to the checker's pipe? Return "
                                        "your answer instead"))


def _timeout_result(name: str, limit: float) -> CaseResult:
    return CaseResult(name, "timeout", _("did not finish within {limit} s and was stopped — an infinite loop? "
                                         "Look for a loop whose condition never changes").format(limit=f"{limit:g}"))


def _skipped(cases: Sequence[Case], start: int, why: str) -> list[CaseResult]:
    return [CaseResult(c.name, "skipped", _("not run: {why}").format(why=why)) for c in cases[start:]]


def _too_many_timeouts() -> str:
    return _("{count} cases already ran out of time; fix the infinite loop first").format(count=MAX_TIMEOUTS)


def _out_of_total(total: float) -> str:
    return _("the whole check ran out of its {total} s; make each case faster").format(total=f"{total:g}")


def guarded_call(function: Callable[..., Any], *args: Any) -> Any:
    """Call the learner's function; an exception it raises becomes an output its judge can put in context."""
    try:
        return function(*args)
    except Exception as exc:
        return outputs.Encoded(describe_raised(exc))


# --------------------------------------------------------------------------- the worker


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


def _send(fd: int, message: JSON) -> None:
    data = outputs.dumps(message).encode("utf-8")
    view = memoryview(struct.pack(">I", len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def address_space() -> int:
    """Bytes of address space this process uses now (0 when the system does not say)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def limit_memory(extra: int) -> None:
    """Allow this process ``extra`` bytes of address space beyond what it uses now (never above the hard limit)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux
        return
    used = address_space()
    if not used:
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = used + extra if hard == resource.RLIM_INFINITY else min(used + extra, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _worker(fd: int, cases: Sequence[Case], start: int) -> None:
    """Body of the forked worker: run calls from ``start``, streaming each encoded output. Never returns."""
    try:
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        writer = _CappedWriter()
        sys.stdout = sys.stderr = writer  # type: ignore[assignment]
        limit_memory(MEMORY_LIMIT)
        for index in range(start, len(cases)):
            output = call_case(cases[index])
            _send(fd, {"case": index, "output": output, "printed": writer.take()})
        _send(fd, {"done": writer.dropped})
    except BaseException:  # nothing may escape a forked worker into the notebook's code
        pass
    finally:
        os._exit(0)


# --------------------------------------------------------------------------- the parent's side of the pipe


_TIMEOUT = "timeout"
_DIED = "died"
_BAD = "bad"
_POLL_S = 0.05


class _Reader:
    """Reads length-prefixed JSON messages from a worker, watching the worker itself as well as the pipe."""

    def __init__(self, fd: int, pid: int) -> None:
        self.fd = fd
        self.pid = pid
        self.buffer = b""
        self.closed = False

    def _message(self) -> JSON | str | None:
        if len(self.buffer) < 4:
            return None
        size = struct.unpack(">I", self.buffer[:4])[0]
        if size > MAX_MESSAGE:
            return _BAD
        if len(self.buffer) < 4 + size:
            return None
        data, self.buffer = self.buffer[4:4 + size], self.buffer[4 + size:]
        try:
            return json.loads(data.decode("utf-8"))
        except ValueError:
            return _BAD

    def _read(self, timeout: float) -> bool:
        """Read what is there within ``timeout``; False when nothing came."""
        if self.closed:
            return False
        ready, _writable, _errors = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return False
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.closed = True
            return False
        self.buffer += chunk
        return True

    def worker_exited(self) -> bool:
        """True once the worker has exited (it stays waitable: its status is read later)."""
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def next(self, deadline: float) -> JSON | str:
        """The next message, or :data:`_TIMEOUT`, :data:`_DIED` (the worker is gone) or :data:`_BAD`."""
        while True:
            message = self._message()
            if message is not None:
                return message
            if self.closed or self.worker_exited():
                while self._read(0):  # what the worker wrote before it went
                    pass
                message = self._message()
                return message if message is not None else _DIED
            left = deadline - time.monotonic()
            if left <= 0:
                return _TIMEOUT
            self._read(min(left, _POLL_S))


def _fork(cases: Sequence[Case], start: int) -> tuple[int, int]:
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about fork() in a threaded process (a kernel is one)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the worker, which reports through the pipe
        os.close(read_fd)
        _worker(write_fd, cases, start)
    os.close(write_fd)
    with contextlib.suppress(OSError):  # the worker does it too; whoever is first wins the race
        os.setpgid(pid, pid)
    return pid, read_fd


def _end(pid: int) -> int:
    """Kill the worker's whole process group, then reap the worker; returns its exit status."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the worker is not reaped yet, so its pid cannot name another group
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    try:
        _pid, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return 0
    return status


def _crash_result(name: str, status: int) -> CaseResult:
    code = os.waitstatus_to_exitcode(status) if status else 0
    why = _("signal {number}").format(number=-code) if code < 0 else _("exit status {code}").format(code=code)
    return CaseResult(name, "failed", _("your code crashed the checker's worker process ({why})").format(why=why))


def _cpu_seconds(pid: int) -> float | None:
    """Processor time process ``pid`` has used so far (Linux's ``/proc``); None where the system does not say."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()  # after the name, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    except (OSError, ValueError, IndexError):
        return None


def _stalled(pid: int, since: float, time_limit: float) -> bool:
    """True when the worker used under half of ``time_limit`` of processor time since ``since``: it waited or
    was not run, rather than looped."""
    used = _cpu_seconds(pid)
    return used is not None and used - since < time_limit / 2


@dataclass
class _Progress:
    """Where a forked check stands: results so far, output, timeouts, the next case, the deadline, the cases
    already given a second worker."""

    cases: Sequence[Case]
    time_limit: float
    total_deadline: float
    results: list[CaseResult]
    printed: list[str]
    timeouts: int = 0
    start: int = 0
    rerun: set[int] = field(default_factory=set)


def _one_worker(state: _Progress) -> None:
    """Fork one worker for the cases from ``state.start`` and judge its messages until it ends."""
    asked = time.monotonic()
    pid, fd = _fork(state.cases, state.start)
    state.total_deadline += time.monotonic() - asked  # waiting for the kernel's threads to pause
    reader = _Reader(fd, pid)
    crashed = False
    try:
        while state.start < len(state.cases):
            deadline = min(time.monotonic() + state.time_limit, state.total_deadline)
            cpu_before = _cpu_seconds(pid) or 0.0
            message = reader.next(deadline)
            name = state.cases[state.start].name
            if message == _TIMEOUT:
                if time.monotonic() >= state.total_deadline:
                    return
                if state.start not in state.rerun and _stalled(pid, cpu_before, state.time_limit):
                    state.rerun.add(state.start)  # the next worker starts at this case again
                    return
                state.results.append(_timeout_result(name, state.time_limit))
                state.timeouts += 1
                state.start += 1
                return
            if message == _DIED:
                crashed = True
                break
            expected = state.start
            if (not isinstance(message, dict) or set(message) != {"case", "output", "printed"}
                    or message["case"] != expected or type(message["printed"]) is not str):
                state.results.append(_tampered(name))  # forged, out of order, or "done" too early
                state.start += 1
                return
            state.results.append(judge_case(state.cases[expected], message["output"]))
            if message["printed"]:
                state.printed.append(message["printed"][:OUTPUT_LIMIT])
            state.start += 1
        if not crashed:
            final = reader.next(min(time.monotonic() + state.time_limit, state.total_deadline))
            if isinstance(final, dict) and set(final) == {"done"} and type(final["done"]) is int and final["done"]:
                state.printed.append(more_characters(final["done"]))
    finally:
        os.close(fd)
        status = _end(pid)
        if crashed:
            state.results.append(_crash_result(state.cases[state.start].name, status))
            state.start += 1


def _run_forked(cases: Sequence[Case], time_limit: float, total: float) -> tuple[list[CaseResult], str]:
    state = _Progress(cases, time_limit, time.monotonic() + total, [], [])
    while state.start < len(cases):
        if time.monotonic() >= state.total_deadline:
            state.results += _skipped(cases, state.start, _out_of_total(total))
            break
        try:
            _one_worker(state)
        except OSError:  # no fork today (a process limit, say): run the rest here rather than fail
            rest, _printed = _run_in_process(cases[state.start:], time_limit, total)
            return state.results + rest, "".join(state.printed)
        except KeyboardInterrupt:  # the learner pressed stop: the worker is gone, report, no traceback
            state.results += [CaseResult(c.name, "skipped", _("not run: the check was interrupted"))
                              for c in cases[len(state.results):]]
            break
        if state.timeouts >= MAX_TIMEOUTS and state.start < len(cases):
            state.results += _skipped(cases, state.start, _too_many_timeouts())
            break
    return state.results, "".join(state.printed)


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


def _run_in_process(cases: Sequence[Case], time_limit: float, total: float) -> tuple[list[CaseResult], str]:
    results: list[CaseResult] = []
    timeouts = 0
    end = time.monotonic() + total
    for index, case in enumerate(cases):
        left = end - time.monotonic()
        if left <= 0:
            return results + _skipped(cases, index, _out_of_total(total)), ""
        limit = min(time_limit, left)
        try:
            with _deadline(limit):
                output = call_case(case)
            result = judge_case(case, json.loads(outputs.dumps(output)))  # the same JSON trip as a worker's
        except CaseTimeout:
            if limit < time_limit:
                return results + _skipped(cases, index, _out_of_total(total)), ""
            result = _timeout_result(case.name, time_limit)
            timeouts += 1
        results.append(result)
        if timeouts >= MAX_TIMEOUTS and index + 1 < len(cases):
            return results + _skipped(cases, index + 1, _too_many_timeouts()), ""
    return results, ""


# --------------------------------------------------------------------------- the entry point


def default_mode() -> Literal["fork", "inprocess"]:
    """``fork`` on Linux (where forking a kernel is safe enough), else ``inprocess``."""
    return "fork" if sys.platform.startswith("linux") and hasattr(os, "fork") else "inprocess"


def run_cases(cases: Sequence[Case], *, time_limit: float = TIME_LIMIT_S, total_limit: float = TOTAL_LIMIT_S,
              mode: Mode = "auto") -> tuple[list[CaseResult], str]:
    """Run every case under a time limit per case and one for the whole check; never raises for learner code.

    Args:
        cases: the checks, in order.
        time_limit: seconds each case may take before it is stopped.
        total_limit: seconds the whole check may take; cases not reached by then are skipped.
        mode: ``fork``, ``inprocess`` or ``auto`` (see the module docstring).

    Returns:
        One result per case, in order, and what the learner's code printed (fork mode only;
        in-process the output goes straight to the notebook).
    """
    if not cases:
        return [], ""
    chosen = default_mode() if mode == "auto" else mode
    if chosen == "fork":
        return _run_forked(cases, time_limit, total_limit)
    return _run_in_process(cases, time_limit, total_limit)
