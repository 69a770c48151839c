"""--all-devices: the fixed computation on every visible device, in one worker, one import.

Each device's values go out in a ``device_result`` event as soon as that device is done, so a
device that hangs (the front's time limit then ends the worker) leaves the results of the ones
checked before it; a device that fails is reported and the next one checked. Then, with two
devices or more, each ordered pair whose devices computed: whether the first can reach the
second's memory directly (peer access), and a copy from one to the other whose values go out in
a ``peer_result`` event. The worker sends values, never verdicts: the front compares them.

A companion of the worker (see ``stages``): the standard library only at its top, Python 3.9+.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import protocol, stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    protocol = sys.modules["_kernodeck_worker_protocol"]
    stages = sys.modules["_kernodeck_worker_stages"]


def check_every_device(worker: stages.Worker) -> None:
    """The compute stage of --all-devices, on every device the device stage counted."""
    computed = [index for index in range(worker.visible_count) if check_device(worker, index)]
    for source in computed:
        for target in computed:
            if source != target:
                copy_between(worker, source, target)


def check_device(worker: stages.Worker, index: int) -> bool:
    """The fixed computation on device ``index``; whether it gave values (right or wrong)."""
    emit = worker.events.emit
    reached: list[protocol.Step] = []

    def step(name: protocol.Step) -> None:
        reached.append(name)
        emit("step", stage="compute", step=name, device=index)

    start = time.monotonic()
    outcome: dict[str, Any] = {"product": None, "loss": None, "gradient": None, "error": None}
    try:
        outcome.update(worker.fixed_computation(index, step))
    except stages.ComputeFailure as failure:
        emit("step_failed", stage="compute", step=failure.step, device=index)
        outcome["error"] = {"kind": failure.kind, "step": failure.step,
                            **stages.describe_exception(failure.exc)}
    emit("device_result", index=index, **outcome,
         # The synchronisation returned once the values were being read.
         synchronized="verify" in reached,
         duration_ms=round((time.monotonic() - start) * 1000, 1))
    return outcome["error"] is None


def copy_between(worker: stages.Worker, source: int, target: int) -> None:
    """A tensor copied from device ``source`` to ``target``, read back: the values it holds
    there (the front compares them with protocol.A_VALUES)."""
    torch, accelerator, emit = worker.torch, worker.accelerator, worker.events.emit
    emit("step", stage="compute", step="copy", device=source, peer=target)
    start = time.monotonic()
    outcome: dict[str, Any] = {"copy": None, "error": None}
    try:
        held = torch.tensor(protocol.A_VALUES, dtype=torch.float32,
                            device=accelerator.target(source))
        copied = held.to(accelerator.target(target))
        accelerator.synchronize(target)
        outcome["copy"] = stages.encoded(copied.cpu().tolist())
    except Exception as exc:
        emit("step_failed", stage="compute", step="copy", device=source, peer=target)
        outcome["error"] = {"kind": "out_of_memory" if protocol.is_out_of_memory(torch, exc)
                            else "runtime_error", "step": "copy",
                            **stages.describe_exception(exc)}
    emit("peer_result", source=source, target=target,
         access=accelerator.can_access_peer(source, target), **outcome,
         duration_ms=round((time.monotonic() - start) * 1000, 1))
