"""Workshop mode: exercises that check themselves, in the style of Kaggle's learntools.

Each exercise set is one module; Part 1's are embedded one per lesson, the
others have their own learner notebook under ``notebooks/exercises/``:

- :mod:`~agentloops.exercises.part1` — ``q01_split`` … ``q05_respond``, one per lesson of
  notebooks 01–05;
- :mod:`~agentloops.exercises.stopping` — ``q1`` a stop criterion, ``q2`` raise at the
  cap, ``q2b`` one wasted call, ``q3`` the wasted-call detector (the core loop);
- :mod:`~agentloops.exercises.controlling` — ``q4`` an action fingerprint that lets a
  retry through, ``q5`` error routing, ``q6`` a completion condition (the controller).

The pieces, one concept per module:

- :mod:`~agentloops.exercises.checking` runs learner code in a worker process and
  judges its outputs in the notebook's (time and memory limits, a process group): one
  :mod:`~agentloops.exercises.cases` at a time, each split where the trust boundary is, in
  :mod:`~agentloops.exercises.forked` workers or, without a fork,
  :mod:`~agentloops.exercises.inprocess`;
- :mod:`~agentloops.exercises.outputs` is the only thing a worker sends back: raw
  outputs as JSON, with exact types;
- :mod:`~agentloops.exercises.failures` describes a learner's exception in one line,
  with a hint;
- :mod:`~agentloops.exercises.results` renders verdicts as HTML and text;
- :mod:`~agentloops.exercises.exercise` is ``q.check()`` / ``q.hint()`` / ``q.solution()``;
- :mod:`~agentloops.exercises.registry` lists every exercise by id and set;
- :mod:`~agentloops.exercises.session` remembers what passed in this kernel session;
- :mod:`~agentloops.exercises.progress` is the summary of a set: every exercise and how far the session got;
- :mod:`~agentloops.exercises.solutions` holds the reference solutions;
- :mod:`~agentloops.exercises.notebooks` renders instructor copies with the solutions and the quiz
  answers filled in.

Importing this package loads nothing heavy; ipywidgets is imported only by
:func:`agentloops.exercises.progress.summary`.
"""

from __future__ import annotations

__all__: list[str] = []
