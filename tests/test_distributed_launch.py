"""Launch mistakes of --distributed, made for real: a launcher's SIGTERM while the worker is
started, stray torchrun variables in a Slurm job, a store address that does not resolve or
refuses, ranks that disagree on the world size, a store port another program holds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, assert_valid_report
from kernodeck_diagnostic.children import kill_tree, spawn
from kernodeck_diagnostic.facts.launcher import detect
from test_distributed import free_port, rank_env, serving

# The worker's first step, as the front starts it: SIGTERM arrives while it is still blocked.
_CHILD = ("import sys, time; sys.path.insert(0, sys.argv[1]); time.sleep(0.5); "
          "from kernodeck_diagnostic.worker.stages import release_sigterm; release_sigterm(); "
          "print('alive', flush=True); time.sleep(0.3)")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_sigterm_meant_for_the_front_before_the_worker_runs_does_not_kill_it() -> None:
    """Between the fork and its own session the worker is in the front's group, which torchrun
    signals: SIGTERM is blocked across the fork and a pending one discarded by the worker."""
    for hold, alive in ((True, True), (False, False)):
        child = spawn([sys.executable, "-c", _CHILD, str(SRC)], stdout=subprocess.PIPE,
                      stderr=subprocess.DEVNULL, hold_sigterm=hold)
        try:
            child.send_signal(signal.SIGTERM)  # at once: the child is still starting
            out, _ = child.communicate(timeout=30)
        finally:
            kill_tree(child)
        assert (b"alive" in out) is alive, (hold, child.returncode)
    # Afterwards SIGTERM stops it as before (unblocked, the default action).
    child = spawn([sys.executable, "-c", _CHILD.replace("0.3", "30"), str(SRC)],
                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, hold_sigterm=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == b"alive\n"
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == -signal.SIGTERM
    finally:
        kill_tree(child)


SLURM_TASK = {"SLURM_PROCID": "1", "SLURM_NTASKS": "3", "SLURM_LOCALID": "1",
              "SLURM_NODEID": "0", "SLURM_JOB_ID": "77", "SLURM_STEP_ID": "0",
              "SLURM_STEP_NODELIST": "node[01-02]"}


def test_world_size_exported_into_a_slurm_job_is_ignored_with_a_warning() -> None:
    launch = detect({**SLURM_TASK, "WORLD_SIZE": "8"})
    assert (launch.launcher, launch.rank, launch.world_size) == ("slurm", 1, 3)
    assert launch.ignored == ("WORLD_SIZE",)
    # Every torchrun variable set: torchrun's ranks (srun starting torchrun).
    both = detect({**SLURM_TASK, "RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0",
                   "MASTER_ADDR": "h", "MASTER_PORT": "29500"})
    assert (both.launcher, both.ignored) == ("torchrun", ())
    # No Slurm job around it: torchrun's usage error, as before.
    completed = subprocess.run(
        [sys.executable, "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu"],
        env=rank_env({"WORLD_SIZE": "2"}), capture_output=True, text=True, timeout=60,
        check=False)
    assert completed.returncode == 2
    assert "RANK, LOCAL_RANK" in completed.stderr


def _srun(python: Path, tasks: int, folder: Path, env: dict[str, str],
          timeout: int = 20) -> subprocess.CompletedProcess[str]:
    from test_slurm import slurm_up

    reason = slurm_up()
    if reason is not None:
        pytest.skip(reason)
    return subprocess.run(
        ["srun", "-O", "-n", str(tasks), "--time", "2", str(python), "-m",
         "kernodeck_diagnostic", "--distributed", "--device", "cpu", "--timeout", str(timeout),
         "--output", str(folder / "report-{rank}.json")],
        env=env, cwd=folder, capture_output=True, text=True, timeout=150, check=False)


@pytest.mark.slow
def test_world_size_exported_into_a_real_slurm_job_still_passes(cpu_torch_python: Path,
                                                                tmp_path: Path) -> None:
    completed = _srun(cpu_torch_python, 2, tmp_path, rank_env({"WORLD_SIZE": "5"}))
    assert completed.returncode == 0, completed.stderr
    assert "WORLD_SIZE set without the rest of torchrun's variables" in completed.stderr
    verdict = json.loads((tmp_path / "report-0.json").read_text(encoding="utf-8"))
    assert_valid_report(verdict)
    assert (verdict["code"], verdict["distributed"]["world_size"]) == ("CPU_CHECK_PASSED", 2)


SHORT_S = 15  # each case ends well before: kept small on a shared machine


def _rank(python: Path, folder: Path, *, rank: int, world: int, port: int,
          address: str = "127.0.0.1", timeout: int = SHORT_S,
          prefix: list[str] | None = None) -> subprocess.Popen[str]:
    env = rank_env({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
                    "GROUP_RANK": "0", "MASTER_ADDR": address, "MASTER_PORT": str(port)})
    return subprocess.Popen(
        [*(prefix or []), str(python), "-m", "kernodeck_diagnostic", "--distributed", "--device",
         "cpu", "--timeout", str(timeout), "--output", str(folder / "report-{rank}.json")],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL)


def _can_unshare() -> bool:
    """Whether a process may be started in a network namespace of its own (root, Linux)."""
    if shutil.which("unshare") is None or getattr(os, "geteuid", lambda: 1)() != 0:
        return False
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10,
                              check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _ended(started: dict[int, subprocess.Popen[str]], folder: Path
           ) -> tuple[dict[int, dict], dict[int, float]]:
    start, ended, found = time.monotonic(), {}, {}
    for rank, process in started.items():
        process.communicate(timeout=90)
        ended[rank] = time.monotonic() - start
        report = json.loads((folder / f"report-{rank}.json").read_text(encoding="utf-8"))
        assert_valid_report(report)
        found[rank] = report
    return found, ended


@pytest.mark.slow
def test_an_address_that_does_not_resolve_or_refuses_is_said_as_such(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    # Rank 1 alone: rank 0 (the store) is elsewhere, at a name that does not resolve, at a
    # loopback address where nothing listens, at an address that never answers.
    for address, key, store in (("no-such-host.invalid", "store_unresolvable", "unresolvable"),
                                ("127.0.0.2", "store_refused", "refused"),
                                # From a network namespace of its own: no route anywhere.
                                ("192.0.2.77", "store_unreachable", "unreachable")):
        if store == "unreachable" and not _can_unshare():
            continue
        folder = tmp_path / store
        folder.mkdir()
        found, _ = _ended({1: _rank(cpu_torch_python, folder, rank=1, world=2,
                                    port=free_port(), address=address,
                                    prefix=["unshare", "-n"] if store == "unreachable"
                                    else [])}, folder)
        verdict = found[1]
        assert verdict["code"] == "COLLECTIVE_FAILED"
        assert verdict["distributed"]["collective"]["store"] == store
        assert verdict["error"]["message_key"] == f"error.collective.{key}"
        assert verdict["next_action"].startswith("Check MASTER_ADDR and MASTER_PORT")
        assert address not in json.dumps(verdict)


@pytest.mark.slow
def test_ranks_that_disagree_on_the_world_size_are_named_at_once(cpu_torch_python: Path,
                                                                 tmp_path: Path) -> None:
    port = free_port()
    found, ended = _ended({0: _rank(cpu_torch_python, tmp_path, rank=0, world=2, port=port),
                           1: _rank(cpu_torch_python, tmp_path, rank=1, world=3, port=port)},
                          tmp_path)
    for rank in (0, 1):
        block = found[rank]["distributed"]
        assert found[rank]["code"] == "COLLECTIVE_FAILED"
        assert block["collective"]["world_sizes"] == [2, 3]
        assert block["missing_ranks"] is None  # rank 2 exists for rank 1 only: not "missing"
        assert found[rank]["error"]["message_key"] == "error.collective.world_sizes"
    assert all(elapsed < SHORT_S for elapsed in ended.values()), ended


@pytest.mark.slow
def test_a_store_port_another_program_holds_gives_every_rank_one_code(cpu_torch_python: Path,
                                                                       tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("", 0))
        held.listen()
        port = held.getsockname()[1]
        found, ended = _ended({rank: _rank(cpu_torch_python, tmp_path, rank=rank, world=2,
                                           port=port) for rank in (0, 1)}, tmp_path)
    assert [found[rank]["code"] for rank in (0, 1)] == ["COLLECTIVE_FAILED"] * 2
    assert [found[rank]["stage"] for rank in (0, 1)] == ["collective"] * 2
    assert found[0]["distributed"]["collective"]["store"] == "in_use"
    assert found[1]["distributed"]["collective"]["store"] == "silent"
    assert "MASTER_PORT_IN_USE" in {finding["id"] for finding in found[0]["findings"]}
    assert all(elapsed <= SHORT_S + 5 for elapsed in ended.values()), ended


@pytest.mark.slow
def test_a_rank_that_never_reached_the_collective_says_so_and_where_it_stopped(
        notorch_python: Path, tmp_path: Path) -> None:
    found, _ = _ended({1: _rank(notorch_python, tmp_path, rank=1, world=2, port=free_port())},
                      tmp_path)
    collective = found[1]["distributed"]["collective"]
    assert found[1]["code"] == "TORCH_MISSING"
    assert (collective["status"], collective["not_reached_at"]) == ("not_reached", "import")


@pytest.mark.slow
def test_a_missing_task_under_slurm_names_kill_on_bad_exit(cpu_torch_python: Path,
                                                           tmp_path: Path) -> None:
    from test_slurm import slurm_up

    reason = slurm_up()
    if reason is not None:
        pytest.skip(reason)
    # Task 1 ends at once without a check (a rank that crashed before it started).
    script = (f'[ "$SLURM_PROCID" = 1 ] && exit 3; exec "{cpu_torch_python}" -m '
              f'kernodeck_diagnostic --distributed --device cpu --timeout {SHORT_S} '
              f'--output "{tmp_path}/report-{{rank}}.json"')
    completed = subprocess.run(["srun", "-O", "-n", "2", "--time", "2", "bash", "-c", script],
                               env=rank_env(), cwd=tmp_path, capture_output=True, text=True,
                               timeout=150, check=False)
    verdict = json.loads((tmp_path / "report-0.json").read_text(encoding="utf-8"))
    assert_valid_report(verdict)
    assert verdict["distributed"]["missing_ranks"] == [1], completed.stderr
    assert verdict["error"]["message_key"] == "error.collective.missing_ranks_slurm"
    assert "--kill-on-bad-exit=1" in verdict["next_action"]
    assert "--kill-on-bad-exit" in completed.stdout


def _processes(python: Path, started: list[tuple[Path, dict[str, str]]],
               limit_s: int = SHORT_S) -> list[tuple[int, dict[str, Any]]]:
    """Ranks started by hand, each from its own folder (its report-{rank}.json there): the exit
    status and report of each, in the order given."""
    processes = []
    for folder, variables in started:
        folder.mkdir(exist_ok=True)
        processes.append(subprocess.Popen(
            [str(python), "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu",
             "--timeout", str(limit_s), "--output", str(folder / "report-{rank}.json")],
            env=rank_env(variables), text=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL))
        time.sleep(0.2)
    found = []
    for (folder, _), process in zip(started, processes):
        process.communicate(timeout=90)
        (path,) = folder.glob("report-*.json")
        report = json.loads(path.read_text(encoding="utf-8"))
        assert_valid_report(report)
        found.append((process.returncode, report))
    return found


def _by_hand(rank: int, world: int, port: int) -> dict[str, str]:
    return {"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank),
            "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}


@pytest.mark.slow
@pytest.mark.parametrize("claimed", [(0, 1, 1), (0, 0, 1)], ids=["rank-1-twice", "rank-0-twice"])
def test_a_rank_started_twice_fails_the_job_and_is_named(
        cpu_torch_python: Path, tmp_path: Path, claimed: tuple[int, ...]) -> None:
    """Three processes for a world of two (RANK copied between two nodes): rank 0 passed with
    one of the two "rank 1" (issue 45). Each process counts itself in: no process passes, and
    the rank claimed twice is named, never called a port taken by another program."""
    port = free_port()
    # A limit that a loaded machine's torch imports leave room in: every process joins.
    found = _processes(cpu_torch_python, [(tmp_path / str(place), _by_hand(rank, 2, port))
                                          for place, rank in enumerate(claimed)], limit_s=40)
    twice = 1 if claimed.count(1) == 2 else 0
    for status, report in found:
        assert (status, report["code"]) == (13, "COLLECTIVE_FAILED"), report["error"]
        assert report["distributed"]["collective"]["duplicated_ranks"] == [twice]
        assert report["error"]["message_key"] == "error.collective.duplicated_ranks"
        assert report["next_action"].startswith("Give every process its own rank")
        assert str(port) not in json.dumps(report)


def _slurm_task(job: int, task: int, port: int) -> dict[str, str]:
    """A task of an srun step of two, as Slurm's variables say it, with MASTER_PORT exported."""
    return {"SLURM_PROCID": str(task), "SLURM_NTASKS": "2", "SLURM_LOCALID": str(task),
            "SLURM_NODEID": "0", "SLURM_JOB_ID": str(job), "SLURM_STEP_ID": "0",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}


