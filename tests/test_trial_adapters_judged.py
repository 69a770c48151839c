"""The adapters with the real frameworks (env ``torch-cpu-frameworks``): what they must never pass
or lose. A loss (or a gradient norm) that turns non-finite after step 0 fails the attempt, naming
the step; a learning-rate warmup that starts at 0 is not "parameters not updated"; SIGTERM to the
process group, DataLoader workers included, ends the attempt ``interrupted``, written whole.

Each row plants one cause in a program that otherwise trains well.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import envs
from kernodeck_diagnostic.trial.accessors import judge_document
from trial_helpers import app_env, assert_valid_attempt, attempt_of, only_attempt, write_app

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="process groups, SIGTERM")


@pytest.fixture(scope="module")
def frameworks_python() -> Path:
    return envs.python_of(envs.torch_cpu_frameworks())


LIGHTNING_APP = """
import math, sys, time
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset
from kernodeck_diagnostic.trial.adapters.lightning import KernodeckCallback

case = sys.argv[1]
torch.set_num_threads(1)


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        if case == "nan" and batch_idx >= 2:
            loss = loss * float("nan")  # the weights end all NaN
        if case == "term":
            if batch_idx == 3:
                print("ready", flush=True)
            time.sleep(0.02)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        if case != "warmup":
            return optimizer
        # A per-step warmup that starts at 0: step 0 updates nothing.
        warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, step / 2))
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": warmup, "interval": "step"}}


torch.manual_seed(0)
size = 4000 if case == "term" else 24
data = TensorDataset(torch.randn(size, 8), torch.randn(size, 1))
trainer = pl.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_progress_bar=False,
                     enable_model_summary=False, enable_checkpointing=False,
                     default_root_dir="lightning", callbacks=[KernodeckCallback("runs")])
trainer.fit(Tiny(), DataLoader(data, batch_size=4, num_workers=2 if case == "term" else 0,
                               persistent_workers=case == "term"))
"""

TRANSFORMERS_APP = """
import sys, time
import torch
from transformers import (BertConfig, BertForSequenceClassification, Trainer, TrainerCallback,
                          TrainingArguments)
from kernodeck_diagnostic.trial.adapters.transformers import KernodeckTrainerCallback

case = sys.argv[1]
torch.set_num_threads(1)
torch.manual_seed(0)
config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, num_labels=2)
model = BertForSequenceClassification(config)
steps = []


def planted(module, inputs, output):
    if module.training and case == "nan" and len(steps) >= 2:
        output.loss = output.loss * float("nan")
    return output


def poisoned(grad):  # the loss stays finite; the gradient norm does not
    return grad * float("nan") if len(steps) >= 2 else grad


model.register_forward_hook(planted)
if case == "gradnan":
    model.classifier.weight.register_hook(poisoned)


class Steps(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        steps.append(state.global_step)
        if case == "term":
            if len(steps) == 3:
                print("ready", flush=True)
            time.sleep(0.02)


rows = [{"input_ids": torch.randint(0, 64, (12,)), "labels": i % 2}
        for i in range(4000 if case == "term" else 24)]
args = TrainingArguments(output_dir="hf", max_steps=2000 if case == "term" else 6,
                         per_device_train_batch_size=4, learning_rate=5e-3,
                         warmup_steps=3 if case == "warmup" else 0, report_to="none",
                         use_cpu=True, disable_tqdm=True, save_strategy="no",
                         logging_strategy="steps", logging_steps=1,
                         dataloader_num_workers=2 if case == "term" else 0)
trainer = Trainer(model=model, args=args, train_dataset=rows,
                  callbacks=[KernodeckTrainerCallback("runs"), Steps()])
trainer.train()
"""

ACCELERATE_APP = """
import sys
import torch
from accelerate import Accelerator
from kernodeck_diagnostic.trial.adapters.accelerate import trial_for

case = sys.argv[1]
torch.manual_seed(0)
accelerator = Accelerator(cpu=True)
with trial_for(accelerator, "runs") as trial:
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in trial.passes(6):
        with trial.stage("train_step"):
            loss = torch.nn.functional.mse_loss(model(torch.randn(4, 8)), torch.randn(4, 1))
            if case == "nan" and step >= 2:
                loss = loss * float("inf")
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
"""

# The loss never reaches the adapter through training_step's return or the model's output:
# Lightning's manual optimization (training_step returns None), a Trainer whose compute_loss
# calls the model without labels and computes the loss itself. argv: case, check_step.
MANUAL_APP = """
import sys
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset
from kernodeck_diagnostic.trial.adapters.lightning import KernodeckCallback

case, check_step = sys.argv[1], sys.argv[2] == "check"
torch.set_num_threads(1)


class Manual(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        optimizer = self.optimizers()
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        if case == "nan" and batch_idx == 3:
            loss = loss * float("nan")  # every parameter NaN after this step
        optimizer.zero_grad()
        if case == "direct":
            loss.backward()  # past manual_backward: no hook sees the loss
        else:
            self.manual_backward(loss)
        optimizer.step()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


torch.manual_seed(0)
data = TensorDataset(torch.randn(24, 8), torch.randn(24, 1))
trainer = pl.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_progress_bar=False,
                     enable_model_summary=False, enable_checkpointing=False,
                     default_root_dir="lightning",
                     callbacks=[KernodeckCallback("runs", check_step=check_step)])
trainer.fit(Manual(), DataLoader(data, batch_size=4))
"""

COMPUTE_LOSS_APP = """
import sys
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
from kernodeck_diagnostic.trial.adapters.transformers import KernodeckTrainerCallback

case, check_step = sys.argv[1], sys.argv[2] == "check"
torch.set_num_threads(1)
torch.manual_seed(0)


class OwnLoss(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)  # no labels: the output has no loss
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels)
        if case == "nan" and self.state.global_step == 2:
            loss = loss * float("nan")
        return (loss, outputs) if return_outputs else loss


