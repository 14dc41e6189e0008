"""Predict, commit, reveal: a learner locks in an answer before the notebook computes it."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import ipywidgets as widgets

from agentloops.i18n import _
from agentloops.quiz import CheckResult, Question
from agentloops.widgets.controls import (
    _STYLE,
    _classed,
)

PredictionStage = Literal["open", "locked", "revealed"]
"""A prediction is open (the learner may change it), locked in, then revealed against a fresh run."""


class Prediction(widgets.VBox):
    """Ask for a prediction *before* the run is shown, lock it in, then reveal it against a fresh run.

    The comparison is a :class:`~agentloops.quiz.Question` whose answer is
    computed when the reveal happens, so it reads the code, never the prose
    or another widget's state. Nothing here needs a click to run top to
    bottom: "Run all" leaves it open, with no prediction recorded.

    Args:
        question: the prompt, the computed answer, the options and an explanation per option.
    """

    def __init__(self, question: Question) -> None:
        self.question = question
        self.stage: PredictionStage = "open"
        self.verdict: CheckResult | None = None
        self._locked: Any = None
        if question.options:
            self.choice: widgets.ValueWidget = widgets.ToggleButtons(options=list(question.options), value=None,
                                                                     style={"button_width": "auto"})
        else:
            self.choice = widgets.IntText(value=0, description=_("my guess"), style=_STYLE,
                                          layout=widgets.Layout(width="220px"))
        _classed(self.choice, "agentloops-prediction-choice")
        self.lock_button = _classed(widgets.Button(description=_("Lock in my prediction"), button_style="primary",
                                                   icon="lock"), "agentloops-prediction-lock")
        self.reveal_button = _classed(widgets.Button(description=_("Reveal the run"), disabled=True, icon="eye"),
                                      "agentloops-prediction-reveal")
        self.result = _classed(widgets.HTML(), "agentloops-prediction-result")
        self.lock_button.on_click(lambda button: self.lock())
        self.reveal_button.on_click(lambda button: self.reveal())
        prompt = widgets.HTML(_("<b>Predict first:</b> {prompt}").format(prompt=html.escape(question.prompt)))
        super().__init__([prompt, self.choice, widgets.HBox([self.lock_button, self.reveal_button]), self.result])
        self.add_class("agentloops-prediction")
        self._show()

    @property
    def predicted(self) -> Any:
        """The locked-in prediction, or the current choice while still open (``None`` until one is picked)."""
        return self._locked if self.stage != "open" else self.choice.value

    def lock(self, value: Any = None) -> Prediction:
        """Lock in ``value`` (default: the current choice); a missing choice is said on screen, not raised."""
        if self.stage != "open":
            return self
        if value is not None:
            self.choice.value = value
        if self.predicted is None:
            self.result.value = "<i>" + _("Pick an answer first, then lock it in.") + "</i>"
            return self
        self._locked, self.stage = self.predicted, "locked"
        self.choice.disabled = self.lock_button.disabled = True
        self.reveal_button.disabled = False
        self._show()
        return self

    def reveal(self) -> CheckResult | None:
        """Compare the locked prediction with a fresh run; ``None`` (and a note) if nothing is locked in yet."""
        if self.stage == "open":
            self.result.value = "<i>" + _("Lock in a prediction before the reveal: that is the point.") + "</i>"
            return None
        if self.stage == "revealed":
            return self.verdict
        self.stage = "revealed"
        self.reveal_button.disabled = True
        self.verdict = self.question.check(self.predicted)
        self._show()
        return self.verdict

    def text(self) -> str:
        """The prediction as plain text (what a headless run prints)."""
        options = ("\n" + _("options: {options}").format(options=", ".join(map(repr, self.question.options)))
                   if self.question.options else "")
        if self.stage == "open":
            state = _("not recorded yet: pick an answer, press 'Lock in my prediction', then 'Reveal the run'")
        elif self.stage == "locked":
            state = _("locked in: {prediction} (press 'Reveal the run')").format(prediction=repr(self.predicted))
        else:
            state = _("you predicted {prediction}; the run says {actual}\n{verdict}").format(
                prediction=repr(self.predicted), actual=repr(self.question.expected()), verdict=self.verdict)
        return _("Predict first: {prompt}{options}\nprediction: {state}").format(
            prompt=self.question.prompt, options=options, state=state)

    def _show(self) -> None:
        if self.stage == "revealed" and self.verdict is not None:
            actual = html.escape(repr(self.question.expected()))
            self.result.value = _("You predicted <code>{prediction}</code>; the run says <code>{actual}</code>."
                                  ).format(prediction=html.escape(repr(self.predicted)), actual=actual) \
                + self.verdict._repr_html_()
        elif self.stage == "locked":
            self.result.value = _("Locked in: <code>{prediction}</code>. Now reveal the run.").format(
                prediction=html.escape(repr(self.predicted)))
        else:
            self.result.value = ""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = self.text()
        return data


def predict(prompt: str, answer: Any, *, options: Sequence[str] = (),
            explanations: Mapping[str, str] | None = None) -> Prediction:
    """Build a predict–commit–reveal widget (see :class:`Prediction`).

    Args:
        prompt: what to predict.
        answer: the right answer, or a zero-argument function that computes it from a fresh run.
        options: the choices (none: a whole number is asked for).
        explanations: option → why it is right or wrong.
    """
    return Prediction(Question(prompt=prompt, answer=answer, options=options, explanations=explanations or {}))
