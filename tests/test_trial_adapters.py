"""The trial where training loops already live: PyTorch Lightning, Hugging Face Transformers and
Accelerate, each real (CPU, torch 2.13.0), driving a real attempt through its adapter.

- a tiny model trained a few steps: the attempt folder with its stages, pass 0 apart, the first
  step's contract passed, the per-stage table printed once and kept;
- the CPU allocator really refusing (RLIMIT_AS) in the first batch and in a later one: the
  out-of-memory error placed in its stage and phase;
- a model that does not learn (a layer frozen, a learning rate of 0): the contract fails and names
  the parameters that did not change;
- ``accelerate launch`` with two processes: one attempt per process, named by its rank;
- ``ramp --axis batch -- python train.py --batch-size {batch}`` over a Lightning script;
- a framework missing: one line naming the version needed.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import envs
from conftest import ROOT, SRC, clean_env, inductor_cache, run_tool
from kernodeck_diagnostic.trial import stage_summary
from trial_helpers import app_env, assert_valid_attempt, attempt_of, only_attempt, run_app

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_AS")
REFUSED = "DefaultCPUAllocator: can't allocate memory"


@pytest.fixture(scope="session")
def frameworks_python() -> Path:
    return envs.python_of(envs.torch_cpu_frameworks())


# The application lowers its address-space limit to what it uses plus 2 GiB once its libraries are
# loaded, and asks for 3 GiB in the batch named on its command line: the real allocator refuses.
LIMIT = """
import resource
import torch

torch.set_num_threads(1)


def limit_memory():
    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    # The soft limit only: a process this one starts (a DDP rank) sets its own from its size.
    resource.setrlimit(resource.RLIMIT_AS,
                       (size + 2**31, resource.getrlimit(resource.RLIMIT_AS)[1]))


GIB_FLOATS = 2**30 // 4
"""

LIGHTNING_APP = LIMIT + """
import sys
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset
from kernodeck_diagnostic.trial.adapters.lightning import KernodeckCallback

case = sys.argv[1] if len(sys.argv) > 1 else "train"
fail_at = {"first_batch": 0, "later_batch": 3}.get(case)


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                       torch.nn.Linear(16, 1))
        if case == "frozen":
            self.net[0].requires_grad_(False)  # frozen, yet given to the optimizer

    def training_step(self, batch, batch_idx):
        if batch_idx == fail_at:
            activations = torch.ones(3 * GIB_FLOATS)
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


torch.manual_seed(0)
data = TensorDataset(torch.randn(24, 8), torch.randn(24, 1))
trainer = pl.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_progress_bar=False,
                     enable_model_summary=False, default_root_dir="lightning",
                     devices=2 if case == "ddp" else 1,
                     strategy="ddp" if case == "ddp" else "auto",
                     callbacks=[KernodeckCallback("runs", params={"case": case})])
limit_memory()
trainer.fit(Tiny(), DataLoader(data, batch_size=4), DataLoader(data, batch_size=8))
"""

TRANSFORMERS_APP = LIMIT + """
import sys
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
from kernodeck_diagnostic.trial.adapters.transformers import KernodeckTrainerCallback

case = sys.argv[1] if len(sys.argv) > 1 else "train"
fail_at = {"first_step": 0, "later_step": 2}.get(case)
torch.manual_seed(0)
config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, num_labels=2)
model = BertForSequenceClassification(config)
trained = []  # the training forwards so far (one a step here), evaluation's left out


def allocate(module, inputs):
    if module.training:
        if len(trained) == fail_at:
            activations = torch.ones(3 * GIB_FLOATS)
        trained.append(True)


model.register_forward_pre_hook(allocate)
rows = [{"input_ids": torch.randint(0, 64, (12,)), "labels": i % 2} for i in range(16)]
args = TrainingArguments(output_dir="hf", max_steps=4, per_device_train_batch_size=4,
                         eval_strategy="steps", eval_steps=2, save_strategy="steps", save_steps=4,
                         learning_rate=0.0 if case == "lr0" else 5e-3, report_to="none",
                         use_cpu=True, disable_tqdm=True, logging_strategy="no")
