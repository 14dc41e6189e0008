"""Work ahead: compute the states a learner is likely to ask for next while they read the current one.

A widget answers a change by running the loops behind it and drawing a chart: about 30 ms of work for a
single run on a quiet two-core laptop, up to 150 ms for the budget explorer's 2 × n randomized tasks when
none of its kept runs holds for the new setting (``widgets/budget_runs.py``), and two or three times that
when the laptop is busy — more than the 100 ms a control may take to answer. What a
learner asks next is predictable — the control they just moved, on the same way, or a neighbour of the
current setting — so a background thread computes those settings (runs *and* chart) while the page is
read, and a step the learner then takes is a dictionary look-up (or, when the learner is quicker than
the worker and picks the setting it is computing, a wait for the worker, which is half done).

The learner always comes first: while the widget answers a change, the worker waits (at its next
:meth:`Prewarm.checkpoint`, and before each setting), and matplotlib draws in one thread at a time
(:data:`RENDER_LOCK`: a widget's chart is one figure, and fonts are shared between figures). The worker is
a daemon thread: it never keeps a kernel alive, and it only ever fills a cache — the widget's controls are
touched by the kernel's own thread alone. A setting the worker cannot compute (one the controller refuses)
is simply not kept: the kernel's thread meets the error itself, and says so, when the learner picks it.
While a worker computes, the interpreter hands its lock over sooner (:func:`_prompt_handover`), so the page's
messages are not held up by the worker.

After the likeliest settings the worker goes on to every setting a single move reaches (:func:`one_move`: a
far jump is a look-up too), and, when the widget has few settings in all, to every one (:func:`whole_grid`).
"""

from __future__ import annotations

import atexit
import itertools
import os
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

RENDER_LOCK = threading.Lock()
"""Held while a chart is drawn, by the widget and by the worker alike."""

_FREE = threading.Event()
"""Set while no widget is answering the learner: every widget's worker waits for it (a notebook has several)."""
_FREE.set()
_answering = [0, 0]  # how deep the kernel's thread is in :meth:`Prewarm.answering`; answers begun so far

GRACE_S = 0.05
"""How long the workers go on waiting after an answer: the kernel still sends it to the page (its messages go
out from another thread, which would otherwise share the interpreter with the workers)."""


def _release(answer: int) -> None:
    """Free the workers, unless another answer began since answer number ``answer``."""
    if not _answering[0] and _answering[1] == answer:
        _FREE.set()


_RUNNING: weakref.WeakSet[Prewarm] = weakref.WeakSet()
"""Every cache with a worker: stopped when the interpreter exits (a daemon thread killed inside matplotlib's
C++ drawing code aborts the process with ``terminate called without an active exception``)."""


@atexit.register
def _stop_workers() -> None:
    for prewarm in list(_RUNNING):
        prewarm.stop()


SWITCH_S = 0.0005
"""The interpreter's switch interval while a worker computes (Python's default: 5 ms)."""

_computing = [0, sys.getswitchinterval()]  # workers computing now; the switch interval to go back to
_SWITCH_LOCK = threading.Lock()


@contextmanager
def _prompt_handover() -> Iterator[None]:
    """A short switch interval while a worker computes. The kernel's thread waits for the interpreter lock each
    time it wakes (for every message of the page, several per answer), and a thread that computes hands it over
    only when the switch interval has run out: 5 ms by default, so each answer took tens of ms longer while a
    worker was busy."""
    with _SWITCH_LOCK:
        if not _computing[0]:
            _computing[1] = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_S)
        _computing[0] += 1
    try:
        yield
    finally:
        with _SWITCH_LOCK:
            _computing[0] -= 1
            if not _computing[0]:
                sys.setswitchinterval(_computing[1])


_AT_REST = threading.Lock()
"""Held by a worker while it computes, let go at each checkpoint where it waits. A fork (the exercise checker runs
each check in a forked copy of the kernel) waits for it: a copy made while a worker is inside a library's lock
would wait for that lock forever, and a correct answer would read as "an infinite loop?"."""


