"""What the trial's adapters add to an epoch of 1 ms batches, each against the same epoch without
them, in the same run (issue 41: at most 3 %).

Run with an environment where the frameworks are installed (``tests/envs.py``'s
``torch-cpu-frameworks``) and the tool importable; it prints one line, ``KD-BENCH-ADAPTERS
{json}``, on stderr:

- Lightning: ``Trainer.fit`` over ``BATCHES`` batches whose ``training_step`` computes a small
  linear model's loss and then spins for 1 ms of the thread's CPU time (the work of a real
  step), three ways alternated round by round (their order reversed every other round): bare,
  with an empty ``pl.Callback()`` (what Lightning's own dispatch to any callback costs: the
  anchor, a floor no callback goes under) and with ``KernodeckCallback``. Each variant's ratio
  to another is the median of the rounds' paired ratios, in the main thread's CPU time
  (``cpu_ratio``: what the adapter adds, whatever else the machine runs) and in wall-clock time
  (``ratio``: meaningful on a quiet machine only); ``adapter_vs_empty`` is the adapter's part
  above Lightning's dispatch, the part this package controls; ``*_us_per_batch`` the medians'
  difference per batch (the attempt's start and end included: a fixed cost of about 15 ms);
- Accelerate: the same step in the program's own loop (``accelerator.backward``, the optimizer),
  inside ``trial_for(...)`` with a pass and a stage per step, and the same loop bare.

    python benchmarks/adapters_probe.py BATCHES ROUNDS
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

SPIN_S = 0.001  # each batch's own work: CPU time of this thread


def spin() -> None:
    end = time.thread_time() + SPIN_S
    while time.thread_time() < end:
        pass


def lightning_epoch(batches: int, variant: str, where: str) -> tuple[float, float]:
    import pytorch_lightning as pl
    from torch.utils.data import DataLoader, TensorDataset

    from kernodeck_diagnostic.trial.adapters.lightning import KernodeckCallback

    class Tiny(pl.LightningModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Linear(8, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            spin()
            return loss

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    data = TensorDataset(torch.randn(batches * 4, 8), torch.randn(batches * 4, 1))
    callbacks = {"bare": [], "empty": [pl.Callback()],
                 "adapted": [KernodeckCallback(where)]}[variant]
    trainer = pl.Trainer(max_epochs=1, accelerator="cpu", logger=False,
                         enable_progress_bar=False, enable_model_summary=False,
                         enable_checkpointing=False, num_sanity_val_steps=0,
                         default_root_dir=where, callbacks=callbacks)
    loader = DataLoader(data, batch_size=4)
    start, cpu = time.perf_counter(), time.thread_time()
    trainer.fit(Tiny(), loader)
    return time.perf_counter() - start, time.thread_time() - cpu


def accelerate_epoch(batches: int, variant: str, where: str) -> tuple[float, float]:
    from accelerate import Accelerator

    from kernodeck_diagnostic.trial.adapters.accelerate import trial_for

    accelerator = Accelerator(cpu=True)
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = accelerator.prepare(model, optimizer)
    inputs, targets = torch.randn(4, 8), torch.randn(4, 1)

    def step() -> None:
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        spin()

    start, cpu = time.perf_counter(), time.thread_time()
    if variant == "adapted":
        with trial_for(accelerator, where) as trial:
            for _ in trial.passes(batches):
                with trial.stage("train_step"):
                    step()
    else:
        for _ in range(batches):
            step()
    return time.perf_counter() - start, time.thread_time() - cpu


def paired(run: Callable[[int, str, str], tuple[float, float]], variants: tuple[str, ...],
           batches: int, rounds: int, where: str) -> dict[str, float]:
    """Each variant once a round, the order reversed every other round; the first round warms
    the imports up and is dropped. Medians, and each pair's median of per-round ratios."""
    found: dict[str, list[tuple[float, float]]] = {variant: [] for variant in variants}
    for index in range(rounds + 1):
        order = variants if index % 2 else variants[::-1]
        measured = {variant: run(batches, variant, where) for variant in order}
        if index:
            for variant in variants:
                found[variant].append(measured[variant])
    result: dict[str, float] = {}
    for variant, values in found.items():
        result[f"{variant}_ms"] = statistics.median(wall for wall, _ in values) * 1000
        result[f"{variant}_cpu_ms"] = statistics.median(cpu for _, cpu in values) * 1000
    for above, below in (("adapted", "bare"), ("empty", "bare"), ("adapted", "empty")):
        if above not in found or below not in found:
            continue
        name = "" if (above, below) == ("adapted", "bare") else f"{above}_vs_{below}_"
        pairs = list(zip(found[above], found[below]))
        result[f"{name}ratio"] = statistics.median(a[0] / b[0] for a, b in pairs)
        result[f"{name}cpu_ratio"] = statistics.median(a[1] / b[1] for a, b in pairs)
        result[f"{above}_vs_{below}_cpu_us_per_batch"] = (
            result[f"{above}_cpu_ms"] - result[f"{below}_cpu_ms"]) * 1000 / batches
    return result


def main() -> None:
    batches, rounds = (int(value) for value in sys.argv[1:3])
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    os.environ.setdefault("PL_DISABLE_FORK", "1")
    sys.stderr, stderr = open(os.devnull, "w"), sys.stderr  # noqa: SIM115 - the trials' lines
    try:
        with tempfile.TemporaryDirectory() as where:
            found = {"batches": batches, "rounds": rounds, "spin_ms": SPIN_S * 1000,
                     "lightning": paired(lightning_epoch, ("bare", "empty", "adapted"),
                                         batches, rounds, where),
                     "accelerate": paired(accelerate_epoch, ("bare", "adapted"), batches,
                                          rounds, where)}
    finally:
        sys.stderr.close()
        sys.stderr = stderr
    sys.stderr.write("KD-BENCH-ADAPTERS " + json.dumps(found) + "\n")


if __name__ == "__main__":
    main()
