"""``summarize`` sees the job: the reports of one ``--distributed`` job grouped by its identity
(``distributed.job``), the job's verdict first, each rank's verdict, the ranks that never
reported. Reports come from real jobs: torchrun and ranks started by hand (the real CPU build of
torch, gloo), one rank killed, a launcher's SIGTERM, and a real Slurm's ``srun``.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Result, assert_valid_report, run_tool
from distributed_fixtures import distributed
from kernodeck_diagnostic.facts.launcher import JOB_DIGEST_LENGTH, detect
from kernodeck_diagnostic.report.jobs import jobs, member_of
from kernodeck_diagnostic.report.markup import escape
from kernodeck_diagnostic.report.render import markdown, text
from kernodeck_diagnostic.report.summary import RANK
from test_distributed import free_port, rank_env

SHORT_S = 15  # each rank's time limit: the jobs here end well before it, or at it


def summarize(pyz: Path, *args: str | Path) -> Result:
    return run_tool(sys.executable, pyz, ["summarize", *map(str, args)])


def summarized_jobs(pyz: Path, *paths: Path) -> tuple[int, list[dict[str, Any]]]:
    result = summarize(pyz, *paths, "--format", "json")
    return result.returncode, json.loads(result.stdout).get("jobs", [])


def rank(python: Path, folder: Path, *, number: int, world: int, port: int,
         output: str = "report-{rank}.json") -> subprocess.Popen[str]:
    """One rank started by hand with torchrun's variables, in a process group of its own (to
    be killed whole: its worker, in a session of its own, ends with it, by its watch)."""
    env = rank_env({"RANK": str(number), "WORLD_SIZE": str(world), "LOCAL_RANK": str(number),
                    "GROUP_RANK": "0", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    return subprocess.Popen(
        [str(python), "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu",
         "--timeout", str(SHORT_S), "--output", str(folder / output)],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL, start_new_session=True)


def torchrun(python: Path, folder: Path, ranks: int, output: str) -> None:
    completed = subprocess.run(
        [str(python), "-m", "torch.distributed.run", "--nproc-per-node", str(ranks),
         "--master-addr", "127.0.0.1", "--master-port", str(free_port()), "-m",
         "kernodeck_diagnostic", "--distributed", "--device", "cpu", "--timeout", str(SHORT_S),
         "--output", output], cwd=folder, env=rank_env(), capture_output=True, text=True,
        timeout=150, check=False)
    assert completed.returncode == 0, completed.stderr


def read(path: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert_valid_report(report)
    return report


@pytest.mark.slow
def test_torchrun_jobs_are_grouped_each_rank_named_with_its_verdict(
        pyz: Path, cpu_torch_python: Path, tmp_path: Path) -> None:
    every, only_rank_0 = tmp_path / "every-rank", tmp_path / "rank-0-only"
    every.mkdir()
    only_rank_0.mkdir()
    torchrun(cpu_torch_python, every, 3, "r-{rank}.json")  # each rank its own report
    torchrun(cpu_torch_python, only_rank_0, 2, "job.json")  # rank 0's, the job's, alone
    digests = {read(path)["distributed"]["job"] for path in every.glob("*.json")}
    assert len(digests) == 1
    assert re.fullmatch(r"[0-9a-f]{12}", next(iter(digests)))

    status, found = summarized_jobs(pyz, tmp_path)
    assert status == 0
    assert [(job["launcher"], job["world_size"], job["status"], job["code"],
             job["never_reported"]) for job in found] == [
        ("torchrun", 3, "passed", "CPU_CHECK_PASSED", []),  # every-rank/ is read first
        ("torchrun", 2, "passed", "CPU_CHECK_PASSED", [])]
    assert [(entry["rank"], entry["file"]) for entry in found[0]["ranks"]] == [
        (number, f"every-rank/r-{number}.json") for number in range(3)]
    assert [(entry["rank"], entry["file"], entry["from"]) for entry in found[1]["ranks"]] == [
        (0, "rank-0-only/job.json", "own"), (1, None, "rank_0")]

    # Rank 0's report not among the files: no evidence of rank 0, so no pass.
    status, found = summarized_jobs(pyz, every / "r-1.json", every / "r-2.json")
    assert status == 22
    assert [(job["status"], job["never_reported"]) for job in found] == [("incomplete", [0])]
    lines = summarize(pyz, every / "r-2.json", every / "r-1.json").stdout.splitlines()
    assert "incomplete, CPU_CHECK_PASSED" in lines[1]
    assert lines[2].split() == ["never", "reported:", "rank(s)", "0"]

    # A report of an earlier version, without the job's identity: read, valid, not grouped.
    earlier = read(every / "r-0.json")
    del earlier["distributed"]["job"]
    assert_valid_report(earlier)
    (tmp_path / "earlier.json").write_text(json.dumps(earlier), encoding="utf-8")
    result = summarize(pyz, tmp_path / "earlier.json", "--format", "json")
    assert result.returncode == 0
    assert "jobs" not in json.loads(result.stdout)
    assert summarize(pyz, tmp_path / "earlier.json").stdout.startswith("report ")


@pytest.mark.slow
def test_a_killed_rank_is_named_as_never_reported_and_the_job_first(
        pyz: Path, cpu_torch_python: Path, tmp_path: Path) -> None:
    port = free_port()
    started = {number: rank(cpu_torch_python, tmp_path, number=number, world=3, port=port)
               for number in range(3)}
    # Under way, far from done: the front starts its worker or has started it, while a rank's
    # check, torch's import alone, takes longer (a whole run of 2 ranks: 0.9-1.3 s here).
    time.sleep(0.2)
    os.killpg(started[2].pid, signal.SIGKILL)  # rank 2; its worker's watch ends the worker
    for process in started.values():
        process.communicate(timeout=90)
    assert sorted(path.name for path in tmp_path.glob("*.json")) == [
        "report-0.json", "report-1.json"]

    result = summarize(pyz, tmp_path)
    assert result.returncode == 22
    lines = result.stdout.splitlines()
    # The job's verdict first, then each rank's, the killed one named.
    assert lines[1].strip().startswith("job ")
    assert lines[1].endswith("(torchrun, 3 rank(s)): failed, COLLECTIVE_FAILED")
    assert lines[2].split() == ["never", "reported:", "rank(s)", "2"]
    assert [line.split()[:2] for line in lines[4:7]] == [
        ["0", "COLLECTIVE_FAILED"], ["1", "COLLECTIVE_FAILED"], ["2", "-"]]
    assert lines[6].endswith("never reported")
    # The files' table is still there, after the jobs.
    assert any(line.startswith("report-0.json  COLLECTIVE_FAILED") for line in lines[7:])

    found = json.loads(summarize(pyz, tmp_path, "--format", "json").stdout)["jobs"]
    assert [(job["status"], job["never_reported"]) for job in found] == [("failed", [2])]
    assert found[0]["ranks"][2] == {"rank": 2, "code": None, "stage": None, "node": None,
                                    "file": None, "from": None, "launcher_stopped": False}
    shown = summarize(pyz, tmp_path, "--format", "markdown").stdout
    assert "- job " in shown
    assert "- never reported: rank(s) 2" in shown
    assert "| 2 | `-` | - | - | never reported |" in shown
    assert "| 0 | `COLLECTIVE_FAILED` | collective | 0 | `report-0.json` |" in shown


@pytest.mark.slow
def test_two_runs_of_one_command_stay_two_runs(pyz: Path, cpu_torch_python: Path,
                                               tmp_path: Path) -> None:
    """Ranks started by hand at one port, twice (nothing tells the runs apart: one identity):
    the second run's killed rank 1 is not covered by the first run's pass."""
    port = free_port()
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    for process in [rank(cpu_torch_python, first, number=number, world=2, port=port)
                    for number in (0, 1)]:
        process.communicate(timeout=90)
    time.sleep(1.0)  # the reports' times are in seconds
    started = [rank(cpu_torch_python, second, number=number, world=2, port=port)
               for number in (0, 1)]
    time.sleep(0.2)  # under way, far from done (see the test above)
    os.killpg(started[1].pid, signal.SIGKILL)
    for process in started:
        process.communicate(timeout=90)
    assert read(first / "report-0.json")["distributed"]["job"] == read(
        second / "report-0.json")["distributed"]["job"]

    # The second run's folder named first: the runs are still in the order they ran.
    status, found = summarized_jobs(pyz, second, first)
    assert status == 22
    assert [(job["run"], job["runs"], job["status"], job["never_reported"]) for job in found] \
        == [(1, 2, "passed", []), (2, 2, "failed", [1])]
    assert [entry["file"] for entry in found[0]["ranks"]] == [
        "first/report-0.json", "first/report-1.json"]
    assert ", run 2 of 2 (torchrun, 2 rank(s)): failed, COLLECTIVE_FAILED" in summarize(
        pyz, second, first).stdout


@pytest.mark.slow
def test_the_launcher_stopping_rank_0_is_said_in_its_report_and_in_the_summary(
        pyz: Path, cpu_torch_python: Path, tmp_path: Path) -> None:
    """As torchrun does once another rank failed: SIGTERM to rank 0 (rank 1 never started)."""
    process = rank(cpu_torch_python, tmp_path, number=0, world=2, port=free_port())
    time.sleep(3)  # under way: its worker imports torch or waits for rank 1
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    report = read(tmp_path / "report-0.json")
    assert report["distributed"]["launcher_stopped"] is True
    said = "the launcher stopped the job during the check (SIGTERM): not this rank's failure"
    assert said in text(report)
    assert escape(said) in markdown(report)

    result = summarize(pyz, tmp_path)
    assert "report-0.json (stopped by the launcher)" in result.stdout
    assert "never reported: rank(s) 1" in result.stdout
    shown = summarize(pyz, tmp_path, "--format", "markdown").stdout
    assert "| 0 | `COLLECTIVE_FAILED` | collective | 0 | `report-0.json` (stopped by the " \
        "launcher) |" in shown
    assert json.loads(summarize(pyz, tmp_path, "--format", "json").stdout)["jobs"][0][
        "ranks"][0]["launcher_stopped"] is True


@pytest.mark.slow
def test_srun_jobs_are_grouped_by_their_slurm_job_a_task_that_died_named(
        pyz: Path, cpu_torch_python: Path, tmp_path: Path) -> None:
    from test_slurm import slurm_up

    reason = slurm_up()
    if reason is not None:
        pytest.skip(reason)
    healthy, broken = tmp_path / "healthy", tmp_path / "broken"
    healthy.mkdir()
    broken.mkdir()
    check = (f'"{cpu_torch_python}" -m kernodeck_diagnostic --distributed --device cpu '
             f'--timeout {SHORT_S} --output "$OUT/report-{{rank}}.json"')
    for folder, script in ((healthy, f"exec {check}"),
                           # Task 2 dies before its check starts (a node lost, an OOM kill).
                           (broken, f'[ "$SLURM_PROCID" = 2 ] && kill -9 $$; exec {check}')):
        subprocess.run(["srun", "-O", "-n", "3", "--time", "2", "bash", "-c", script],
                       env=rank_env({"OUT": str(folder)}), cwd=folder, capture_output=True,
                       text=True, timeout=150, check=False)
    status, found = summarized_jobs(pyz, broken, healthy)
    assert status == 22
    assert [(job["launcher"], job["status"], job["code"], job["never_reported"])
            for job in found] == [("slurm", "failed", "COLLECTIVE_FAILED", [2]),
                                  ("slurm", "passed", "CPU_CHECK_PASSED", [])]
    assert found[0]["job"] != found[1]["job"]  # two srun, two Slurm jobs
    assert [entry["from"] for entry in found[0]["ranks"]] == ["own", "own", None]


TORCHRUN_RANK = {"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "node-a",
                 "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "none"}
SLURM_TASK = {"SLURM_PROCID": "1", "SLURM_NTASKS": "3", "SLURM_LOCALID": "1",
              "SLURM_NODEID": "0", "SLURM_JOB_NODELIST": "gpu[03-05]", "SLURM_JOB_ID": "4242",
              "SLURM_STEP_ID": "0"}


def test_every_rank_of_a_job_gets_one_identity_and_no_value_of_it() -> None:
    job = detect(TORCHRUN_RANK).job
    assert job is not None
    assert len(job) == JOB_DIGEST_LENGTH
    # Another rank of the job: the same; another store, run or restart: another job.
    assert detect({**TORCHRUN_RANK, "RANK": "3", "LOCAL_RANK": "0"}).job == job
    for change in ({"MASTER_PORT": "29501"}, {"TORCHELASTIC_RUN_ID": "other"},
                   {"TORCHELASTIC_RESTART_COUNT": "1"}):
        assert detect({**TORCHRUN_RANK, **change}).job != job, change
    # Nodes that spell the store's address differently are still of one job (issue 45: a
    # passing two-node job was split in two).
    for address in ("127.0.0.1", "localhost", "node-b"):
        assert detect({**TORCHRUN_RANK, "MASTER_ADDR": address}).job == job, address
    # Ranks that disagree on the world size are still of one job: the summary says so.
    assert detect({**TORCHRUN_RANK, "WORLD_SIZE": "3"}).job == job
    slurm = detect(SLURM_TASK).job
    assert detect({**SLURM_TASK, "SLURM_PROCID": "2", "MASTER_ADDR": "elsewhere"}).job == slurm
    assert detect({**SLURM_TASK, "SLURM_STEP_ID": "1"}).job != slurm
    old_name = {key: value for key, value in SLURM_TASK.items() if key != "SLURM_JOB_ID"}
    assert detect({**old_name, "SLURM_JOBID": "4242"}).job == slurm
    for digest in (job, slurm):
        assert not {"node", "gpu", "4242", "29500"} & {digest[i:i + 4] for i in range(9)}


def _rank_report(number: int, world: int, code: str = "CPU_CHECK_PASSED",
                 job: str | None = "0123456789ab") -> dict[str, Any]:
    report = copy.deepcopy(distributed(rank=number, world_size=world))
    report["code"] = code
    if job is None:  # a report of an earlier version
        del report["distributed"]["job"]
    else:
        report["distributed"]["job"] = job
    return report


def test_reports_of_earlier_versions_are_not_grouped() -> None:
    assert member_of(_rank_report(0, 2, job=None), "old.json") is None


def test_ranks_that_disagree_on_the_world_size_leave_the_job_incomplete_or_failed() -> None:
    members = [member_of(_rank_report(0, 2), "r-0.json"),
               member_of(_rank_report(1, 3), "r-1.json")]
    grouped = jobs([member for member in members if member is not None], RANK)
    assert [(job.world_size, job.world_sizes, job.status, job.never_reported)
            for job in grouped] == [(3, (2, 3), "incomplete", [2])]
    members.append(member_of(_rank_report(2, 3, "TORCH_MISSING"), "r-2.json"))
    (job,) = jobs([member for member in members if member is not None], RANK)
    assert (job.status, job.code) == ("failed", "TORCH_MISSING")


def _seeing(report: dict[str, Any], *ranks: int) -> dict[str, Any]:
    """Rank 0's report, its accounts of ``ranks`` each passed."""
    entry = report["distributed"]["ranks"][0]
    report["distributed"]["ranks"] = [{**entry, "rank": number} for number in ranks]
    return report


