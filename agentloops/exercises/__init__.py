"""Workshop mode: exercises that check themselves, in the style of Kaggle's learntools.

Each exercise set is one module and one learner notebook under
``notebooks/exercises/``:

- :mod:`~agentloops.exercises.stopping` — ``q1`` a stop criterion, ``q2`` raise at the
  cap, ``q3`` the wasted-call detector (the core loop);
- :mod:`~agentloops.exercises.controlling` — ``q4`` an action fingerprint that lets a
  retry through, ``q5`` error routing, ``q6`` a completion condition (the controller).

The pieces, one concept per module:

- :mod:`~agentloops.exercises.checking` runs learner code safely (exceptions,
  infinite loops under a time limit, odd return values);
- :mod:`~agentloops.exercises.results` renders verdicts as HTML and text;
- :mod:`~agentloops.exercises.exercise` is ``q.check()`` / ``q.hint()`` / ``q.solution()``;
- :mod:`~agentloops.exercises.registry` lists every exercise by id and set;
- :mod:`~agentloops.exercises.progress` remembers what passed in this kernel session;
- :mod:`~agentloops.exercises.solutions` holds the reference solutions;
- :mod:`~agentloops.exercises.notebooks` renders instructor copies with the solutions filled in.

Importing this package loads nothing heavy; ipywidgets is imported only by
:func:`agentloops.exercises.progress.summary`.
"""

from __future__ import annotations

__all__: list[str] = []
