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

One job, each rank counted once: every key is under the job's identity (``facts/launcher``'s
digest: Slurm's job and step ids, torchrun's run id, never an address), so that a rank of another
job on the same port is never counted; and every rank counts itself in (``claims/<rank>``): a
rank claimed twice (``RANK`` copied between two nodes, or a second job without an identity on
the port) is named in the store's set ``duplicated``, and a job with a rank claimed twice cannot
pass. A rank 0 that cannot serve the store because the port is taken looks at what holds it: this
job's rank 0 (a duplicated rank 0), another job's store (``foreign``, said to this job's other
ranks through the key ``foreign``), or another program (``in_use``).

Every wait is bounded by the worker's own deadline, a little before the front's time limit, in
phases (the shares below of the time left when the stage starts): a rank that never starts, hangs
or dies is waited for until its phase ends, and named by rank 0 as missing.

A launcher stops every rank with SIGTERM once one ended with a failure (torchrun; srun with
``--kill-on-bad-exit``, which signals every process of the step, this worker included) and kills
them 30 s later (torchrun; Slurm's default KillWait). That SIGTERM does not end this worker
(``hold_launcher_stop``; the front forwards its own): it cuts what is left to HURRY_S from then,
the phases spread again over that time (every rank hears it at about the same moment), so that
rank 0 still gives the job's verdict, naming the ranks that failed, before the kill.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import protocol, runtime, stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    protocol = sys.modules["_kernodeck_worker_protocol"]
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
SLICE_S = 0.25  # every wait on the store in slices: a launcher's SIGTERM shortens it at once
HURRY_S = protocol.LAUNCHER_HURRY_S  # what is left once the launcher's SIGTERM came
MAX_RANK_TEXT = 200  # an error type, a module name: short words


def expected_sum(world_size: int) -> int:
    """The all-reduce's sum of ``rank + 1`` over every rank."""
    return world_size * (world_size + 1) // 2


def stage(worker: Any) -> None:
    """The collective stage's body: never raises; its outcome is the ``collective`` event."""
    plan = worker.distributed
    start = time.monotonic()

    def until(share: float) -> float:
        # From the stage's start, or from the launcher's SIGTERM (the time left cut then).
        begin = max(start, plan.get("hurried") or start)
        return begin + max(float(plan["deadline"]) - begin, 0.5) * share

    own = own_summary(worker)
    outcome: dict[str, Any] = {"backend": backend(worker), "status": "timeout",
                               "expected": expected_sum(plan["world_size"]), "observed": None,
                               "duration_ms": None, "error_type": None, "gathered": False,
                               "store": None, "world_sizes": None, "duplicated_ranks": None}
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
        if outcome["store"] == "in_use":
            _port_holder(worker, outcome, until(JOIN_SHARE))
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
    if int(store.add(f"claims/{rank}", 1)) > 1:
        # Another process joined as this rank first: this one takes no part (its keys would
        # overwrite the first's); the first's job learns of it through ``duplicated``.
        add_to_set(store, "duplicated", rank)
        outcome.update(status="skipped", duplicated_ranks=[rank])
        return
    ready = own["kind"] is None and own["product"] is not None
    if not ready:
        store.add("failed", 1)  # before its check key: whoever sees every key sees this too
    record_world_size(store, world)  # before its check key too
    store.set(f"check/{rank}", json.dumps(own))
    started = time.monotonic()
    joined, sizes = _hear_every_check(store, world, lambda: until(JOIN_SHARE))
    arrived = time.monotonic()
    if joined is None:  # rank 0 found another job's store on the port
        outcome.update(status="failed", store="foreign")
        return
    if len(sizes) > 1:
        outcome.update(status="skipped", world_sizes=sizes)  # no group the ranks agree on
    elif read_set(store, "duplicated"):
        outcome["status"] = "skipped"  # which of two processes is the rank: no group to form
    elif len(joined) == world and int(store.add("failed", 0)) == 0:
        outcome.update(collective(worker, store, lambda: until(COLLECTIVE_SHARE)))
    elif len(joined) == world:
        outcome["status"] = "skipped"  # a rank's own check failed: no group to form
    own.update(collective=outcome["status"], observed=outcome["observed"])
    store.set(f"result/{rank}", json.dumps(own))
    # A copy started late can only turn a pass into a failure: waited for when the job passed.
    settled = (arrived + min(max(arrived - started, SETTLE_MIN_S), SETTLE_MAX_S)
               if outcome["status"] == "passed" else arrived)
    ranks = _gather(store, plan, joined, settled, lambda: until(GATHER_SHARE))
    for entry in ranks if isinstance(ranks, list) else []:
        if isinstance(entry, dict):
            worker.events.emit("rank", **{name: entry.get(name) for name in RANK_FIELDS})
    say_builds(worker, ranks)
    outcome["gathered"] = True
    if rank == 0 and plan.get("serves_store"):
        # The store lives in this process: it stays until every rank that joined has read the
        # results, or until the deadline.
        while (int(store.add("done", 0)) < len(joined) - 1
               and time.monotonic() < plan["deadline"]):
            time.sleep(POLL_S)
    # Read last: a rank claimed twice while the others formed the group is named too. Another
    # rank reads it before it says it is done: rank 0's store may end as soon as it has.
    outcome["duplicated_ranks"] = read_set(store, "duplicated") or None
    if rank != 0:
        store.add("done", 1)


def _gather(store: Any, plan: dict[str, Any], joined: list[int], settled: float,
            end: Callable[[], float]) -> Any:
    """Every rank's result: rank 0 gathers them by ``end`` (and, ranks started by hand, waits
    until ``settled`` for a process claiming a rank twice) and puts them back as one value;
    the others read it."""
    if plan["rank"] != 0:  # done once it has read what it reads last (``_run``)
        wait_for(store, ["all"], lambda: plan["deadline"], strict=True)
        return json.loads(store.get("all"))
    reported = wait_for(store, [f"result/{r}" for r in joined], end)
    if plan.get("serves_store") and plan["launcher"] == "torchrun":
        settle(store, min(settled, end()))
    ranks = [json.loads(store.get(f"result/{r}")) for r in reported]
    store.set("all", json.dumps(ranks))  # a rank claimed twice is in ``duplicated`` by now
    return ranks


def _hear_every_check(store: Any, world: int,
                      end: Callable[[], float]) -> tuple[list[int] | None, list[int]]:
    """Wait, in slices, until every rank said its check, or the ranks disagree on the world
    size (said at once), or ``end``: the ranks heard and the world sizes said. A rank claimed
    twice does not end the wait: the others are still waited for, to hear it too. None for the
    ranks: rank 0 found another job's store on the port (``foreign``)."""
    keys = [f"check/{r}" for r in range(world)]
    while True:
        joined = wait_for(store, keys, min(end(), time.monotonic() + SLICE_S))
        sizes = world_sizes(store)
        if len(joined) == world or len(sizes) > 1 or time.monotonic() >= end():
            return joined, sizes
        if store.check(["foreign"]):
            return None, sizes


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
            "visibility_set": any(name in os.environ for name in runtime.VISIBILITY_VARIABLES),
            # The rank's torch build: compared across the job (``say_builds``), never an event.
            "torch": _short(getattr(worker.torch, "__version__", None))}


