"""``ramp`` over applications that use ``Trial``: what the attempt folder says is read through its
contract (``attempt.json``; ``events.jsonl`` alone when the process was killed before writing it).

- a real CPU torch program whose first pass needs more memory than the address-space limit it
  sets itself: ``out_of_memory`` in phase ``first_pass``, from ``attempt.json``;
- a program whose output contract fails from some value on: ``contract_failed``, named;
- a program that keeps each pass's output, killed by the kernel's OOM killer in a later pass
  (a real memory cgroup): only ``events.jsonl`` is left, and the phase is read from it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, Result, clean_env, run_tool
from test_ramp import memory_limited, ramp_in

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_AS, signals")

TORCH_TRIAL_APP = """
import os, resource
import torch
from kernodeck_diagnostic import Trial
batch = int(os.environ["KERNODECK_AXIS_VALUE"])
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
limit = size + 1500 * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
with Trial("runs", params={"batch": batch}) as trial:
    with trial.stage("load_weights"):
        weights = torch.ones(256, 256)
    sums = []
    for step in trial.passes(2):
        with trial.stage("compute"):
            x = torch.ones(batch, 8 * 2**20)  # 32 MiB per unit of batch
            sums.append(float(x.sum()))
            del x
    trial.expect("sums", sums == [float(batch * 8 * 2**20)] * 2)
"""

CONTRACT_APP = """
import os
from kernodeck_diagnostic import Trial
value = int(os.environ["KERNODECK_AXIS_VALUE"])
with Trial("runs", params={"n": value}) as trial:
    with trial.stage("compute"):
        rows = [[float(i)] * 4 for i in range(value if value < 4 else value - 1)]
    trial.expect("one_row_per_input", len(rows) == value, detail=f"{len(rows)} rows")
"""

# Its loader holds fewer batches from some value on: zip() starts a pass the loader cannot feed.
SHORT_LOADER_APP = """
import os
from kernodeck_diagnostic import Trial
value = int(os.environ["KERNODECK_AXIS_VALUE"])
loader = [[1.0] * 4 for _ in range(3 if value < 4 else 2)]
with Trial("runs", params={"n": value}) as trial:
    for step, batch in zip(trial.passes(3), loader):
        with trial.stage("compute"):
            total = sum(batch)
"""

# Each pass keeps its output (a retained tensor, in a real program): memory grows per pass.
RETAINING_APP = """
import os
from kernodeck_diagnostic import Trial
mib = int(os.environ["KERNODECK_AXIS_VALUE"])
kept = []
with Trial("runs", params={"mib": mib}) as trial:
    with trial.stage("load"):
        table = bytearray(2**20)
    for step in trial.passes(3):
        with trial.stage("compute"):
            kept.append(bytearray(mib * 2**20))  # zero-filled: every page really touched
