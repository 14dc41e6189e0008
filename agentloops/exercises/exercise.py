"""One exercise: ``q.check()``, ``q.hint()``, ``q.solution()`` — modelled on Kaggle's learntools.

The learner defines a function in a notebook cell and runs ``q1.check()``.
The exercise finds the function by name in the notebook (or takes it as an
argument), runs it on every case under a time limit
(:mod:`agentloops.exercises.checking`) and answers with a
:class:`~agentloops.exercises.results.ExerciseResult`:

- **not attempted** — the name is not defined yet, or the function is still a
  stub (its body is only ``...``, ``pass`` or a docstring), so "Run all"
  spoils nothing and scares no one;
- **incorrect** — with one line per case: what passed, what failed and why;
- **correct** — every case passes.

``q.hint()`` climbs a ladder from a vague nudge to concrete code, and
``q.solution()`` shows the reference solution (left commented out in the
learner's notebook). Nothing here ever raises into the notebook.
"""

from __future__ import annotations

import dis
import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentloops.exercises import progress
from agentloops.exercises.checking import TIME_LIMIT_S, TOTAL_LIMIT_S, Case, Mode, run_cases, type_name
from agentloops.exercises.registry import register
from agentloops.exercises.results import ExerciseResult, Note

_MISSING: Any = object()


_STUB_OPS = frozenset({"RESUME", "NOP", "CACHE", "RETURN_VALUE"})


def is_stub(function: Callable[..., Any]) -> bool:
    """True when ``function``'s body is only ``...``, ``pass``, ``return None`` or a docstring.

    Judged from the bytecode: such a body compiles to "return None" and nothing else.
    """
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    for instruction in dis.get_instructions(code):
        if instruction.opname in _STUB_OPS:
            continue
        if instruction.opname in ("LOAD_CONST", "RETURN_CONST") and instruction.argval is None:
            continue
        return False
    return True


