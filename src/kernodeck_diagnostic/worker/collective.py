"""The collective stage of ``--distributed``: join the job's store, an all-reduce, a barrier, and
every rank's result gathered on rank 0. A companion of the worker (see stages.py).

Every rank whose torch imports runs it, also after its own check failed: it joins the job's
key-value store (``torch.distributed.TCPStore``: torchrun's own store, or one rank 0 serves under
Slurm) and says there how its check ended, so that rank 0 can name it and the others stop waiting
for it. Then, only when every rank has said its check completed, the ranks form the process group
(``gloo`` on the CPU, ``nccl`` on a GPU: RCCL on ROCm) and all-reduce ``rank + 1``; the front
compares the sum with ``n (n + 1) / 2``. Each rank puts its result in the store; rank 0 gathers
them and puts them back as one value, which every rank reads, so every rank's front reaches the
same verdict on the job. Nothing but the store carries them: object collectives need NumPy.

What travels through the store names no host, address or port: the rank, local rank, node index,
the stage reached, the error's kind and type, the computed values, the device and the
collective's status. Messages stay on their own rank (they may name a peer's address).

Every wait is bounded by the worker's own deadline, a little before the front's time limit, in
phases (the shares below of the time left when the stage starts): a rank that never starts, hangs
or dies is waited for until its phase ends, and named by rank 0 as missing.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import runtime, stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    runtime = sys.modules["_kernodeck_worker_runtime"]
    stages = sys.modules["_kernodeck_worker_stages"]

# This stage's events (their statuses, the backends) are protocol.CollectiveStatus and Backend.

# The end of each phase, as a share of the time left when the stage starts.
JOIN_SHARE = 0.45  # the store joined, and every rank's own check heard
COLLECTIVE_SHARE = 0.72  # the group formed, the all-reduce and the barrier done
GATHER_SHARE = 0.86  # rank 0 has every rank's result; the others wait for it until the end
# The worker's own deadline comes this long before the front's limit: its last events written.
END_MARGIN_S = 1.5
POLL_S = 0.05
MAX_RANK_TEXT = 200  # an error type, a module name: short words


def expected_sum(world_size: int) -> int:
    """The all-reduce's sum of ``rank + 1`` over every rank."""
    return world_size * (world_size + 1) // 2


def stage(worker: Any) -> None:
    """The collective stage's body: never raises; its outcome is the ``collective`` event."""
    plan = worker.distributed
    start = time.monotonic()
    left = max(float(plan["deadline"]) - start, 0.5)

    def until(share: float) -> float:
        return start + left * share

    own = own_summary(worker)
    outcome: dict[str, Any] = {"backend": backend(worker), "status": "timeout",
                               "expected": expected_sum(plan["world_size"]), "observed": None,
                               "duration_ms": None, "error_type": None, "gathered": False,
                               "store": None, "world_sizes": None}
    if not resolves(plan["master_addr"], plan["master_port"], until(JOIN_SHARE)):
        outcome.update(status="failed", store="unresolvable")
        worker.events.emit("collective", **outcome)
        return
    try:
        store = bounded(lambda: join_store(worker.torch, plan, until(JOIN_SHARE)),
                        until(JOIN_SHARE))
    except Exception as exc:
        outcome.update(status=_status_of(exc), error_type=type(exc).__name__,
                       store=_unjoined(plan, exc))
        worker.events.emit("collective", **outcome)
        return
    outcome["store"] = "joined"
    try:
        _run(worker, store, own, outcome, until)
    except Exception as exc:  # the store failed under us (rank 0's store gone): said, bounded
        if outcome["status"] == "passed":
            outcome.update(error_type=type(exc).__name__)
        else:
            outcome.update(status=_status_of(exc), error_type=type(exc).__name__)
    worker.events.emit("collective", **outcome)


def _run(worker: Any, store: Any, own: dict[str, Any], outcome: dict[str, Any],
         until: Any) -> None:
    plan = worker.distributed
    rank, world = plan["rank"], plan["world_size"]
    ready = own["kind"] is None and own["product"] is not None
    if not ready:
        store.add("failed", 1)  # before its check key: whoever sees every key sees this too
    record_world_size(store, world)  # before its check key too
    store.set(f"check/{rank}", json.dumps(own))
    keys, end = [f"check/{r}" for r in range(world)], until(JOIN_SHARE)
    while True:  # in slices: ranks that disagree on the world size stop waiting at once
        joined = wait_for(store, keys, min(end, time.monotonic() + 0.25))
        sizes = world_sizes(store)
        if len(joined) == world or len(sizes) > 1 or time.monotonic() >= end:
            break
    if len(sizes) > 1:
        outcome.update(status="skipped", world_sizes=sizes)  # no group the ranks agree on
    elif len(joined) == world and int(store.add("failed", 0)) == 0:
        outcome.update(collective(worker, store, until(COLLECTIVE_SHARE)))
    elif len(joined) == world:
        outcome["status"] = "skipped"  # a rank's own check failed: no group to form
    own.update(collective=outcome["status"], observed=outcome["observed"])
    store.set(f"result/{rank}", json.dumps(own))
    if rank == 0:
        keys = [f"result/{r}" for r in joined]
        reported = wait_for(store, keys, until(GATHER_SHARE))
        ranks = [json.loads(store.get(f"result/{r}")) for r in reported]
        store.set("all", json.dumps(ranks))
    else:
        wait_for(store, ["all"], plan["deadline"], strict=True)
        ranks = json.loads(store.get("all"))
        store.add("done", 1)
    for entry in ranks if isinstance(ranks, list) else []:
        if isinstance(entry, dict):
            worker.events.emit("rank", **{name: entry.get(name) for name in RANK_FIELDS})
    outcome["gathered"] = True
    if rank == 0 and plan.get("serves_store"):
        # The store lives in this process: it stays until every rank that joined has read the
        # results, or until the deadline.
        while (int(store.add("done", 0)) < len(joined) - 1
               and time.monotonic() < plan["deadline"]):
            time.sleep(POLL_S)