"""


def _ramp(pyz: Path, out: Path, app: Path, python: Path | str, *options: str) -> Result:
    return run_tool(sys.executable, pyz,
                    ["ramp", "--out", str(out), "--value-from-env", *options, "--", str(python),
                     str(app)],
                    env=clean_env({"LC_ALL": "C.UTF-8", "PYTHONPATH": str(SRC)}))


def _record(out: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "ramp.json").read_text(encoding="utf-8"))
    return document


def _attempt_file(out: Path, name: str) -> dict[str, Any]:
    found = list((out / name).glob("*/attempt.json"))
    assert len(found) == 1, found
    document: dict[str, Any] = json.loads(found[0].read_text(encoding="utf-8"))
    return document


@pytest.mark.slow
@posix_only
def test_a_trials_first_pass_out_of_memory_is_read_from_its_attempt_file(
        pyz: Path, tmp_path: Path, cpu_torch_python: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp-batch"
    app.write_text(TORCH_TRIAL_APP)
    result = _ramp(pyz, out, app, cpu_torch_python, "--axis", "batch", "--start", "16",
                   "--stop", "64")
    assert result.returncode == 0, result.stderr
    attempts = _record(out)["attempts"]
    assert [(item["value"], item["outcome"]) for item in attempts] == [
        (16, "passed"), (32, "passed"), (64, "out_of_memory")]
    passed, failed = attempts[1], attempts[2]
    # The trial's own account: its phase, its request, its peak.
    trial = _attempt_file(out, "batch-64")
    assert trial["oom"]["phase"] == "first_pass"
    assert failed["trial"] == "attempt.json"
    assert failed["oom"] == {"phase": "first_pass", "pass_index": 0,
                             "requested_bytes": 64 * 32 * 2**20, "source": "attempt"}
    assert failed["error"].startswith("RuntimeError: ")
    assert passed["peak_memory_source"] == "attempt"
    assert passed["peak_memory_bytes"] == _attempt_file(out, "batch-32")["peak_memory_bytes"]
    assert "phase first_pass" in result.stdout


@posix_only
def test_a_trials_failed_contract_is_contract_failed(pyz: Path, tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp-n"
    app.write_text(CONTRACT_APP)
    result = _ramp(pyz, out, app, sys.executable, "--axis", "n", "--start", "1", "--stop", "16")
    assert result.returncode == 0, result.stderr
    document = _record(out)
    assert [(item["value"], item["outcome"]) for item in document["attempts"]] == [
        (1, "passed"), (2, "passed"), (4, "contract_failed"), (8, "contract_failed")]
    failed = document["attempts"][2]
    assert failed["exit_code"] == 0  # the program ended well; its output did not
    assert failed["contracts_failed"] == ["one_row_per_input"]
    assert document["first_failing"]["outcome"] == "contract_failed"
    assert "contracts: one_row_per_input" in result.stdout
    # summarize reads the ramp's record and its attempts' folders: a table across attempts.
    summary = run_tool(sys.executable, pyz, ["summarize", str(out)],
                       env=clean_env({"LC_ALL": "C.UTF-8"}))
    assert "not a report" not in summary.stdout, summary.stdout
    rows = {line.split()[0]: line.split() for line in summary.stdout.splitlines()
            if line.startswith("ramp.json")}
    assert rows["ramp.json[n=4]"][1] == "contract_failed", summary.stdout
    assert rows["ramp.json[n=1]"][1] == "passed"
    assert "one_row_per_input" in " ".join(rows["ramp.json[n=4]"])


def test_a_pass_the_loader_never_fed_is_no_missing_pass(pyz: Path, tmp_path: Path) -> None:
    """zip(trial.passes(3), loader) with a 2-batch loader: pass 2 starts, the loader has no
    more, no work runs in it. Issue 41: a pass the program never asked for is not a missing
    pass (``incomplete`` was a false failure for islice and zip): the attempt is completed, with
    2 of 3 passes and the pass the program stopped in named."""
    app, out = tmp_path / "app.py", tmp_path / "ramp"
    app.write_text(SHORT_LOADER_APP)
    result = _ramp(pyz, out, app, sys.executable, "--axis", "n", "--start", "1", "--stop", "16")
    assert result.returncode == 0, result.stderr
    document = _record(out)
    assert [(item["value"], item["outcome"]) for item in document["attempts"]] == [
        (1, "passed"), (2, "passed"), (4, "passed"), (8, "passed"), (16, "passed")]
    attempt = _attempt_file(out, "n-4")
    assert attempt["status"] == "completed"
    assert (attempt["passes"]["requested"], attempt["passes"]["completed"],
            attempt["passes"]["left_at_pass"]) == (3, 2, 2)


@posix_only
def test_a_trial_killed_by_the_oom_killer_in_a_later_pass_is_read_from_its_events(
        pyz: Path, tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp-mib"
    app.write_text(RETAINING_APP)
    with memory_limited(200) as group:
        result = ramp_in(group, pyz, out, [sys.executable, str(app)], "--axis", "mib",
                         "--start", "16", "--stop", "256", "--value-from-env",
                         env={"PYTHONPATH": str(SRC)})
    assert result.returncode == 0, result.stderr
    document = _record(out)
    first = document["first_failing"]
    failed = next(item for item in document["attempts"] if item["value"] == first["value"])
    assert failed["outcome"] == "out_of_memory", failed
    assert failed["signal"] == "SIGKILL"
    assert failed["trial"] == "events.jsonl"  # killed before it could write attempt.json
    assert not list((out / failed["folder"]).glob("*/attempt.json"))
    assert failed["oom"]["source"] == "kernel"
    assert failed["oom"]["phase"] == "later_pass"
    assert first["phase"] == "later_pass"


# The work ends (3 passes, each keeping 1 MiB), then the trial's teardown is made to need more
# memory than the cgroup has: the app replaces the function that writes attempt.json (whatever its
# name) with one that fills memory, so the OOM killer ends the process after the work is done.
TEARDOWN_KILLED_APP = """
import os
from kernodeck_diagnostic import Trial
from kernodeck_diagnostic.trial import folder

def fill(*args, **kwargs):
    blocks = []
    while True:
        blocks.append(bytearray(16 * 2**20))  # zero-filled: every page really touched

for name in ("write_new", "write_json"):
    setattr(folder, name, fill)
mib = int(os.environ["KERNODECK_AXIS_VALUE"])
kept = []
with Trial("runs", params={"mib": mib}) as trial:
    for step in trial.passes(3):
        with trial.stage("compute"):
            kept.append(bytearray(2**20))
