"""A ``Trial`` driven by a training framework's events, for the adapters of this package.

A framework calls back at the start and the end of each phase (setup, a batch, a validation, a
checkpoint) rather than running a ``with`` block: ``TrainingAttempt`` opens and closes the trial's
stages on those calls, makes each training batch a pass (so that pass 0, the first batch, is
kept apart and an out-of-memory error is placed in its phase), holds the first optimizer step to
``expect_training_step``, and at the end prints the per-stage table (``stage_summary``) once and
keeps it in the attempt folder. The public ``Trial`` API is used, and ``Trial._step``: a batch's
pass and stage begun and ended as one, at a fraction of their cost apart.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import math
import os
import sys
from collections.abc import Iterable, Mapping
from time import perf_counter
from types import ModuleType
from typing import Any

from ...i18n import language_from, translator
from ...package_data import TOOL_NAME
from ...report.pep440 import satisfies
from ...safe_files import Folder
from .. import stage_summary
from ..contracts import LOSS_UNSEEN
from ..pass_loop import Step
from ..session import Trial
from ..signals import Terminated, signals_held

TRAIN_BATCH = "train_batch"
FINITE_LOSS = "finite_loss"  # the contract every training step's loss is held to
CHECK_EVERY = 256  # losses kept before they are checked together
CHECK_EVERY_S = 1.0  # or this long after the last check
WARMUP_STEPS_WAITED = 100  # steps at a learning rate of 0 before the first step is judged anyway


class FrameworkMissing(ImportError):
    """The framework an adapter adapts is not installed, or older than the adapter needs."""


def framework(module: str, distribution: str, minimum: str, extra: str) -> ModuleType:
    """``module``, imported, when its distribution is ``minimum`` or newer; otherwise
    ``FrameworkMissing`` with one line naming the version needed and the extra that installs it."""
    from importlib import metadata

    say = translator(language_from(os.environ))
    install = f"pip install 'kernodeck-diagnostic[{extra}]'"
    try:
        found = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        raise FrameworkMissing(say("trial.adapter.framework_missing", name=distribution,
                                   minimum=minimum, install=install)) from None
    if satisfies(found, f">={minimum}") is False:
        raise FrameworkMissing(say("trial.adapter.framework_too_old", name=distribution,
                                   found=found, minimum=minimum, install=install))
    return importlib.import_module(module)


class TrainingAttempt:
    """One attempt of a training run, its stages opened and closed by a framework's events.

    ``rank``: this process's rank in a job of several (see ``place``; the table is printed by
    rank 0 alone). ``check_step``: hold the first optimizer step to
    ``expect_training_step`` (a copy of the trained parameters is kept in host memory until it
    is done).
    """

    def __init__(self, root: str | os.PathLike[str], params: Mapping[str, Any] | None, *,
                 check_step: bool = True, rank: int | None = None,
                 world_size: int | None = None) -> None:
        self._given = (root, params, check_step, rank, world_size)
        self.trial = Trial(root, params)
        self._root = self.trial.root  # KERNODECK_RUN_DIR, when set, already
        self.rank: int | None = None
        self.check_step = check_step
        self.started = False
        self.ended = False
        self._stages: list[tuple[str, Any]] = []  # the open stages and steps, innermost last
        self._steps: dict[str, Step] = {}  # each step name's, made once
        self._before: dict[str, Any] | None = None
        self._lr_zero: bool | None = None  # the coming step's learning rates are all 0
        self._waited = 0  # steps at a learning rate of 0 not judged
        self._pending: tuple[Any, Any] | None = None  # the last of them: its loss, the model
        self.losses = LossWatch()
        self.step: int | None = None  # the pass of the training batch or step running, or last
        if rank is not None:
            self.place(rank, world_size)

    # -- the attempt and its stages ------------------------------------------------------------

    def next_attempt(self) -> TrainingAttempt:
        """This one while it has not ended; after, a new one like it (a second ``fit``)."""
        if not self.ended:
            return self
        root, params, check_step, rank, world_size = self._given
        return TrainingAttempt(root, params, check_step=check_step, rank=rank,
                               world_size=world_size)

    def place(self, rank: int, world_size: int | None = None) -> None:
        """Before the start: process ``rank`` of a job of ``world_size`` (None: of several) keeps
        its attempt in ``<root>/rank-<rank>``; a job of one process, in the root itself."""
        if self.started or (world_size is not None and world_size <= 1):
            return
        self.rank = rank
        self.trial.root = os.path.join(self._root, f"rank-{rank}")

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.trial.__enter__()
            atexit.register(self._at_exit)

    def _at_exit(self) -> None:
        """The interpreter exits with the attempt still open: no framework event said it ended
        (a SIGTERM's ``SystemExit`` raised through ``trainer.train()``, which no callback is
        told of, or ``sys.exit`` in the loop): it ends ``interrupted``, written whole."""
        if self.started and not self.ended:
            self.end(Terminated() if self.trial.ended_by_sigterm else SystemExit())

    def open_stage(self, name: str) -> None:
        if self.started and not self.ended:
            stage = self.trial.stage(name)
            stage.__enter__()
            self._stages.append((name, stage))

    def close_stage(self, name: str) -> None:
        """Close the innermost open stage of that name (and, completed, any opened inside it)."""
        stages = self._stages  # asked at every batch's two ends: nothing built when none is open
        if not stages or (stages[-1][0] != name
                          and not any(open_name == name for open_name, _ in stages)):
            return
        while stages:
            open_name, stage = stages.pop()
            stage.__exit__(None, None, None)
            if open_name == name:
                return

    def is_open(self, name: str) -> bool:
        return any(open_name == name for open_name, _ in self._stages)

    def batch_started(self, name: str = TRAIN_BATCH, *, after: tuple[str, ...] = ()) -> None:
        """A training batch (or optimizer step): a pass of its own, with its stage (a ``Step``,
        an open stage among the others). One whose end was never told ends here; so do the
        stages ``after`` names, in turn, when open (a checkpoint's, an evaluation's: they end
        with the next event)."""
        if not self.started or self.ended:
            return
        if self._stages:  # at every batch: nothing called when none is open
            for stage in after:
                self.close_stage(stage)
        step = self._steps.get(name)
        if step is None:
            step = self._steps[name] = self.trial._step(name)
        elif step.index is not None:
            self.close_stage(name)
        self.step = step.begin()
        self._stages.append((name, step))

    def batch_ended(self, name: str = TRAIN_BATCH, loss: Any = None) -> None:
        """The batch's stage ends, then its pass (completed), and any stage opened in it; its
        ``loss``, when given, is observed (``observe_loss``)."""
        stages = self._stages
        if stages and stages[-1][0] == name:  # nothing opened inside it: the common case
            stages.pop()[1].__exit__(None, None, None)
        else:
            self.close_stage(name)
        if loss is not None:
            self.observe_loss(loss, self.step)

    # -- the first optimizer step --------------------------------------------------------------

    def before_first_step(self, model: Any, optimizers: Iterable[Any]) -> None:
        """Copy the parameters the optimizers update, to host memory, before the first step."""
        if not self.check_step or self._before is not None or not self.started:
            return
        self._before = {name: parameter.detach().to("cpu", copy=True)
                        for name, parameter in trained_parameters(model, optimizers).items()}

    @property
    def first_step_pending(self) -> bool:
        """The first optimizer step is still to be judged (the parameters' copy is kept)."""
        return self._before is not None

    def before_optimizer_step(self, optimizers: Iterable[Any]) -> None:
        """The learning rates the coming optimizer step uses: a step whose every rate is 0 (the
        first step of a warmup) cannot update a parameter, and is not the one judged."""
        if self._before is not None:  # asked only while the first step is not judged yet
            self._lr_zero = learning_rates_zero(optimizers)

    def after_first_step(self, loss: Any, model: Any) -> None:
        """``expect_training_step`` on the first step whose learning rate is not 0 (a warmup
        starts at 0), once: the loss, and every parameter the optimizers held changed and
        finite. After ``WARMUP_STEPS_WAITED`` steps at 0, or at the end, the step is judged all
        the same (a rate of 0 throughout updates nothing: the contract fails, as it should)."""
        if self._before is None or self.ended:
            return
        lr_zero, self._lr_zero = self._lr_zero, None
        if lr_zero and self._waited < WARMUP_STEPS_WAITED:
            self._waited += 1
            self._pending = (loss, model)
            return
        self._judge_step(loss, model)

    def _judge_step(self, loss: Any, model: Any) -> None:
        before, self._before = self._before, None
        self._pending = None
        if before is None:
            return
        self.check_step = False
        after = {name: parameter for name, parameter in model.named_parameters()
                 if name in before}
        # No loss reached the adapter (a loop whose loss the framework never shows): the
        # parameters are judged, never a loss that was not seen (``finite_loss`` says so).
        self.trial.expect_training_step(LOSS_UNSEEN if loss is None else loss, before, after)

    # -- the loss of every step ----------------------------------------------------------------

    def observe_loss(self, loss: Any, step: int | None) -> None:
        """A training step's loss (a tensor detached from its graph, kept and checked in
        batches: no device synchronisation per step; or a number): a non-finite one fails
        contract ``finite_loss``, naming its step."""
        if self.started and not self.ended and self.losses.observe(loss, step):
            self._loss_failed()

    def observe_number(self, name: str, value: Any, step: int | None) -> None:
        """A figure the framework logged for a step (the gradient norm): non-finite, it fails
        contract ``finite_loss`` too (a trainer that filters non-finite losses out of its logs
        still logs the gradient norm it measured)."""
        if self.started and not self.ended and self.losses.number(name, value, step):
            self._loss_failed()

    def _loss_failed(self) -> None:
        found = self.losses.first_bad
        if found is not None:
            name, value, step = found
            self.trial.expect(FINITE_LOSS, False,
                              f"non-finite {name} ({value}) at step {step}")

    def _losses_at_end(self) -> None:
        """``finite_loss`` over the attempt: failed (its first non-finite loss, at once),
        passed with every loss finite; training steps ran and no loss reached the adapter: no
        evidence, no pass (inconclusive)."""
        losses = self.losses
        if losses.first_bad is None and losses.check():
            self._loss_failed()
        elif losses.first_bad is None and losses.checked:
            self.trial.expect(FINITE_LOSS, True, f"{losses.checked} training step losses finite")
        elif losses.first_bad is None and self.step is not None:
            self.trial._no_evidence(FINITE_LOSS, f"no training loss seen in {self.step + 1} "
                                    "training steps")

    # -- the end -------------------------------------------------------------------------------

    def end(self, exc: BaseException | None = None) -> None:
        """Close the open stages (failed with ``exc`` when given), the pass, the attempt; print the
        per-stage table once and keep it in the attempt folder."""
        if not self.started or self.ended:
            return
        self.ended = True
        atexit.unregister(self._at_exit)
        # Held over the whole end (the stage table's too): a DataLoader worker's death, a second
        # SIGTERM, never cuts it short.
        with signals_held(drop_sigchld=lambda: self.trial.ended_by_sigterm):
            self._end(exc)

    def _end(self, exc: BaseException | None) -> None:
        if exc is None:
            if self._pending is not None:  # every step so far at a learning rate of 0
                self._judge_step(*self._pending)
            self._losses_at_end()
        self._before = None
        self._pending = None
        kind = None if exc is None else type(exc)
        trace = None if exc is None else exc.__traceback__
        while self._stages:  # a step ended with an error leaves its pass (not completed)
            _, stage = self._stages.pop()
            stage.__exit__(kind, exc, trace)
        self.trial.__exit__(kind, exc, trace)
        self._summarize()

    def _summarize(self) -> None:
        """The per-stage table of the attempt just ended (``Trial.summary``, the one the folder's
        attempt.json says): kept in the folder below the judge's verdict (the words of the
        Trial's end line, which stderr has already shown), and printed on stderr by the job's
        first process."""
        path = self.trial.folder
        if path is None or self.trial._child:  # a forked child's copy: the parent's to keep
            return
        try:
            text = self.trial.summary()
            verdict = self.trial.verdict_line()
            kept = (f"{verdict}\n\n" if verdict else "") + text
            with Folder.open(path) as attempt_folder:
                attempt_folder.create_file(stage_summary.SUMMARY_FILE, kept.encode("utf-8"))
        except Exception as error:  # a help: never a reason to lose the program's own outcome
            sys.stderr.write(f"{TOOL_NAME}: the stage summary could not be kept "
                             f"({type(error).__name__})\n")
            return
        if not self.rank:
            sys.stderr.write(text)
            sys.stderr.flush()


class LossWatch:
    """The losses of the training steps, checked for non-finite values without synchronising
    the device each step: kept (detached) and checked together every ``CHECK_EVERY`` steps or
    ``CHECK_EVERY_S``, and at the end; the first non-finite one is kept with its step."""

    def __init__(self) -> None:
        self.pending: list[tuple[int | None, Any]] = []
        self.checked = 0
        self.first_bad: tuple[str, str, int | None] | None = None
        self.checked_at = perf_counter()

    def observe(self, loss: Any, step: int | None) -> bool:
        """Keep ``loss``, detached from its graph by the caller (a graph kept until the check
        would hold its memory; asking a tensor at every step costs a call into torch): Lightning
        hands a detached copy, the other adapters detach theirs. True when a check found the
        first non-finite one."""
        if loss is None or self.first_bad is not None:
            return False
        pending = self.pending
        pending.append((step, loss))
        if len(pending) >= CHECK_EVERY or perf_counter() - self.checked_at >= CHECK_EVERY_S:
            return self.check()
        return False

    def number(self, name: str, value: Any, step: int | None) -> bool:
        if self.first_bad is not None or not isinstance(value, (int, float)) \
                or isinstance(value, bool) or math.isfinite(value):
            return False
        self.check()  # a loss before it, non-finite, is named first
        if self.first_bad is None:
            self.first_bad = (name, str(value), step)
        return True

    def check(self) -> bool:
        """Check the losses kept; True when the first non-finite one is among them."""
        pending, self.pending = self.pending, []
        self.checked_at = perf_counter()
        if not pending or self.first_bad is not None:
            return False
        finite = _finite([value for _, value in pending])
        if all(finite):  # the common case: counted at once
            self.checked += len(finite)
            return False
        for (step, value), ok in zip(pending, finite):
            if not ok:
                self.first_bad = ("loss", _shown(value), step)
                return True
            self.checked += 1
        return False


def _finite(values: list[Any]) -> list[bool]:
    """Whether each value (a tensor: all its elements; a number) is finite: the tensors in one
    device operation and one transfer where they allow it."""
    torch = sys.modules.get("torch")
    if torch is not None and values and all(map(torch.is_tensor, values)):
        # One number per value: itself, or its largest magnitude (NaN and inf propagate).
        # Tensors on several devices, or an exotic type: one by one, below.
        with contextlib.suppress(Exception):
            # The common case first: losses of one shape on one device, all finite (one stack,
            # one reduction, one transfer); any other answer, value by value below.
            if bool(torch.isfinite(torch.stack(values)).all()):
                return [True] * len(values)
        with contextlib.suppress(Exception):
            flat = torch.stack([value.reshape(()).float() if value.numel() == 1
                                else value.float().abs().max() for value in values])
            return [bool(ok) for ok in torch.isfinite(flat).tolist()]
    found = []
    for value in values:
        try:
            if torch is not None and torch.is_tensor(value):
                found.append(bool(torch.isfinite(value).all()))
            else:
                found.append(math.isfinite(float(value)))
        except Exception:  # not a number at all: nothing to say of it
            found.append(True)
    return found


def _shown(value: Any) -> str:
    try:
        number = float(value) if getattr(value, "numel", lambda: 1)() == 1 else None
    except Exception:  # a tensor that cannot become a number
        number = None
    return "non-finite values" if number is None else str(number)


def learning_rates_zero(optimizers: Iterable[Any]) -> bool | None:
    """Whether every learning rate of the optimizers' groups is 0 (None: none is known)."""
    rates = [group.get("lr") for optimizer in optimizers if optimizer is not None
             for group in getattr(optimizer, "param_groups", ())]
    known = [float(rate) for rate in rates if isinstance(rate, (int, float))
             and not isinstance(rate, bool)]
    return None if not known else all(rate == 0 for rate in known)


def trained_parameters(model: Any, optimizers: Iterable[Any]) -> dict[str, Any]:
    """The model's parameters, by name, that one of the optimizers updates (all of them when no
    optimizer is known yet): those a training step must change."""
    held = {id(parameter) for optimizer in optimizers
            for group in getattr(optimizer, "param_groups", ())
            for parameter in group.get("params", ())}
    return {name: parameter for name, parameter in model.named_parameters()
            if not held or id(parameter) in held}
