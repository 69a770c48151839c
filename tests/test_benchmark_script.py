"""benchmarks/run.py works end to end: one cheap pass (``--smoke``) prints the whole table.

No timing is asserted (timings flake on shared machines); the measured numbers live in
docs/performance.md.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT, clean_env

pytestmark = pytest.mark.slow

SMOKE_TIMEOUT_S = 600  # includes building the torch-cpu environment on a machine without it


def test_smoke_run_prints_every_measurement() -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--smoke"], capture_output=True,
        text=True, timeout=SMOKE_TIMEOUT_S, env=clean_env(), stdin=subprocess.DEVNULL,
        check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    table = completed.stdout
    assert "| # | measurement | median | compared with | ratio / growth | target | |" in table
    numbers = {line.split("|")[1].strip() for line in table.splitlines()
               if line.startswith("| ") and line.split("|")[1].strip()}
    assert {"1", "2", "3", "4", "5", "6", "7", "8", "9"} <= numbers, table
    for words in ("kernodeck-diagnostic --device cpu", "import torch",
                  "kernodeck-diagnostic-v1.pyz", "front peak RSS", "--host-check",
                  "hangs in synchronize", "-X importtime", "`kernodeck_diagnostic.cli`",
                  "`with trial.stage(...)` in a program", "events.jsonl",
                  "- torch: 2.13.0"):
        assert words in table, words
    # --smoke skips collect_env, and says so instead of inventing a ratio.
    assert "collect_env not run (--smoke)" in table
