"""``resume-check``'s core: what it observed of two runs of a program and of its ledger, and the
verdict drawn from that alone.

- ``verdict``: ``Observation`` (every fact the command gathered) and ``judge`` (a pure function
  of it: the code and, when nothing was proven, why); the JSON layout.
- ``observe``: the ledger read as the runs left it (``Snapshot`` at the stop, what the second
  run wrote after it, each record held to its rules), bounded in memory by the ids it holds.
- ``runs``: the plan (when and how to stop, the limits) and the two runs of the program.
- ``record_check`` and ``check_child``: the user's own ``--record-check`` function, run in a
  child process of the tool's Python.
- ``render``: the verdict as text or markdown.

``commands/resume_check.py`` parses the command line and calls these.
"""
