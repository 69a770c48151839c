"""Floods stdout and stderr at interpreter start-up, before the worker writes any event.

Put on PYTHONPATH (with tests/fakes) by the reliability suite: it stands for a site hook or a
``.pth`` file of the user's environment that prints megabytes before any code of ours runs.
``KD_FAKE_FLOOD_MB`` (default 100) is the size written to each stream.
"""

from __future__ import annotations

import os
import sys

# Only the worker floods (it is the one started with --events); the front shares the PYTHONPATH.
if os.environ.get("KD_FAKE_TORCH") == "flooding_library" and "--events" in sys.argv:
    _line = b"s" * (1024 * 1024 - 1) + b"\n"
    _count = int(os.environ.get("KD_FAKE_FLOOD_MB", "100"))
    for _ in range(_count):
        os.write(1, _line)
        os.write(2, _line)
    if os.environ.get("KD_FAKE_FLOOD_LOG"):
        with open(os.environ["KD_FAKE_FLOOD_LOG"], "a") as _log:
            _log.write(f"startup {_count}\n")