# What a rank says of itself in the store: its place and its check, no text that could name a
# host (messages stay on their own rank).
RANK_FIELDS = ("rank", "local_rank", "node", "stage", "kind", "type", "missing_module",
               "device", "product", "loss", "gradient", "collective", "observed",
               "visibility_set")


def own_summary(worker: Any) -> dict[str, Any]:
    """This rank's own check, as the store carries it."""
    plan = worker.distributed
    failure = worker.failure or {}
    result = worker.result or {}
    device = f"cuda:{worker.index}" if worker.device == "gpu" else "cpu"
    return {"rank": plan["rank"], "local_rank": plan["local_rank"], "node": plan["node"],
            "stage": failure.get("stage") or "compute", "kind": failure.get("kind"),
            "type": _short(failure.get("type")),
            "missing_module": _short(failure.get("missing_module")),
            "device": device if worker.failure is None or failure.get("stage") == "compute"
            else None,
            "product": result.get("product"), "loss": result.get("loss"),
            "gradient": result.get("gradient"), "collective": None, "observed": None,
            # A visibility variable set: cuda:0 may then be a different card on each rank.
            "visibility_set": any(name in os.environ for name in runtime.VISIBILITY_VARIABLES)}


def _short(value: Any) -> str | None:
    return None if value is None else str(value)[:MAX_RANK_TEXT]


def backend(worker: Any) -> str:
    """gloo on the CPU; nccl on a GPU (RCCL on ROCm) when the build has it, else gloo."""
    if worker.device != "gpu":
        return "gloo"
    dist = getattr(worker.torch, "distributed", None)
    try:
        return "nccl" if dist is not None and dist.is_nccl_available() else "gloo"
    except Exception:
        return "gloo"


