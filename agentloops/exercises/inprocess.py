"""The in-process mode of a check: the learner's calls run in the calling thread, and a watchdog thread raises
:class:`~agentloops.exercises.cases.CaseTimeout` inside it at the deadline. Used where there is no fork, or
when a fork fails; see :mod:`~agentloops.exercises.checking` for what it cannot stop.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import threading
import time
from collections.abc import Iterator, Sequence

from agentloops.exercises import outputs
from agentloops.exercises.cases import (
    MAX_TIMEOUTS,
    Case,
    CaseTimeout,
    call_case,
    judge_case,
    out_of_total,
    skipped,
    timeout_result,
    too_many_timeouts,
)
from agentloops.exercises.results import CaseResult


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


def run_in_process(cases: Sequence[Case], time_limit: float, total: float) -> tuple[list[CaseResult], str]:
    results: list[CaseResult] = []
    timeouts = 0
    end = time.monotonic() + total
    for index, case in enumerate(cases):
        left = end - time.monotonic()
        if left <= 0:
            return results + skipped(cases, index, out_of_total(total)), ""
        limit = min(time_limit, left)
        try:
            with _deadline(limit):
                output = call_case(case)
            result = judge_case(case, json.loads(outputs.dumps(output)))  # the same JSON trip as a worker's
        except CaseTimeout:
            if limit < time_limit:
                return results + skipped(cases, index, out_of_total(total)), ""
            result = timeout_result(case.name, time_limit)
            timeouts += 1
        results.append(result)
        if timeouts >= MAX_TIMEOUTS and index + 1 < len(cases):
            return results + skipped(cases, index + 1, too_many_timeouts()), ""
    return results, ""
