"""The controller's own exceptions, grafted onto the package's two families.

    UsageError (agentloops.errors)
    └── ControllerUsageError             the controller was called or configured wrongly
        ├── ControllerScenarioError      a controller scenario file is malformed (ValueError)
        │   └── ControllerScenarioNotFound   no shipped scenario or file by that name (LookupError)
        ├── TraceError                   a trace file is missing or malformed (ValueError)
        ├── ConfigError                  a policy, budget, fault or task name/value is wrong (ValueError)
        ├── TaskFinishedError            something tried to change a task that has stopped (RuntimeError)
        └── StageError                   a replaced stage raised or returned the wrong type (TypeError)

    ProcessKilled (BaseException)        a simulated kill -9, raised by the ``crash`` fault (not an error)

A stopped run is *not* an exception here: every stop, good or bad, is a
:class:`~agentloops.controller.stopping.status.Stop` value. Exceptions are kept for
programming mistakes and for the simulated crash that proves traces survive.
"""

from __future__ import annotations

from agentloops.controller.vocabulary.readback import read_back
from agentloops.errors import UsageError


class ControllerUsageError(UsageError):
    """The controller was called or configured wrongly; the message says how to fix it."""


class ControllerScenarioError(ControllerUsageError, ValueError):
    """A controller scenario file does not have the expected shape."""


class ControllerScenarioNotFound(ControllerScenarioError, LookupError):
    """No shipped controller scenario has that name and no file exists at that path."""


class TraceError(ControllerUsageError, ValueError):
    """A trace file cannot be read: missing, not JSON Lines, or a line of the wrong shape."""


class ConfigError(ControllerUsageError, ValueError):
    """A policy, budget, fault, task or planner is unknown or has a value out of range."""


class TaskFinishedError(ControllerUsageError, RuntimeError):
    """Something tried to change a task that has already stopped: a finished task is never reopened."""

    def __str__(self) -> str:
        return read_back(self.args[0]) if self.args else ""


class ProcessKilled(BaseException):
    """A simulated ``kill -9`` inside a tool; like KeyboardInterrupt, it is not an ordinary error.

    It derives from :class:`BaseException` so that the controller's "turn tool
    crashes into a safe error summary" handling does not swallow it: the run
    really dies, and the test then reads what the trace kept on disk.
    """

    def __str__(self) -> str:
        return read_back(self.args[0]) if self.args else ""


class StageError(ControllerUsageError, TypeError):
    """A stage passed in to replace the package's (completion, update, route, budget check, repeat, join)
    raised or returned a value of the wrong type; the message names the stage, the function and what it did.

    Attributes:
        stage / function: which stage, and the name of the function passed in for it.
        problem: ``raised`` or ``returned``.
        detail: the exception (``ZeroDivisionError: division by zero (at file:line)``) or the value returned.
        expected: what the stage must return.
    """

    def __init__(self, stage: str, function: str, problem: str, detail: str, expected: str) -> None:
        said = f"raised {detail}" if problem == "raised" else f"returned {detail}; expected {expected}"
        super().__init__(f"the {stage} stage ({function}) {said}")
        self.stage, self.function, self.problem, self.detail, self.expected = stage, function, problem, detail, expected
