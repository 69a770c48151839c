"""Which launcher started this rank (torchrun or Slurm), read from the variables it sets.

``--distributed`` runs under a launcher only: each rank needs its rank, the number of ranks, its
local rank (its device on a GPU node), its node's index, and where the job's key-value store is
(MASTER_ADDR, MASTER_PORT). The front reads them here and hands them to the worker on its command
line; none of them (an address, a port, a host name) ever reaches a report.

- torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT and GROUP_RANK (the node's
  index among the job's nodes).
- Slurm's ``srun`` sets SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and SLURM_NODEID. MASTER_ADDR
  and MASTER_PORT are used when set; otherwise the address is the first host of the step's node
  list (SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST: ``gpu[03-05,09]`` gives ``gpu03``), where
  task 0 runs with Slurm's default block distribution, and the port is derived from the job and
  step ids (``derived_port``), so that two steps of one job, or two jobs whose ids are near, do
  not meet at one port. Reading the node list needs no ``scontrol``: the compressed form is
  expanded here, for its first host only.

Every rank of one job gets the same ``Launch.job`` (``job_digest``), what ``summarize`` groups
the job's reports by and what the job's keys in the store are prefixed with (a rank of another
job meets none of them): a digest of what identifies the job where the launcher says it (Slurm's
job and step ids; torchrun's run id and restart count, with the store's port, which ranks started
by hand share too), never the values themselves. The store's address is not part of it: nodes
spell it differently (``127.0.0.1``, ``localhost``, a host name) for one store. The digest is a
grouping key, not a secret: values from a small set (a job number, a port) could be found again
by trying them all, so it adds nothing a report's reader could not learn elsewhere.

A task of an ``srun`` step whose ranks are torchrun's variables exported by hand (no torchrun
runs: it would set ``TORCHELASTIC_RUN_ID``) keeps Slurm's own count of the step's tasks
(``Launch.launcher_tasks``): when it differs from the world size, the tasks never formed the
group Slurm started, and the job cannot pass (report/distributed.py).

torchrun's variables win when both are set: ``srun torchrun ...`` starts torchrun once per node,
and the ranks are torchrun's. But a Slurm job whose own variables are all set, with only some of
torchrun's (a batch script that exports ``WORLD_SIZE``), is Slurm's: the stray variables are
ignored, and named in a warning (``Launch.ignored``).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

Launcher = Literal["torchrun", "slurm"]

TORCHRUN_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
SLURM_VARIABLES = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID")
SLURM_NODELISTS = ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST")
# The derived port: in the dynamic range's lower part, below Linux's default ephemeral range
# (32768-60999), so that it rarely meets a port the system handed to a client connection. Each
# job id (modulo PORT_JOBS) has PORT_STEPS ports of its own, one per step (modulo PORT_STEPS):
# two jobs fewer than PORT_JOBS ids apart never share a port, nor do two of a job's first
# PORT_STEPS steps. Where two jobs still meet (ids PORT_JOBS apart on one first host), the
# store's keys carry each job's identity: the second cannot serve, and says whose store it met.
PORT_BASE, PORT_STEPS, PORT_JOBS = 20000, 8, 1500
MAX_WORLD_SIZE = 65536


# Why the launcher's SIGTERM came (``distributed.launcher_stop``), first from what Slurm gives a
# task: SLURM_JOB_END_TIME, the job's end as a UNIX time (set by Slurm releases newer than 22.05;
# Debian 12's 22.05.8 sets none). At or after it, the job reached its time limit; before it, the
# job was cancelled (scancel, srun interrupted, a failed task under --kill-on-bad-exit, a
# preemption). Without it, the job's rank 0 alone asks the controller once, bounded
# (``asked_stop_reason``: one query a job, never one a rank). Otherwise, or under torchrun: only
# that the launcher sent SIGTERM.
StopReason = Literal["time_limit", "cancelled", "sigterm"]
# Slurm signals at its periodic check of the limits, at or after the end; the controller's clock
# and this node's may differ by a few seconds.
END_TIME_SLACK_S = 5.0


def stop_reason(environ: Mapping[str, str], at: float) -> StopReason:
    """Why the SIGTERM received at ``at`` (``time.time()``) came, from the task's variables."""
    end = environ.get("SLURM_JOB_END_TIME", "")
    if not environ.get("SLURM_JOB_ID") or not (end.isascii() and end.isdigit()) or int(end) == 0:
        return "sigterm"
    return "time_limit" if at >= int(end) - END_TIME_SLACK_S else "cancelled"


