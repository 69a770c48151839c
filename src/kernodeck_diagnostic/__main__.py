"""``python -m kernodeck_diagnostic``: the same command as ``kernodeck-diagnostic``."""

from __future__ import annotations

import sys

from kernodeck_diagnostic.cli import main

if __name__ == "__main__":
    sys.exit(main())