config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, num_labels=2)
rows = [{"input_ids": torch.randint(0, 64, (12,)), "labels": i % 2} for i in range(24)]
args = TrainingArguments(output_dir="hf", max_steps=6, per_device_train_batch_size=4,
                         learning_rate=5e-3, report_to="none", use_cpu=True, disable_tqdm=True,
                         save_strategy="no", max_grad_norm=0)
trainer = OwnLoss(model=BertForSequenceClassification(config), args=args, train_dataset=rows,
                  callbacks=[KernodeckTrainerCallback("runs", check_step=check_step)])
trainer.train()
"""

APPS = {"lightning": LIGHTNING_APP, "transformers": TRANSFORMERS_APP,
        "accelerate": ACCELERATE_APP, "manual": MANUAL_APP, "compute_loss": COMPUTE_LOSS_APP}


def _run(python: Path, work: Path, app: str, case: str,
         *more: str) -> subprocess.CompletedProcess[str]:
    script = write_app(work, APPS[app])
    return subprocess.run([str(python), script.name, case, *more], cwd=work, capture_output=True,
                          text=True, env=app_env(), timeout=300, stdin=subprocess.DEVNULL,
                          check=False)


def _contracts(attempt: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in attempt["contracts"]}


@pytest.mark.slow
@pytest.mark.parametrize(("app", "case", "detail"), [
    ("lightning", "nan", "non-finite loss (nan) at step 2"),
    ("transformers", "nan", "non-finite loss (nan) at step 2"),
    ("transformers", "gradnan", "non-finite grad_norm (nan) at step 2"),
    ("accelerate", "nan", "non-finite loss (inf) at step 2"),
])
def test_a_loss_that_turns_non_finite_fails_the_attempt_naming_its_step(
        frameworks_python: Path, tmp_path: Path, app: str, case: str, detail: str) -> None:
    done = _run(frameworks_python, tmp_path, app, case)
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    finite = _contracts(attempt)["finite_loss"]
    assert (finite["passed"], finite["detail"]) == (False, detail)
    assert attempt["contracts_passed"] is False
    assert "contract failed: finite_loss" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("app", ["lightning", "transformers", "accelerate"])
def test_a_healthy_run_holds_every_loss_to_the_contract(frameworks_python: Path,
                                                        tmp_path: Path, app: str) -> None:
    done = _run(frameworks_python, tmp_path, app, "train")
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    finite = _contracts(attempt)["finite_loss"]
    assert finite["passed"] is True, finite
    assert finite["detail"] == "6 training step losses finite"
    assert attempt["contracts_passed"] is True


@pytest.mark.slow
@pytest.mark.parametrize(("app", "check_step", "step"), [
    ("manual", "check", 3), ("manual", "nocheck", 3),
    ("compute_loss", "check", 2), ("compute_loss", "nocheck", 2),
])
def test_a_nan_loss_the_framework_never_returns_fails_naming_its_step(
        frameworks_python: Path, tmp_path: Path, app: str, check_step: str, step: int) -> None:
    """Lightning's manual optimization (the losses given to manual_backward), a Trainer's own
    compute_loss (what training_step returns): before, finite_loss was checked 0 times and the
    attempt, every parameter NaN, passed."""
    done = _run(frameworks_python, tmp_path, app, "nan", check_step)
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    found = _contracts(attempt)
    assert (found["finite_loss"]["passed"], found["finite_loss"]["detail"]) == (
        False, f"non-finite loss (nan) at step {step}")
    if check_step == "check":  # step 0, healthy, judged with its loss
        assert found["training_step"]["passed"] is True, found["training_step"]
        assert attempt["output"]["training_step"]["loss"] is not None
    assert judge_document(attempt).outcome == "contract_failed"


@pytest.mark.slow
@pytest.mark.parametrize("app", ["manual", "compute_loss"])
def test_a_healthy_run_whose_loss_the_framework_never_returns_passes(
        frameworks_python: Path, tmp_path: Path, app: str) -> None:
    """Before: contract_failed, "training_step (loss unusable: not a single number
    (NoneType))"."""
    done = _run(frameworks_python, tmp_path, app, "train", "check")
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    found = _contracts(attempt)
    assert found["training_step"]["passed"] is True, found["training_step"]
    assert found["training_step"]["detail"].startswith("finite loss, ")
    assert found["finite_loss"] == {**found["finite_loss"], "passed": True,
                                    "detail": "6 training step losses finite"}
    assert judge_document(attempt).outcome == "passed"