SCONTROL_TIMEOUT_S = 3.0
SCONTROL_AGAIN_S = 0.3
# The job as the controller says it while it ends it (scontrol's one line): the state, and the
# reason, "TimeLimit" once its time limit ended it (Slurm 22.05: "JobState=COMPLETING
# Reason=TimeLimit"; after scancel "JobState=COMPLETING Reason=None").
_JOB_STATE = re.compile(r"(?:^|\s)JobState=(\S+)")
_JOB_REASON = re.compile(r"(?:^|\s)Reason=(\S+)")
_TIME_LIMIT_STATES = frozenset(("TIMEOUT", "DEADLINE"))
# A job the controller is ending before its time limit: cancelled in this report's words.
_ENDING_STATES = frozenset(("CANCELLED", "COMPLETING", "PREEMPTED"))


def asks_why_stopped(environ: Mapping[str, str]) -> bool:
    """Whether this rank asks the controller why its SIGTERM came: the job's rank 0 under
    Slurm (task 0, and rank 0 of a torchrun it runs). Asked only when the task's variables
    could not tell (``stop_reason`` said "sigterm")."""
    return (bool(environ.get("SLURM_JOB_ID")) and environ.get("SLURM_PROCID") == "0"
            and environ.get("RANK", "0") == "0")


def asked_stop_reason(environ: Mapping[str, str]) -> StopReason | None:
    """Why Slurm's controller is ending this job: ``scontrol show job``, within
    SCONTROL_TIMEOUT_S in all, again every SCONTROL_AGAIN_S while it cannot say (the job's
    first query as Slurm 22.05 signals its time limit comes back empty); None when it never
    can (no scontrol, no answer, a job still running: the SIGTERM was not Slurm's ending of
    the job)."""
    job = environ.get("SLURM_JOB_ID", "")
    if not (job.isascii() and job.isdigit()):
        return None
    from ..children import find_program, run_bounded

    scontrol = find_program("scontrol")
    if scontrol is None:
        return None
    end = time.monotonic() + SCONTROL_TIMEOUT_S
    while True:
        said = run_bounded([scontrol, "--oneliner", "show", "job", job],
                           max(end - time.monotonic(), 0.1))
        found = job_stop_reason(said.stdout) if said.returncode == 0 else None
        if found is not None or time.monotonic() + SCONTROL_AGAIN_S >= end:
            return found
        time.sleep(SCONTROL_AGAIN_S)


def job_stop_reason(text: str) -> StopReason | None:
    """``asked_stop_reason``'s reading of scontrol's line."""
    state, reason = _JOB_STATE.search(text), _JOB_REASON.search(text)
    if state is None:
        return None
    if state.group(1) in _TIME_LIMIT_STATES or (reason and reason.group(1) == "TimeLimit"):
        return "time_limit"
    return "cancelled" if state.group(1) in _ENDING_STATES else None


class LaunchError(ValueError):
    """No launcher's variables, or unusable ones: a usage error, naming what is missing."""

    def __init__(self, key: str, **values: str) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


