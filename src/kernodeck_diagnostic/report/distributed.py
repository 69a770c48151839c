"""The ``distributed`` block of a ``--distributed`` report, and the job's verdict.

Every rank's front gets the same accounts of every rank from its worker (gathered by rank 0
through the job's store, see worker/collective.py) and classifies each with the check's own rules
(``codes.classify``, the same expected values): each reaches the same verdict on the job, and
rank 0's report is the job's. A rank keeps its own code when its own check failed; otherwise any
rank that failed, is missing (never joined, or never reported), claimed by two processes, a
collective that did not pass, a wrong sum, or a world that is not the one the launcher started
(Slurm's count of its tasks) make the verdict ``COLLECTIVE_FAILED``, naming the ranks.

The block holds no host name, address or port: the job's digest (``facts/launcher.job_digest``,
what ``summarize`` groups a job's reports by), ranks, local ranks, anonymous node indices, codes,
stages, devices and the collective's numbers only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..facts.launcher import Launch, job_digest
from ..i18n import ENGLISH, compose
from ..supervision.events import WorkerState
from ..worker.protocol import EXPECTED
from .codes import CODES, Code, classify
from .shapes import EMPTY, Report

MAX_NAMED = 20  # ranks named in the error's sentence; the block lists them all


def rank_code(device: str, entry: dict[str, Any], expected: int) -> Code:
    """One rank's code, from its own account: its check's error, its values, its collective."""
    if entry.get("kind") is not None:
        return classify(device, entry)
    if any(entry.get(name) != value for name, value in EXPECTED.items()):
        return CODES["CHECK_FAILED"]
    if entry.get("collective") != "passed" or entry.get("observed") != expected:
        return CODES["COLLECTIVE_FAILED"]
    return CODES["GPU_CHECK_PASSED" if device == "gpu" else "CPU_CHECK_PASSED"]


def _rank_stage(code: Code, entry: dict[str, Any]) -> str:
    if entry.get("kind") is not None:
        return str(entry.get("stage") or "interpreter")
    return "compute" if code.name == "CHECK_FAILED" else "collective"


@dataclass(frozen=True)
class RankPlace:
    """``--distributed``: this rank's place in the job (``launch``) and this node's facts
    (``network``, facts/network.py), what the rank's report is built with (``build``). (A job
    itself, its ranks' reports grouped, is ``report.jobs.Job``.)"""

    launch: Launch
    network: dict[str, Any] | None = None


def job_block(device: str, place: RankPlace, state: WorkerState) -> dict[str, Any]:
    """The ``distributed`` block: every rank's account, classified here, and the collective's."""
    launch = place.launch
    outcome = state.collective or {}
    expected = world_sum(launch.world_size)
    status = outcome.get("status") or ("timeout" if state.stage == "collective" else "not_reached")
    gathered = bool(outcome.get("gathered"))
    sizes = outcome.get("world_sizes") or None
    duplicated = outcome.get("duplicated_ranks") or None
    ranks: dict[int, dict[str, Any]] = {}
    for entry in state.ranks:
        number = entry["rank"]
        if number < launch.world_size and number not in ranks:
            code = rank_code(device, entry, expected)
            ranks[number] = {"rank": number, "local_rank": entry.get("local_rank"),
                             "node": entry.get("node"), "code": code.name,
                             "stage": _rank_stage(code, entry), "device": entry.get("device")}
    # Ranks that disagree on the world size: which ranks exist is not known, none is missing.
    missing = (sorted(set(range(launch.world_size)) - set(ranks)) if gathered and not sizes
               else None)
    # Why the stage was not reached: where this rank's own check ended.
    reached = ({"not_reached_at": state.stage or "interpreter"} if status == "not_reached"
               else {})
    return {"launcher": launch.launcher, "job": launch.job or job_digest(launch, {}),
            "rank": launch.rank, "world_size": launch.world_size,
            "launcher_tasks": launch.launcher_tasks, "backend": outcome.get("backend"),
            "collective": {"status": status, "expected": expected,
                           "observed": outcome.get("observed"),
                           "duration_ms": outcome.get("duration_ms"),
                           "store": outcome.get("store"), "world_sizes": sizes,
                           "duplicated_ranks": duplicated, **reached},
            "ranks": [ranks[number] for number in sorted(ranks)], "missing_ranks": missing,
            "shared_devices": shared_devices(state.ranks),
            **{name: (place.network or {}).get(name) for name in NETWORK_FACTS}}