# The job's status by its reports; each row plants ONE cause (issue 47: a test that planted a
# missing rank beside the disagreeing sizes left the sizes' own branch untested).
JOB_STATUSES = [
    ("every rank passed", [_seeing(_rank_report(0, 2), 0, 1), _rank_report(1, 2)], "passed"),
    ("a rank never reported", [_seeing(_rank_report(0, 2), 0)], "incomplete"),
    # Every rank of the larger world has a passing verdict (rank 2 from rank 0's account):
    # only the sizes disagree.
    ("world sizes disagree, all passed",
     [_seeing(_rank_report(0, 2), 0, 1, 2), _rank_report(1, 3)], "incomplete"),
    ("a rank failed",
     [_seeing(_rank_report(0, 2), 0, 1), _rank_report(1, 2, "TORCH_MISSING")], "failed"),
]


@pytest.mark.parametrize(("reports", "status"), [row[1:] for row in JOB_STATUSES],
                         ids=[row[0] for row in JOB_STATUSES])
def test_each_cause_alone_gives_the_jobs_status(reports: list[dict[str, Any]],
                                                status: str) -> None:
    members = [member_of(report, f"r-{n}.json") for n, report in enumerate(reports)]
    (job,) = jobs([member for member in members if member is not None], RANK)
    assert job.status == status
    assert (job.run, job.runs) == (1, 1)  # one run of its identity
    assert (job.world_sizes is not None) == (len({m.world_size for m in members if m}) > 1)


