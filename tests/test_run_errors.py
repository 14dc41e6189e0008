"""The exceptions of a run that ended badly, one per error code."""

from __future__ import annotations

from typing import get_args

import pytest

import agentloops as al
from agentloops.errors import ERROR_CODES, ErrorCode
from agentloops.run_errors import ERROR_CLASSES, RunError


def test_every_error_code_has_its_exception_and_each_exception_its_own_code():
    """The codes (``errors``, which imports nothing of the package) and the exceptions (``run_errors``, beside the
    record they carry) are one table: the same codes, in the same order, each class raising with its key."""
    assert tuple(ERROR_CLASSES) == ERROR_CODES == get_args(ErrorCode)
    assert all(cls.code == code and issubclass(cls, RunError) for code, cls in ERROR_CLASSES.items())
    assert len(set(ERROR_CLASSES.values())) == len(ERROR_CODES)


def test_a_run_error_shows_its_own_message_when_the_record_says_something_else() -> None:
    """The record words the error it holds; another message (a caller's own) is shown as given."""
    with pytest.raises(al.MaxStepsError) as caught:
        al.run("long-chain", "correct", max_steps=2, raise_errors=True)
    record = caught.value.record
    assert record is not None and str(caught.value) == record.error_message
    assert str(al.MaxStepsError("mine", record)) == "mine"