def job_verdict(own: Code, block: dict[str, Any],
                state: WorkerState) -> tuple[Code, dict[str, Any] | None] | None:
    """The verdict at stage ``collective`` when this rank's own check passed: its own code
    (error None) for a healthy job, else ``COLLECTIVE_FAILED`` with the job's error. None when
    its own check failed: that code, stage and error stand."""
    if not own.passed:
        return None
    error = job_error(block, (state.collective or {}).get("error_type"))
    return (own, None) if error is None else (CODES["COLLECTIVE_FAILED"], error)


def apply(report: dict[str, Any], launch: Launch, state: WorkerState,
          network: dict[str, Any] | None = None) -> dict[str, Any]:
    """``report``, a rank's own check built without its job, with the ``distributed`` block and
    the job's verdict (``job_block``, ``job_verdict``: what ``build`` decides before it
    assembles a rank's report); its findings are not derived again."""
    block = job_block(report["request"]["device"], RankPlace(launch, network), state)
    verdict = dict(report)
    decided = job_verdict(CODES[report["code"]], block, state)
    if decided is not None:
        code, error = decided
        verdict["stage"] = "collective"
        if error is not None:
            verdict.update(status="failed", code=code.name, exit_code=code.exit_code,
                           summary=code.summary, next_action=code.next_action, error=error)
    placed: dict[str, Any] = {}
    for key, value in verdict.items():
        if key == "findings":
            placed["distributed"] = block
        placed[key] = value
    return placed


# This node's facts (facts/network.py), as the block holds them.
NETWORK_FACTS = ("port_in_use", "socket_interfaces", "rdma_devices", "memlock_limit_bytes")


def shared_devices(entries: list[dict[str, Any]]) -> list[list[int]]:
    """Groups of ranks that computed on the same GPU: the same node, the same ``cuda:N``, and
    no visibility variable set on any of them (with one set, ``cuda:0`` may be a different card
    on each rank, which nothing here can tell)."""
    groups: dict[tuple[Any, str], list[int]] = {}
    for entry in entries:
        device = entry.get("device")
        if (isinstance(device, str) and device.startswith("cuda:")
                and entry.get("visibility_set") is False):
            groups.setdefault((entry.get("node"), device), []).append(entry["rank"])
    return [sorted(set(ranks)) for ranks in groups.values() if len(set(ranks)) > 1]


def world_sum(world_size: int) -> int:
    """The all-reduce's expected sum of ``rank + 1``: n (n + 1) / 2."""
    return world_size * (world_size + 1) // 2


# The job's error when this rank never joined the store, by what it found there.
STORE_KEYS = {"unresolvable": "error.collective.store_unresolvable",
              "refused": "error.collective.store_refused",
              "unreachable": "error.collective.store_unreachable",
              "silent": "error.collective.store_silent",
              "in_use": "error.collective.store_in_use",
              "foreign": "error.collective.store_foreign"}


# The next line of a job's error whose advice is not the code's (which points at the ranks named).
NEXT_KEYS = {"error.collective.store_unresolvable": "next.collective.store",
             "error.collective.store_refused": "next.collective.store",
             "error.collective.store_unreachable": "next.collective.store",
             "error.collective.store_silent": "next.collective.store",
             "error.collective.store_in_use": "next.collective.store",
             "error.collective.store_foreign": "next.collective.store",
             "error.collective.duplicated_ranks": "next.collective.duplicated_ranks",
             "error.collective.launcher_tasks": "next.collective.launcher_tasks",
             "error.collective.world_sizes": "next.collective.world_sizes",
             "error.collective.missing_ranks_slurm": "next.collective.missing_slurm"}
