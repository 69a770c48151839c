"""Hugging Face Transformers: ``Trainer(..., callbacks=[KernodeckTrainerCallback("runs")])``.

The attempt starts with ``trainer.train()`` (``on_train_begin``: the model is on its device, the
optimizer made). Each optimizer step is a pass of its own, stage ``train_step`` (pass 0, the
first step, kept apart); ``evaluate`` and ``save_checkpoint`` are the evaluation and the saving
the trainer runs after a step or an epoch (it says so in ``control`` before it runs them). The
first step whose learning rate is not 0 (``warmup_steps`` start at 0) is held to
``expect_training_step``, its loss the one the trainer's ``training_step`` returned (what its
``compute_loss`` computed, a subclass's own included); every such loss, and the ``loss`` and
``grad_norm`` the trainer logs, to contract ``finite_loss`` (the trainer replaces a non-finite
loss in its logs, not the gradient norm it measured). The trainer is found in the frames that
call ``on_train_begin`` (no callback is given it); a loop of callbacks without one: the ``loss``
of each training forward of the model. A SIGTERM
raised through ``train()`` (no callback is told) ends the attempt at exit, ``interrupted``.

A ``TrainerCallback`` is never told of an error: the trainer raises it. An error that leaves
``trainer.train()`` and the program (a script that stops on it) is recorded on its way out, by
``sys.excepthook``, placed in the stage that was open and, an out-of-memory one, classified by
phase; in a notebook, where no error reaches ``sys.excepthook``, once the cell that ran
``train()`` ends with it (IPython's ``post_run_cell``). A program that catches it calls
``callback.failed(error)``; a ``train()`` begun while the last one never ended ends that one as
failed first, never merged into the new attempt.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from types import FrameType, TracebackType
from typing import Any

from ...facts.caller import kernel_shell
from .attempt import TrainingAttempt, framework

MINIMUM = "5.0"
TRAIN_STEP = "train_step"
MAX_FRAMES = 8  # frames looked up for the trainer that called on_train_begin
AFTER_STEP = ("evaluate", "save_checkpoint")  # what the trainer ran after a step, ended by the next

_transformers: Any = framework("transformers", "transformers", MINIMUM, "transformers")


class KernodeckTrainerCallback(_transformers.TrainerCallback):  # type: ignore[misc]
    """The attempt of each ``trainer.train()``: ``root`` and ``params`` as ``Trial``'s;
    ``check_step=False`` leaves the first step unchecked (it copies the trained parameters to
    host memory)."""

    def __init__(self, root: str | os.PathLike[str] = "runs",
                 params: Mapping[str, Any] | None = None, *, check_step: bool = True) -> None:
        self.attempt = TrainingAttempt(root, params, check_step=check_step)
        self._loss: Any = None
        # The first step is still to be judged: the learning rates read before each step, the
        # step judged after it. Past it, a step's events ask nothing of the attempt for it.
        self._first_step = False
        self._hook: Any = None
        self._trainer: Any = None  # the one whose training_step is watched, while it is
        self._previous_excepthook: Any = None
        self._shell: Any = None  # the notebook's, while its post_run_cell hook is ours

    @property
    def folder(self) -> str | None:
        """The attempt folder, once the training has started."""
        return self.attempt.trial.folder

    def failed(self, error: BaseException) -> None:
        """End the attempt with ``error``, raised by ``trainer.train()`` and caught."""
        self._release_excepthook()
        self._remove_hook()
        self.attempt.end(error)

    # -- the trainer's events --------------------------------------------------------------------

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.attempt.started and not self.attempt.ended:
            # The last train() never reached on_train_end, and no error was seen (a program
            # that caught it and did not say so): that attempt failed; this is a new one.
            self.failed(RuntimeError("trainer.train() ended without on_train_end: an error "
                                     "left it, caught by the program"))
        self.attempt = self.attempt.next_attempt()
        self.attempt.place(args.process_index, args.world_size)
        self.attempt.start()
        self._catch_uncaught()
        model = kwargs.get("model")
        if model is not None:
            if self.attempt.check_step:
                self.attempt.before_first_step(model, [kwargs.get("optimizer")])
            self._remove_hook()
            if not self._watch_training_step(_trainer_calling()):
                self._hook = model.register_forward_hook(self._keep_loss)
        self._first_step = self.attempt.first_step_pending  # this train()'s, model or none

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.attempt.batch_started(TRAIN_STEP, after=AFTER_STEP)

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any,
                              **kwargs: Any) -> None:
        if self._first_step:
            self.attempt.before_optimizer_step([kwargs.get("optimizer")])

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.attempt.batch_ended(TRAIN_STEP)
        if self._first_step:
            self.attempt.after_first_step(self._loss, kwargs["model"])
            self._first_step = self.attempt.first_step_pending
        self._loss = None
        if control.should_evaluate or control.should_save:
            self._before_evaluate_or_save(control)

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None,
               **kwargs: Any) -> None:
        """The trainer's logs: its ``loss`` (an average, non-finite ones filtered out by
        default) and ``grad_norm`` (what it measured): a non-finite one fails ``finite_loss``."""
        if isinstance(logs, Mapping):
            for name in ("loss", "grad_norm"):
                self.attempt.observe_number(name, logs.get(name), state.global_step - 1)

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._after_step_done()
        self._before_evaluate_or_save(control)

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.attempt.close_stage("evaluate")
        if control.should_save and not self.attempt.is_open("save_checkpoint"):
            self.attempt.open_stage("save_checkpoint")

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.attempt.close_stage("save_checkpoint")

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._release_excepthook()
        self._remove_hook()
        self.attempt.end()

    # -- helpers ---------------------------------------------------------------------------------

    def _before_evaluate_or_save(self, control: Any) -> None:
        """What the trainer runs right after this event, in its order: evaluate, then save."""
        if control.should_evaluate:
            self.attempt.open_stage("evaluate")
        elif control.should_save:
            self.attempt.open_stage("save_checkpoint")

    def _after_step_done(self) -> None:
        self.attempt.close_stage("evaluate")
        self.attempt.close_stage("save_checkpoint")

    def _remove_hook(self) -> None:
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        trainer, self._trainer = self._trainer, None
        if trainer is not None and "training_step" in vars(trainer):
            del trainer.training_step  # the class's own again

    def _watch_training_step(self, trainer: Any) -> bool:
        """Each loss ``trainer.training_step`` returns (its ``compute_loss``'s, backpropagated:
        a custom one that computes it outside the model's output included): the step's and
        ``finite_loss``'s. False without a trainer."""
        if trainer is None or "training_step" in vars(trainer):
            return False
        original = trainer.training_step
        keep = self._keep_step_loss

        def training_step(*args: Any, **kwargs: Any) -> Any:
            loss = original(*args, **kwargs)
            keep(loss)
            return loss

        trainer.training_step = training_step
        self._trainer = trainer
        return True

    def _keep_step_loss(self, loss: Any) -> None:
        detach = getattr(loss, "detach", None)  # the trainer's own is detached; a subclass's?
        if detach is not None:
            loss = detach()
        self._loss = loss
        self.attempt.observe_loss(loss, self.attempt.step)

    def _keep_loss(self, module: Any, inputs: Any, output: Any) -> None:
        """Without the trainer (``_watch_training_step``), each training forward's loss: the
        step's (for its contract) and every one's finiteness (``finite_loss``); an evaluation's
        forward is left out."""
        if not getattr(module, "training", True):
            return
        loss = output.get("loss") if isinstance(output, Mapping) else getattr(output, "loss",
                                                                               None)
        if loss is not None:
            self._loss = loss.detach()
            self.attempt.observe_loss(self._loss, self.attempt.step)

    def _catch_uncaught(self) -> None:
        if self._previous_excepthook is None:
            self._previous_excepthook = sys.excepthook
            sys.excepthook = self._uncaught
        shell = kernel_shell()
        if shell is not None and self._shell is None:
            shell.events.register("post_run_cell", self._after_cell)
            self._shell = shell

    def _release_excepthook(self) -> None:
        if self._previous_excepthook is not None:
            if sys.excepthook == self._uncaught:
                sys.excepthook = self._previous_excepthook
            self._previous_excepthook = None
        if self._shell is not None:
            shell, self._shell = self._shell, None
            with contextlib.suppress(ValueError):  # unregistered already
                shell.events.unregister("post_run_cell", self._after_cell)

    def _after_cell(self, result: Any) -> None:
        """A notebook's cell ended: the error that left ``train()`` with it, if any."""
        error = getattr(result, "error_in_exec", None)
        if isinstance(error, BaseException) and self.attempt.started and not self.attempt.ended:
            self.failed(error)

    def _uncaught(self, kind: type[BaseException], error: BaseException,
                  trace: TracebackType | None) -> None:
        previous = self._previous_excepthook or sys.__excepthook__
        try:
            self.failed(error)
        finally:
            previous(kind, error, trace)


def _trainer_calling() -> Any:
    """The ``Trainer`` whose ``train()`` runs this event (``on_train_begin``): the ``self`` of
    a frame that calls it, a few frames up (no callback is given the trainer); None when none
    is."""
    frame: FrameType | None = sys._getframe(1)
    for _ in range(MAX_FRAMES):
        if frame is None:
            return None
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, _transformers.Trainer):
            return candidate
        frame = frame.f_back
    return None