def _before_fork() -> None:
    """Hold the workers at their next checkpoint (between two runs: no library lock held there), then take
    :data:`_AT_REST`: a fork waits for one run at most, not for the whole setting a worker has in hand."""
    _FREE.clear()
    _AT_REST.acquire()


def _after_fork() -> None:
    _AT_REST.release()
    if not _answering[0]:
        _FREE.set()


def _in_the_copy() -> None:
    """The forked copy has no workers: it starts from fresh locks and never touches one of the parent's. A
    worker holds :data:`_FREE`'s inner lock for a moment at each wait, and a copy taken in that moment would
    hang on it before the check's first case began."""
    global _FREE, _AT_REST, _SWITCH_LOCK
    _AT_REST, _SWITCH_LOCK, _FREE = threading.Lock(), threading.Lock(), threading.Event()
    _FREE.set()
    _answering[0] = 0
    if _computing[0]:
        _computing[0] = 0
        sys.setswitchinterval(_computing[1])


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork, after_in_child=_in_the_copy)


class _Abandon(Exception):
    """Internal: the learner moved on; the setting the worker was computing is no longer the likeliest."""


class Prewarm:
    """A cache of computed states and a daemon thread that fills it ahead of the learner.

    Args:
        compute: a state's key → its value (called in the worker, and in the kernel's thread on a miss).
        size: how many values to keep, least recently used dropped first; the worker works at most half
            as far ahead, so what it computes never pushes out what it computed just before.
    """

    def __init__(self, compute: Callable[[Hashable], Any], size: int = 256) -> None:
        self._compute = compute
        self.size = size
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._queue: list[Hashable] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # the cache is read by one thread while the other fills it
        self._generation = 0  # bumped each time the queue is replaced
        self._working_on = 0
        self._stopping = False
        self._in_hand: Hashable | None = None  # the key the worker is computing
        self.computed_ahead = 0

    def get(self, key: Hashable) -> Any:
        """The value for ``key``: from the cache; else the worker's, when it is computing it (half done: waiting
        costs less than starting again); else computed now, with every worker paused. Call it outside
        :meth:`answering`, which would hold the worker being waited for."""
        with self._wake:
            self._wake.wait_for(lambda: self._in_hand != key, timeout=60)
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        with self.answering():
            value = self._compute(key)
            self._keep(key, value)
            return value

    def __contains__(self, key: Hashable) -> bool:
        return key in self._values

    def ahead(self, keys: Sequence[Hashable]) -> None:
        """Compute these keys next, in this order (the queue is replaced: the learner moved on). Those already
        computed count as just used: what the worker computes next pushes out older ones first. The key in hand
        is finished when it is among them (else dropped at the worker's next checkpoint)."""
        with self._lock:
            for key in reversed(keys):
                if key in self._values:
                    self._values.move_to_end(key)
        with self._wake:
            self._queue = [key for key in keys if key not in self._values][: self.size // 2]
            self._generation += 1
            if self._in_hand is not None and self._in_hand in self._queue:  # still likely: finish it, not again
                self._working_on = self._generation
            if self._thread is None and not self._stopping:
                self._thread = threading.Thread(target=self._work, name="agentloops-prewarm", daemon=True)
                self._thread.start()
                _RUNNING.add(self)
            self._wake.notify()

    def stop(self, timeout_s: float = 5.0) -> None:
        """End the worker after the setting in hand (the cache stays readable)."""
        with self._wake:
            self._stopping, self._queue = True, []
            self._generation += 1
            self._wake.notify()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Hold every widget's worker at its next checkpoint while the kernel's thread answers the learner, and
        for :data:`GRACE_S` after."""
        _answering[0] += 1
        _answering[1] += 1
        _FREE.clear()
        try:
            yield
        finally:
            _answering[0] -= 1
            if not _answering[0]:
                grace = threading.Timer(GRACE_S, _release, (_answering[1],))
                grace.daemon = True
                grace.start()

    def checkpoint(self) -> None:
        """Called by ``compute`` between two runs: in the worker, wait while the learner is being answered,
        and drop the setting in hand when the learner has moved on (the queue was replaced since)."""
        if threading.current_thread() is self._thread:
            if not _FREE.is_set():  # a fork may be waiting for :data:`_AT_REST`: let go of it while held here
                _AT_REST.release()
                try:
                    _FREE.wait()
                finally:
                    _AT_REST.acquire()
            if self._generation != self._working_on:
                raise _Abandon

    def _keep(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._values[key] = value
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def _work(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._stopping:
                    self._wake.wait()
                if self._stopping:
                    return
                key = self._queue.pop(0)
                self._working_on = self._generation
                if key in self._values:
                    continue
                self._in_hand = key
            _FREE.wait()
            try:
                with _AT_REST, _prompt_handover():
                    self._keep(key, self._compute(key))
                self.computed_ahead += 1
            except Exception:  # _Abandon, or a setting that fails: the learner's own pick shows why
                pass
            finally:
                with self._wake:
                    self._in_hand = None
                    self._wake.notify_all()


def neighbours(key: tuple[int, ...], steps: Sequence[int], lows: Sequence[int], highs: Sequence[int],
               moved: int | None = None, direction: int = 1, *, reach: int = 3, back: int = 1
               ) -> list[tuple[int, ...]]:
    """The settings a learner is likely to pick next, most likely first.

    The slider just moved (``moved``) goes on in the same ``direction`` for three more steps, then back
    one; then every other slider one step either way; then the moved slider further on, up to ``reach``
    steps, and further back, up to ``back`` steps. Settings off a slider's range are left out.
    """
    def moved_by(index: int, by: int) -> tuple[int, ...] | None:
        value = key[index] + by * steps[index]
        return None if not lows[index] <= value <= highs[index] else (*key[:index], value, *key[index + 1:])

    order: list[tuple[int, int]] = []
    if moved is not None:
        order += [(moved, k * direction) for k in range(1, min(3, reach) + 1)] + [(moved, -direction)]
    order += [(i, by) for i in range(len(key)) if i != moved for by in (1, -1)]
    if moved is not None:
        order += [(moved, k * direction) for k in range(4, reach + 1)]
        order += [(moved, -k * direction) for k in range(2, back + 1)]
    found = [moved_by(i, by) for i, by in order]
    return list(dict.fromkeys(k for k in found if k is not None))


WHOLE_GRID = 400
"""A widget whose controls have at most this many settings together works every one of them ahead (each kept
view costs some 30 to 200 kB: a few tens of MB at most); a larger one, every setting one move away."""


def one_move(at: tuple[int, ...], lengths: Sequence[int]) -> list[tuple[int, ...]]:
    """Every setting one control's move away from ``at`` (positions on each control's line of ``lengths``):
    each control's two ends first (a far jump goes to an end more often than anywhere else), then the rest
    nearest first, control by control in turn."""
    moves = [(i, j) for i, length in enumerate(lengths) for j in range(length) if j != at[i]]
    ends = [(i, j) for i, j in moves if j in (0, lengths[i] - 1)]
    rest = sorted(moves, key=lambda move: (abs(move[1] - at[move[0]]), move[0], move[1]))
    return list(dict.fromkeys((*at[:i], j, *at[i + 1:]) for i, j in [*ends, *rest]))


def whole_grid(at: tuple[int, ...], lengths: Sequence[int]) -> list[tuple[int, ...]]:
    """Every setting of the grid but ``at``, nearest first (fewest positions moved, summed over the controls)."""
    found = (key for key in itertools.product(*map(range, lengths)) if key != at)
    return sorted(found, key=lambda key: sum(abs(k - a) for k, a in zip(key, at, strict=True)))
