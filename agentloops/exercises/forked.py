"""The fork mode of a check: the learner's calls run in a forked copy of the notebook's process.

The worker writes one length-prefixed JSON message per case to a pipe, and the parent judges each as it comes,
watching the worker as well as the pipe (a worker that dies is a crash even when a child of it holds the pipe
open). At a case's deadline the worker's whole process group is killed and a fresh worker takes the cases after
it; a case that ran out of time while its worker barely used the processor is given one fresh worker first. See
:mod:`~agentloops.exercises.checking` for what this protects and what it does not.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import signal
import struct
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentloops.exercises import outputs
from agentloops.exercises.cases import (
    MAX_TIMEOUTS,
    Case,
    call_case,
    judge_case,
    out_of_total,
    skipped,
    tampered,
    timeout_result,
    too_many_timeouts,
)
from agentloops.exercises.inprocess import run_in_process
from agentloops.exercises.outputs import JSON
from agentloops.exercises.results import OUTPUT_LIMIT, CaseResult, more_characters
from agentloops.i18n import _

MEMORY_LIMIT = 1 << 30
"""Bytes of address space a worker may add to what the notebook's process already uses (1 GiB)."""

MAX_MESSAGE = 4 << 20
"""Largest message a worker may send, in bytes; a larger length prefix is treated as tampering."""


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


STALLED = 0.1
"""The share of a case's time limit under which its worker counts as stalled, not looping: a copy stuck on a lock
uses no processor time at all, and even a loop on a crowded machine gets more than a tenth of it."""


def _stalled(pid: int, since: float, time_limit: float) -> bool:
    """True when the worker used under :data:`STALLED` of ``time_limit`` in processor time since ``since``: it
    waited or was not run, rather than looped."""
    used = _cpu_seconds(pid)
    return used is not None and used - since < time_limit * STALLED


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
                state.results.append(timeout_result(name, state.time_limit))
                state.timeouts += 1
                state.start += 1
                return
            if message == _DIED:
                crashed = True
                break
            expected = state.start
            if (not isinstance(message, dict) or set(message) != {"case", "output", "printed"}
                    or message["case"] != expected or type(message["printed"]) is not str):
                state.results.append(tampered(name))  # forged, out of order, or "done" too early
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


def run_forked(cases: Sequence[Case], time_limit: float, total: float) -> tuple[list[CaseResult], str]:
    state = _Progress(cases, time_limit, time.monotonic() + total, [], [])
    while state.start < len(cases):
        if time.monotonic() >= state.total_deadline:
            state.results += skipped(cases, state.start, out_of_total(total))
            break
        try:
            _one_worker(state)
        except OSError:  # no fork today (a process limit, say): run the rest here rather than fail
            rest, _printed = run_in_process(cases[state.start:], time_limit, total)
            return state.results + rest, "".join(state.printed)
        except KeyboardInterrupt:  # the learner pressed stop: the worker is gone, report, no traceback
            state.results += [CaseResult(c.name, "skipped", _("not run: the check was interrupted"))
                              for c in cases[len(state.results):]]
            break
        if state.timeouts >= MAX_TIMEOUTS and state.start < len(cases):
            state.results += skipped(cases, state.start, too_many_timeouts())
            break
    return state.results, "".join(state.printed)
