"""The teaching UI, kept apart: widgets, charts, the evidence, experiments and the command line.

Apart because the engine must run without it (no matplotlib or ipywidgets in a run): it reads runs
and draws them, and no module outside this folder imports it.

- ``widgets``: the controller notebooks' widgets: change one setting, re-run, see what moved
- ``prewarm``: every widget's likely next settings, computed ahead in a thread while the page is read
- ``plots``: the controller notebooks' charts, from measured runs
- ``cli``: ``agentloops controller …``: run, check, read and replay, and the six evidence commands
- ``evidence``: the article's six pieces of evidence, one function call each
- ``experiments``: many randomised runs: a cap-only loop against the controller
- ``uncapped``: randomised runs of every task type with every limit lifted, to size the budgets from
- ``root_causes``: two of the article's root causes of a loop that never stops, each a scenario run both ways
"""