@pytest.mark.slow
def test_a_rank_of_another_job_on_the_port_is_refused_never_counted(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    """Two jobs with one exported MASTER_PORT (issue 45: a job's rank 0 passed with the other
    job's rank standing in). Job 101's rank 0 serves the store; job 102's two tasks meet it:
    its rank 0 cannot serve and finds another job's store there, and says so to its rank 1,
    which joined that store; job 101 then passes with its own rank 1, job 102's never counted."""
    port = free_port()

    def start(job: int, task: int, limit_s: int = 40) -> subprocess.Popen[str]:
        folder = tmp_path / f"job-{job}"
        folder.mkdir(exist_ok=True)
        return subprocess.Popen(
            [str(cpu_torch_python), "-m", "kernodeck_diagnostic", "--distributed", "--device",
             "cpu", "--timeout", str(limit_s), "--output", str(folder / "report-{rank}.json")],
            env=rank_env(_slurm_task(job, task, port)), text=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)

    # Job 101's rank 0 waits for its rank 1 for 45 % of its limit: job 102 comes and goes.
    first = start(101, 0, limit_s=110)
    try:
        assert serving(port, 35), "job 101's rank 0 never served its store"
        others = [start(102, 0), start(102, 1)]
        for process in others:
            process.communicate(timeout=90)
        second = start(101, 1)
        second.communicate(timeout=90)
        first.communicate(timeout=90)
    finally:
        for process in (first, *locals().get("others", []), *([second] if "second" in locals()
                                                             else [])):
            kill_tree(process)
    found = {(job, task): json.loads((tmp_path / f"job-{job}" / f"report-{task}.json")
                                     .read_text(encoding="utf-8"))
             for job in (101, 102) for task in (0, 1)}
    for report in found.values():
        assert_valid_report(report)
    assert [found[101, task]["code"] for task in (0, 1)] == ["CPU_CHECK_PASSED"] * 2, [
        found[101, task]["error"] for task in (0, 1)]
    assert [entry["rank"] for entry in found[101, 0]["distributed"]["ranks"]] == [0, 1]
    for task in (0, 1):
        verdict = found[102, task]
        assert verdict["code"] == "COLLECTIVE_FAILED", verdict["error"]
        assert verdict["distributed"]["collective"]["store"] == "foreign"
        assert verdict["error"]["message_key"] == "error.collective.store_foreign"
        assert str(port) not in json.dumps(verdict)


# torchrun's variables exported into a batch script, for a world of one: every task is "rank 0".
_EXPORTED = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1"}


@pytest.mark.slow
def test_torchrun_variables_exported_into_two_tasks_never_pass(cpu_torch_python: Path,
                                                                tmp_path: Path) -> None:
    """Two tasks of an srun step (Slurm's variables, as srun sets them) with torchrun's variables
    exported for a world of one (issue 45: two "rank 0 of 1 PASSED", srun exit 0). Neither
    passes: Slurm started two tasks, the world formed is one (or rank 0 is claimed twice)."""
    port = str(free_port())
    found = _processes(cpu_torch_python, [
        (tmp_path / str(task), {**_EXPORTED, "MASTER_PORT": port, "SLURM_PROCID": str(task),
                                "SLURM_NTASKS": "2", "SLURM_LOCALID": str(task),
                                "SLURM_NODEID": "0", "SLURM_JOB_ID": "88",
                                "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "2"})
        for task in (0, 1)])
    for status, report in found:
        assert (status, report["code"]) == (13, "COLLECTIVE_FAILED"), report["error"]
        assert report["distributed"]["launcher_tasks"] == 2
        # Slurm's two tasks formed no group of two; on one node and one port the second
        # "rank 0" is also a rank claimed twice, said first when the first heard of it.
        assert report["error"]["message_key"] in ("error.collective.launcher_tasks",
                                                  "error.collective.duplicated_ranks")


@pytest.mark.slow
def test_torchrun_variables_exported_into_srun_never_pass(cpu_torch_python: Path,
                                                          tmp_path: Path) -> None:
    """The same under a real Slurm: ``srun -n 2`` in a shell that exported torchrun's
    variables; each task writes its own file (both are "rank 0")."""
    from test_slurm import slurm_up

    reason = slurm_up()
    if reason is not None:
        pytest.skip(reason)
    script = (f'exec "{cpu_torch_python}" -m kernodeck_diagnostic --distributed --device cpu '
              f'--timeout {SHORT_S} --output "{tmp_path}/task-$SLURM_PROCID.json"')
    completed = subprocess.run(
        ["srun", "-O", "-n", "2", "--time", "2", "bash", "-c", script],
        env=rank_env({**_EXPORTED, "MASTER_PORT": str(free_port())}), cwd=tmp_path,
        capture_output=True, text=True, timeout=150, check=False)
    assert completed.returncode != 0, completed.stdout
    assert "PASSED" not in completed.stdout
    for task in (0, 1):
        report = json.loads((tmp_path / f"task-{task}.json").read_text(encoding="utf-8"))
        assert_valid_report(report)
        assert report["code"] == "COLLECTIVE_FAILED", report["error"]
        assert report["distributed"]["launcher_tasks"] == 2


@pytest.mark.slow
def test_a_rank_whose_output_names_no_rank_says_it_writes_no_file(notorch_python: Path,
                                                                 tmp_path: Path) -> None:
    """--output report-$SLURM_PROCID.json, expanded by the shell: every task's name is rank 0's
    alone, so rank 1 wrote nothing, silently (issue 45). It says so."""
    env = rank_env({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "GROUP_RANK": "0",
                    "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())})
    completed = subprocess.run(
        [str(notorch_python), "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu",
         "--timeout", str(SHORT_S), "--output", str(tmp_path / "report-1.json")],
        env=env, capture_output=True, text=True, timeout=90, check=False)
    assert list(tmp_path.iterdir()) == []
    assert ("rank 1 writes no file: --output without {rank} names rank 0's report alone"
            in completed.stderr), completed.stderr


@pytest.mark.slow
def test_srun_kill_on_bad_exit_leaves_rank_0_time_to_name_the_failed_task(
        cpu_torch_python: Path, broken_torch_python: Path, tmp_path: Path) -> None:
    """The advice of docs/scale.md, for real: ``srun --kill-on-bad-exit=1``, task 1's torch
    broken. Slurm signals every process of the step once task 1 ends, rank 0's worker included
    (issue 45: WORKER_FAILED, "killed by SIGTERM", task 1 named nowhere, 6 runs in 6). Rank 0
    names task 1, with the longest limit, before Slurm's kill."""
    from test_slurm import slurm_up

    reason = slurm_up()
    if reason is not None:
        pytest.skip(reason)
    script = (f'[ "$SLURM_PROCID" = 1 ] && py="{broken_torch_python}" || '
              f'py="{cpu_torch_python}"; exec "$py" -m kernodeck_diagnostic --distributed '
              f'--device cpu --timeout 120 --output "{tmp_path}/report-{{rank}}.json"')
    start = time.monotonic()
    completed = subprocess.run(
        ["srun", "-O", "-n", "2", "--kill-on-bad-exit=1", "--time", "3", "bash", "-c", script],
        env=rank_env(), cwd=tmp_path, capture_output=True, text=True, timeout=200, check=False)
    took = time.monotonic() - start
    found = {task: json.loads((tmp_path / f"report-{task}.json").read_text(encoding="utf-8"))
             for task in (0, 1)}
    for report in found.values():
        assert_valid_report(report)
    assert found[1]["code"] == "TORCH_IMPORT_FAILED"
    verdict = found[0]
    assert verdict["code"] == "COLLECTIVE_FAILED", (verdict["error"], completed.stderr)
    assert verdict["distributed"]["missing_ranks"] == [1]
    assert verdict["distributed"]["launcher_stopped"] is True
    assert "FAILED COLLECTIVE_FAILED (exit 13)" in completed.stdout
    assert took < 90, took  # not the 120 s limit: the stop cut what was left
