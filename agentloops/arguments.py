"""argparse types for the command line: whole numbers written in plain digits, each refused in one line.

Apart from :mod:`agentloops.cli` so that every command module (the controller's too) can use them without
importing the top-level command, which imports the command modules.
"""

from __future__ import annotations

import argparse
import re

from agentloops.i18n import _

_DIGITS = re.compile(r"[0-9]+")


def whole_number(text: str, low: int, high: int | None) -> int:
    """``text`` as a whole number from ``low`` to ``high``, written in plain ASCII digits only.

    ``int()`` also takes ``+3``, `` 3``, ``3_0`` and ``٣``; a command line
    that means something else by them should fail, not run with a guess.
    """
    expected = (_("a whole number from {low} to {high}").format(low=low, high=high) if high is not None
                else _("a whole number of at least {low}").format(low=low))
    if not _DIGITS.fullmatch(text):
        raise argparse.ArgumentTypeError(_("expected {expected}, in digits 0-9; got {text!r}").format(
            expected=expected, text=text))
    digits = text.lstrip("0") or "0"
    if len(digits) > 18:  # int() of thousands of digits is slow, and no option here means that many
        raise argparse.ArgumentTypeError(_("expected {expected}; got a number with {n} digits").format(
            expected=expected, n=len(digits)))
    value = int(digits)
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(_("expected {expected}; got {value}").format(expected=expected, value=value))
    return value


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1, plain ASCII digits only, with a one-line error otherwise."""
    return whole_number(text, 1, None)
