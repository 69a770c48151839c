"""The commands: the check (the default, no name), and the others named by the first argument:
each ``main(argv) -> int`` on ``runner``, which makes them end alike. A command parses, calls and
prints: what it shows is made by the report's, the ramp's and the ledger's modules.
"""

# The commands besides the check, by the first argument that names them, in the order the help
# lists them (``cli.py`` dispatches; the check's help lists them, one line each).
SUBCOMMANDS = {"compare": "commands.compare", "summarize": "commands.summarize",
               "ramp": "commands.ramp", "resume-check": "commands.resume_check",
               "health-check": "commands.health_check"}
