"""Work ahead: compute the states a learner is likely to ask for next while they read the current one.

The budget explorer re-runs 2 × n randomized tasks for every slider setting it has not shown before: about
half a second on a two-core laptop, five times the 100 ms a control may take to answer. What a learner
asks next is predictable — the slider they just moved, one more step the same way, or a neighbour of
the current setting — so a background thread computes those settings (runs *and* chart) while the page
is read, and a step the learner then takes is a dictionary look-up.

The learner always comes first: while the widget answers a change, the worker waits (at its next
:meth:`Prewarm.checkpoint`, between two runs), and matplotlib draws in one thread at a time
(:data:`RENDER_LOCK`: fonts are shared between figures). The worker is a daemon thread: it never keeps
a kernel alive, and it only ever fills a cache — the widget's controls are touched by the kernel's own
thread alone.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

RENDER_LOCK = threading.Lock()
"""Held while a chart is drawn, by the widget and by the worker alike."""


class _Abandon(Exception):
    """Internal: the learner moved on; the setting the worker was computing is no longer the likeliest."""


class Prewarm:
    """A cache of computed states and a daemon thread that fills it ahead of the learner.

    Args:
        compute: a state's key → its value (called in the worker, and in the kernel's thread on a miss).
        size: how many values to keep, least recently used dropped first.
    """

    def __init__(self, compute: Callable[[Hashable], Any], size: int = 256) -> None:
        self._compute = compute
        self.size = size
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._queue: list[Hashable] = []
        self._wake = threading.Condition()
        self._free = threading.Event()
        self._free.set()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # the cache is read by one thread while the other fills it
        self._generation = 0  # bumped each time the queue is replaced
        self._working_on = 0
        self.computed_ahead = 0

    def get(self, key: Hashable) -> Any:
        """The value for ``key``: from the cache, else computed now (with the worker paused)."""
        with self.answering():
            with self._lock:
                if key in self._values:
                    self._values.move_to_end(key)
                    return self._values[key]
            value = self._compute(key)
            self._keep(key, value)
            return value

    def __contains__(self, key: Hashable) -> bool:
        return key in self._values

    def ahead(self, keys: Sequence[Hashable]) -> None:
        """Compute these keys next, in this order (the queue is replaced: the learner moved on)."""
        with self._wake:
            self._queue = [key for key in keys if key not in self._values]
            self._generation += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="agentloops-prewarm", daemon=True)
                self._thread.start()
            self._wake.notify()

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Hold the worker at its next checkpoint while the kernel's thread answers the learner."""
        self._free.clear()
        try:
            yield
        finally:
            self._free.set()

    def checkpoint(self) -> None:
        """Called by ``compute`` between two runs: in the worker, wait while the learner is being answered,
        and drop the setting in hand when the learner has moved on (the queue was replaced since)."""
        if threading.current_thread() is self._thread:
            self._free.wait()
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
                while not self._queue:
                    self._wake.wait()
                key = self._queue.pop(0)
                self._working_on = self._generation
            if key in self._values:
                continue
            self._free.wait()
            try:
                value = self._compute(key)
            except _Abandon:
                continue
            self._keep(key, value)
            self.computed_ahead += 1


def neighbours(key: tuple[int, ...], steps: Sequence[int], lows: Sequence[int], highs: Sequence[int],
               moved: int | None = None, direction: int = 1) -> list[tuple[int, ...]]:
    """The settings a learner is likely to pick next, most likely first.

    The slider just moved (``moved``) goes on in the same ``direction`` for three more steps, then back
    one; then every other slider one step either way. Settings off a slider's range are left out.
    """
    def moved_by(index: int, by: int) -> tuple[int, ...] | None:
        value = key[index] + by * steps[index]
        return None if not lows[index] <= value <= highs[index] else (*key[:index], value, *key[index + 1:])

    order: list[tuple[int, int]] = []
    if moved is not None:
        order += [(moved, direction), (moved, 2 * direction), (moved, 3 * direction), (moved, -direction)]
    order += [(i, by) for i in range(len(key)) if i != moved for by in (1, -1)]
    found = [moved_by(i, by) for i, by in order]
    return list(dict.fromkeys(k for k in found if k is not None))