trainer = Trainer(model=model, args=args, train_dataset=rows, eval_dataset=rows[:8],
                  callbacks=[KernodeckTrainerCallback("runs", params={"case": case})])
limit_memory()
trainer.train()
"""


def _attempt(work: Path) -> tuple[Path, dict[str, Any]]:
    folder = only_attempt(work / "runs")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    return folder, attempt


def _training_step(attempt: dict[str, Any]) -> dict[str, Any]:
    """The training step's contract (beside it, ``finite_loss``: every step's loss)."""
    (contract,) = [item for item in attempt["contracts"] if item["name"] == "training_step"]
    assert all(item["name"] in ("training_step", "finite_loss") for item in attempt["contracts"])
    return contract


def _stages(attempt: dict[str, Any]) -> list[tuple[str, int | None]]:
    return [(stage["name"], stage["pass_index"]) for stage in attempt["stages"]]


def _table_printed_once_and_kept(stderr: str, folder: Path) -> None:
    """The table printed once; kept below the judge's verdict, the end line's words."""
    verdict, blank, table = (folder / stage_summary.SUMMARY_FILE).read_text(
        encoding="utf-8").partition("\n\n")
    assert blank
    assert table.startswith("stage ")
    assert stderr.count(table) == 1
    assert table == stage_summary.table(stage_summary.rows(attempt_of(folder)))
    # The Trial's end line on stderr (after a progress bar's carriage return, with HF): the
    # same words, then the folder.
    assert verdict.startswith("kernodeck-diagnostic: attempt "), verdict
    assert stderr.count(verdict + "; folder ") == 1, (verdict, stderr[-2000:])


# -- PyTorch Lightning ---------------------------------------------------------------------------

@pytest.mark.slow
def test_lightning_a_few_steps_leave_the_attempt_with_its_phases(frameworks_python: Path,
                                                                 tmp_path: Path) -> None:
    done = run_app(frameworks_python, tmp_path, LIGHTNING_APP)
    assert done.returncode == 0, done.stderr[-3000:]
    folder, attempt = _attempt(tmp_path)
    assert attempt["status"] == "completed"
    # The stages in the order they first ran (the records keep each name's first calls in
    # full, and its slowest), every call counted by the summary.
    first_seen = list(dict.fromkeys(name for name, _ in _stages(attempt)))
    assert first_seen == ["setup", "sanity_check", "train_batch", "validation",
                          "save_checkpoint"]
    assert [("train_batch", index) for index in range(3)] == [
        item for item in _stages(attempt) if item[0] == "train_batch"][:3]
    counts = {item["stage"]: item["count"] for item in attempt["stage_summary"]}
    assert counts["train_batch"] == 6
    assert attempt["passes"]["completed"] == attempt["passes"]["requested"] == 6
    (batch,) = [t for t in attempt["timings"] if t["stage"] == "train_batch"]
    assert batch["first_pass_ms"] is not None
    assert batch["later_passes"]["count"] == 5
    contract = _training_step(attempt)
    assert contract == {"name": "training_step", "passed": True,
                        "detail": "finite loss, 4 parameters updated", "problems": []}
    assert attempt["params"] == {"case": "train"}
    _table_printed_once_and_kept(done.stderr, folder)
    rows = {row["stage"]: row for row in stage_summary.rows(attempt)}
    assert (rows["train_batch"]["count"], rows["train_batch"]["failed"]) == (6, 0)
    assert rows["train_batch"]["first_ms"] == batch["first_pass_ms"]


@pytest.mark.slow
@posix_only
@pytest.mark.parametrize(("case", "phase", "pass_index"), [("first_batch", "first_pass", 0),
                                                          ("later_batch", "later_pass", 3)])
def test_lightning_out_of_memory_is_placed_in_its_batch_and_phase(
        frameworks_python: Path, tmp_path: Path, case: str, phase: str, pass_index: int) -> None:
    done = run_app(frameworks_python, tmp_path, LIGHTNING_APP, case)
    assert done.returncode == 1, done.stderr[-3000:]
    assert REFUSED in done.stderr  # the real refusal, gone on to the program
    folder, attempt = _attempt(tmp_path)
    assert attempt["status"] == "failed"
    assert attempt["first_error"]["stage"] == "train_batch"
    assert attempt["first_error"]["pass_index"] == pass_index
    assert REFUSED in attempt["first_error"]["message"]
    assert attempt["oom"]["phase"] == phase
    assert attempt["oom"]["pass_index"] == pass_index
    assert attempt["oom"]["requested_bytes"] == 3 * 2**30
    assert attempt["passes"]["completed"] == pass_index
    assert (folder / "trace.txt").is_file()
    _table_printed_once_and_kept(done.stderr, folder)


@pytest.mark.slow
def test_lightning_a_frozen_layer_fails_the_step_contract_by_name_and_compare_says_so(
        frameworks_python: Path, tmp_path: Path) -> None:
    done = run_app(frameworks_python, tmp_path / "frozen", LIGHTNING_APP, "frozen")
    assert done.returncode == 0, done.stderr[-3000:]
    frozen, attempt = _attempt(tmp_path / "frozen")
    contract = _training_step(attempt)
    assert contract["passed"] is False
    assert contract["detail"] == "parameters not updated by the step: net.0.weight, net.0.bias"
    assert attempt["output"]["training_step"]["parameters_changed"] == 2
    assert "contract failed: training_step (parameters not updated by the step: net.0.weight, " \
           "net.0.bias)" in done.stderr
    # compare reads the adapter's attempts as any other: a contract that held no longer does.
    assert run_app(frameworks_python, tmp_path / "good", LIGHTNING_APP).returncode == 0
    good, _ = _attempt(tmp_path / "good")
    compared = subprocess.run(
        [sys.executable, "-m", "kernodeck_diagnostic", "compare", str(good), str(frozen)],
        capture_output=True, text=True, env=clean_env({"PYTHONPATH": str(SRC),
                                                       "LC_ALL": "C.UTF-8"}),
        timeout=60, stdin=subprocess.DEVNULL, check=False)
    assert compared.returncode == 21, compared.stdout + compared.stderr  # COMPARE_REGRESSION
    assert "training_step" in compared.stdout


@pytest.mark.slow
def test_lightning_ddp_keeps_one_attempt_per_process_named_by_rank(frameworks_python: Path,
                                                                  tmp_path: Path) -> None:
    done = run_app(frameworks_python, tmp_path, LIGHTNING_APP, "ddp")
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in (0, 1):
        folder = only_attempt(tmp_path / "runs" / f"rank-{rank}")
        attempt = attempt_of(folder)
        assert attempt["status"] == "completed"
        assert attempt["contracts_passed"] is True
        assert (folder / stage_summary.SUMMARY_FILE).is_file()
        # 24 rows, 4 a batch, shared by 2 processes: 3 batches each.
        assert attempt["passes"]["completed"] == 3
    assert done.stderr.count("stage ") == 1  # the table, printed by rank 0 alone


# -- Hugging Face Transformers -------------------------------------------------------------------

@pytest.mark.slow
def test_transformers_a_few_steps_leave_the_attempt_with_its_phases(frameworks_python: Path,
                                                                    tmp_path: Path) -> None:
    done = run_app(frameworks_python, tmp_path, TRANSFORMERS_APP)
    assert done.returncode == 0, done.stderr[-3000:]
    folder, attempt = _attempt(tmp_path)
    assert attempt["status"] == "completed"
    assert _stages(attempt) == [("train_step", 0), ("train_step", 1), ("evaluate", None),
                                ("train_step", 2), ("train_step", 3), ("evaluate", None),
                                ("save_checkpoint", None)]
    contract = _training_step(attempt)
    assert contract["passed"] is True, contract
    assert attempt["output"]["training_step"]["parameters_changed"] > 0
    _table_printed_once_and_kept(done.stderr, folder)


@pytest.mark.slow
@posix_only
@pytest.mark.parametrize(("case", "phase", "pass_index"), [("first_step", "first_pass", 0),
                                                          ("later_step", "later_pass", 2)])
def test_transformers_out_of_memory_raised_by_train_is_still_classified(
        frameworks_python: Path, tmp_path: Path, case: str, phase: str, pass_index: int) -> None:
    done = run_app(frameworks_python, tmp_path, TRANSFORMERS_APP, case)
    assert done.returncode == 1, done.stderr[-3000:]
    assert REFUSED in done.stderr.splitlines()[-1]  # the trainer's exception, still printed
    folder, attempt = _attempt(tmp_path)
    assert attempt["status"] == "failed"
    assert attempt["first_error"]["stage"] == "train_step"
    assert attempt["oom"]["phase"] == phase
    assert attempt["oom"]["pass_index"] == pass_index
    assert attempt["oom"]["requested_bytes"] == 3 * 2**30
    _table_printed_once_and_kept(done.stderr, folder)


@pytest.mark.slow
def test_transformers_a_model_that_does_not_learn_fails_the_step_contract_by_name(
        frameworks_python: Path, tmp_path: Path) -> None:
    done = run_app(frameworks_python, tmp_path, TRANSFORMERS_APP, "lr0")
    assert done.returncode == 0, done.stderr[-3000:]
    _, attempt = _attempt(tmp_path)
    contract = _training_step(attempt)
    assert contract["passed"] is False
    assert contract["detail"].startswith(
        "parameters not updated by the step: bert.embeddings.word_embeddings.weight, ")
    assert attempt["output"]["training_step"]["parameters_changed"] == 0


# -- Accelerate ----------------------------------------------------------------------------------

ACCELERATE_APP = """
import torch
from accelerate import Accelerator
from kernodeck_diagnostic.trial.adapters.accelerate import trial_for

