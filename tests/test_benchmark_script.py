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
    assert {"1f", "3f", "1d", "3d", "1", "2", "3", "4", "5", "6", "7", "8", "9"} <= numbers, table
    for words in ("kernodeck-diagnostic --device cpu", "import torch",
                  "kernodeck-diagnostic-v1.pyz", "front peak RSS", "--host-check",
                  "hangs in synchronize", "-X importtime", "`kernodeck_diagnostic.cli`",
                  "`with trial.stage(...)` in a program", "events.jsonl",
                  "- torch: 2.13.0", "<the computation>; os._exit(0)\" (the floor)",
                  "(torch's double)", "against the real floor"):
        assert words in table, words
    # --smoke skips collect_env, and says so instead of inventing a ratio.
    assert "collect_env not run (--smoke)" in table


def test_the_front_head_to_head_prints_both_checkouts() -> None:
    # This checkout against itself: two rounds prove the script runs; nothing is timed here.
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "front.py"), "--baseline", str(ROOT),
         "--runs", "2"], capture_output=True, text=True, timeout=SMOKE_TIMEOUT_S,
        env=clean_env(), stdin=subprocess.DEVNULL, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    rows = [line.split("|")[1:-1] for line in completed.stdout.splitlines()
            if line.startswith("| zipapp |") or line.startswith("| installed |")]
    assert [(form.strip(), torch.strip()) for form, torch, *_ in rows] == [
        ("zipapp", "real torch"), ("zipapp", "fake instant torch"),
        ("installed", "real torch"), ("installed", "fake instant torch")]
    assert all(cell.strip().endswith((" s", " ms")) for row in rows for cell in row[2:])
    assert "| ratio of the medians |" in completed.stdout


def test_the_benchmarks_summarize_status_is_the_code_tables() -> None:
    from kernodeck_diagnostic.report.codes import CODES

    source = (ROOT / "benchmarks" / "run.py").read_text(encoding="utf-8")
    assert f"SUMMARY_SOME_FAILED = {CODES['SUMMARY_SOME_FAILED'].exit_code}\n" in source


def test_the_cold_step_head_to_head_prints_each_step() -> None:
    # This checkout against itself, four steps of each kind: the script runs; nothing is timed.
    completed = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "trial_cold.py"), "--baseline", str(ROOT),
         "--steps", "4", "--processes", "2"], capture_output=True, text=True,
        timeout=SMOKE_TIMEOUT_S, env=clean_env(), stdin=subprocess.DEVNULL, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    rows = [line.split("|")[1:-1] for line in completed.stdout.splitlines()
            if line.startswith("| 1 |") or line.startswith("| 2 |")]
    assert [(process.strip(), step.strip()) for process, step, *_ in rows] == [
        (process, step) for process in ("1", "2")
        for step in ("pass+stage", "pass", "stage", "batch")]
    for row in rows:
        this, baseline, _ = (float(cell) for cell in row[2:])  # µs, µs, a signed difference
        assert this > 0, row
        assert baseline > 0, row
