"""Accelerate: each process of an ``accelerate launch`` job keeps its own attempt.

    accelerator = Accelerator()
    with trial_for(accelerator, "runs", params={"batch": 8}) as trial:
        ...                                   # the loop, its stages and passes as with Trial

In a job of several processes, the attempt of process N goes to ``<root>/rank-N/<attempt-id>/``
(``KERNODECK_RUN_DIR``, when set, is the root): every process its own folder, named by its rank,
as ``check --distributed`` gives every rank its own report; a single process keeps its attempt
in the root itself, as a plain Trial. The parameters record the rank and the number of processes;
the per-stage table is kept in each folder and printed by the main process. Every loss given to
``accelerator.backward`` is held to contract ``finite_loss``, naming the pass it came in (kept
detached from its graph until it is checked).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal

from ..session import Trial
from .attempt import TrainingAttempt, framework

MINIMUM = "1.0"

framework("accelerate", "accelerate", MINIMUM, "accelerate")


class ProcessTrial:
    """``with trial_for(...) as trial:``: the process's ``Trial``; when it ends, the per-stage
    table is kept in its folder and printed by the main process."""

    def __init__(self, attempt: TrainingAttempt, accelerator: Any = None) -> None:
        self.attempt = attempt
        self.accelerator = accelerator

    def __enter__(self) -> Trial:
        self.attempt.start()
        self._watch_backward()
        return self.attempt.trial

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        if self.accelerator is not None and "backward" in vars(self.accelerator):
            del self.accelerator.backward  # the class's own again
        self.attempt.end(exc)
        return False

    def _watch_backward(self) -> None:
        """``accelerator.backward(loss)`` sees every loss: each is held to ``finite_loss``,
        named by the pass it came in (else by its call's number)."""
        accelerator = self.accelerator
        if accelerator is None or not callable(getattr(accelerator, "backward", None)):
            return
        original = accelerator.backward
        attempt = self.attempt
        calls = [0]

        def backward(loss: Any, *args: Any, **kwargs: Any) -> Any:
            step = attempt.trial.pass_index
            # Kept without its graph: one call into torch (a tensor's ``requires_grad`` asked
            # first would be a second, as dear in a step's cold caches).
            detach = getattr(loss, "detach", None)
            attempt.observe_loss(loss if detach is None else detach(),
                                 calls[0] if step is None else step)
            calls[0] += 1
            return original(loss, *args, **kwargs)

        accelerator.backward = backward


def trial_for(accelerator: Any, root: str | os.PathLike[str] = "runs",
              params: Mapping[str, Any] | None = None) -> ProcessTrial:
    """This process's attempt: its folder under ``<root>/rank-<process index>`` (one process:
    under ``<root>``)."""
    rank = int(accelerator.process_index)
    recorded = {**(params or {}), "rank": rank, "world_size": int(accelerator.num_processes)}
    return ProcessTrial(TrainingAttempt(root, recorded, check_step=False, rank=rank,
                                        world_size=int(accelerator.num_processes)), accelerator)
