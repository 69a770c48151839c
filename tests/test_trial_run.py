"""A whole attempt with the real CPU torch build: the folder, the passes, the events, the facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trial_helpers import (
    app_env,
    assert_valid_attempt,
    attempt_of,
    events_of,
    only_attempt,
    run_app,
)

pytestmark = pytest.mark.slow

# Pass 0 sleeps 0.3 s (a lazy initialisation): it must stay apart from the later passes.
COMPLETE_RUN = """
    import time
    import torch
    from kernodeck_diagnostic import Trial

    with Trial("runs", params={"batch": 8, "max_len": 512}) as trial:
        with trial.stage("load_weights"):
            model = torch.nn.Linear(512, 16)
        with trial.stage("prepare_input"):
            batch = torch.zeros(8, 512, dtype=torch.int64)
        print(trial.describe(input_ids=batch))
        for step in trial.passes(4):
            with trial.stage("compute", sync=True), torch.inference_mode():
                if step == 0:
                    time.sleep(0.3)
                out = model(batch.float())
        with trial.stage("write_output"):
            rows = out.tolist()
        ok = trial.expect_vectors([f"id-{i}" for i in range(8)], out, dim=16)
        trial.expect("rows_written", len(rows) == 8, detail=f"{len(rows)} rows")
    print(ok, trial.folder)
"""


def test_a_complete_run_leaves_a_complete_folder(cpu_torch_python: Path,
                                                 tmp_path: Path) -> None:
    done = run_app(cpu_torch_python, tmp_path, COMPLETE_RUN)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[0] == "input_ids: int64 8x512 cpu"
    folder = only_attempt(tmp_path / "runs")
    assert sorted(path.name for path in folder.iterdir()) == ["attempt.json", "events.jsonl"]
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert attempt["format"] == "kernodeck-attempt"
    assert attempt["version"] == 1
    assert attempt["attempt_id"] == folder.name
    assert attempt["status"] == "completed"
    assert attempt["last_completed_stage"] == "write_output"
    assert attempt["first_error"] is None
    assert attempt["oom"] is None
    assert [(c["name"], c["passed"]) for c in attempt["contracts"]] == [
        ("vectors", True), ("rows_written", True)]
    assert attempt["contracts_passed"] is True
    assert attempt["params"] == {"batch": 8, "max_len": 512}
    assert attempt["command"] == ["python", "app.py"]
    # The check report's own blocks, read in the program's process.
    assert attempt["pytorch"]["version"] == "2.13.0+cpu"
    assert attempt["pytorch"]["backend"] == "cpu"
    assert attempt["pytorch"]["imported"] is True
    assert attempt["runtime"]["python_implementation"] == "CPython"
    # Pass 0 apart; the later passes as median and spread; never an average.
    (compute,) = [t for t in attempt["timings"] if t["stage"] == "compute"]
    assert compute["first_pass_ms"] >= 300
    assert compute["later_passes"]["count"] == 3
    assert compute["later_passes"]["max_ms"] < 300
    assert compute["later_passes"]["min_ms"] <= compute["later_passes"]["median_ms"] \
        <= compute["later_passes"]["max_ms"]
    assert "mean" not in json.dumps(attempt)
    assert "average" not in json.dumps(attempt)
    assert attempt["passes"]["requested"] == 4
    assert attempt["passes"]["completed"] == 4
    assert attempt["passes"]["first_pass_ms"] >= 300
    # Memory per stage: the CPU's resident set and its peak; no device.
    for record in attempt["stages"]:
        assert record["memory"]["device"] is None
        assert record["memory"]["rss_bytes"] > 10 * 2**20
        assert record["memory"]["rss_peak_bytes"] >= record["memory"]["rss_bytes"]
        assert record["synchronized"] is None  # nothing to synchronise on the CPU
    assert attempt["peak_memory_bytes"] == max(r["memory"]["rss_peak_bytes"]
                                               for r in attempt["stages"])
    assert [t["text"] for t in attempt["tensors"]] == ["input_ids: int64 8x512 cpu"]
    assert attempt["output"]["vectors"] == {"vectors": 8, "ids": 8, "dimensions": [16]}
    # The events, in the order they happened, each written as it completed.
    events = events_of(folder)
    names = [(e["event"], e.get("stage"), e.get("pass_index")) for e in events]
    assert names == [
        ("attempt_started", None, None),
        ("stage_started", "load_weights", None), ("stage_completed", "load_weights", None),
        ("stage_started", "prepare_input", None), ("stage_completed", "prepare_input", None),
        ("tensors_described", None, None),
        *[item for index in range(3) for item in (
            ("pass_started", None, index), ("stage_started", "compute", index),
            ("stage_completed", "compute", index), ("pass_completed", None, index))],
        # The fourth call of a name, and the fourth pass, are no longer written in full (the
        # log grows with the stages, not the calls nor the passes): only as one of the slowest
        # so far, with the name's first summary (every call counted) and the passes' summary
        # as their count doubles (and again at the end, before work_done).
        ("stage_slow", "compute", 3), ("stage_summary", "compute", None),
        ("pass_slow", None, 3), ("passes_summary", None, None),
        ("stage_started", "write_output", None), ("stage_completed", "write_output", None),
        ("contract_checked", None, None),
        ("contract_checked", None, None),
        ("passes_summary", None, None),
        ("work_done", None, None),
        ("attempt_ended", None, None),
    ]
    times = [e["t_ms"] for e in events]
    assert times == sorted(times)
    assert events[-1]["status"] == "completed"


def test_the_run_folder_variable_wins_over_the_root_given(cpu_torch_python: Path,
                                                          tmp_path: Path) -> None:
    run_dir = tmp_path / "ramp-attempt-3"
    done = run_app(cpu_torch_python, tmp_path / "work", COMPLETE_RUN,
                   env=app_env({"KERNODECK_RUN_DIR": str(run_dir)}))
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (tmp_path / "work" / "runs").exists()
    assert attempt_of(only_attempt(run_dir))["status"] == "completed"


FAILING_STAGE = """
    import torch
    from kernodeck_diagnostic import Trial

    def load(path):
        return torch.load(path)

    with Trial("runs") as trial:
        with trial.stage("read_params"):
            path = "weights/missing-model.pt"
        with trial.stage("load_weights"):
            model = load(path)
"""


def test_a_failing_stage_keeps_the_first_error_and_its_trace_locally(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    done = run_app(cpu_torch_python, tmp_path, FAILING_STAGE)
    assert done.returncode == 1
    assert "FileNotFoundError" in done.stderr  # the exception went on to the program
    folder = only_attempt(tmp_path / "runs")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert attempt["status"] == "failed"
    assert attempt["last_completed_stage"] == "read_params"
    assert attempt["first_error"]["stage"] == "load_weights"
    assert attempt["first_error"]["type"] == "FileNotFoundError"
    assert "missing-model.pt" in attempt["first_error"]["message"]
    assert attempt["oom"] is None
    assert attempt["trace"] == "trace.txt"
    trace = (folder / "trace.txt").read_text(encoding="utf-8")
    # The whole traceback, the program's own frames and paths included, kept only here.
    assert "Traceback (most recent call last)" in trace
    assert str(tmp_path) in trace
    assert "in load" in trace
    assert str(tmp_path) not in (folder / "attempt.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in (folder / "events.jsonl").read_text(encoding="utf-8")
    failed = [e for e in events_of(folder) if e["event"] == "stage_failed"]
    assert [(e["stage"], e["error"]["type"]) for e in failed] == [
        ("load_weights", "FileNotFoundError")]
