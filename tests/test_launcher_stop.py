"""--distributed: why the launcher stopped the job (issue 45), from what the launcher tells a task
(facts/launcher.stop_reason), else from what Slurm's controller says of the job to its rank 0
(asked_stop_reason): the job reached its time limit, was cancelled before it, or only "SIGTERM".
The real Slurm's scancel and time limit: test_slurm.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FAKES, SRC, assert_valid_report
from kernodeck_diagnostic.facts.launcher import (
    END_TIME_SLACK_S,
    asks_why_stopped,
    job_stop_reason,
    stop_reason,
)
from test_distributed import free_port, rank_env

END = 1_800_000_000  # a job's end, as SLURM_JOB_END_TIME says it (a UNIX time)
JOB = {"SLURM_JOB_ID": "7"}

# One row per cause: the variables a task has, when the SIGTERM came, what the report says.
REASONS = [
    ("torchrun-alone", {}, END, "sigterm"),
    ("slurm-without-end-time", JOB, END, "sigterm"),  # Slurm 22.05 sets none
    ("end-time-not-a-number", {**JOB, "SLURM_JOB_END_TIME": "soon"}, END, "sigterm"),
    ("end-time-not-ascii-digits", {**JOB, "SLURM_JOB_END_TIME": "١٨٠٠"}, END, "sigterm"),
    ("end-time-zero", {**JOB, "SLURM_JOB_END_TIME": "0"}, END, "sigterm"),
    ("end-time-without-a-job", {"SLURM_JOB_END_TIME": str(END)}, END, "sigterm"),
    ("before-the-end", {**JOB, "SLURM_JOB_END_TIME": str(END)}, END - 600, "cancelled"),
    ("just-outside-the-clock-slack", {**JOB, "SLURM_JOB_END_TIME": str(END)},
     END - END_TIME_SLACK_S - 1, "cancelled"),
    ("within-the-clock-slack", {**JOB, "SLURM_JOB_END_TIME": str(END)},
     END - END_TIME_SLACK_S + 1, "time_limit"),
    ("at-the-end", {**JOB, "SLURM_JOB_END_TIME": str(END)}, END, "time_limit"),
    ("after-the-end", {**JOB, "SLURM_JOB_END_TIME": str(END)}, END + 45, "time_limit"),
]


@pytest.mark.parametrize(("environ", "at", "why"), [row[1:] for row in REASONS],
                         ids=[row[0] for row in REASONS])
def test_why_the_launcher_stopped_the_job(environ: dict[str, str], at: float, why: str) -> None:
    assert stop_reason(environ, at) == why


# scontrol's line for the job while its controller ends it (the real Slurm 22.05's words), and
# what it makes of the stop; None: the controller is not ending the job, the SIGTERM stays bare.
CONTROLLER = [
    ("time-limit-completing", "JobId=7 JobName=x JobState=COMPLETING Reason=TimeLimit Dep=(null)",
     "time_limit"),
    ("time-limit-state", "JobId=7 JobState=TIMEOUT Reason=None", "time_limit"),
    ("scancel-completing", "JobId=7 JobState=COMPLETING Reason=None Dependency=(null)",
     "cancelled"),
    ("scancel-state", "JobId=7 JobState=CANCELLED Reason=None", "cancelled"),
    ("preempted", "JobId=7 JobState=PREEMPTED Reason=None", "cancelled"),
    ("still-running", "JobId=7 JobState=RUNNING Reason=None", None),
    ("another-word-for-the-reason", "JobId=7 JobState=RUNNING SomeReason=TimeLimit", None),
    ("no-state", "slurm_load_jobs error: Invalid job id specified", None),
]


@pytest.mark.parametrize(("line", "why"), [row[1:] for row in CONTROLLER],
                         ids=[row[0] for row in CONTROLLER])
def test_what_slurms_controller_says_of_a_job_it_ends(line: str, why: str | None) -> None:
    assert job_stop_reason(line) == why


def test_only_the_jobs_rank_0_under_slurm_asks_the_controller() -> None:
    task0 = {**JOB, "SLURM_PROCID": "0"}
    assert asks_why_stopped(task0)
    assert asks_why_stopped({**task0, "RANK": "0"})  # srun starting torchrun: its rank 0
    for other in ({**JOB, "SLURM_PROCID": "1"}, {**task0, "RANK": "3"}, {"SLURM_PROCID": "0"},
                  {}):
        assert not asks_why_stopped(other), other


# What each reason makes of a rank's report: its only rank held in a slow import of torch (the
# fake build: a real import cannot be made slow on purpose) when the launcher's SIGTERM comes.
# SLURM_JOB_END_TIME is set by hand (srun starting torchrun: the job's limit is Slurm's): newer
# Slurm releases set it, not the 22.05 under test_slurm.py.
STOPS = [
    ("time-limit", {**JOB, "SLURM_JOB_END_TIME": str(int(time.time()) - 30)}, "time_limit",
     "the job reached its Slurm time limit during the check"),
    ("cancelled", {**JOB, "SLURM_JOB_END_TIME": str(int(time.time()) + 3600)}, "cancelled",
     "the job was cancelled during the check"),
    ("unknown", {}, "sigterm", "the launcher stopped the job during the check (SIGTERM)"),
]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_rank_stopped_by_its_launcher_says_why_never_the_time_limit_of_the_check(
        tmp_path: Path) -> None:
    started = {}
    for name, extra, _, _ in STOPS:
        folder = tmp_path / name
        folder.mkdir()
        env = rank_env({"PYTHONPATH": os.pathsep.join([str(FAKES), str(SRC)]),
                        "KD_FAKE_TORCH": "cpu_only", "KD_FAKE_TORCH_IMPORT_DELAY": "300",
                        "KD_FAKE_TORCH_MARKER": str(folder / "imported"), "RANK": "0",
                        "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": str(free_port()), **extra})
        started[name] = subprocess.Popen(
            [sys.executable, "-m", "kernodeck_diagnostic", "--distributed", "--device", "cpu",
             "--timeout", "120", "--output", str(folder / "report-{rank}.json")],
            env=env, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    until = time.monotonic() + 60
    while (not all((tmp_path / name / "imported").exists() for name in started)
           and time.monotonic() < until):
        time.sleep(0.1)
    since = time.monotonic()
    for process in started.values():
        process.send_signal(signal.SIGTERM)  # the launcher's, as torchrun or Slurm sends it
    for name, _, why, said in STOPS:
        try:
            stdout, stderr = started[name].communicate(timeout=60)
        finally:
            started[name].kill()
        assert time.monotonic() - since < 30, stderr  # the launcher's hurry, not --timeout
        report = json.loads((tmp_path / name / "report-0.json").read_text(encoding="utf-8"))
        assert_valid_report(report)
        block = report["distributed"]
        assert (block["launcher_stopped"], block["launcher_stop"]) == (True, why), name
        assert (report["code"], report["stage"]) == ("TIMEOUT", "import")
        assert report["error"]["message_key"] == f"error.launcher_stop.{why}"
        assert "120 s" not in report["error"]["message"]
        assert report["next_action"].startswith("Nothing was proven on this node")
        assert said in stdout
        assert "examine the environment" not in stdout