accelerator = Accelerator()
with trial_for(accelerator, "runs", params={"batch": 4}) as trial:
    with trial.stage("load_model"):
        model = torch.nn.Linear(8, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model, optimizer = accelerator.prepare(model, optimizer)
    for step in trial.passes(3):
        with trial.stage("train_step"):
            loss = torch.nn.functional.mse_loss(model(torch.randn(4, 8)), torch.randn(4, 1))
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
"""


@pytest.mark.slow
def test_accelerate_launch_keeps_one_attempt_per_process_named_by_rank(
        frameworks_python: Path, tmp_path: Path) -> None:
    done = _accelerate_launch(frameworks_python, tmp_path, ACCELERATE_APP)
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in (0, 1):
        folder = only_attempt(tmp_path / "runs" / f"rank-{rank}")
        attempt = attempt_of(folder)
        assert_valid_attempt(attempt)
        assert attempt["status"] == "completed"
        assert attempt["params"] == {"batch": 4, "rank": rank, "world_size": 2}
        assert [s["name"] for s in attempt["stages"]] == ["load_model"] + ["train_step"] * 3
        assert (folder / stage_summary.SUMMARY_FILE).is_file()
    # The table: printed by the main process alone.
    assert done.stderr.count("stage ") == 1


# Put before a program: each loss the adapter keeps until the batched check, whether it holds its
# autograd graph, printed (JSON) when the program ends.
KEPT_LOSSES = """
import atexit, json
from kernodeck_diagnostic.trial.adapters import attempt as watched_attempt

kept = []
observe = watched_attempt.LossWatch.observe


def watched(self, loss, step):
    kept.append(loss.grad_fn is None and not loss.requires_grad)
    return observe(self, loss, step)


watched_attempt.LossWatch.observe = watched
atexit.register(lambda: print(json.dumps(kept)))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("program", "steps"), [("lightning", 6), ("accelerate", 3)])
def test_the_losses_kept_for_their_batched_check_hold_no_graph(
        frameworks_python: Path, tmp_path: Path, program: str, steps: int) -> None:
    # Each loss is kept until its batch of losses is checked (``LossWatch``): one that held its
    # autograd graph would hold that memory meanwhile. Lightning hands a detached copy (the
    # adapter does not ask the tensor, a call into torch at every batch); the Accelerate adapter
    # detaches what ``backward`` is given. One process each.
    source = {"lightning": LIGHTNING_APP, "accelerate": ACCELERATE_APP}[program]
    done = run_app(frameworks_python, tmp_path, KEPT_LOSSES + source, "train")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [True] * steps
    assert attempt_of(only_attempt(tmp_path / "runs"))["status"] == "completed"


