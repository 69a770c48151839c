"""A GPU program (the fake torch: no GPU here): sync=True synchronises at both ends of the stage,
device memory is read per stage, and a CUDA out-of-memory error leaves the allocator's snapshot."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

from trial_helpers import (
    app_env,
    assert_valid_attempt,
    attempt_of,
    events_of,
    only_attempt,
    run_app,
)

# The device is still working when the stage's code returns: the second synchronisation waits
# 0.25 s for it, and the stage's duration must include that wait.
SYNC = """
    import json, sys, time
    import torch
    from kernodeck_diagnostic import Trial

    calls = []

    def synchronize(index=None):
        calls.append(["synchronize", index])
        if len(calls) == 3:
            time.sleep(0.25)

    torch.cuda.synchronize = synchronize
    with Trial("runs") as trial:
        with trial.stage("compute", sync=True):
            calls.append(["kernel launched", None])
        with trial.stage("write_output"):
            calls.append(["written", None])
    print(json.dumps(calls))
"""


def test_sync_synchronises_the_device_at_both_ends_of_the_stage(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, SYNC, env=app_env(fake="cuda_pass"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == [["synchronize", 0], ["kernel launched", None],
                                       ["synchronize", 0], ["written", None]]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    compute, write = attempt["stages"]
    assert compute["synchronized"] is True
    assert compute["duration_ms"] >= 250
    assert write["synchronized"] is False
    assert write["duration_ms"] < 250
    # Device memory per stage, from the allocator; the attempt's peak is the device's.
    assert compute["memory"]["device"] == "cuda:0"
    assert (compute["memory"]["allocated_bytes"], compute["memory"]["reserved_bytes"],
            compute["memory"]["peak_allocated_bytes"]) == (2**20, 2 * 2**20, 3 * 2**19)
    assert attempt["peak_memory_bytes"] == 3 * 2**19
    # The report's pytorch block, the devices included: the program initialised its GPU.
    assert attempt["pytorch"]["cuda_build"] == "12.8"
    assert attempt["pytorch"]["arch_list"][-1] == "compute_120"
    assert [d["name"] for d in attempt["pytorch"]["devices"]] == ["NVIDIA GeForce RTX 5070"]


OOM_WITH_HISTORY = """
    import torch
    from kernodeck_diagnostic import Trial

    with Trial("runs", memory_history=True) as trial:
        with trial.stage("load_weights"):
            pass
        try:
            for step in trial.passes(2):
                with trial.stage("compute", sync=True):
                    torch.tensor([[1.0]], device="cuda:0")
        except torch.cuda.OutOfMemoryError:
            print("recording during the attempt:", torch.cuda.memory.recording)
    print("recording after it:", torch.cuda.memory.recording)
"""


def test_a_cuda_oom_saves_the_allocator_snapshot_with_its_phase(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, OOM_WITH_HISTORY,
                   env=app_env(fake="oom_at_allocation"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["recording during the attempt: all",
                                        "recording after it: None"]
    folder = only_attempt(tmp_path / "runs")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert attempt["oom"]["phase"] == "first_pass"
    assert attempt["oom"]["pass_index"] == 0
    assert attempt["oom"]["device"] == "cuda:0"
    assert attempt["oom"]["requested_bytes"] == 2 * 2**20
    assert attempt["oom"]["total_bytes"] == int(11.94 * 2**30)
    assert attempt["oom"]["free_bytes"] == 0
    assert attempt["first_error"]["type"] == "OutOfMemoryError"
    assert attempt["memory_history"] == {"requested": True, "recorded": True,
                                         "snapshot": "memory_snapshot.pickle"}
    with (folder / "memory_snapshot.pickle").open("rb") as file:
        assert pickle.load(file)["recording"] == "all"  # noqa: S301 - the test's own file
    # Caught by the program inside the attempt: the attempt ran to its end, first error kept;
    # its first pass, where the error came, is the first failing one and never completed.
    assert attempt["status"] == "completed"
    assert attempt["passes"]["completed"] == 0
    assert attempt["passes"]["first_failed_pass"]["index"] == 0
    failed = [e for e in events_of(folder) if e["event"] == "stage_failed"]
    assert failed[0]["oom"]["phase"] == "first_pass"


# Nsight Systems' ranges (the fake torch: no GPU here): the app records what torch.cuda.nvtx is
# asked, as the SYNC app records the synchronisations.
NVTX = """
    import json, types
    import torch
    from kernodeck_diagnostic import Trial

    calls = []
    torch.cuda.nvtx = types.SimpleNamespace(range_push=lambda name: calls.append(["push", name]),
                                            range_pop=lambda: calls.append(["pop", None]))
    for asked in (True, False):
        with Trial("runs", nvtx=asked) as trial:
            with trial.stage("forward"):
                calls.append(["kernel launched", None])
                with trial.stage("attention"):
                    pass
    print(json.dumps(calls))
"""


def test_nvtx_ranges_mark_each_stage_on_cuda_when_asked(tmp_path: Path) -> None:
    done = run_app(sys.executable, tmp_path, NVTX, env=app_env(fake="cuda_pass"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == [
        ["push", "forward"], ["kernel launched", None], ["push", "attention"], ["pop", None],
        ["pop", None],
        ["kernel launched", None]]  # not asked: no range


IMPORTED_IN_THE_STAGE = """
    from kernodeck_diagnostic import Trial

    with Trial("runs") as trial:
        with trial.stage("setup", sync=True):
            import torch  # the program's first import of torch, inside the stage
            torch.tensor([[1.0]], device="cuda:0")
"""


def test_a_stage_that_imports_torch_and_starts_the_device_sees_it_at_its_end(
        tmp_path: Path) -> None:
    """The device a stage began using, torch imported in the stage itself: its end synchronises
    it and reads its memory, as the stage's own."""
    done = run_app(sys.executable, tmp_path, IMPORTED_IN_THE_STAGE,
                   env=app_env(fake="cuda_pass"))
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    (setup,) = attempt["stages"]
    assert setup["memory"]["device"] == "cuda:0"
    assert setup["synchronized"] is True
