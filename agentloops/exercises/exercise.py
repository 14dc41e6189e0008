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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentloops.exercises import session
from agentloops.exercises.checking import TIME_LIMIT_S, TOTAL_LIMIT_S, Case, Mode, run_cases, type_name
from agentloops.exercises.results import ExerciseResult, Note
from agentloops.i18n import N_, _, ngettext

_MISSING: Any = object()

COUNTED: dict[str, str] = {
    "scenarios": N_("{count} scenarios"),
    "pairs of tests": N_("{count} pairs of tests"),
    "runs": N_("{count} runs"),
    "rounds": N_("{count} rounds"),
    "failed runs": N_("{count} failed runs"),
    "pairs of calls": N_("{count} pairs of calls"),
    "situations": N_("{count} situations"),
    "task states": N_("{count} task states"),
}
"""A number of cases, per :attr:`Exercise.noun` (``8 scenarios``): the counted form is what translates."""


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
        title: one line for progress tables (English, marked with ``N_``; shown translated).
        variable: the name of the function the learner defines.
        arguments: the parameters the learner's function is called with, for the shape check.
        noun: what the cases are (``scenarios``, ``situations``…), for messages.
        hints: from vague to concrete. Title, noun, hints and prompt are English message ids (marked with
            ``N_`` where they are defined) and are translated where they are shown.
        build_cases: the learner's function → the cases to run it on.
        time_limit: seconds each case may take.
        total_limit: seconds the whole check may take.
        prompt: the task with its rules, in full (``q.task()`` shows it); a notebook may say it in its own words.
        handle: the name the notebook gives the exercise object, when it is not ``q<number>`` (``q01_split``).
        prompt_template: when the prompt is built from parts, its message id with ``{fields}``, and
            prompt_fields: the parts (message ids too), so ``q.task()`` can show it translated.
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
    prompt_template: str = ""
    prompt_fields: Mapping[str, str] = field(default_factory=dict)
    _hints_shown: int = field(default=0, init=False, repr=False)

    @property
    def name(self) -> str:
        """What the notebook calls the exercise object: ``q1``, ``q01_split``."""
        return self.handle or f"q{self.number}"

    @property
    def label(self) -> str:
        """``q1 · write a stop criterion``."""
        return f"{self.name} · {_(self.title)}"

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
        session.record(self.id, result.status)
        return result

    def task(self) -> Note:
        """The task and its rules, in full."""
        if self.prompt_template:
            text = _(self.prompt_template).format(**{k: _(v) for k, v in self.prompt_fields.items()})
        else:
            text = _(self.prompt or self.title)
        return Note(_("Task {name}").format(name=self.name), text)

    def hint(self) -> Note:
        """The next hint on the ladder (the last one repeats)."""
        if not self.hints:
            return Note(_("Hint"), _("no hint for this one — re-read the task and the failing cases"))
        index = min(self._hints_shown, len(self.hints) - 1)
        self._hints_shown += 1
        return Note(_("Hint {n}/{total}").format(n=index + 1, total=len(self.hints)), _(self.hints[index]))

    def solution(self) -> Note:
        """The reference solution's source (the progress summary notes that it was viewed)."""
        session.record_solution_viewed(self.id)
        return Note(_("Solution to {name}").format(name=self.name),
                    _("one way to write it; yours may differ and still pass"), self.solution_source())

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
        """The verdict on ``answer``, without touching the session's record. Never raises."""
        try:
            return self._judge(answer, time_limit, mode)
        except Exception as exc:  # a checker bug must not become a traceback in the learner's notebook
            return ExerciseResult(self.label, "incorrect",
                                  _("the checker itself failed ({error}: {exc}); this is not your fault — "
                                    "please report it").format(error=type(exc).__name__, exc=exc))

    def _judge(self, answer: Any, time_limit: float | None, mode: Mode) -> ExerciseResult:
        if answer is _MISSING or answer is ... or answer is None or (callable(answer) and is_stub(answer)):
            return ExerciseResult(self.label, "not attempted",
                                  _("write {call} in the cell above, run it, then run this check again").format(
                                      call=self._call()))
        problem = self._shape_problem(answer)
        if problem:
            return ExerciseResult(self.label, "incorrect", problem, hint=self._nudge())
        try:
            cases = self.build_cases(answer)
        except Exception as exc:  # building cases does not run learner code; a failure here is ours
            return ExerciseResult(self.label, "incorrect",
                                  _("the checker could not prepare its cases ({error}: {exc}); please report it")
                                  .format(error=type(exc).__name__, exc=exc))
        results, printed = run_cases(cases, time_limit=time_limit or self.time_limit, total_limit=self.total_limit,
                                     mode=mode)
        failed = [r for r in results if not r.passed]
        if not failed:
            return ExerciseResult(self.label, "correct", _("all {counted} pass.").format(
                counted=self.counted(len(results))), tuple(results), output=printed)
        first = failed[0]
        message = _("{passed} of {counted} pass; first to fix: {case}.").format(
            passed=len(results) - len(failed), counted=self.counted(len(results)), case=first.name)
        return ExerciseResult(self.label, "incorrect", message, tuple(results), hint=self._nudge(), output=printed)

    def counted(self, count: int) -> str:
        """``8 scenarios``: a number of this exercise's cases, in the language in use."""
        template = COUNTED.get(self.noun)
        return _(template).format(count=count) if template else f"{count} {self.noun}"

    def _nudge(self) -> str:
        return _("Stuck? {name}.hint() gives a hint; {name}.solution() shows one solution.").format(name=self.name)

    def _call(self) -> str:
        return f"{self.variable}({', '.join(self.arguments)})"

    def _shape_problem(self, answer: Any) -> str:
        """Why ``answer`` cannot even be called the way the checker calls it ("" when it can)."""
        expected = self._call()
        if not callable(answer):
            return _("{variable} should be a function, {call}; it is {kind}").format(
                variable=self.variable, call=expected, kind=type_name(answer))
        try:
            signature = inspect.signature(answer)
        except (TypeError, ValueError):
            return ""  # a builtin or a C function: let the cases judge it
        try:
            signature.bind(*self.arguments)
        except TypeError:
            return ngettext("{variable} is called as {call}, but yours takes ({parameters}); give it exactly "
                            "{count} parameter",
                            "{variable} is called as {call}, but yours takes ({parameters}); give it exactly "
                            "{count} parameters", len(self.arguments)).format(
                variable=self.variable, call=expected, parameters=", ".join(signature.parameters),
                count=len(self.arguments))
        return ""

    def __repr__(self) -> str:
        return _("<Exercise {label}: define {call}, then {name}.check()>").format(label=self.label, call=self._call(),
                                                                                 name=self.name)


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