def _accelerate_launch(python: Path, work: Path, source: str) -> subprocess.CompletedProcess[str]:
    """``accelerate launch`` with two processes: ``--multi_gpu`` is its torchrun launcher, and
    ``ACCELERATE_USE_CPU`` (what ``accelerate config`` writes for a CPU machine) has them meet on
    the CPU, over gloo. Its own temporary folder: accelerate hands torchrun no log folder (it
    reads no ``PET_LOG_DIR``), and torchrun's, ``torchelastic_*``, is never removed."""
    (work / "train.py").write_text(source, encoding="utf-8")
    (work / "tmp").mkdir(exist_ok=True)
    return subprocess.run(
        [str(python), "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
         "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
         "--main_process_port", str(_free_port()), "train.py"],
        cwd=work, capture_output=True, text=True,
        env=app_env({"ACCELERATE_USE_CPU": "true", "TMPDIR": str(work / "tmp")}),
        timeout=240,
        stdin=subprocess.DEVNULL, check=False)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_the_adapters_benchmark_prints_every_measure(frameworks_python: Path,
                                                     tmp_path: Path) -> None:
    # benchmarks/adapters_probe.py end to end, small (six pairs each, the fewest with a 95 %
    # interval): every measure docs/performance.md quotes is printed. No timing is asserted.
    done = subprocess.run(
        [str(frameworks_python), str(ROOT / "benchmarks" / "adapters_probe.py"), "350", "0", "6"],
        cwd=tmp_path, capture_output=True, text=True, env=app_env(), timeout=600,
        stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stderr.splitlines()
               if line.startswith("KD-BENCH-ADAPTERS ")]
    found = json.loads(line.split(" ", 1)[1])
    interleaved = found["lightning_interleaved"]
    for measure in (found["accelerate_interleaved"], found["lightning_toggled"],
                    found["lightning_toggled_memory_calls"], found["transformers_toggled"],
                    *interleaved.values()):
        assert measure["pairs"] == 6
        assert measure["met"] in ("met", "missed", "undecided")
        low, high = measure["interval"]
        assert low <= measure["ratio"] <= high
    assert set(interleaved) == {"adapted_vs_bare", "empty_vs_bare", "hooks_vs_bare",
                                "adapted_vs_hooks"}
    assert found["transformers_toggled"]["bare_ms_per_step"] > 0
    assert found["attempt_alone"]["opcodes_per_batch"] > 0
    cold = found["attempt_cold"]
    assert cold["batches"] == 350
    assert cold["adapter_us"] > 0
    assert cold["floor_us"] > 0
    short = subprocess.run(
        [str(frameworks_python), str(ROOT / "benchmarks" / "adapters_probe.py"), "200", "0", "2"],
        cwd=tmp_path, capture_output=True, text=True, env=app_env(), timeout=120,
        stdin=subprocess.DEVNULL, check=False)
    assert short.returncode != 0  # a fit too short for a pair: refused, not an endless loop
    assert "BATCHES at least 250" in short.stderr


