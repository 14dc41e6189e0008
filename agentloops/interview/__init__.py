"""The interview drill of notebook 17: "your agent keeps calling tools and never stops — what do you do?"

A step cap is a fuse; the drill teaches the rest of the answer, in our own words, and lets a candidate
practise it. Its content is data (``data/interview/``, validated on load by :mod:`.content`); each concept
is a module:

- :mod:`.speaking` — the question, the 30-second and 2-minute scripts (English and Chinese), and the pace
  a spoken attempt is measured against;
- :mod:`.followups` — six follow-ups, each answered by controller runs that check its claims;
- :mod:`.evidence` — the six pieces of evidence, and the same fuse in three frameworks;
- :mod:`.grader` (reading with :mod:`.reading` and :mod:`.negation`, Chinese with :mod:`.chinese`, words from
  :mod:`.messages`) — the practice grader, which checks claims, not words, and says what it cannot judge;
- :mod:`.calibration` — the grader's ranking of a labelled set of answers, with rank correlations;
- :mod:`.exemplars` — annotated weak, adequate and strong answers, and the self-review checklist;
- :mod:`.widgets` and :mod:`.mock` — the practice box, the speaking timer and the mock interview.
"""

from __future__ import annotations

from agentloops.interview.calibration import calibrate, kendall_tau, spearman
from agentloops.interview.chinese import to_simplified
from agentloops.interview.content import DrillError
from agentloops.interview.evidence import EVIDENCE, FRAMEWORK_FUSES, Evidence, checklist_markdown, framework_rows
from agentloops.interview.exemplars import QUESTIONS as EXEMPLAR_QUESTIONS
from agentloops.interview.exemplars import (
    exemplar_scores,
    exemplars_for,
    exemplars_markdown,
    self_review_markdown,
    synonym_table,
)
from agentloops.interview.followups import FOLLOW_UPS, STATUS_SCENARIOS, FollowUp, FollowUpRun, evidence_for, follow_up
from agentloops.interview.grader import Grade, PointResult, grade
from agentloops.interview.messages import HEURISTIC_NOTE, MESSAGES
from agentloops.interview.mock import MockInterview, mock_interview
from agentloops.interview.mock import plan as mock_plan
from agentloops.interview.reading import POINTS
from agentloops.interview.speaking import (
    QUESTION,
    QUESTION_ZH,
    SCRIPTS,
    SCRIPTS_ZH,
    SPEAKING_PACE_CPM,
    SPEAKING_PACE_WPM,
    THIRTY_SECONDS,
    THIRTY_SECONDS_ZH,
    TWO_MINUTES,
    TWO_MINUTES_ZH,
    Pace,
    pace,
    script,
    script_title,
    speaking_pace,
    speaking_seconds,
    step_limit_example,
    word_count,
)
from agentloops.interview.widgets import OWN_WORDS, Practice, SpeakingTimer, practice, speaking_timer

__all__ = [
    "EVIDENCE",
    "EXEMPLAR_QUESTIONS",
    "FOLLOW_UPS",
    "FRAMEWORK_FUSES",
    "HEURISTIC_NOTE",
    "MESSAGES",
    "OWN_WORDS",
    "POINTS",
    "QUESTION",
    "QUESTION_ZH",
    "SCRIPTS",
    "SCRIPTS_ZH",
    "SPEAKING_PACE_CPM",
    "SPEAKING_PACE_WPM",
    "STATUS_SCENARIOS",
    "THIRTY_SECONDS",
    "THIRTY_SECONDS_ZH",
    "TWO_MINUTES",
    "TWO_MINUTES_ZH",
    "DrillError",
    "Evidence",
    "FollowUp",
    "FollowUpRun",
    "Grade",
    "MockInterview",
    "Pace",
    "PointResult",
    "Practice",
    "SpeakingTimer",
    "calibrate",
    "checklist_markdown",
    "evidence_for",
    "exemplar_scores",
    "exemplars_for",
    "exemplars_markdown",
    "follow_up",
    "framework_rows",
    "grade",
    "kendall_tau",
    "mock_interview",
    "mock_plan",
    "pace",
    "practice",
    "script",
    "script_title",
    "self_review_markdown",
    "speaking_pace",
    "speaking_seconds",
    "speaking_timer",
    "spearman",
    "step_limit_example",
    "synonym_table",
    "to_simplified",
    "word_count",
]