def join_store(torch: Any, plan: dict[str, Any], until: float, serve: bool = True) -> Any:
    """The job's store: torchrun's own (its workers are told so), or else one that rank 0
    serves (unless ``serve`` is False: a second connection), joined by every other rank; our
    keys under a prefix of their own."""
    from datetime import timedelta  # here: the front imports this module for its protocol

    dist = torch.distributed
    if not dist.is_available():
        raise RuntimeError("torch.distributed is not available in this build")
    timeout = timedelta(seconds=max(until - time.monotonic(), 0.1))
    serves = (serve and plan["rank"] == 0
              and os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True")
    if serve:
        plan["serves_store"] = serves
    store = dist.TCPStore(plan["master_addr"], plan["master_port"],
                          plan["world_size"] if serves else None, serves, timeout=timeout,
                          wait_for_workers=False)
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return dist.PrefixStore(f"kernodeck-diagnostic/{restart}/", store)


def record_world_size(store: Any, world: int) -> None:
    """Add this rank's world size to the store's set of them (``sizes``: "2,3"); nothing where
    the store has no ``compare_set`` (an old torch): the disagreement then goes unnamed."""
    if not hasattr(store, "compare_set"):
        return
    current = ""
    for _ in range(100):
        sizes = {int(text) for text in current.split(",") if text.isdigit()} | {world}
        wanted = ",".join(str(size) for size in sorted(sizes))
        if wanted == current:
            return
        found = store.compare_set("sizes", current, wanted)
        current = found.decode() if isinstance(found, bytes) else str(found)
        if current == wanted:
            return


def world_sizes(store: Any) -> list[int]:
    """Every world size the ranks that joined said, smallest first."""
    if not store.check(["sizes"]):
        return []
    return sorted(int(text) for text in store.get("sizes").decode().split(",") if text.isdigit())


def resolves(address: str, port: int, until: float) -> bool:
    """Whether the store's address resolves (a misspelt MASTER_ADDR does not), by ``until``:
    a resolver that does not answer in time is not held against the address."""
    found: dict[str, bool] = {}

    def look_up() -> None:
        try:
            socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
            found["resolved"] = True
        except socket.gaierror as exc:
            found["resolved"] = exc.errno not in (socket.EAI_NONAME, getattr(
                socket, "EAI_NODATA", socket.EAI_NONAME))
        except OSError:
            found["resolved"] = True

    thread = threading.Thread(target=look_up, daemon=True, name="resolve")
    thread.start()
    thread.join(max(min(until, time.monotonic() + 10.0) - time.monotonic(), 0.05))
    return found.get("resolved", True)


def bounded(call: Any, until: float) -> Any:
    """``call()`` in a thread, by ``until``: a store client stuck talking to a program that is
    not a store (the port taken by another) is left behind, a ``TimeoutError`` raised here."""
    found: dict[str, Any] = {}

    def run() -> None:
        try:
            found["value"] = call()
        except BaseException as exc:
            found["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="store")
    thread.start()
    thread.join(max(until - time.monotonic(), 0.05))
    if "error" in found:
        raise found["error"]
    if "value" not in found:
        raise TimeoutError("the store did not answer in time")
    return found["value"]


def _unjoined(plan: dict[str, Any], exc: BaseException) -> str | None:
    """Why the store was not joined: rank 0 could not serve it (``in_use``); otherwise what a
    connection to its address finds now: nothing listening (``refused``), no answer
    (``unreachable``), or a program that accepts but is not the job's store (``silent``)."""
    if plan.get("serves_store"):
        return "in_use" if "in use" in str(exc).lower() else None
    left = max(min(plan["deadline"] - time.monotonic(), 1.0), 0.2)
    try:
        with socket.create_connection((plan["master_addr"], plan["master_port"]), timeout=left):
            return "silent"
    except ConnectionRefusedError:
        return "refused"
    except OSError:
        return "unreachable"


def wait_for(store: Any, keys: list[str], until: float, strict: bool = False) -> list[int]:
    """Wait until every key is set or ``until``; the ranks (the keys' last part) that are set.
    With ``strict``, a timeout raises."""
    from datetime import timedelta

    try:
        store.wait(keys, timedelta(seconds=max(until - time.monotonic(), 0.05)))
    except Exception:
        if strict:
            raise
    return [int(key.rsplit("/", 1)[1]) for key in keys
            if key != "all" and store.check([key])]


def collective(worker: Any, store: Any, until: float) -> dict[str, Any]:
    """Form the process group, all-reduce ``rank + 1`` and pass a barrier, by ``until``.

    In a thread: a peer that never answers leaves it blocked, and the stage goes on without it
    (the worker exits without waiting for it). Its status: passed, failed or timeout. The group
    talks through a connection of its own to the store: one a blocked peer holds busy must not
    hold up this stage's own exchanges.
    """
    found: dict[str, Any] = {"status": "timeout", "observed": None}
    thread = threading.Thread(target=_group, args=(worker, store, until, found), daemon=True,
                              name="collective")
    start = time.monotonic()
    thread.start()
    thread.join(max(until - time.monotonic(), 0.05))
    found["duration_ms"] = round((time.monotonic() - start) * 1000, 1)
    return dict(found)


def _group(worker: Any, store: Any, until: float, found: dict[str, Any]) -> None:
    from datetime import timedelta

    torch = worker.torch
    dist = torch.distributed
    plan = worker.distributed
    name = backend(worker)
    on_gpu = worker.device == "gpu"
    try:
        if on_gpu:
            torch.cuda.set_device(worker.index)
        own = join_store(torch, plan, until, serve=False)
        # The group's own timeout runs to the front's limit, past this phase's end: a rank whose
        # backend gave up first would close its connections, and the peers still waiting would
        # see a failure where they waited for a rank that never came (a timeout). Each rank
        # stops waiting at the phase's end (the thread's join); it exits only once rank 0 has
        # every result, so after every rank's phase has ended.
        dist.init_process_group(name, store=dist.PrefixStore("group/", own),
                                rank=plan["rank"], world_size=plan["world_size"],
                                timeout=timedelta(seconds=max(
                                    plan["deadline"] + END_MARGIN_S - time.monotonic(), 0.1)))
        device = f"cuda:{worker.index}" if on_gpu else "cpu"
        value = torch.tensor([plan["rank"] + 1], dtype=torch.int64, device=device)
        dist.all_reduce(value)
        if on_gpu:
            torch.cuda.synchronize(worker.index)
        observed = int(value.item())
        if name == "nccl":
            dist.barrier(device_ids=[worker.index])
        else:
            dist.barrier()
        found.update(status="passed", observed=observed)
    except Exception as exc:
        if found.get("status") == "timeout":
            found.update(status=_status_of(exc), error_type=type(exc).__name__)


def _status_of(exc: BaseException) -> str:
    """A wait that ran out of time is a timeout; anything else a failure."""
    text = f"{type(exc).__name__} {exc}".lower()
    return "timeout" if "timeout" in text or "timed out" in text else "failed"


def worker_deadline(front_deadline: float) -> float:
    """The stage's own deadline, END_MARGIN_S before the front's limit (both as this process's
    ``time.monotonic()``: see ``protocol.deadline_argument``)."""
    return front_deadline - END_MARGIN_S

