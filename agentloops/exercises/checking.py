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

import os
import sys
from collections.abc import Sequence
from typing import Literal

from agentloops.exercises.cases import MAX_TIMEOUTS, Case, CaseTimeout, LearnerError, Verdict, guarded_call
from agentloops.exercises.failures import describe_exception, is_learner_frame, type_name
from agentloops.exercises.forked import MEMORY_LIMIT, run_forked
from agentloops.exercises.inprocess import run_in_process
from agentloops.exercises.results import CaseResult

__all__ = ["MAX_TIMEOUTS", "MEMORY_LIMIT", "TIME_LIMIT_S", "TOTAL_LIMIT_S", "Case", "CaseTimeout", "LearnerError",
           "Mode", "Verdict", "default_mode", "describe_exception", "guarded_call", "is_learner_frame", "run_cases",
           "type_name"]

Mode = Literal["auto", "fork", "inprocess"]
"""How cases are isolated: see the module docstring. ``auto`` forks on Linux, else runs in-process."""

TIME_LIMIT_S = 2.0
"""Seconds one case may take. Every shipped case needs milliseconds; two seconds is a hang."""

TOTAL_LIMIT_S = 12.0
"""Seconds a whole check may take, however many cases each stay under their own limit."""


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
        return run_forked(cases, time_limit, total_limit)
    return run_in_process(cases, time_limit, total_limit)
