"""PyTorch Lightning: ``Trainer(callbacks=[KernodeckCallback("runs", params={...})])``.

The trainer's phases become the trial's stages: ``setup`` (from the callback's ``setup`` to the
start of the fit: the model configured, moved to its device, its optimizers made),
``sanity_check``, ``train_batch`` (each batch a pass: pass 0, the first batch, kept apart),
``validation``, ``save_checkpoint``. An error the trainer meets (``on_exception``) is placed in
the stage that was open, an out-of-memory one classified by phase. The first optimizer step whose
learning rate is not 0 is held to ``expect_training_step``; every batch's loss to contract
``finite_loss`` (checked in batches of steps, never a synchronisation per step): the loss
``training_step`` returned, or, under manual optimization, each loss given to
``manual_backward`` (``on_before_backward``, set for that mode alone).

The Lightning this program imported is used (``lightning.pytorch`` or ``pytorch_lightning``,
whichever is in ``sys.modules``; else ``pytorch_lightning``, else ``lightning``): its
``Trainer`` accepts only its own ``Callback``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from .attempt import FrameworkMissing, TrainingAttempt, framework

MINIMUM = "2.0"
AFTER_BATCH = ("save_checkpoint",)  # ended by a batch's start, when open


def _lightning() -> Any:
    """The Lightning the program imported, else the first installed; its version checked."""
    candidates = [("pytorch_lightning", "pytorch-lightning"), ("lightning.pytorch", "lightning")]
    imported = [pair for pair in candidates if pair[0] in sys.modules]
    refused: list[FrameworkMissing] = []
    for module, distribution in imported or candidates:
        try:
            return framework(module, distribution, MINIMUM, "lightning")
        except FrameworkMissing as missing:
            refused.append(missing)
    raise refused[0]


_pl: Any = _lightning()


class KernodeckCallback(_pl.Callback):  # type: ignore[misc]
    """The attempt of each ``fit``: ``root`` and ``params`` as ``Trial``'s; ``check_step=False``
    leaves the first step unchecked (it copies the trained parameters to host memory).

    Lightning calls each callback's hooks at every batch, a profiler context each, when they are
    callable: the per-batch hooks this callback has no use for are None (Lightning skips them),
    ``on_before_optimizer_step`` is dropped once the first step is judged, and
    ``on_before_backward`` is set only under manual optimization (automatic optimization's
    ``training_step`` returns the loss backpropagated)."""

    on_before_backward = None
    on_after_backward = None
    on_before_zero_grad = None
    on_validation_batch_start = None
    on_validation_batch_end = None
    on_test_batch_start = None
    on_test_batch_end = None
    on_predict_batch_start = None
    on_predict_batch_end = None

    def __init__(self, root: str | os.PathLike[str] = "runs",
                 params: Mapping[str, Any] | None = None, *, check_step: bool = True) -> None:
        super().__init__()
        self.attempt = TrainingAttempt(root, params, check_step=check_step)
        self.stepped = False
        self._loss: Any = None  # manual optimization: the batch's last loss given to backward

    @property
    def folder(self) -> str | None:
        """The attempt folder, once the fit has started."""
        return self.attempt.trial.folder

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage == "fit":
            self.attempt = self.attempt.next_attempt()
            self.stepped = False
            self.__dict__.pop("on_before_optimizer_step", None)  # the class's own again
            self.__dict__.pop("on_before_backward", None)
            self._loss = None
            self.attempt.place(trainer.global_rank, trainer.world_size)
            self.attempt.start()
            self.attempt.open_stage("setup")

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.close_stage("setup")

    def on_sanity_check_start(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.open_stage("sanity_check")

    def on_sanity_check_end(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.close_stage("sanity_check")

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.before_first_step(pl_module, trainer.optimizers)
        if not getattr(pl_module, "automatic_optimization", True):
            # ``training_step`` returns no loss to read (it may return None): each loss given
            # to ``manual_backward`` is, with what ``on_before_backward`` receives.
            self.__dict__["on_before_backward"] = self._before_backward

    def _before_backward(self, trainer: Any, pl_module: Any, loss: Any) -> None:
        """Manual optimization: a loss given to ``manual_backward`` (a batch may give several,
        or none), held to ``finite_loss`` in the batch's step; the batch's last, the one its
        optimizer step's contract judges. Kept detached from its graph."""
        self._loss = loss = loss.detach()
        self.attempt.observe_loss(loss, self.attempt.step)

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.close_stage("save_checkpoint")

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                             batch_idx: int) -> None:
        self.attempt.batch_started(after=AFTER_BATCH)

    def on_before_optimizer_step(self, trainer: Any, pl_module: Any, optimizer: Any) -> None:
        self.stepped = True
        self.attempt.before_optimizer_step([optimizer])

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        # A dict (what Lightning hands) known without the abstract class's check; its loss
        # detached by Lightning ("a detached copy of the closure loss").
        loss = outputs.get("loss") if type(outputs) is dict or isinstance(outputs, Mapping) \
            else outputs
        if self._loss is None:
            self.attempt.batch_ended(loss=loss)
        else:  # manual optimization: the losses given to backward, each observed already
            loss, self._loss = self._loss, None
            self.attempt.batch_ended()
        if self.stepped:  # the first step that updated: with gradient accumulation, not batch 0
            self.attempt.after_first_step(loss, pl_module)
            if not self.attempt.first_step_pending:  # judged, or not to be: no rate to read
                self.__dict__["on_before_optimizer_step"] = None  # Lightning skips it
                self.stepped = False

    def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.close_stage("save_checkpoint")
        if not trainer.sanity_checking:
            self.attempt.open_stage("validation")

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.close_stage("validation")

    def on_save_checkpoint(self, trainer: Any, pl_module: Any,
                           checkpoint: dict[str, Any]) -> None:
        # Called once the checkpoint's content is gathered, before it is written: the stage
        # holds the writing, and ends with the trainer's next event (or the attempt's end).
        if not self.attempt.is_open("save_checkpoint"):
            self.attempt.open_stage("save_checkpoint")

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.close_stage("save_checkpoint")

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self.attempt.close_stage("save_checkpoint")

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        self.attempt.end(exception)

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        if stage == "fit":
            self.attempt.end()