"""


@posix_only
def test_a_trial_killed_in_its_teardown_is_not_a_later_pass_oom(pyz: Path,
                                                               tmp_path: Path) -> None:
    app, out = tmp_path / "app.py", tmp_path / "ramp-mib"
    app.write_text(TEARDOWN_KILLED_APP)
    with memory_limited(200) as group:
        result = ramp_in(group, pyz, out, [sys.executable, str(app)], "--axis", "mib",
                         "--start", "1", "--stop", "1", "--value-from-env",
                         env={"PYTHONPATH": str(SRC)})
    assert (out / "ramp.json").is_file(), result.stderr
    (attempt,) = _record(out)["attempts"]
    assert attempt["outcome"] == "out_of_memory", attempt
    assert attempt["signal"] == "SIGKILL"
    assert attempt["trial"] == "events.jsonl"
    assert attempt["oom"]["source"] == "kernel"
    assert attempt["oom"]["phase"] == "after_work"  # never "later_pass": the passes all ended
    assert "phase after_work" in result.stdout


def test_an_attempt_per_rank_is_read_and_a_failing_rank_speaks_for_the_job(
        tmp_path: Path) -> None:
    """A job of several processes keeps one attempt per rank (``rank-N/``, the adapters): ramp
    reads each, and a rank whose attempt failed is the job's outcome, never a pass because the
    attempt at the top was not found."""
    from kernodeck_diagnostic.trial import Trial
    from kernodeck_diagnostic.trial.evidence import run_records
    from kernodeck_diagnostic.trial.judge import judge

    with Trial(tmp_path / "rank-0") as trial, trial.stage("step"):
        pass
    with pytest.raises(RuntimeError), Trial(tmp_path / "rank-1") as trial, trial.stage("step"):
        raise RuntimeError("rank 1 broke")
    records = run_records(str(tmp_path))
    assert [record.name.split("/")[0] for record in records] == ["rank-0", "rank-1"]
    judged = judge(records)
    assert judged.outcome == "failed"
    assert judged.trial is not None
    assert (judged.trial.source, judged.trial.status) == ("attempt.json", "failed")
    assert "rank 1 broke" in str(judged.trial.error_text)
    (tmp_path / "rank-1" / "latest").unlink(missing_ok=True)
    for folder in (tmp_path / "rank-1").iterdir():  # rank 1 passes too: the job passes
        if folder.is_dir():
            document = json.loads((folder / "attempt.json").read_text(encoding="utf-8"))
            document.update(status="completed", first_error=None, stages=[], stage_summary=[])
            (folder / "attempt.json").write_text(json.dumps(document), encoding="utf-8")
    assert judge(run_records(str(tmp_path))).passed


# A DataLoader whose worker process needs ``mib`` MiB for each item (zero-filled: every page
# really touched): past the cgroup's limit, the kernel's OOM killer ends the worker, not the
# program, and PyTorch raises "DataLoader worker (pid N) is killed by signal: Killed." in the
# program's fetch of the next batch (issue 41).
WORKER_OOM_APP = """
import os
import torch
from torch.utils.data import DataLoader, Dataset
from kernodeck_diagnostic import Trial
mib = int(os.environ["KERNODECK_AXIS_VALUE"])

class Blocks(Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, index):
        block = bytearray(mib * 2**20)
        return torch.tensor([len(block) // 2**20])

with Trial("runs", params={"mib": mib}) as trial:
    loader = DataLoader(Blocks(), batch_size=1, num_workers=1)
    for batch in trial.passes(loader):
        with trial.stage("compute"):
            total = int(batch.sum())
"""


@pytest.mark.slow
@posix_only
def test_a_data_loader_worker_the_oom_killer_ended_is_out_of_memory_in_data_loading(
        pyz: Path, tmp_path: Path, cpu_torch_python: Path) -> None:
    """A real memory cgroup (v1 here: the machine's memory controller is not on its cgroup v2
    hierarchy; ``memory_limited`` takes v2's ``memory.max`` where it is), a real torch
    DataLoader worker killed by the kernel's OOM killer: the attempt's verdict is
    ``out_of_memory`` in phase ``data_loading``, the process a data loader's worker, the
    kernel's count the evidence."""
    app, out = tmp_path / "app.py", tmp_path / "ramp-mib"
    app.write_text(WORKER_OOM_APP)
    with memory_limited(900) as group:
        result = ramp_in(group, pyz, out, [str(cpu_torch_python), str(app)], "--axis", "mib",
                         "--start", "64", "--stop", "2048", "--factor", "4",
                         "--value-from-env", env={"PYTHONPATH": str(SRC)})
    assert result.returncode == 0, result.stdout + result.stderr
    document = _record(out)
    assert document["attempts"][0]["outcome"] == "passed"  # 64 MiB fits: the program works
    first = document["first_failing"]
    failed = next(item for item in document["attempts"] if item["value"] == first["value"])
    assert failed["outcome"] == "out_of_memory", failed
    assert failed["signal"] is None  # the program exited on its own
    assert failed["exit_code"] == 1
    assert "DataLoader worker" in failed["error"]
    assert failed["oom"]["phase"] == "data_loading"
    assert failed["oom"]["process"] == "data_loader_worker"
    assert failed["oom"]["source"] == "kernel"
    assert failed["oom"]["evidence"] == ["cgroup_oom_kill"]
    assert first["phase"] == "data_loading"
    assert failed["reasons"][0]["kind"] == "oom_killer_data_loader"  # the deciding cause