@dataclass(frozen=True)
class Launch:
    """This rank's place in the job, and where the job's store is (never in a report)."""

    launcher: Launcher
    rank: int
    world_size: int
    local_rank: int
    node: int
    master_addr: str
    master_port: int
    # Names of torchrun's variables set in a Slurm job without the rest of them: not used.
    ignored: tuple[str, ...] = ()
    # The job's identity, the same on each of its ranks (``job_digest``); None: none given.
    job: str | None = None
    # Slurm's count of its step's tasks, where the ranks are torchrun's variables that no
    # torchrun set (exported by hand into an srun step); None otherwise.
    launcher_tasks: int | None = None

    def worker_arguments(self) -> list[str]:
        """The worker's command-line arguments for the collective stage."""
        return ["--launcher", self.launcher, "--rank", str(self.rank),
                "--world-size", str(self.world_size), "--local-rank", str(self.local_rank),
                "--node", str(self.node), "--master-addr", self.master_addr,
                "--master-port", str(self.master_port),
                *(["--job", self.job] if self.job is not None else [])]

    def serves_store(self, environ: Mapping[str, str]) -> bool:
        """Whether this rank serves the job's store itself (rank 0, unless torchrun's own store
        is there: torchrun tells its workers so); see worker/collective.py."""
        return self.rank == 0 and environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True"

    def output_path(self, path: str) -> str | None:
        """Where this rank writes its report for ``--output path``: every rank its own file when
        the path holds ``{rank}``; otherwise rank 0 alone (the job's report), None for the rest."""
        if "{rank}" in path:
            return path.replace("{rank}", str(self.rank))
        return path if self.rank == 0 else None


def detect(environ: Mapping[str, str]) -> Launch:
    """This rank under torchrun or Slurm; ``LaunchError`` naming what is missing otherwise."""
    if any(name in environ for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK")):
        stray = tuple(name for name in TORCHRUN_VARIABLES if environ.get(name))
        if len(stray) < len(TORCHRUN_VARIABLES) and all(
                environ.get(name) for name in SLURM_VARIABLES):
            return _identified(replace(_slurm(environ), ignored=stray), environ)
        return _identified(replace(_torchrun(environ), launcher_tasks=_step_tasks(environ)),
                           environ)
    if any(name in environ for name in SLURM_VARIABLES):
        return _identified(_slurm(environ), environ)
    raise LaunchError("cli.distributed.no_launcher", torchrun=", ".join(TORCHRUN_VARIABLES),
                      slurm=", ".join(SLURM_VARIABLES))


def _torchrun(environ: Mapping[str, str]) -> Launch:
    _require(environ, TORCHRUN_VARIABLES, "torchrun")
    rank, world = _number(environ, "RANK"), _number(environ, "WORLD_SIZE", low=1)
    return _checked(Launch(
        "torchrun", rank, world, _number(environ, "LOCAL_RANK"),
        _number(environ, "GROUP_RANK") if "GROUP_RANK" in environ else 0,
        _address(environ["MASTER_ADDR"]), _number(environ, "MASTER_PORT", low=1, high=65535)))


def _slurm(environ: Mapping[str, str]) -> Launch:
    _require(environ, SLURM_VARIABLES, "slurm")
    address = environ.get("MASTER_ADDR")
    if address is None:
        nodelist = next((environ[name] for name in SLURM_NODELISTS if environ.get(name)), None)
        if nodelist is None:
            raise LaunchError("cli.distributed.missing", launcher="Slurm",
                              names="MASTER_ADDR, " + " / ".join(SLURM_NODELISTS))
        address = first_host(nodelist)
    if "MASTER_PORT" in environ:
        port = _number(environ, "MASTER_PORT", low=1, high=65535)
    else:
        port = derived_port(environ.get("SLURM_JOB_ID") or environ.get("SLURM_JOBID"),
                            environ.get("SLURM_STEP_ID") or environ.get("SLURM_STEPID"))
    return _checked(Launch(
        "slurm", _number(environ, "SLURM_PROCID"), _number(environ, "SLURM_NTASKS", low=1),
        _number(environ, "SLURM_LOCALID"), _number(environ, "SLURM_NODEID"),
        _address(address), port))


def _step_tasks(environ: Mapping[str, str]) -> int | None:
    """Inside an srun step (SLURM_STEP_NUM_TASKS, which srun alone sets) where no torchrun
    runs (it sets TORCHELASTIC_RUN_ID for its workers): the step's number of tasks."""
    text = environ.get("SLURM_STEP_NUM_TASKS", "").strip()
    if environ.get("TORCHELASTIC_RUN_ID") or not text.isdigit() or int(text) < 1:
        return None
    return int(text)


# What tells one job from another, by launcher, after the store's address and port: torchrun's
# run id (``--rdzv-id``; random under ``--standalone``) and its restart count (a restarted group
# is another run of the job, with reports of its own); Slurm's job and step ids, which name the
# job by themselves (the port is then left out: a task given another port is still of the job,
# and its report says what it could not reach). Never the address: one store has many spellings.
JOB_VARIABLES = {"torchrun": (("TORCHELASTIC_RUN_ID",), ("TORCHELASTIC_RESTART_COUNT",)),
                 "slurm": (("SLURM_JOB_ID", "SLURM_JOBID"), ("SLURM_STEP_ID", "SLURM_STEPID"))}
JOB_DIGEST_LENGTH = 12  # hex digits: 48 bits, no two jobs of one folder alike


def job_digest(launch: Launch, environ: Mapping[str, str]) -> str:
    """The job's identity: the first hex digits of a SHA-256 of the launcher and what names
    its job (``JOB_VARIABLES``, each the first of its names set); the store's port too, unless
    Slurm's job id is set."""
    values = [next((environ[name].strip() for name in names if environ.get(name)), "")
              for names in JOB_VARIABLES[launch.launcher]]
    parts = [launch.launcher, *values]
    if launch.launcher == "torchrun" or not values[0]:
        parts += [str(launch.master_port)]
    text = "\0".join(["kernodeck-diagnostic job", *parts])
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:JOB_DIGEST_LENGTH]


