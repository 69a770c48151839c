"""``python -m kernodeck_diagnostic``: the same command as ``kernodeck-diagnostic``."""

from __future__ import annotations

import sys

if sys.version_info < (3, 9):  # noqa: UP036 - older Pythons do reach this line
    # One line rather than an ImportError's traceback on 3.7 and 3.8. (Python 2.7 and 3.6 stop
    # before this, at the package's own ``from __future__ import annotations``.)
    major, minor = sys.version_info[:2]
    sys.stderr.write(f"kernodeck-diagnostic: Python 3.9 or newer is needed; this is Python "
                     f"{major}.{minor}\n")
    sys.exit(2)

from kernodeck_diagnostic.cli import entry

if __name__ == "__main__":
    entry()
