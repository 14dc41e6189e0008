"""The base vocabulary, below the layers that import it: the words a turn, a trace and a lesson share.

- ``tools``: a tool's spec, its parameters and the result of one attempt, with its status
- ``ledger``: every call's id and state, and the one door its results come through
- ``errors``: what the controller raises, by who must act (the user of the package, or the run)
- ``render``: the small text and HTML tables results and lessons print
- ``readback``: a trace's English lines read back in the learner's language, through the templates that wrote them
- ``frames``: DataFrames that keep English data and show Chinese headers and cells
"""
