"""--distributed for real: torchrun (one node and two) and ranks launched by hand with torchrun's
variables, in the real CPU build of torch (gloo), some ranks in broken environments.

torchrun is run as ``python -m torch.distributed.run`` (what the ``torchrun`` script runs) from
the cached CPU environment, with the package on PYTHONPATH: nothing is installed into it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, assert_valid_report, clean_env, schema
from distributed_fixtures import DISTRIBUTED_FIRES, DISTRIBUTED_QUIET
from kernodeck_diagnostic.facts.launcher import (
    Launch,
    LaunchError,
    derived_port,
    detect,
    first_host,
)
from kernodeck_diagnostic.facts.network import (
    interfaces,
    memlock_limit_bytes,
    port_in_use,
    rdma_devices,
    socket_interfaces,
)
from kernodeck_diagnostic.report.distributed import apply
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.supervision.events import WorkerState
from kernodeck_diagnostic.worker.protocol import EXPECTED as RIGHT

TIMEOUT_S = 30  # the machines that run the tests are shared: torch imports slowly there
# Every rank ends within its time limit and a few seconds, whatever the others do.
BOUND_S = TIMEOUT_S + 5
LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                      "GROUP_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_USE_AGENT_STORE")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rank_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A user's environment without any launcher's variables, the package importable."""
    env = clean_env()
    for name in list(env):
        if name in LAUNCHER_VARIABLES or name.startswith("SLURM_"):
            del env[name]
    env["PYTHONPATH"] = str(SRC)
    env.update(extra or {})
    return env


def torchrun(python: Path, arguments: list[str], cwd: Path,
             env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(python), "-m", "torch.distributed.run", *arguments, "-m", "kernodeck_diagnostic",
         "--distributed", "--device", "cpu", "--timeout", str(TIMEOUT_S), "--output",
         "report-{rank}.json"], cwd=cwd, env=dict(env or rank_env()), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def reports(folder: Path) -> dict[int, dict]:
    found = {}
    for path in folder.glob("report-*.json"):
        report = json.loads(path.read_text(encoding="utf-8"))
        assert_valid_report(report)
        found[int(path.stem.split("-")[1])] = report
    return found


@pytest.mark.slow
def test_torchrun_three_ranks_pass_with_one_aggregated_report(cpu_torch_python: Path,
                                                              tmp_path: Path) -> None:
    port = free_port()
    # A host name (planted: resolved to loopback), its address and the port must stay out.
    run = torchrun(cpu_torch_python, ["--nproc-per-node", "3", "--master-addr", "localhost",
                                      "--master-port", str(port)], tmp_path)
    stdout, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    found = reports(tmp_path)
    assert sorted(found) == [0, 1, 2]
    job = found[0]
    assert (job["code"], job["stage"]) == ("CPU_CHECK_PASSED", "collective")
    block = job["distributed"]
    assert (block["launcher"], block["world_size"]) == ("torchrun", 3)
    assert block["backend"] == "gloo"
    assert block["collective"]["status"] == "passed"
    assert block["collective"]["expected"] == block["collective"]["observed"] == 6
    assert [(r["rank"], r["local_rank"], r["node"], r["code"], r["device"])
            for r in block["ranks"]] == [(n, n, 0, "CPU_CHECK_PASSED", "cpu") for n in range(3)]
    assert block["missing_ranks"] == []
    # One report on stdout (rank 0's); the others one line each on stderr.
    assert stdout.count("PASSED CPU_CHECK_PASSED") == 1
    assert "rank 1 of 3: CPU_CHECK_PASSED (exit 0)" in stderr
    # No host name, address or port: neither in the reports nor in what rank 0 printed.
    for text in [stdout, *(json.dumps(report) for report in found.values())]:
        for planted in ("localhost", "127.0.0.1", str(port)):
            assert planted not in text
        if len(socket.gethostname()) >= 6:  # shorter ones are common words, left in place
            assert socket.gethostname() not in text