# -- ramp over a Lightning script ----------------------------------------------------------------

# 32 MiB per unit of batch in each training step, under a limit of its size plus 1.5 GiB.
RAMP_APP = """
import argparse, resource
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset
from kernodeck_diagnostic.trial.adapters.lightning import KernodeckCallback

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int)
batch = parser.parse_args().batch_size
torch.set_num_threads(1)


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch_xy, batch_idx):
        wide = torch.ones(batch, 8 * 2**20)
        x, y = batch_xy
        return torch.nn.functional.mse_loss(self.layer(x), y) + wide.sum() * 0

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


data = TensorDataset(torch.randn(8, 8), torch.randn(8, 1))
trainer = pl.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_progress_bar=False,
                     enable_model_summary=False, enable_checkpointing=False,
                     callbacks=[KernodeckCallback("runs", params={"batch": batch})])
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + 1500 * 2**20, size + 1500 * 2**20))
trainer.fit(Tiny(), DataLoader(data, batch_size=4))
"""


@pytest.mark.slow
@posix_only
def test_ramp_over_a_lightning_script_reads_its_attempts(pyz: Path, frameworks_python: Path,
                                                         tmp_path: Path) -> None:
    app, out = tmp_path / "train.py", tmp_path / "ramp-batch"
    app.write_text(RAMP_APP, encoding="utf-8")
    result = run_tool(sys.executable, pyz,
                      ["ramp", "--out", str(out), "--axis", "batch", "--start", "16",
                       "--stop", "64", "--", str(frameworks_python), str(app), "--batch-size",
                       "{batch}"],
                      env=clean_env({"LC_ALL": "C.UTF-8", "PYTHONPATH": str(SRC),
                                     **inductor_cache()}))
    assert result.returncode == 0, result.stderr
    import json

    attempts = json.loads((out / "ramp.json").read_text(encoding="utf-8"))["attempts"]
    assert [(item["value"], item["outcome"]) for item in attempts] == [
        (16, "passed"), (32, "passed"), (64, "out_of_memory")]
    assert attempts[2]["oom"]["phase"] == "first_pass"
    assert attempts[2]["oom"]["source"] == "attempt"
    assert attempts[1]["peak_memory_source"] == "attempt"