@pytest.mark.slow
def test_a_loss_no_hook_can_see_is_no_evidence_never_a_pass_or_a_failed_step(
        frameworks_python: Path, tmp_path: Path) -> None:
    """Manual optimization calling loss.backward() itself: no loss reaches the adapter. The
    first step is judged on its parameters alone; finite_loss, never checked, makes the attempt
    inconclusive."""
    done = _run(frameworks_python, tmp_path, "manual", "direct", "check")
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    step = _contracts(attempt)["training_step"]
    assert (step["passed"], step["detail"]) == (True, "loss not seen (not judged), 2 "
                                                "parameters updated")
    assert "finite_loss" not in _contracts(attempt)
    assert attempt["contracts_unchecked"] == [
        {"name": "finite_loss", "detail": "no training loss seen in 6 training steps"}]
    judged = judge_document(attempt)
    assert (judged.outcome, judged.reasons[0].kind) == ("inconclusive", "contracts_unchecked")
    assert "judged inconclusive: no evidence" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("app", ["lightning", "transformers"])
def test_a_warmup_from_zero_is_judged_at_its_first_step_that_can_update(
        frameworks_python: Path, tmp_path: Path, app: str) -> None:
    done = _run(frameworks_python, tmp_path, app, "warmup")
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    step = _contracts(attempt)["training_step"]
    assert step["passed"] is True, step
    assert attempt["output"]["training_step"]["parameters_changed"] > 0
    assert attempt["contracts_passed"] is True


READY_WITHIN_S = 240


@pytest.mark.slow
@posix_only
@pytest.mark.parametrize("app", ["lightning", "transformers"])
def test_sigterm_to_the_process_group_with_dataloader_workers_ends_the_attempt_whole(
        frameworks_python: Path, tmp_path: Path, app: str) -> None:
    """As a Slurm time limit, scancel or timeout sends it: the program, its DataLoader's
    workers, all at once. The attempt is written whole, ``interrupted``, naming the stage that
    was open; the workers' deaths that follow are not the program's error."""
    script = write_app(tmp_path, APPS[app])
    # The killed workers never remove multiprocessing's pymp-* folder: it goes in the test's own.
    (tmp_path / "tmp").mkdir()
    process = subprocess.Popen([str(frameworks_python), script.name, "term"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=app_env({"TMPDIR": str(tmp_path / "tmp")}),
                               stdin=subprocess.DEVNULL,
                               start_new_session=True)
    # Never ready (seen under a loaded -n 2 run: the first batch never came): killed, and the
    # test fails on it rather than waiting for ever.
    never_ready = threading.Timer(READY_WITHIN_S, os.killpg, (process.pid, signal.SIGKILL))
    never_ready.start()
    try:
        assert process.stdout is not None
        ready = False
        for line in process.stdout:
            if "ready" in line:
                ready = True
                break
        never_ready.cancel()
        assert ready, f"not ready within {READY_WITHIN_S} s"
        os.killpg(process.pid, signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    assert "could not be" not in stderr, stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    assert attempt["status"] == "interrupted", json.dumps(attempt["first_error"])
    assert attempt["first_error"] is None
    assert attempt["signal"]["signal"] == "SIGTERM"
    assert attempt["signal"]["stage"] in ("train_batch", "train_step", None)
    assert process.returncode in (143, -signal.SIGTERM), stderr[-3000:]
