"""What every framework runner shares: the package's scripted scenario, counted, and the row it produces.

A :class:`Script` replays a scenario's responses in order and repeats the last
one, exactly like :class:`agentloops.stubs.ScriptedModel`, so each framework
meets the same model the package's own loops meet. It counts the model calls
and the tools that really ran; the runner says what the caller got back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from agentloops.response import Response
from agentloops.scenario import Scenario

T = TypeVar("T")

Got = Literal["answer", "empty answer", "exception"]
"""What the caller of the framework's run function gets back."""


class Outcome(BaseModel):
    """One framework on one scenario: what its own loop did with the scripted responses.

    Attributes:
        framework: the framework's name.
        version: the installed version of its package.
        scenario: the package's scenario name.
        model_calls: how many times the loop called the model.
        tools_run: the tools that really ran, in order.
        got: what the caller got: an answer, an empty answer, or an exception.
        detail: the answer's text, or the exception's type and first line.
        limit: the framework's cap as set for the run: ``"default"``, or ``name=value``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    framework: str
    version: str
    scenario: str
    model_calls: int
    tools_run: tuple[str, ...]
    got: Got
    detail: str
    limit: str = "default"


class Script:
    """A scenario as a model the frameworks can call, counting calls and tool runs."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.calls = 0
        self.tools_run: list[str] = []

    def next(self) -> Response:
        """The next scripted response (the last one repeats)."""
        self.calls += 1
        responses = self.scenario.responses
        return responses[min(self.calls, len(responses)) - 1]

    def tool(self, name: str) -> Callable[..., str]:
        """A tool function that records its run and returns the scenario's canned text."""

        def run(*args: Any, **kwargs: Any) -> str:
            self.tools_run.append(name)
            return self.scenario.tools[name]

        run.__name__ = name
        return run

    def outcome(self, framework: str, version: str, answer: str | None = None,
                error: BaseException | None = None, limit: int | None = None, limit_name: str = "") -> Outcome:
        """The row for this run: an exception, an empty answer, or the answer's text, at the cap it ran with."""
        if error is not None:
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            got: Got = "exception"
            detail = f"{type(error).__name__}: {first}"[:120]
        else:
            got = "answer" if answer else "empty answer"
            detail = repr(answer or "")[:120]
        return Outcome(framework=framework, version=version, scenario=self.scenario.name, model_calls=self.calls,
                       tools_run=tuple(self.tools_run), got=got, detail=detail,
                       limit="default" if limit is None else f"{limit_name}={limit}")


TOOL_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}},
                               "additionalProperties": True}
"""The argument schema every scripted tool declares (the scenarios' tools take a path)."""


def run_in_own_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a framework's coroutine to the end in a fresh event loop on a worker thread.

    ``asyncio.run`` closes the loop's async generators when it finishes, so no
    framework leaves one to be collected during the next run (a ``ResourceWarning``
    that a test run turning warnings into errors would report as that run's outcome);
    the worker thread makes it callable from a notebook, whose own loop is running.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