# -- a framework missing, and the table on its own -----------------------------------------------

@pytest.mark.parametrize(("module", "needed"), [
    ("lightning", "pytorch-lightning is not installed: this adapter needs pytorch-lightning 2.0 "
                  "or newer (pip install 'kernodeck-diagnostic[lightning]')"),
    ("transformers", "transformers is not installed: this adapter needs transformers 5.0 or "
                     "newer (pip install 'kernodeck-diagnostic[transformers]')"),
    ("accelerate", "accelerate is not installed: this adapter needs accelerate 1.0 or newer "
                   "(pip install 'kernodeck-diagnostic[accelerate]')"),
])
def test_a_missing_framework_says_so_in_one_line(module: str, needed: str) -> None:
    # This interpreter (the tests' own) has none of the frameworks.
    done = subprocess.run(
        [sys.executable, "-c", f"import kernodeck_diagnostic.trial.adapters.{module}"],
        capture_output=True, text=True, env=clean_env({"PYTHONPATH": str(SRC),
                                                       "LC_ALL": "C.UTF-8"}),
        timeout=60, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"kernodeck_diagnostic.trial.adapters.attempt.FrameworkMissing: {needed}")


def test_a_framework_too_old_names_the_version_needed() -> None:
    from kernodeck_diagnostic.trial.adapters.attempt import FrameworkMissing, framework

    found = __import__("importlib.metadata").metadata.version("pytest")
    with pytest.raises(FrameworkMissing) as raised:
        framework("pytest", "pytest", "999.0", "lightning")
    assert str(raised.value) == (
        f"pytest {found} is too old: this adapter needs pytest 999.0 or newer "
        "(pip install 'kernodeck-diagnostic[lightning]')")
    assert framework("pytest", "pytest", "1.0", "lightning") is pytest


def test_the_stage_table_counts_every_call_and_keeps_the_first_apart() -> None:
    """From the attempt's stage_summary (every call counted, whatever the log kept): a name's
    calls and failures, its first call's time apart from the mean, the completed calls' total,
    p95 and max; an attempt with records only (written before summaries) reads the same."""
    def record(name: str, pass_index: int | None, ms: float, peak: int,
               status: str = "completed") -> dict[str, Any]:
        return {"name": name, "pass_index": pass_index, "status": status, "duration_ms": ms,
                "memory": {"device": None, "rss_peak_bytes": peak}}

    records = [record("setup", None, 5.0, 100), record("train_batch", 0, 50.0, 300),
               *[record("train_batch", i, float(i), 200 + i) for i in range(1, 21)],
               record("train_batch", 21, 7.0, 900, "failed")]
    old = {row["stage"]: row for row in stage_summary.rows({"stages": records})}
    assert list(old) == ["setup", "train_batch"]
    assert (old["train_batch"]["count"], old["train_batch"]["failed"],
            old["train_batch"]["first_ms"], old["train_batch"]["total_ms"],
            old["train_batch"]["max_ms"], old["train_batch"]["peak_memory_bytes"]) == (
        22, 1, 50.0, 260.0, 50.0, 300)
    # A million calls, three of them kept in full: the summary's counts, not the records'.
    summary = {"stage": "train_batch", "stage_index": 1, "count": 1_000_000,
               "completed": 999_998, "failed": 2, "interrupted": 0, "total_ms": 2_000_000.0,
               "p50_ms": 2.0, "p95_ms": 3.5, "max_ms": 50.0, "rss_peak_bytes": 400,
               "device_peak_bytes": None}
    rows = stage_summary.rows({"stages": records[:4], "stage_summary": [summary]})
    by_name = {row["stage"]: row for row in rows}
    assert (by_name["train_batch"]["count"], by_name["train_batch"]["failed"],
            by_name["train_batch"]["first_ms"], by_name["train_batch"]["mean_ms"],
            by_name["train_batch"]["p95_ms"]) == (1_000_000, 2, 50.0, 2.0, 3.5)
    assert by_name["setup"]["count"] == 1  # no summary of its own yet: its record
    text = stage_summary.table(rows)
    assert text.splitlines()[0].split() == list(stage_summary.COLUMNS)
    assert text.splitlines()[1].split() == ["train_batch", "1000000", "2", "50.000",
                                            "2000000.000", "2.000", "3.500", "50.000", "0.0",
                                            "MiB"]
    assert stage_summary.rows({"stages": None}) == []


