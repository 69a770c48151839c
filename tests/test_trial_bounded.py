"""Nothing of a Trial grows with its passes: a real program's attempt after 100 passes and after
100,000 (a long epoch of ``trial.passes(loader)``), its files and the process's own memory.

Sizes and memory only, never time: the cost per pass is measured by benchmarks/trial_probe.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from trial_helpers import assert_valid_attempt, attempt_of, only_attempt, run_app

posix_only = pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/status")

# Each pass: a stage, a batch from a real DataLoader-like iterable, a contract checked, a
# tensor described (the first calls kept, the rest counted), one failing stage caught every
# 10,000 passes. The process's resident memory is read after pass 99 (the warm-up: the modules,
# the first allocations) and at the end: what the passes between cost.
PROGRAM = """
    import gc, sys, torch
    from kernodeck_diagnostic import Trial

    count = int(sys.argv[1])

    def rss():
        gc.collect()
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status
                        if line.startswith("VmRSS:"))

    def batches():
        for index in range(count):
            yield torch.full((4,), float(index))

    warm = None
    x = torch.ones(4)
    with Trial("runs", params={"passes": count}) as trial:
        for index, batch in enumerate(trial.passes(batches())):
            with trial.stage("step"):
                y = (batch * x).sum()
            if index % 10_000 == 5:
                try:
                    with trial.stage("flaky"):
                        raise ValueError("a batch the service refused")
                except ValueError:
                    pass
            trial.expect("finite", bool(torch.isfinite(y)))
            trial.describe(batch=batch)
            if index == 99:
                warm = rss()
        grown = rss() - warm
    print(grown)
"""


def _attempt(python: Path, work: Path, count: int) -> tuple[dict[str, Any], int, int, int]:
    """(attempt.json, its size, events.jsonl's size, memory grown after pass 99)."""
    done = run_app(python, work, PROGRAM, str(count), timeout=600)
    assert done.returncode == 0, done.stderr
    folder = only_attempt(work / "runs")
    return (attempt_of(folder), (folder / "attempt.json").stat().st_size,
            (folder / "events.jsonl").stat().st_size, int(done.stdout.split()[-1]))


@pytest.mark.slow
@posix_only
def test_a_hundred_thousand_passes_leave_the_attempt_of_a_hundred(cpu_torch_python: Path,
                                                                  tmp_path: Path) -> None:
    small, small_json, small_events, _ = _attempt(cpu_torch_python, tmp_path / "small", 100)
    large, large_json, large_events, grown = _attempt(cpu_torch_python, tmp_path / "large",
                                                      100_000)
    for document in (small, large):
        assert_valid_attempt(document)
    assert (small["passes"]["completed"], large["passes"]["completed"]) == (100, 100_000)
    # Every pass counted, every check and failure too, although few are kept.
    assert large["passes"]["later_passes"]["count"] == 99_999
    assert large["passes"]["first_failed_pass"] == {"index": 5, "stage": "flaky",
                                                    "error_type": "ValueError"}
    (flaky,) = [item for item in large["stage_summary"] if item["stage"] == "flaky"]
    assert (flaky["count"], flaky["failed"]) == (10, 10)
    assert large["contracts_summary"]["checked"] == 100_000
    assert large["contracts_passed"] is True
    assert large["tensors_described"] == 100_000
    assert len(large["passes"]["items"]) <= 8
    # attempt.json: the hundred's, plus what reaches its caps only later (200 descriptions, 20
    # failures of a stage kept whole), where one record per pass made it ~3,000 times larger.
    assert large_json < 2 * small_json, (small_json, large_json)
    assert large_json < 96 * 1024
    # events.jsonl: the hundred's, plus what reaches its caps only later (200 descriptions, 20
    # slow events of each kind, a summary at each doubling); one line per pass was ~35 MB.
    assert large_events < small_events + 96 * 1024, (small_events, large_events)
    assert large_events < 256 * 1024
    # 99,900 passes after the warm-up: ~0.7 KB each before (70 MB); now a bounded few.
    assert grown < 4 * 2**20, grown
    print(json.dumps({"attempt.json": [small_json, large_json],
                      "events.jsonl": [small_events, large_events], "grown": grown}))