# The launcher's SIGTERM ended the check before a result (report/build.py): why, where known.
STOPPED_KEYS = ("error.launcher_stop.time_limit", "error.launcher_stop.cancelled",
                "error.launcher_stop.sigterm")


def next_action_key(report: Report) -> str:
    """The catalog key of a report's next line: its code's, unless its job's error has its own."""
    key = (report.get("error") or EMPTY).get("message_key")
    if report.get("code") == "COLLECTIVE_FAILED" and key in NEXT_KEYS:
        return NEXT_KEYS[key]
    if report.get("code") == "TIMEOUT" and key in STOPPED_KEYS:
        return "next.launcher_stopped"  # the launcher's stop, not this node's fault
    return f"code.{report['code']}.next_action"


def job_error(block: dict[str, Any], error_type: str | None) -> dict[str, Any] | None:
    """Why the job is not healthy, in the tool's own words; None when it is."""
    collective = block["collective"]
    failed = [entry for entry in block["ranks"] if not CODES[entry["code"]].passed
              and entry["code"] != "COLLECTIVE_FAILED"]
    values: dict[str, str] = {"status": collective["status"]}
    store = collective.get("store")
    tasks = block.get("launcher_tasks")
    if collective.get("duplicated_ranks"):
        # Before the store's state: a second rank 0 found the port taken by its own job's store.
        key = "error.collective.duplicated_ranks"
        values["ranks"] = _named([str(number) for number in collective["duplicated_ranks"]])
    elif store not in (None, "joined"):
        key = STORE_KEYS[store]
    elif tasks is not None and tasks != block["world_size"]:
        # Whatever the ranks formed, it is not the group the launcher started.
        key = "error.collective.launcher_tasks"
        values.update(tasks=str(tasks), world_size=str(block["world_size"]))
    elif collective.get("world_sizes"):
        key = "error.collective.world_sizes"
        values["sizes"] = ", ".join(map(str, collective["world_sizes"]))
    elif block["missing_ranks"]:
        # Under Slurm, srun waits for a stopped task unless --kill-on-bad-exit: said too.
        key = ("error.collective.missing_ranks_slurm" if block["launcher"] == "slurm"
               else "error.collective.missing_ranks")
        values["ranks"] = _named([str(number) for number in block["missing_ranks"]])
    elif failed:
        key = "error.collective.failed_ranks"
        values["ranks"] = _named([f"{entry['rank']} ({entry['code']})" for entry in failed])
    elif collective["status"] == "passed" and collective["observed"] != collective["expected"]:
        key = "error.collective.wrong_sum"
        values.update(observed=str(collective["observed"]),
                      expected=str(collective["expected"]))
    elif collective["status"] != "passed":
        key = "error.collective.status"
        values.update(backend=str(block["backend"] or "-"), world_size=str(block["world_size"]))
    elif block["missing_ranks"] is None:
        key = "error.collective.not_gathered"
    elif any(entry["code"] == "COLLECTIVE_FAILED" for entry in block["ranks"]):
        key = "error.collective.failed_ranks"
        values["ranks"] = _named([f"{entry['rank']} (COLLECTIVE_FAILED)"
                                  for entry in block["ranks"]
                                  if entry["code"] == "COLLECTIVE_FAILED"])
    else:
        return None
    return {"stage": "collective", "kind": "collective_failed", "type": error_type,
            "message": compose(key, values, ENGLISH) or key, "message_key": key,
            "message_values": values}


def _named(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f", \u2026 ({len(items)})" if len(items) > MAX_NAMED else "")