# -- docs/trial.md's examples, run as written ----------------------------------------------------

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "trial.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _example(adapter: str) -> str:
    """The guide's one example that imports ``adapter``."""
    (found,) = [block for block in FENCE.findall(GUIDE.read_text(encoding="utf-8"))
                if f"kernodeck_diagnostic.trial.adapters.{adapter} import" in block]
    return str(found)


@pytest.mark.slow
@pytest.mark.parametrize(("adapter", "stages"), [
    ("lightning", ["setup", "train_batch", "save_checkpoint"]),
    ("transformers", ["train_step", "save_checkpoint"]),
])
def test_the_guides_callback_examples_run_as_written(frameworks_python: Path, tmp_path: Path,
                                                     adapter: str, stages: list[str]) -> None:
    done = run_app(frameworks_python, tmp_path, _example(adapter))
    assert done.returncode == 0, done.stderr[-3000:]
    folder, attempt = _attempt(tmp_path)
    assert attempt["status"] == "completed"
    assert attempt["contracts_passed"] is True
    assert list(dict.fromkeys(s["name"] for s in attempt["stages"])) == stages
    _table_printed_once_and_kept(done.stderr, folder)


@pytest.mark.slow
def test_the_guides_accelerate_example_runs_as_written(frameworks_python: Path,
                                                       tmp_path: Path) -> None:
    done = _accelerate_launch(frameworks_python, tmp_path, _example("accelerate"))
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in (0, 1):
        attempt = attempt_of(only_attempt(tmp_path / "runs" / f"rank-{rank}"))
        assert attempt["status"] == "completed"
        assert attempt["params"]["rank"] == rank