MAX_BUILDS = 5  # builds a warning names, each with at most MAX_BUILD_RANKS of its ranks
MAX_BUILD_RANKS = 20
NOTE_CATEGORY = "kernodeck-diagnostic"  # the tool's own warnings (supervision/events.py)


def say_builds(worker: Any, ranks: Any) -> None:
    """A warning, when the ranks gathered run different torch builds, naming each build and its
    ranks: not a failure (each rank's own check stands), but a job that mixes builds."""
    builds: dict[str, list[int]] = {}
    for entry in ranks if isinstance(ranks, list) else []:
        if (isinstance(entry, dict) and isinstance(entry.get("torch"), str)
                and isinstance(entry.get("rank"), int)):
            builds.setdefault(entry["torch"], []).append(entry["rank"])
    if len(builds) < 2:
        return
    said = []
    for build, numbers in sorted(builds.items(), key=lambda item: min(item[1]))[:MAX_BUILDS]:
        shown = ", ".join(str(number) for number in numbers[:MAX_BUILD_RANKS])
        more = f", \u2026 ({len(numbers)})" if len(numbers) > MAX_BUILD_RANKS else ""
        said.append(f"{build} (rank(s) {shown}{more})")
    more = f"; \u2026 ({len(builds)} builds)" if len(builds) > MAX_BUILDS else ""
    worker.events.emit("warning", stage="collective", category=NOTE_CATEGORY,
                       message="the ranks run different torch builds: " + "; ".join(said) + more)


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
    keys under a prefix of their own, which names the job (``plan["job"]``) and torchrun's
    restart."""
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
    return dist.PrefixStore(job_prefix(plan), store)


def job_prefix(plan: dict[str, Any]) -> str:
    """The prefix of every key of this job (its identity, torchrun's restart): a rank of
    another job meets none of them."""
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    return f"kernodeck-diagnostic/{plan.get('job') or '-'}/{restart}/"


def _port_holder(worker: Any, outcome: dict[str, Any], until: float) -> None:
    """Rank 0 could not serve the store (its port is in use): what holds it, by ``until``. A
    store where this job's rank 0 already counted itself: this process is a second rank 0
    (``duplicated_ranks``); another store: another job's (``foreign``, said to this job's
    ranks, which joined it); nothing that answers as a store: another program (``in_use``)."""
    from datetime import timedelta

    plan = worker.distributed
    try:
        store = bounded(lambda: join_store(worker.torch, plan, min(
            until, time.monotonic() + PROBE_S), serve=False), until)
        with contextlib.suppress(Exception):  # this job's rank 0 counts itself in at once
            store.wait(["claims/0"], timedelta(seconds=max(min(until - time.monotonic(),
                                                                 PROBE_S), 0.05)))
        if int(store.add("claims/0", 0)) > 0:
            store.add("claims/0", 1)
            add_to_set(store, "duplicated", 0)
            outcome.update(status="skipped", store="joined", duplicated_ranks=[0],
                           error_type=None)
        else:
            store.set("foreign", "1")
            outcome.update(status="failed", store="foreign", error_type=None)
    except Exception:  # nothing there answers as a store: another program holds the port
        return


# How long rank 0 tries the taken port as a store's client: a store answers at once.
PROBE_S = 5.0


# Ranks started by hand (torchrun's variables, no torchrun): a process started as a rank already
# counted joins as late as the ranks' own spread. Rank 0 waits as long again as they took to join
# (its own key to the last's), within these bounds, before it gives the job's results: a copy
# that joins by then is counted. Under torchrun and Slurm each rank is the launcher's: no wait.
SETTLE_MIN_S, SETTLE_MAX_S = 2.0, 10.0


def settle(store: Any, until: float) -> None:
    """Wait until ``until``, or until a rank claimed twice is in the store's ``duplicated``."""
    while time.monotonic() < until and not read_set(store, "duplicated"):
        time.sleep(POLL_S)