@pytest.mark.slow
def test_two_torchrun_nodes_give_four_ranks_on_two_node_indices(cpu_torch_python: Path,
                                                                tmp_path: Path) -> None:
    port = free_port()
    nodes = []
    # Each node spells the store's address its own way (issue 45: the job's identity hashed
    # the string, and summarize split a passing job in two).
    for node, address in ((0, "127.0.0.1"), (1, "localhost")):
        folder = tmp_path / f"node{node}"
        folder.mkdir()
        nodes.append(torchrun(cpu_torch_python, [
            "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "2",
            "--master-addr", address, "--master-port", str(port)], folder))
    for run in nodes:
        _, stderr = run.communicate(timeout=120)
        assert run.returncode == 0, stderr
    found = {**reports(tmp_path / "node0"), **reports(tmp_path / "node1")}
    assert sorted(found) == [0, 1, 2, 3]
    block = found[0]["distributed"]
    assert block["collective"]["observed"] == block["collective"]["expected"] == 10
    assert [(r["rank"], r["node"], r["local_rank"]) for r in block["ranks"]] == [
        (0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)]
    assert (found[3]["code"], found[3]["distributed"]["rank"]) == ("CPU_CHECK_PASSED", 3)
    assert len({report["distributed"]["job"] for report in found.values()}) == 1


