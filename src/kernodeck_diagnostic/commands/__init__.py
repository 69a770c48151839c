"""The commands: ``check`` (the default), ``compare`` and ``summarize``, each ``main(argv) -> int``
on ``runner``, which makes them end alike. A command parses, calls and prints: what it shows is
made by the report's modules (``report/compare.py``, ``report/summary.py``, ``report/tables.py``).
"""
