"""Out of memory, classified by phase: the CPU allocator really refusing (RLIMIT_AS), and the
sizes of CUDA's, HIP's, MPS's and the CPU allocator's messages."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from kernodeck_diagnostic.package_data import read
from kernodeck_diagnostic.ramp import outcome
from kernodeck_diagnostic.trial import oom
from kernodeck_diagnostic.trial.passes import Passes
from trial_helpers import (
    ATTEMPT_SCHEMA,
    assert_valid_attempt,
    attempt_of,
    events_of,
    only_attempt,
    run_app,
)

# The application lowers its own address-space limit to what it uses plus 1 GiB, so PyTorch's
# CPU allocator really refuses a larger tensor. One thread: each thread's stack and arena take
# address space too.
APPLICATION = """
    import resource, sys
    import torch
    from kernodeck_diagnostic import Trial

    torch.set_num_threads(1)
    where = sys.argv[1]

    def address_space():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024

    limit = address_space() + 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    GIB_FLOATS = 2**30 // 4
    outputs = []  # what the 'retained' variant keeps from pass to pass
    with Trial("runs", params={"where": where}) as trial:
        with trial.stage("read_params"):
            pass
        with trial.stage("load_weights"):
            weights = torch.ones(3 * GIB_FLOATS if where == "loading" else 1024)
        def batches():  # the 'fetch' variant: its first batch does not fit
            yield torch.ones(3 * GIB_FLOATS)

        for step in trial.passes(batches() if where == "fetch" else 10):
            with trial.stage("compute"):
                if where == "first_pass":
                    activations = torch.ones(3 * GIB_FLOATS)
                else:
                    outputs.append(torch.ones(GIB_FLOATS // 5))  # 200 MiB kept each pass
"""
REFUSED = "DefaultCPUAllocator: can't allocate memory"


def _failed_attempt(python: Path, work: Path, where: str) -> tuple[Path, dict]:
    done = run_app(python, work, APPLICATION, where)
    assert done.returncode == 1, done.stderr[-3000:]
    assert REFUSED in done.stderr  # the real allocator's refusal, gone on to the program
    folder = only_attempt(work / "runs")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert attempt["status"] == "failed"
    assert attempt["first_error"]["type"] == "RuntimeError"
    assert REFUSED in attempt["first_error"]["message"]
    assert attempt["oom"]["device"] == "cpu"
    assert (folder / "trace.txt").is_file()
    assert attempt["trace"] == "trace.txt"
    written = (folder / "attempt.json").read_text(encoding="utf-8")
    assert str(work) not in written
    assert str(python.parent) not in written
    assert tempfile.gettempdir() not in written
    assert "site-packages/" not in written
    return folder, attempt


@pytest.mark.slow
def test_refused_while_loading_is_the_loading_phase(cpu_torch_python: Path,
                                                    tmp_path: Path) -> None:
    folder, attempt = _failed_attempt(cpu_torch_python, tmp_path, "loading")
    assert attempt["last_completed_stage"] == "read_params"
    assert attempt["first_error"]["stage"] == "load_weights"
    assert attempt["oom"]["phase"] == "loading"
    assert attempt["oom"]["pass_index"] is None
    assert attempt["oom"]["requested_bytes"] >= 3 * 2**30
    assert "does not fit" in attempt["oom"]["advice"]
    (failed,) = [e for e in events_of(folder) if e["event"] == "stage_failed"]
    assert failed["oom"]["phase"] == "loading"


@pytest.mark.slow
def test_refused_in_pass_0_is_the_first_pass_phase(cpu_torch_python: Path,
                                                   tmp_path: Path) -> None:
    _, attempt = _failed_attempt(cpu_torch_python, tmp_path, "first_pass")
    assert attempt["last_completed_stage"] == "load_weights"
    assert attempt["first_error"]["stage"] == "compute"
    assert attempt["first_error"]["pass_index"] == 0
    assert attempt["oom"]["phase"] == "first_pass"
    assert attempt["oom"]["pass_index"] == 0
    assert attempt["oom"]["requested_bytes"] == 3 * 2**30
    assert attempt["passes"]["completed"] == 0


@pytest.mark.slow
def test_refused_while_fetching_the_first_batch_is_that_pass_data_loading(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    """``trial.passes(loader)``: fetching a batch is part of its pass; never "after the passes
    completed" in the stage that ran last."""
    folder, attempt = _failed_attempt(cpu_torch_python, tmp_path, "fetch")
    assert attempt["last_completed_stage"] == "load_weights"
    assert (attempt["first_error"]["stage"], attempt["first_error"]["pass_index"]) == (
        "data_loading", 0)
    found = attempt["oom"]
    assert (found["phase"], found["pass_index"], found["data_loading"]) == ("first_pass", 0, True)
    assert found["requested_bytes"] == 3 * 2**30
    assert "while fetching pass 0's item" in found["advice"]
    assert "after the passes" not in found["advice"]
    assert attempt["passes"]["first_failed_pass"] == {"index": 0, "stage": "data_loading",
                                                      "error_type": "RuntimeError"}
    (error,) = [e for e in events_of(folder) if e["event"] == "error"]
    assert (error["stage"], error["pass_index"], error["oom"]["phase"]) == (
        "data_loading", 0, "first_pass")


@pytest.mark.slow
def test_refused_after_retained_outputs_grew_is_a_later_pass_with_its_growth(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    _, attempt = _failed_attempt(cpu_torch_python, tmp_path, "retained")
    found = attempt["oom"]
    assert found["phase"] == "later_pass"
    assert found["pass_index"] >= 2
    assert found["pass_index"] == attempt["passes"]["completed"]
    assert found["requested_bytes"] == 2**30 // 5 // 4 * 4
    # Every pass kept its 200 MiB: the growth per pass says so.
    assert len(found["growth_per_pass_bytes"]) == found["pass_index"] - 1
    for grown in found["growth_per_pass_bytes"]:
        assert 190 * 2**20 <= grown <= 230 * 2**20
    assert "retained tensors" in found["advice"]
    assert attempt["last_completed_stage"] == "compute"


# -- sizes and devices from the messages PyTorch writes ------------------------------------------

@pytest.mark.parametrize(("message", "sizes", "device"), [
    ("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB "
     "of which 1.05 GiB is free. Including non-PyTorch memory, this process has 78.13 GiB memory "
     "in use.", (2 * 2**30, int(79.19 * 2**30), int(1.05 * 2**30)), "cuda:0"),
    ("HIP out of memory. Tried to allocate 512.00 MiB. GPU 1 has a total capacity of 191.98 GiB "
     "of which 0 bytes is free.", (512 * 2**20, int(191.98 * 2**30), 0), "cuda:1"),
    ("MPS backend out of memory (MPS allocated: 17.95 GB, other allocations: 1.20 MB, max "
     "allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool.",
     (256 * 2**20, int(18.13 * 2**30), None), "mps"),
    ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
     "you tried to allocate 3221225472 bytes. Error code 12 (Cannot allocate memory)",
     (3221225472, None, None), "cpu"),
    ("XPU out of memory. Tried to allocate 1.50 GiB.", (int(1.5 * 2**30), None, None), "xpu"),
])
def test_sizes_and_device_are_read_from_the_message(message: str, sizes: tuple,
                                                    device: str) -> None:
    found = oom.sizes(message)
    assert (found["requested_bytes"], found["total_bytes"], found["free_bytes"]) == sizes
    assert oom.device_of(message) == device


def test_the_phase_follows_the_passes() -> None:
    assert oom.phase_of(None, passes_started=False) == "loading"
    assert oom.phase_of(0, passes_started=True) == "first_pass"
    assert oom.phase_of(3, passes_started=True) == "later_pass"
    assert oom.phase_of(None, passes_started=True) == "later_pass"  # after the passes
    passes = Passes()
    for index, kept in ((0, 100), (1, 300), (4, 900)):  # readings of passes 0, 1 and 4
        passes.memory_read(index, kept, float(index))
    memory, indexes = passes.memory_after_pass()
    block = oom.describe(MemoryError(), "later_pass", 5, memory, passes.growth(),
                         indexes=indexes)
    assert block["growth_per_pass_bytes"] == [200, 200]  # per pass between the readings
    assert (block["memory_after_pass_bytes"], block["memory_after_pass_indexes"]) == (
        [100, 300, 900], [0, 1, 4])
    assert json.dumps(block)  # JSON as it is


def test_the_schemas_name_the_phases_the_code_defines() -> None:
    # oom.PHASES is the one list: the attempt's schema, ramp.json's (its own ``after_work`` too,
    # and null: phase unknown) and the advice hold to it.
    attempt = json.loads(ATTEMPT_SCHEMA.read_text(encoding="utf-8"))
    assert tuple(attempt["properties"]["oom"]["properties"]["phase"]["enum"]) == oom.PHASES
    ramp = json.loads(read("ramp", "schema", "ramp-v1.json"))
    assert tuple(ramp["$defs"]["phase"]["enum"]) == (*outcome.RAMP_PHASES, None)
    assert outcome.RAMP_PHASES[:len(oom.PHASES)] == oom.PHASES
    assert tuple(oom.ADVICE) == oom.PHASES