@dataclass(eq=False)
class Exercise:
    """A self-checking exercise.

    Attributes:
        id: a short stable name (``stop-criterion``); notebook cells are tagged ``exercise:<id>``.
        number: its place in the workshop (1, 2, …); the notebook calls it ``q<number>``.
        set_name: the exercise set (one notebook) it belongs to.
        title: one line for progress tables.
        variable: the name of the function the learner defines.
        arguments: the parameters the learner's function is called with, for the shape check.
        noun: what the cases are (``scenarios``, ``situations``…), for messages.
        hints: from vague to concrete.
        build_cases: the learner's function → the cases to run it on.
        time_limit: seconds each case may take.
        total_limit: seconds the whole check may take.
        prompt: the task with its rules, in full (``q.task()`` shows it); a notebook may say it in its own words.
        handle: the name the notebook gives the exercise object, when it is not ``q<number>`` (``q01_split``).
    """

    id: str
    number: int
    set_name: str
    title: str
    variable: str
    arguments: tuple[str, ...]
    noun: str
    hints: Sequence[str]
    build_cases: Callable[[Callable[..., Any]], list[Case]]
    time_limit: float = TIME_LIMIT_S
    total_limit: float = TOTAL_LIMIT_S
    prompt: str = ""
    handle: str = ""
    _hints_shown: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        register(self)

    @property
    def name(self) -> str:
        """What the notebook calls the exercise object: ``q1``, ``q01_split``."""
        return self.handle or f"q{self.number}"

    @property
    def label(self) -> str:
        """``q1 · write a stop criterion``."""
        return f"{self.name} · {self.title}"

    # ---- the learner's three calls

    def check(self, answer: Any = _MISSING) -> ExerciseResult:
        """Judge the learner's function and remember the verdict for the progress summary.

        Args:
            answer: the function to check; by default the one named :attr:`variable`
                in the notebook (the caller's globals).
        """
        if answer is _MISSING:
            answer = _lookup(self.variable, sys._getframe(1).f_globals)
        result = self.judge(answer)
        progress.record(self.id, result.status)
        return result

    def task(self) -> Note:
        """The task and its rules, in full."""
        return Note(f"Task {self.name}", self.prompt or self.title)

    def hint(self) -> Note:
        """The next hint on the ladder (the last one repeats)."""
        if not self.hints:
            return Note("Hint", "no hint for this one — re-read the task and the failing cases")
        index = min(self._hints_shown, len(self.hints) - 1)
        self._hints_shown += 1
        return Note(f"Hint {index + 1}/{len(self.hints)}", self.hints[index])

    def solution(self) -> Note:
        """The reference solution's source (the progress summary notes that it was viewed)."""
        progress.record_solution_viewed(self.id)
        return Note(f"Solution to {self.name}", "one way to write it; yours may differ and still pass",
                    self.solution_source())

    # ---- for instructors, tests and the solutions command

    def reference(self) -> Callable[..., Any]:
        """The reference solution, from :mod:`agentloops.exercises.solutions`."""
        solutions = importlib.import_module("agentloops.exercises.solutions")
        function: Callable[..., Any] = getattr(solutions, self.variable)
        return function

    def solution_source(self) -> str:
        """The reference solution's source code, as the solutions notebook shows it."""
        return inspect.getsource(self.reference())

    def judge(self, answer: Any, *, time_limit: float | None = None, mode: Mode = "auto") -> ExerciseResult:
        """The verdict on ``answer``, without touching the progress record. Never raises."""
        try:
            return self._judge(answer, time_limit, mode)
        except Exception as exc:  # a checker bug must not become a traceback in the learner's notebook
            return ExerciseResult(self.label, "incorrect", f"the checker itself failed ({type(exc).__name__}: {exc}); "
                                                          "this is not your fault — please report it")

    def _judge(self, answer: Any, time_limit: float | None, mode: Mode) -> ExerciseResult:
        if answer is _MISSING or answer is ... or answer is None or (callable(answer) and is_stub(answer)):
            return ExerciseResult(self.label, "not attempted",
                                  f"write {self.variable}({', '.join(self.arguments)}) in the cell above, run it, "
                                  f"then run this check again")
        problem = self._shape_problem(answer)
        if problem:
            return ExerciseResult(self.label, "incorrect", problem, hint=self._nudge())
        try:
            cases = self.build_cases(answer)
        except Exception as exc:  # building cases does not run learner code; a failure here is ours
            return ExerciseResult(self.label, "incorrect", f"the checker could not prepare its cases "
                                                          f"({type(exc).__name__}: {exc}); please report it")
        results, printed = run_cases(cases, time_limit=time_limit or self.time_limit, total_limit=self.total_limit,
                                     mode=mode)
        failed = [r for r in results if not r.passed]
        if not failed:
            return ExerciseResult(self.label, "correct", f"all {len(results)} {self.noun} pass.", tuple(results),
                                  output=printed)
        first = failed[0]
        message = (f"{len(results) - len(failed)} of {len(results)} {self.noun} pass; "
                   f"first to fix: {first.name}.")
        return ExerciseResult(self.label, "incorrect", message, tuple(results), hint=self._nudge(), output=printed)

    def _nudge(self) -> str:
        return f"Stuck? {self.name}.hint() gives a hint; {self.name}.solution() shows one solution."

    def _shape_problem(self, answer: Any) -> str:
        """Why ``answer`` cannot even be called the way the checker calls it ("" when it can)."""
        expected = f"{self.variable}({', '.join(self.arguments)})"
        if not callable(answer):
            return f"{self.variable} should be a function, {expected}; it is {type_name(answer)}"
        try:
            signature = inspect.signature(answer)
        except (TypeError, ValueError):
            return ""  # a builtin or a C function: let the cases judge it
        try:
            signature.bind(*self.arguments)
        except TypeError:
            return (f"{self.variable} is called as {expected}, but yours takes "
                    f"({', '.join(signature.parameters)}); give it exactly {len(self.arguments)} "
                    f"parameter{'s' if len(self.arguments) != 1 else ''}")
        return ""

    def __repr__(self) -> str:
        call = f"{self.variable}({', '.join(self.arguments)})"
        return f"<Exercise {self.label}: define {call}, then {self.name}.check()>"


def _lookup(name: str, namespace: dict[str, Any]) -> Any:
    """``name`` from the caller's globals, else from IPython's user namespace, else missing."""
    if name in namespace:
        return namespace[name]
    try:
        from IPython import get_ipython  # only present in a notebook; the package does not require it
    except ImportError:
        return _MISSING
    shell = get_ipython()
    if shell is not None and name in shell.user_ns:
        return shell.user_ns[name]
    return _MISSING