def _identified(launch: Launch, environ: Mapping[str, str]) -> Launch:
    return replace(launch, job=job_digest(launch, environ))


def derived_port(job_id: str | None, step_id: str | None) -> int:
    """The store's port when Slurm sets none: from the job and step ids, the same on every task
    of the step (PORT_BASE + (job mod PORT_JOBS) * PORT_STEPS + step mod PORT_STEPS)."""
    job = int(job_id) if job_id and job_id.isdigit() else 0
    step = int(step_id) if step_id and step_id.isdigit() else 0
    return PORT_BASE + (job % PORT_JOBS) * PORT_STEPS + step % PORT_STEPS


_RANGE = re.compile(r"\[([^\]]*)\]")


def first_host(nodelist: str) -> str:
    """The first host of a Slurm host list: ``gpu[03-05,09],cpu01`` gives ``gpu03``.

    Only the first entry's first range is expanded (zero padding kept), which is all the store
    needs; no ``scontrol`` call.
    """
    depth, end = 0, len(nodelist)
    for position, char in enumerate(nodelist):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            end = position
            break
    first = nodelist[:end].strip()
    found = _RANGE.search(first)
    if found is None:
        return first
    start = found.group(1).split(",")[0].split("-")[0].strip()
    rest = first[found.end():]
    return first[:found.start()] + start + (first_host(rest) if rest else "")


def _require(environ: Mapping[str, str], names: tuple[str, ...], launcher: str) -> None:
    missing = [name for name in names if not environ.get(name)]
    if missing:
        raise LaunchError("cli.distributed.missing",
                          launcher="torchrun" if launcher == "torchrun" else "Slurm",
                          names=", ".join(missing))


def _number(environ: Mapping[str, str], name: str, low: int = 0,
            high: int = MAX_WORLD_SIZE) -> int:
    text = environ.get(name, "").strip()
    if not text.isdigit() or not low <= int(text) <= high:
        # The value itself is not repeated: it is a variable's value (never shown).
        raise LaunchError("cli.distributed.invalid", name=name)
    return int(text)


def _address(text: str) -> str:
    address = text.strip()
    if not address or any(char.isspace() for char in address):
        raise LaunchError("cli.distributed.invalid", name="MASTER_ADDR")
    return address


def _checked(launch: Launch) -> Launch:
    if launch.rank >= launch.world_size:
        raise LaunchError("cli.distributed.rank_range", rank=str(launch.rank),
                          world_size=str(launch.world_size))
    return launch