def record_world_size(store: Any, world: int) -> None:
    """Add this rank's world size to the store's set of them (``sizes``: "2,3")."""
    add_to_set(store, "sizes", world)


def add_to_set(store: Any, key: str, number: int) -> None:
    """Add ``number`` to the store's set under ``key`` ("2,3"); nothing where the store has no
    ``compare_set`` (an old torch): what it would say goes unnamed."""
    if not hasattr(store, "compare_set"):
        return
    current = ""
    for _ in range(100):
        numbers = {int(text) for text in current.split(",") if text.isdigit()} | {number}
        wanted = ",".join(str(value) for value in sorted(numbers))
        if wanted == current:
            return
        found = store.compare_set(key, current, wanted)
        current = found.decode() if isinstance(found, bytes) else str(found)
        if current == wanted:
            return


def read_set(store: Any, key: str) -> list[int]:
    """The numbers of the store's set under ``key``, smallest first; [] when none."""
    if not store.check([key]):
        return []
    return sorted(int(text) for text in store.get(key).decode().split(",") if text.isdigit())


def world_sizes(store: Any) -> list[int]:
    """Every world size the ranks that joined said, smallest first."""
    return read_set(store, "sizes")


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


def wait_for(store: Any, keys: list[str], until: float | Callable[[], float],
             strict: bool = False) -> list[int]:
    """Wait until every key is set or ``until`` (a time, or what gives it: read again after each
    slice); the ranks (the keys' last part) that are set. With ``strict``, a timeout raises."""
    from datetime import timedelta

    end = until if callable(until) else (lambda: until)
    while True:
        try:
            store.wait(keys, timedelta(seconds=max(min(end() - time.monotonic(), SLICE_S),
                                                   0.05)))
            break
        except Exception as exc:
            if _status_of(exc) == "timeout" and time.monotonic() < end():
                continue
            if strict:
                raise
            break
    return [int(key.rsplit("/", 1)[1]) for key in keys
            if key != "all" and store.check([key])]