def start_rank(python: Path, *, rank: int, world: int, port: int, folder: Path,
               extra_path: Path | None = None, device: str = "cpu") -> subprocess.Popen[str]:
    """One rank started by hand, as a launcher would: its variables, its own report file."""
    env = rank_env({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
                    "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    if extra_path is not None:
        env["PYTHONPATH"] = f"{extra_path}{os.pathsep}{SRC}"
    return subprocess.Popen(
        [str(python), "-m", "kernodeck_diagnostic", "--distributed", "--device", device,
         "--timeout", str(TIMEOUT_S), "--output", str(folder / "report-{rank}.json")],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL)


def job(folder: Path, world: int, ranks: Mapping[int, Mapping[str, Any]],
        ) -> tuple[dict[int, dict], dict[int, tuple[int, float]]]:
    """Start the ``ranks`` of a job of ``world`` ranks by hand (each with ``start_rank``'s
    arguments: python, extra_path, device), wait for each: the reports, and each rank's exit code
    with when it ended (seconds after the first started)."""
    port = free_port()
    start = time.monotonic()
    started = {rank: start_rank(rank=rank, world=world, port=port, folder=folder, **arguments)
               for rank, arguments in ranks.items()}
    ended = {}
    for rank, process in started.items():
        process.communicate(timeout=60)
        ended[rank] = (process.returncode, time.monotonic() - start)
    return reports(folder), ended


@pytest.mark.slow
def test_ranks_without_torch_or_with_a_broken_torch_are_named_by_rank_0(
        cpu_torch_python: Path, notorch_python: Path, broken_torch_python: Path,
        tmp_path: Path) -> None:
    pythons = [cpu_torch_python, cpu_torch_python, notorch_python, broken_torch_python]
    found, ended = job(tmp_path, 4, {rank: {"python": python}
                                     for rank, python in enumerate(pythons)})
    # Their own verdicts: written by each rank, since --output holds {rank}.
    assert (found[2]["code"], ended[2][0]) == ("TORCH_MISSING", 3)
    assert (found[3]["code"], ended[3][0]) == ("TORCH_IMPORT_FAILED", 4)
    verdict = found[0]
    assert (verdict["code"], verdict["exit_code"], ended[0][0]) == ("COLLECTIVE_FAILED", 13, 13)
    assert ended[1][0] == 13  # every rank's exit says the job is not healthy
    assert verdict["distributed"]["missing_ranks"] == [2, 3]
    assert verdict["distributed"]["collective"]["status"] == "timeout"
    assert verdict["error"]["message_values"]["ranks"] == "2, 3"
    assert all(elapsed <= BOUND_S for _, elapsed in ended.values()), ended


@pytest.mark.slow
def test_ranks_on_different_torch_builds_pass_with_a_warning_naming_them(
        cpu_torch_python: Path, cuda_torch_python: Path, tmp_path: Path) -> None:
    """Ranks 0 and 1 on the CPU build of torch 2.13.0, rank 2 on the CUDA build of 2.14.1 (on
    the CPU here): the job passed without a word (issue 45). It still passes (nothing failed),
    with a warning naming each build and its ranks, in every rank's report."""
    pythons = [cpu_torch_python, cpu_torch_python, cuda_torch_python]
    found, ended = job(tmp_path, 3, {rank: {"python": python}
                                     for rank, python in enumerate(pythons)})
    builds = {rank: found[rank]["pytorch"]["version"] for rank in range(3)}
    assert builds[0] == builds[1] != builds[2], builds
    for rank in range(3):
        assert (found[rank]["code"], ended[rank][0]) == ("CPU_CHECK_PASSED", 0)
        said = [warning["message"] for warning in found[rank]["warnings"]
                if warning["stage"] == "collective"]
        assert said == [f"the ranks run different torch builds: {builds[0]} (rank(s) 0, 1); "
                        f"{builds[2]} (rank(s) 2)"], found[rank]["warnings"]


@pytest.mark.slow
def test_a_rank_that_never_starts_is_missing_and_the_others_end_in_bounds(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    found, ended = job(tmp_path, 3, {rank: {"python": cpu_torch_python} for rank in (0, 1)})
    verdict = found[0]
    assert (verdict["code"], verdict["stage"]) == ("COLLECTIVE_FAILED", "collective")
    assert verdict["distributed"]["missing_ranks"] == [2]
    assert [entry["rank"] for entry in verdict["distributed"]["ranks"]] == [0, 1]
    assert {code for code, _ in ended.values()} == {13}
    assert all(elapsed <= BOUND_S for _, elapsed in ended.values()), ended


@pytest.mark.slow
def test_a_rank_whose_own_check_fails_is_named_at_once_without_waiting_for_the_limit(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    found, ended = job(tmp_path, 2, {
        0: {"python": cpu_torch_python},
        # GPU mode on the CPU build: its torch imports, its check fails at the backend.
        1: {"python": cpu_torch_python, "device": "gpu"}})
    assert (found[1]["code"], ended[1][0]) == ("GPU_BACKEND_ABSENT", 5)
    verdict = found[0]
    assert (verdict["code"], ended[0][0]) == ("COLLECTIVE_FAILED", 13)
    assert verdict["distributed"]["collective"]["status"] == "skipped"
    assert verdict["distributed"]["missing_ranks"] == []
    assert verdict["distributed"]["ranks"][1]["code"] == "GPU_BACKEND_ABSENT"
    assert verdict["distributed"]["ranks"][1]["stage"] == "backend"
    assert verdict["error"]["message_values"]["ranks"] == "1 (GPU_BACKEND_ABSENT)"
    # Said through the store: nobody waited for the limit.
    assert all(elapsed < TIMEOUT_S for _, elapsed in ended.values()), ended


@pytest.mark.slow
def test_sigterm_from_the_launcher_does_not_cut_rank_0_short(cpu_torch_python: Path,
                                                             tmp_path: Path) -> None:
    """torchrun sends SIGTERM to every rank as soon as one exits with a failure: rank 0 still
    ends its check within the limit, prints and writes the job's report."""
    rank0 = start_rank(cpu_torch_python, rank=0, world=2, port=free_port(), folder=tmp_path)
    time.sleep(3)  # under way: its worker imports torch or waits for rank 1
    rank0.send_signal(signal.SIGTERM)
    stdout, _ = rank0.communicate(timeout=60)
    verdict = reports(tmp_path)[0]
    assert (rank0.returncode, verdict["code"]) == (13, "COLLECTIVE_FAILED")
    assert verdict["distributed"]["missing_ranks"] == [1]
    assert verdict["distributed"]["launcher_stopped"] is True  # the job stopped, said so
    assert stdout.startswith("FAILED COLLECTIVE_FAILED (exit 13)")


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux's /proc): a rank's worker and its watch."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text(encoding="utf-8").rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def serving(port: int, within_s: float) -> bool:
    """Whether a program listens on ``port`` (rank 0's store), by ``within_s``."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port),
                                                                     timeout=0.5):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("every_process", [False, True],
                         ids=["torchrun-signals-the-front", "srun-kill-on-bad-exit"])
def test_the_launchers_sigterm_leaves_rank_0_time_to_name_the_failed_rank(
        cpu_torch_python: Path, broken_torch_python: Path, tmp_path: Path,
        every_process: bool) -> None:
    """Rank 1's torch is broken: it ends at once, and the launcher stops the job with SIGTERM
    and kills what is left 30 s later (torchrun's wait; Slurm's default KillWait). torchrun
    signals rank 0's front (its worker has a session of its own); ``srun --kill-on-bad-exit=1``
    signals every process of the step, rank 0's worker included (issue 45: rank 0 said
    WORKER_FAILED, "killed by SIGTERM", rank 1 named nowhere). With the longest limit (120 s,
    --kernels' default), rank 0 still writes the job's verdict naming rank 1, before the kill."""
    port = free_port()
    env = rank_env({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "GROUP_RANK": "0",
                    "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    rank0 = subprocess.Popen(
        [str(cpu_torch_python), "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu",
         "--timeout", "120", "--output", str(tmp_path / "report-{rank}.json")],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL)
    rank1 = start_rank(broken_torch_python, rank=1, world=2, port=port, folder=tmp_path)
    try:
        rank1.communicate(timeout=90)
        # Rank 0 waits for rank 1 in its collective stage (it serves the job's store) when the
        # launcher stops the job: under load, rank 1's quick failure can come while rank 0's
        # front is still starting its interpreter, where nothing can hold a signal yet (seen
        # once in a full run: no report, the front ended by the SIGTERM).
        assert serving(port, within_s=60), rank0.poll()
        stopped = time.monotonic()
        for pid in [rank0.pid, *(_descendants(rank0.pid) if every_process else [])]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        stdout, _ = rank0.communicate(timeout=90)
        took = time.monotonic() - stopped
    finally:
        for process in (rank0, rank1):
            process.kill()
            process.communicate()
    found = reports(tmp_path)
    assert found[1]["code"] == "TORCH_IMPORT_FAILED"
    assert 0 in found, (rank0.returncode, stdout[-2000:])
    verdict = found[0]
    assert (rank0.returncode, verdict["code"]) == (13, "COLLECTIVE_FAILED"), verdict["error"]
    assert verdict["distributed"]["missing_ranks"] == [1]
    assert verdict["distributed"]["launcher_stopped"] is True
    assert stdout.startswith("FAILED COLLECTIVE_FAILED (exit 13)")
    assert took < 25, took  # the launcher's SIGKILL comes 30 s after its SIGTERM


# A test double of one rank only: its all-reduce never returns (a peer stuck in the collective).
HANG = '''
import importlib.abc, importlib.util, sys, time

class _Hang(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name != "torch.distributed":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        sys.meta_path.insert(0, self)
        self.real = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        self.real.exec_module(module)
        module.all_reduce = lambda *args, **kwargs: time.sleep(3600)

sys.meta_path.insert(0, _Hang())
'''


@pytest.mark.slow
def test_a_rank_that_hangs_in_the_collective_leaves_the_others_in_bounds(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    double = tmp_path / "hanging-rank"
    double.mkdir()
    (double / "sitecustomize.py").write_text(HANG, encoding="utf-8")
    found, ended = job(tmp_path, 3, {
        rank: {"python": cpu_torch_python, "extra_path": double if rank == 2 else None}
        for rank in range(3)})
    # Every rank waited for the all-reduce that rank 2 never took part in: each says so in
    # time, rank 2 too (its own all-reduce never returned), and all three results reached rank 0.
    verdict = found[0]
    assert verdict["code"] == "COLLECTIVE_FAILED"
    assert verdict["distributed"]["collective"]["status"] == "timeout"
    assert verdict["distributed"]["missing_ranks"] == []
    assert [(entry["rank"], entry["code"], entry["stage"])
            for entry in verdict["distributed"]["ranks"]] == [
        (rank, "COLLECTIVE_FAILED", "collective") for rank in range(3)]
    assert [ended[rank][0] for rank in range(3)] == [13, 13, 13]
    assert all(elapsed <= BOUND_S for _, elapsed in ended.values()), ended


def test_outside_a_launcher_distributed_is_a_usage_error_naming_what_is_missing() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu"],
        env=rank_env(), capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 2
    assert "RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT" in completed.stderr
    assert "SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID" in completed.stderr
    with pytest.raises(LaunchError) as refused:
        detect({"RANK": "0", "WORLD_SIZE": "2"})
    assert refused.value.values["names"] == "LOCAL_RANK, MASTER_ADDR, MASTER_PORT"


def test_slurm_variables_give_the_rank_and_a_derived_store() -> None:
    launch = detect({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1",
                     "SLURM_NODEID": "2", "SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "3",
                     "SLURM_STEP_NODELIST": "gpu[03-05,09],cpu01"})
    assert (launch.launcher, launch.rank, launch.world_size, launch.local_rank,
            launch.node) == ("slurm", 5, 8, 1, 2)
    assert launch.master_addr == "gpu03"
    assert launch.master_port == derived_port("4242", "3") == 20000 + (4242 % 1500) * 8 + 3
    assert first_host("node7") == "node7"
    assert first_host("a[1-2]b[07-09]") == "a1b07"
    # torchrun's variables win: srun starts torchrun, whose ranks these are.
    both = detect({"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0",
                   "SLURM_NODEID": "0", "RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1",
                   "MASTER_ADDR": "h", "MASTER_PORT": "29500", "GROUP_RANK": "1"})
    assert (both.launcher, both.rank, both.node) == ("torchrun", 3, 1)


def test_derived_ports_of_near_jobs_and_of_a_jobs_steps_never_meet() -> None:
    """Jobs 625 ids apart met under the old rule (job * 16 + step mod 10000): now two jobs fewer
    than 1500 ids apart, and a job's first 8 steps, each have a port of their own, below the
    ephemeral range."""
    ports: dict[int, tuple[int, int]] = {}
    for job in range(100_000, 101_500):
        for step in range(8):
            port = derived_port(str(job), str(step))
            assert 20000 <= port < 32768
            assert ports.setdefault(port, (job, step)) == (job, step)
    assert derived_port("100000", "0") == derived_port("101500", "0")  # where they meet again


def _state(collective: dict | None, ranks: list[dict]) -> WorkerState:
    state = WorkerState()
    state.collective, state.ranks = collective, ranks
    return state


def _entry(rank: int, **changes: object) -> dict:
    entry = {"rank": rank, "local_rank": rank, "node": 0, "stage": "compute", "kind": None,
             "type": None, "missing_module": None, "device": "cpu", **RIGHT,
             "collective": "passed", "observed": 3}
    entry.update(changes)
    return entry


PASSED = {"schema_version": 1, "status": "passed", "code": "CPU_CHECK_PASSED", "exit_code": 0,
          "stage": "compute", "request": {"device": "cpu"}, "error": None, "findings": []}
LAUNCH = Launch("slurm", 0, 2, 0, 0, "gpu01", 29500)


def test_a_wrong_sum_or_wrong_values_of_a_rank_fail_the_job() -> None:
    wrong_sum = apply(dict(PASSED), LAUNCH, _state(
        {"backend": "gloo", "status": "passed", "expected": 3, "observed": 4,
         "duration_ms": 1.0, "gathered": True}, [_entry(0, observed=4), _entry(1, observed=4)]))
    assert (wrong_sum["code"], wrong_sum["exit_code"]) == ("COLLECTIVE_FAILED", 13)
    assert wrong_sum["error"]["message_key"] == "error.collective.wrong_sum"
    assert [entry["code"] for entry in wrong_sum["distributed"]["ranks"]] == [
        "COLLECTIVE_FAILED", "COLLECTIVE_FAILED"]
    wrong_values = apply(dict(PASSED), LAUNCH, _state(
        {"backend": "gloo", "status": "passed", "expected": 3, "observed": 3,
         "duration_ms": 1.0, "gathered": True}, [_entry(0), _entry(1, loss=195.0)]))
    assert wrong_values["distributed"]["ranks"][1]["code"] == "CHECK_FAILED"
    assert wrong_values["error"]["message_values"]["ranks"] == "1 (CHECK_FAILED)"
    healthy = apply(dict(PASSED), LAUNCH, _state(
        {"backend": "gloo", "status": "passed", "expected": 3, "observed": 3,
         "duration_ms": 1.0, "gathered": True}, [_entry(0), _entry(1)]))
    assert (healthy["code"], healthy["stage"], healthy["error"]) == (
        "CPU_CHECK_PASSED", "collective", None)
    # Nothing received: the others are unknown, not missing; the job is not called healthy.
    alone = apply(dict(PASSED), LAUNCH, _state(
        {"backend": "gloo", "status": "timeout", "expected": 3, "observed": None,
         "duration_ms": None, "gathered": False}, []))
    assert alone["distributed"]["missing_ranks"] is None
    assert alone["code"] == "COLLECTIVE_FAILED"
    assert "gpu01" not in json.dumps([wrong_sum, wrong_values, healthy, alone])
    assert "29500" not in json.dumps([wrong_sum, wrong_values, healthy, alone])


# The collective's outcome and the ranks' accounts of a healthy two-rank job; each row below
# changes ONE thing of it (issue 47: one cause per row), and names the job's error it gives.
_PASSED_OUTCOME = {"backend": "gloo", "status": "passed", "expected": 3, "observed": 3,
                   "duration_ms": 1.0, "gathered": True, "store": "joined"}
JOB_ERRORS = [
    ("healthy", {}, [], None),
    ("store refused", {"store": "refused", "status": "failed", "gathered": False}, None,
     "error.collective.store_refused"),
    ("another job's store", {"store": "foreign", "status": "failed", "gathered": False}, None,
     "error.collective.store_foreign"),
    ("a rank claimed twice", {"duplicated_ranks": [1]}, [], "error.collective.duplicated_ranks"),
    ("world sizes disagree", {"world_sizes": [2, 3], "status": "skipped"}, [],
     "error.collective.world_sizes"),
    ("a rank missing", {}, [_entry(0)], "error.collective.missing_ranks_slurm"),
    ("a rank's check failed", {"status": "skipped"},
     [_entry(0), _entry(1, kind="device_unavailable", stage="device", type="RuntimeError")],
     "error.collective.failed_ranks"),
    ("a wrong sum", {"observed": 4}, [_entry(0, observed=4), _entry(1, observed=4)],
     "error.collective.wrong_sum"),
    ("the collective timed out", {"status": "timeout", "observed": None},
     [_entry(0, collective="timeout"), _entry(1, collective="timeout")],
     "error.collective.status"),
    # Passed, the right sum, but no rank's account came back: never a pass.
    ("passed, nothing gathered", {"gathered": False}, None, "error.collective.not_gathered"),
    ("a rank's collective failed", {}, [_entry(0), _entry(1, collective="timeout")],
     "error.collective.failed_ranks"),
]


@pytest.mark.parametrize(("outcome", "ranks", "key"),
                         [row[1:] for row in JOB_ERRORS], ids=[row[0] for row in JOB_ERRORS])
def test_each_cause_of_a_failed_job_alone_gives_its_error(outcome: dict, ranks: list | None,
                                                          key: str | None) -> None:
    accounts = [_entry(0), _entry(1)] if ranks == [] else ranks or []
    verdict = apply(dict(PASSED), LAUNCH, _state({**_PASSED_OUTCOME, **outcome}, accounts))
    assert (verdict["error"] or {}).get("message_key") == key
    assert verdict["code"] == ("CPU_CHECK_PASSED" if key is None else "COLLECTIVE_FAILED")


def test_the_stores_address_and_port_never_reach_a_message() -> None:
    """A c10d line quoted in a message (a rank's stderr) names the store's place: hidden, as
    a variable's value too short for the redaction's own rule would not be (issue 45)."""
    from kernodeck_diagnostic.api import _store_place
    from kernodeck_diagnostic.report.redact import Redactor

    launch = detect({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1",
                     "MASTER_ADDR": "gpu-node-7", "MASTER_PORT": "29517"})
    line = ("[W1206 socket.cpp:767] [c10d] The client socket has failed to connect to "
            "[gpu-node-7]:29517 (errno: 111 - Connection refused); port 29517 refused")
    hidden = Redactor.for_this_machine(environ={}, secrets=_store_place(launch)).text(line)
    assert "29517" not in hidden, hidden
    assert "gpu-node-7" not in hidden, hidden
    assert "Connection refused" in hidden
    assert _store_place(None) == []


def test_a_wrong_sum_is_never_shown_as_a_passed_collective() -> None:
    from kernodeck_diagnostic.i18n import ENGLISH
    from kernodeck_diagnostic.report.render import _distributed

    for observed, shown in ((4, "collective summed wrong: 4 (expected 3)"),
                            (3, "collective passed: sum 3 (expected 3)")):
        verdict = apply(dict(PASSED), LAUNCH, _state(
            {**_PASSED_OUTCOME, "observed": observed},
            [_entry(0, observed=observed), _entry(1, observed=observed)]))
        (_, line), *_ = _distributed(verdict["distributed"], ENGLISH)
        assert shown in line
        assert ("passed" in line) is (observed == 3), line


def test_a_world_the_launcher_did_not_start_fails_the_job() -> None:
    """torchrun's variables exported into an srun step of two tasks: two "rank 0 of 1" passed
    (issue 45). Slurm's own count of the step's tasks is kept, and differs from the world."""
    environ = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "h",
               "MASTER_PORT": "29500", "SLURM_PROCID": "1", "SLURM_NTASKS": "2",
               "SLURM_LOCALID": "1", "SLURM_NODEID": "0", "SLURM_STEP_NUM_TASKS": "2"}
    launch = detect(environ)
    assert (launch.launcher, launch.world_size, launch.launcher_tasks) == ("torchrun", 1, 2)
    # torchrun running under srun sets its run id: its ranks are its own, no count kept.
    assert detect({**environ, "TORCHELASTIC_RUN_ID": "r"}).launcher_tasks is None
    alone = apply(dict(PASSED), launch, _state({**_PASSED_OUTCOME, "expected": 1,
                                                "observed": 1}, [_entry(0, observed=1)]))
    assert alone["error"]["message_key"] == "error.collective.launcher_tasks"
    assert alone["error"]["message"].startswith("the launcher started 2 task(s) but the ranks "
                                                "formed a world of 1")
    # The same task where the counts agree: its one-rank job passes.
    agree = detect({**environ, "SLURM_STEP_NUM_TASKS": "1"})
    assert apply(dict(PASSED), agree, _state({**_PASSED_OUTCOME, "expected": 1, "observed": 1},
                                             [_entry(0, observed=1)]))["error"] is None


def test_the_distributed_findings_fire_on_their_facts_only() -> None:
    for finding_id, case in DISTRIBUTED_FIRES.items():
        assert_valid_report_part(case)
        assert finding_id in [found["id"] for found in derive(case)], finding_id
    for case in DISTRIBUTED_QUIET:
        assert set(DISTRIBUTED_FIRES).isdisjoint(found["id"] for found in derive(case))


def assert_valid_report_part(case: dict) -> None:
    """The fixture's ``distributed`` block is one the schema allows."""
    from kernodeck_diagnostic.report_schema import conforms

    block_schema = schema()["properties"]["distributed"]
    assert conforms(case["distributed"], block_schema)


def test_network_facts_for_real() -> None:
    """This machine's own interfaces, a port really taken, and the limit really set."""
    present = interfaces()
    assert "lo" in (present or [])
    assert socket_interfaces({"NCCL_SOCKET_IFNAME": "=lo"}, present) == {
        "NCCL_SOCKET_IFNAME": "found"}
    assert socket_interfaces({"NCCL_SOCKET_IFNAME": "zq-absent0,zq-absent1",
                              "GLOO_SOCKET_IFNAME": "^docker"}, present) == {
        "NCCL_SOCKET_IFNAME": "missing", "GLOO_SOCKET_IFNAME": "excluding"}
    assert socket_interfaces({"NCCL_SOCKET_IFNAME": "=l"}, present) == {
        "NCCL_SOCKET_IFNAME": "missing"}  # "=" is an exact name, not a prefix
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        assert port_in_use(held.getsockname()[1]) is True
    assert port_in_use(free_port()) is False
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    assert memlock_limit_bytes() == (None if soft == resource.RLIM_INFINITY else soft)
    assert isinstance(rdma_devices(), int)


@pytest.mark.slow
def test_a_taken_store_port_and_a_missing_interface_are_named_by_the_check(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    """Rank 0 of a job whose store port another process holds, NCCL_SOCKET_IFNAME naming no
    interface of this machine: the report's block and findings say both, for real."""
    with socket.socket() as held:
        held.bind(("", 0))
        held.listen()
        port = held.getsockname()[1]
        env = rank_env({"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "GROUP_RANK": "0",
                        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                        "NCCL_SOCKET_IFNAME": "zq-absent0"})
        completed = subprocess.run(
            [str(cpu_torch_python), "-m", "kernodeck_diagnostic", "--distributed", "--device",
             "cpu", "--timeout", "10", "--output", str(tmp_path / "report.json")],
            env=env, capture_output=True, text=True, timeout=120, check=False)
    verdict = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert_valid_report(verdict)
    assert verdict["distributed"]["port_in_use"] is True
    assert verdict["distributed"]["socket_interfaces"] == {"NCCL_SOCKET_IFNAME": "missing"}
    found = {finding["id"] for finding in verdict["findings"]}
    assert {"MASTER_PORT_IN_USE", "NCCL_SOCKET_IFNAME_MISSING"} <= found
    assert (verdict["code"], completed.returncode) == ("COLLECTIVE_FAILED", 13)
    assert "zq-absent0" not in json.dumps(verdict) + completed.stdout


# A rank's next line, each row ONE code and its error's key: the job's own advice where it has
# one, its code's otherwise.
NEXT_LINES = [
    ("store refused", "COLLECTIVE_FAILED", "error.collective.store_refused",
     "next.collective.store"),
    ("collective failed, no advice of its own", "COLLECTIVE_FAILED",
     "error.collective.wrong_sum", "code.COLLECTIVE_FAILED.next_action"),
    ("the launcher's time limit", "TIMEOUT", "error.launcher_stop.time_limit",
     "next.launcher_stopped"),
    ("cancelled", "TIMEOUT", "error.launcher_stop.cancelled", "next.launcher_stopped"),
    ("the launcher's SIGTERM", "TIMEOUT", "error.launcher_stop.sigterm", "next.launcher_stopped"),
    ("this rank's own time limit", "TIMEOUT", None, "code.TIMEOUT.next_action"),
    ("a store key on a time limit", "TIMEOUT", "error.collective.store_refused",
     "code.TIMEOUT.next_action"),
    ("passed", "CPU_CHECK_PASSED", None, "code.CPU_CHECK_PASSED.next_action"),
]


@pytest.mark.parametrize(("code", "key", "next_key"), [row[1:] for row in NEXT_LINES],
                         ids=[row[0] for row in NEXT_LINES])
def test_a_ranks_next_line_is_its_jobs_own_or_its_codes(code: str, key: str | None,
                                                        next_key: str) -> None:
    from kernodeck_diagnostic.report.distributed import next_action_key

    error = None if key is None else {"stage": "collective", "message_key": key}
    assert next_action_key({"code": code, "error": error}) == next_key


# The next line of a rank's report as build() writes it, each row ONE cause on a rank whose own
# check passed: the job's own advice where its error has one, its code's otherwise.
BUILT_NEXT_LINES = [
    ("healthy job", {}, None, "code.CPU_CHECK_PASSED.next_action"),
    ("store refused", {"store": "refused", "status": "failed", "gathered": False},
     "error.collective.store_refused", "next.collective.store"),
    ("a wrong sum", {"observed": 4}, "error.collective.wrong_sum",
     "code.COLLECTIVE_FAILED.next_action"),
]


@pytest.mark.parametrize(("outcome", "key", "next_key"), [row[1:] for row in BUILT_NEXT_LINES],
                         ids=[row[0] for row in BUILT_NEXT_LINES])
def test_a_built_ranks_next_line_is_its_jobs_own_or_its_codes(outcome: dict, key: str | None,
                                                              next_key: str) -> None:
    from kernodeck_diagnostic.i18n import ENGLISH
    from kernodeck_diagnostic.report.build import Request, build
    from kernodeck_diagnostic.report.distributed import RankPlace
    from kernodeck_diagnostic.report.redact import Redactor
    from kernodeck_diagnostic.supervision.supervisor import WorkerRun

    collective = {**_PASSED_OUTCOME, **outcome}
    state = _state(collective, [_entry(0, observed=collective["observed"]),
                                _entry(1, observed=collective["observed"])])
    state.stage, state.result, state.final = "collective", dict(RIGHT), True
    report = build(Request("cpu", 0, 30, False), WorkerRun(state, "finished", 0, 0.5), None,
                   Redactor(), place=RankPlace(LAUNCH)).report
    assert (report["error"] or {}).get("message_key") == key
    assert report["next_action"] == ENGLISH(next_key)
