"""The report: its model and codes, findings, privacy rules, rendering and the writer.

``build`` makes a report from the worker's run, ``codes`` names the result, ``findings`` says the
cause, ``redact`` keeps it shareable, ``render`` and ``markup`` show it, ``writer`` saves it
without ever overwriting a file, ``schema/`` holds the JSON Schema it always meets. Reports read
back (``load``): ``compare`` says what changed between two, ``summary`` and ``summary_render``
show many at a glance, in the tables of ``tables``.
"""

# The version of the report's schema (``schema/report-v1.json``): what this tool writes, and the
# only one it reads back (``compare``, ``summarize``).
SCHEMA_VERSION = 1
