"""Shared fixtures: small responses and scenarios built in code."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentloops import Response, Scenario
from agentloops.i18n import set_language


def response(content: str | None = None, calls: list[tuple[str, Any]] | None = None,
             finish: str = "stop") -> Response:
    """A response with tool calls given as (name, arguments) pairs."""
    tool_calls = [{"id": f"c{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(calls or [])]
    return Response.model_validate({"content": content, "tool_calls": tool_calls, "finish_reason": finish})


def scenario(*responses: Response, tools: dict[str, str] | None = None) -> Scenario:
    """A custom scenario around ``responses`` with the article's two tools."""
    return Scenario(
        name="custom",
        title="custom",
        teaches="built in a test",
        tools=tools if tools is not None else {"read_file": "text", "count_lines": "42"},
        responses=responses,
    )


@pytest.fixture
def make_response():
    return response


@pytest.fixture
def make_scenario():
    return scenario


@pytest.fixture
def no_language_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The language is only what a test chooses (no locale or AGENTLOOPS_LANG leaks in), and is reset after it."""
    for name in ("AGENTLOOPS_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        monkeypatch.delenv(name, raising=False)
    yield
    set_language(None)