def test_a_training_attempt_driven_by_events_without_a_framework(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # What the callbacks share, driven as a framework drives it: a batch that completes, one
    # that fails with MemoryError (Python's own out-of-memory error), the end the framework says.
    from kernodeck_diagnostic.trial.adapters.attempt import TrainingAttempt

    attempt = TrainingAttempt(tmp_path / "runs", {"batch": 2}, rank=1)
    attempt.start()
    attempt.open_stage("setup")
    attempt.close_stage("setup")
    attempt.batch_started()
    attempt.batch_ended()
    attempt.batch_started()
    error = MemoryError("no room")
    attempt.end(error)
    attempt.end()  # once only
    folder = only_attempt(tmp_path / "runs" / "rank-1")
    document = attempt_of(folder)
    assert [(s["name"], s["pass_index"], s["status"]) for s in document["stages"]] == [
        ("setup", None, "completed"), ("train_batch", 0, "completed"),
        ("train_batch", 1, "failed")]
    assert document["oom"]["phase"] == "later_pass"
    assert document["passes"]["completed"] == 1
    verdict, _, table = (folder / stage_summary.SUMMARY_FILE).read_text(
        encoding="utf-8").partition("\n\n")
    assert table.splitlines()[2].split()[:3] == ["train_batch", "2", "1"]  # 2 calls, 1 failed
    assert verdict == ("kernodeck-diagnostic: attempt failed; first error in stage train_batch: "
                       "MemoryError: no room")
    err = capsys.readouterr().err
    assert table not in err  # rank 1 keeps it; rank 0 alone prints it
    assert f"{verdict}; folder " in err  # the Trial's own end line: the same words
    assert attempt.next_attempt() is not attempt


# What summary.txt says above its table: the judge's verdict, in the end line's words. One row
# per cause that the table alone does not show (a stage table of completed calls).
@pytest.mark.parametrize(("drive", "said"), [
    ("passes", "kernodeck-diagnostic: attempt completed"),
    # The batch and the stage the program opened in it: 3 calls.
    ("caught", "kernodeck-diagnostic: attempt completed, judged failed: 1 of 3 stage calls "
               "failed (train_batch)"),
    ("nan", "kernodeck-diagnostic: attempt completed; contract failed: finite_loss "
            "(non-finite loss (nan) at step 1)"),
], ids=["a pass", "a failure the program caught", "a non-finite loss"])
def test_summary_txt_says_the_judges_verdict_above_its_table(tmp_path: Path, drive: str,
                                                             said: str) -> None:
    from kernodeck_diagnostic.trial.adapters.attempt import TrainingAttempt

    attempt = TrainingAttempt(tmp_path / "runs", {"batch": 2}, rank=1)
    attempt.start()
    for step in range(2):
        attempt.batch_started()
        if drive == "caught" and step == 1:
            with contextlib.suppress(KeyError), attempt.trial.stage("train_batch"):
                raise KeyError("id")
        attempt.observe_loss(float("nan") if drive == "nan" and step == 1 else 0.5, step)
        attempt.batch_ended()
    attempt.end()
    folder = only_attempt(tmp_path / "runs" / "rank-1")
    verdict, _, table = (folder / stage_summary.SUMMARY_FILE).read_text(
        encoding="utf-8").partition("\n\n")
    assert verdict.startswith(said), verdict
    assert table == stage_summary.table(stage_summary.rows(attempt_of(folder)))


# -- Transformers in a notebook: the error a cell's train() raised -------------------------------

NOTEBOOK_SETUP = """
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
from kernodeck_diagnostic.trial.adapters.transformers import KernodeckTrainerCallback

torch.manual_seed(0)
config = BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=32, num_labels=2)
model = BertForSequenceClassification(config)
steps = []

def breaks_at_the_third_step(module, inputs):
    if module.training:
        steps.append(True)
        if len(steps) == 3:
            raise RuntimeError("a layer broke at step 3")

hook = model.register_forward_pre_hook(breaks_at_the_third_step)
rows = [{"input_ids": torch.randint(0, 64, (12,)), "labels": i % 2} for i in range(16)]
args = TrainingArguments(output_dir="hf", max_steps=4, per_device_train_batch_size=4,
                         report_to="none", use_cpu=True, disable_tqdm=True,
                         logging_strategy="no", save_strategy="no")
callback = KernodeckTrainerCallback("runs")
trainer = Trainer(model=model, args=args, train_dataset=rows, callbacks=[callback])
"""


@pytest.mark.slow
def test_in_a_notebook_the_error_a_cells_train_raised_ends_its_attempt(
        frameworks_python: Path, tmp_path: Path) -> None:
    """In a kernel no error reaches sys.excepthook: the cell that ran trainer.train() ends with
    it, and the attempt is ended there as failed, the error in its stage; the next train() (the
    cell run again, the layer fixed) is an attempt of its own, never merged into the first."""
    from test_notebook import cells

    shown = cells(frameworks_python, tmp_path, NOTEBOOK_SETUP, "trainer.train()",
                  "hook.remove()\ntrainer.train()", env=inductor_cache())
    assert [cell["error"] for cell in shown] == [None, "RuntimeError", None], shown
    newest = (tmp_path / "runs" / "latest").read_text(encoding="utf-8").strip()
    (older,) = (path for path in (tmp_path / "runs").iterdir()
                if path.is_dir() and path.name != newest)
    first, second = attempt_of(older), attempt_of(tmp_path / "runs" / newest)
    assert first["status"] == "failed"
    assert (first["first_error"]["type"], first["first_error"]["stage"]) == (
        "RuntimeError", "train_step")
    assert "a layer broke at step 3" in first["first_error"]["message"]
    assert second["status"] == "completed"
    assert second["first_error"] is None
