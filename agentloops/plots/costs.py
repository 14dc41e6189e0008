"""Charts of what runs cost: the context each call sent, the tokens billed, blind retries against the right
response."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentloops.i18n import _

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from agentloops.retry import Policy, RetryComparison
from agentloops.plots.style import (
    OKABE_ITO,
    POLICY_COLORS,
    WASTE_HATCH,
    Records,
    _done,
    _grouped_positions,
    _integer_ticks,
    _label,
    _new_figure,
    _records,
    _styled,
    criterion_color,
    criterion_style,
)


@_styled
def context_chart(source: Records, *, title: str | None = None) -> Figure:
    """Prompt tokens sent on each call: every call resends the whole transcript, so the line only rises.

    A cross marks a wasted call (the same response as before, with nothing new
    sent in between): a spinning run is a rising line made of crosses. With
    several runs each line is shifted sideways by a fraction of a call, so runs
    that send exactly the same context stay visible side by side.
    """
    from matplotlib.lines import Line2D

    records = _records(source)
    several = len({r.scenario for r in records}) > 1
    fig, (ax,) = _new_figure(9.0, 5.2)
    dodge = 0.1 if len(records) > 1 else 0.0
    for index, record in enumerate(records):
        style, marker = criterion_style(record.criterion)
        color = criterion_color(record.criterion)
        shift = dodge * (index - (len(records) - 1) / 2)
        calls = [step + shift for step in range(1, record.steps + 1)]
        label = f"{record.scenario} × {record.criterion}" if several else record.criterion
        ax.plot(calls, record.context_tokens, linestyle=style, marker=marker, color=color, linewidth=2.5,
                markersize=8, label=label, zorder=3)
        wasted = [(r.step + shift, r.context_tokens) for r in record.rounds if r.repeated]
        if wasted:
            xs, ys = zip(*wasted, strict=True)
            ax.plot(xs, ys, linestyle="none", marker="x", markersize=13, markeredgewidth=2.5,
                    color=OKABE_ITO["vermillion"], zorder=4)
    handles, _labels = ax.get_legend_handles_labels()
    if any(r.repeated for record in records for r in record.rounds):
        handles.append(Line2D([], [], linestyle="none", marker="x", markersize=11, markeredgewidth=2.5,
                              color=OKABE_ITO["vermillion"], label=_("wasted call")))
    ax.legend(handles=handles, frameon=False, loc="upper left")
    ax.set_xlabel(_("model call number"))
    ax.set_ylabel(_("prompt tokens sent (estimated)"))
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.set_ylim(bottom=0)
    ax.set_title(title or _("Context sent with each call"))
    return _done(fig)


@_styled
def billed_chart(source: Records, *, title: str | None = None) -> Figure:
    """Tokens billed per run: prompt tokens (solid) plus completion tokens (hatched) on top."""
    from matplotlib.patches import Patch

    records = _records(source)
    several = len({r.scenario for r in records}) > 1
    fig, (ax,) = _new_figure(max(7.0, 1.5 * len(records) + 2.5), 5.2)
    for x, record in enumerate(records):
        color = criterion_color(record.criterion)
        prompt, completion = record.billed_prompt_tokens, record.billed_completion_tokens
        ax.bar(x, prompt, 0.7, color=color, edgecolor="white", zorder=2)
        ax.bar(x, completion, 0.7, bottom=prompt, color="white", edgecolor=color, hatch=WASTE_HATCH,
               linewidth=1.5, zorder=2)
        ax.annotate(str(prompt + completion), (x, prompt + completion), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=12)
    labels = [_label(f"{r.scenario} {r.criterion}" if several else r.criterion, 13) for r in records]
    ax.set_xticks(range(len(records)), labels)
    ax.set_ylabel(_("tokens billed (estimated)"))
    ax.margins(y=0.15)
    ax.set_title(title or _("Tokens billed per run"))
    ax.legend(handles=[Patch(facecolor="#bbbbbb", label=_("prompt (resent every call)")),
                       Patch(facecolor="white", edgecolor="#555555", hatch=WASTE_HATCH, label=_("completion"))],
              frameon=False, loc="upper right")
    return _done(fig)


@_styled
def retry_chart(comparison: RetryComparison, *, title: str | None = None) -> Figure:
    """Calls and tokens spent per kind of stop: a blind retry loop against the right response.

    Args:
        comparison: the result of :func:`agentloops.retry.compare_policies`.
        title: the chart's message.
    """
    from matplotlib.patches import Patch

    cases = comparison.case_names()
    fig, axes = _new_figure(max(11.0, 3.6 * len(cases) + 2), 5.4, ncols=2)
    policies: tuple[Policy, ...] = ("blind_retry", "right_response")
    offsets, width = _grouped_positions(len(cases), len(policies), 0.75)
    panels = (("calls", _("model calls"), _("Calls")), ("tokens", _("tokens billed (estimated)"), _("Tokens")))
    for ax, (attr, ylabel, subtitle) in zip(axes, panels, strict=True):
        for j, policy in enumerate(policies):
            for i, case in enumerate(cases):
                result = comparison.get(case, policy)
                value = getattr(result, attr)
                hatch = WASTE_HATCH if not result.succeeded else None
                color = POLICY_COLORS[policy]
                ax.bar(i + offsets[j], value, width, color=color if result.succeeded else "white", edgecolor=color,
                       hatch=hatch, linewidth=2, zorder=2)
                verdict = _("answer") if result.succeeded else _("failed")
                ax.annotate(f"{value}\n{verdict}", (i + offsets[j], value), xytext=(0, 3),
                            textcoords="offset points", ha="center", va="bottom", fontsize=11)
        titles = [comparison.case_title(c) for c in cases]
        ax.set_xticks(range(len(cases)), [_label(_(title), 16) for title in titles])
        ax.set_ylabel(ylabel)
        ax.set_title(subtitle, fontsize=14)
        ax.margins(y=0.3)
        ax.set_ylim(bottom=0)
    axes[0].legend(handles=[Patch(facecolor=POLICY_COLORS["blind_retry"], label=_("blind retry")),
                            Patch(facecolor=POLICY_COLORS["right_response"], label=_("right response to the stop")),
                            Patch(facecolor="white", edgecolor="black", hatch=WASTE_HATCH,
                                  label=_("ended without an answer"))],
                   frameon=False, loc="upper left")
    fig.suptitle(title or _("A blind retry pays again and still fails; the right response answers"),
                 fontsize=16, fontweight="bold")
    return _done(fig)