@pytest.mark.parametrize("change", [
    {"job": "\x1b[31mred"}, {"job": 12}, {"world_size": 10**9}, {"rank": 2},
    {"rank": True}, {"world_size": "3"}, {"rank": -1}])
def test_a_report_from_elsewhere_with_an_odd_job_is_not_grouped(change: dict[str, Any]) -> None:
    report = _rank_report(0, 2)
    report["distributed"].update(change)
    assert member_of(report, "odd.json") is None


def test_odd_accounts_of_the_others_are_left_out() -> None:
    report = _rank_report(0, 3)
    report["distributed"]["ranks"] = [
        {"rank": 1, "code": "\x1b[31mPWNED", "stage": "x"}, {"rank": "2", "code": "TIMEOUT"},
        {"rank": 2, "code": "TIMEOUT", "stage": "\x1b[0m", "node": True}, "not an entry"]
    member = member_of(report, "r-0.json")
    assert member is not None
    assert member.seen == ((2, "TIMEOUT", "-", None),)
    (job,) = jobs([member], RANK)
    assert [(entry.rank, entry.code, entry.source) for entry in job.ranks] == [
        (0, "CPU_CHECK_PASSED", "own"), (1, None, None), (2, "TIMEOUT", "rank_0")]


@pytest.mark.parametrize("stopped", [True, False, None])
def test_a_rank_the_launcher_stopped_is_said_stopped(stopped: bool | None) -> None:
    report = _rank_report(0, 1, "TIMEOUT")
    report["distributed"]["launcher_stopped"] = stopped
    member = member_of(report, "r-0.json")
    assert member is not None
    (job,) = jobs([member], RANK)
    assert job.ranks[0].stopped is (stopped is True)