def collective(worker: Any, store: Any, until: Callable[[], float]) -> dict[str, Any]:
    """Form the process group, all-reduce ``rank + 1`` and pass a barrier, by ``until``.

    In a thread: a peer that never answers leaves it blocked, and the stage goes on without it
    (the worker exits without waiting for it). Its status: passed, failed or timeout. The group
    talks through a connection of its own to the store: one a blocked peer holds busy must not
    hold up this stage's own exchanges.
    """
    found: dict[str, Any] = {"status": "timeout", "observed": None}
    thread = threading.Thread(target=_group, args=(worker, store, until(), found), daemon=True,
                              name="collective")
    start = time.monotonic()
    thread.start()
    while thread.is_alive() and time.monotonic() < until():  # in slices: see SLICE_S
        thread.join(max(min(until() - time.monotonic(), SLICE_S), 0.01))
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


def place(worker: Any, args: Any, deadline: float) -> None:
    """This rank's place in the job, from the worker's arguments (facts/launcher.py's
    ``worker_arguments``), and the launcher's SIGTERM heard from now on. Nothing of the job
    outlives the launcher: this worker is killed when its front ends, even stopped (a rank
    frozen with SIGSTOP, its front then killed by torchrun, its session signalled by no one),
    and its watch, woken then, kills what is left of its group (stages.watch_front)."""
    if sys.platform != "win32":
        protocol.dies_with_its_parent(signal.SIGKILL, os.getppid())
    worker.distributed = {
        "launcher": args.launcher, "rank": args.rank, "world_size": args.world_size,
        "local_rank": args.local_rank, "node": args.node, "master_addr": args.master_addr,
        "master_port": args.master_port, "job": args.job, "deadline": worker_deadline(deadline)}
    hold_launcher_stop(worker.distributed)


def hold_launcher_stop(plan: dict[str, Any]) -> None:
    """From now on SIGTERM (a launcher stopping the job) no longer ends this worker: it cuts the
    time left to HURRY_S (``plan["hurried"]``: when), once. The front stops the worker at its own
    limit whatever happens. Nothing where signals cannot be caught (Windows' SIGTERM, a thread)."""
    if sys.platform == "win32" or threading.current_thread() is not threading.main_thread():
        return

    def hurry(signum: int, frame: Any) -> None:
        if plan.get("hurried") is None:
            now = time.monotonic()
            plan["hurried"] = now
            plan["deadline"] = min(float(plan["deadline"]), now + HURRY_S)

    signal.signal(signal.SIGTERM, hurry)


def worker_deadline(front_deadline: float) -> float:
    """The stage's own deadline, END_MARGIN_S before the front's limit (both as this process's
    ``time.monotonic()``: see ``protocol.deadline_argument``)."""
    return front_deadline - END_MARGIN_S

