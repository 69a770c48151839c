"""The examples run as documented, on the CPU in seconds, each leaving its attempt folder."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT
from trial_helpers import app_env, assert_valid_attempt, attempt_of, only_attempt

pytestmark = pytest.mark.slow

EXAMPLES = ROOT / "examples"
# Seconds on this 2-core machine, torch's import included (about 2 s of it, more under load).
WITHIN_S = 60


def _run(python: Path, work: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    work.mkdir(exist_ok=True)
    return subprocess.run([str(python), str(EXAMPLES / name), *args], cwd=work,
                          capture_output=True, text=True, env=app_env(), timeout=WITHIN_S,
                          stdin=subprocess.DEVNULL, check=False)


def test_the_embeddings_example(cpu_torch_python: Path, tmp_path: Path) -> None:
    start = time.monotonic()
    done = _run(cpu_torch_python, tmp_path, "embeddings.py", "--passes", "4")
    assert done.returncode == 0, done.stderr[-3000:]
    assert time.monotonic() - start < WITHIN_S
    folder = only_attempt(tmp_path / "runs")
    assert done.stdout.strip() == (f"attempt {folder.name}: vectors as expected; folder "
                                   f"runs/{folder.name}")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert attempt["status"] == "completed"
    assert attempt["contracts_passed"] is True
    assert attempt["last_completed_stage"] == "read_back"
    assert [s["name"] for s in attempt["stages"]] == [
        "import_libraries", "load_weights", "prepare_input", "transfer",
        "compute", "compute", "compute", "compute", "write_output", "read_back"]
    assert [t["text"] for t in attempt["tensors"]] == ["input_ids: int64 6x16 cpu",
                                                       "vectors: float32 6x32 cpu"]
    assert attempt["output"]["vectors"] == {"vectors": 6, "ids": 6, "dimensions": [32]}
    assert attempt["pytorch"]["version"] == "2.13.0+cpu"  # torch imported inside a stage
    assert (folder / "embeddings.jsonl").is_file()


def test_the_training_step_example_and_its_failing_variant(cpu_torch_python: Path,
                                                           tmp_path: Path) -> None:
    done = _run(cpu_torch_python, tmp_path, "training_step.py")
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    assert attempt["contracts_passed"] is True
    assert attempt["output"]["training_step"]["parameters_changed"] == 4
    assert attempt["output"]["training_step"]["checkpoint"]["loadable"] is True
    (steps,) = [t for t in attempt["timings"] if t["stage"] == "train_step"]
    assert steps["first_pass_ms"] is not None
    assert steps["later_passes"]["count"] == 2

    still = tmp_path / "lr-0"
    done = _run(cpu_torch_python, still, "training_step.py", "--lr", "0")
    assert done.returncode == 1
    attempt = attempt_of(only_attempt(still / "runs"))
    (contract,) = attempt["contracts"]
    assert contract["passed"] is False
    assert contract["detail"] == ("parameters not updated by the step: 0.weight, 0.bias, "
                                  "2.weight, 2.bias")


def test_the_ledger_example_writes_each_id_once_and_resumes_with_nothing_left(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    """examples/ledger.py, the program the README's resume-check runs: run twice, every id has
    one record, each a vector of the declared dimension, and the second run writes nothing."""
    ledger = tmp_path / "results.jsonl"
    for _ in range(2):
        done = _run(cpu_torch_python, tmp_path, "ledger.py", str(ledger))
        assert done.returncode == 0, done.stderr[-3000:]
    header, *records = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert header["expected_ids"] == [f"doc-{number}" for number in range(100)]
    assert header["vectors"] == {"dim": 64, "field": None}
    assert [record["id"] for record in records] == header["expected_ids"]
    assert {len(record["record"]) for record in records} == {64}
