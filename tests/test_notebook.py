"""The check and the trial in real Jupyter kernels, as a notebook's user meets them.

Each test starts a real ipykernel (the ``torch-cpu-kernel`` environment: torch 2.13.0 CPU,
ipykernel, nbclient, jupyter_client) and drives it cell by cell (``kernel_cells.py``, with
jupyter_client) or executes a notebook file end to end (nbclient).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

import envs
from conftest import ROOT, SRC, assert_valid_report, clean_env, run_tool

pytestmark = pytest.mark.slow

KERNEL_CELLS = ROOT / "tests" / "kernel_cells.py"
DRIVE_TIMEOUT_S = 600
REPORT_CELL = ("import json, kernodeck_diagnostic\n"
               "report = kernodeck_diagnostic.check(device='cpu')\n"
               "print('REPORT ' + json.dumps(report.to_dict()))")
RAISING_TORCH = "raise ImportError('the notebook folder torch.py')\n"


@pytest.fixture(scope="session")
def kernel_python() -> Path:
    return envs.python_of(envs.torch_cpu_kernel())


def drive(python: Path, argv: list[str], steps: Any = None,
          env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Run ``kernel_cells.py`` under ``python``: what each cell showed."""
    completed = subprocess.run(
        [str(python), str(KERNEL_CELLS), *argv], input=json.dumps(steps or []),
        capture_output=True, text=True, timeout=DRIVE_TIMEOUT_S, check=False,
        env=clean_env({"PYTHONPATH": str(SRC), **(env or {})}))
    assert completed.returncode == 0, completed.stderr[-4000:]
    shown: list[dict[str, Any]] = json.loads(completed.stdout)
    return shown


def cells(python: Path, folder: Path, *steps: dict[str, Any] | str,
          env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return drive(python, [str(folder)],
                 [{"code": step} if isinstance(step, str) else step for step in steps], env)


def report_in(shown: dict[str, Any]) -> dict[str, Any]:
    assert shown["error"] is None, shown["text"]
    line = next(line for line in shown["text"].splitlines() if line.startswith("REPORT "))
    report: dict[str, Any] = json.loads(line[len("REPORT "):])
    assert_valid_report(report)
    return report


def finding_ids(report: dict[str, Any]) -> set[str]:
    return {finding["id"] for finding in report["findings"]}


def attempt(folder: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((folder / "attempt.json").read_text("utf-8"))
    return document


def attempts(runs: Path) -> list[Path]:
    return sorted(path for path in runs.iterdir() if path.is_dir())


# -- the kernel's own import path ---------------------------------------------------------------

def test_a_torch_py_beside_the_notebook_fails_as_on_the_command_line(
        kernel_python: Path, tmp_path: Path) -> None:
    """Before: CPU_CHECK_PASSED with a LOCAL_MODULE_SHADOWS warning, the worker searching the
    standard library's zip first, while the next cell's ``import torch`` failed."""
    (tmp_path / "torch.py").write_text(RAISING_TORCH)
    shown = cells(kernel_python, tmp_path, REPORT_CELL, "import torch")
    report = report_in(shown[0])
    assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
    assert "TORCH_SHADOWED" in finding_ids(report)
    assert report["pytorch"]["origin"] == "working-folder"
    assert report["runtime"]["caller"] == {"kernel": True, "torch_imported": False,
                                           "torch_version": None, "torch_origin": None,
                                           "torch_same": None}
    assert shown[1]["error"] == "ImportError"  # what the notebook's own import does
    line = run_tool(kernel_python, ["-m", "kernodeck_diagnostic"],
                    ["--device", "cpu", "--output", "cli.json"], cwd=tmp_path,
                    env=clean_env({"PYTHONPATH": str(SRC)}))
    assert line.report is not None
    assert line.report["code"] == report["code"]
    assert "TORCH_SHADOWED" in finding_ids(line.report)
    assert str(tmp_path) not in json.dumps(report)


def test_a_torch_py_a_kernel_imported_is_told_to_restart_the_kernel(
        kernel_python: Path, tmp_path: Path) -> None:
    """Before: TORCH_SHADOWED's advice in a kernel was the command line's (rename the file), and
    the renamed file stayed the kernel's torch. Now it says to restart the kernel; applied: the
    file renamed, the same kernel still holds it, a restarted kernel imports the real torch."""
    (tmp_path / "torch.py").write_text("SHADOW = True\n")
    shown = cells(kernel_python, tmp_path, "import torch", REPORT_CELL,
                  "import os\nos.rename('torch.py', 'torch_demo.py')\nimport torch\n"
                  "print('shadow still', hasattr(torch, 'SHADOW'))")
    report = report_in(shown[1])
    advice = {finding["id"]: finding["next_action"] for finding in report["findings"]}
    assert advice["TORCH_SHADOWED"].startswith("Rename torch.py"), advice
    assert "Then restart the kernel (Kernel > Restart)" in advice["TORCH_SHADOWED"]
    assert "shadow still True" in shown[2]["text"]  # renaming alone: the kernel keeps it
    restarted = cells(kernel_python, tmp_path, "import torch\nprint(torch.__version__)")
    assert envs.TORCH_CPU_VERSION in restarted[0]["text"]


def test_a_kernel_that_put_torch_on_its_path_is_not_told_torch_is_missing(
        kernel_python: Path, tmp_path: Path) -> None:
    """A kernel of an interpreter without torch, whose cell appends a folder holding torch to
    sys.path: ``import torch`` works there, so the check must find it too (before: the worker
    searched the interpreter's own path and said TORCH_MISSING)."""
    installed = envs.site_packages(envs.torch_cpu_kernel())
    base, extra = tmp_path / "base", tmp_path / "extra"
    base.mkdir()
    extra.mkdir()
    for entry in installed.iterdir():
        if entry.name.startswith(("torch", "functorch")) or entry.suffix == ".pth":
            if entry.name.startswith(("torch", "functorch")):
                (extra / entry.name).symlink_to(entry)
            continue
        (base / entry.name).symlink_to(entry)
    notebook = tmp_path / "notebook"
    notebook.mkdir()
    without_torch = envs.python_of(envs.notorch())
    shown = drive(without_torch, [str(notebook)], [
        {"code": REPORT_CELL},
        {"code": f"import sys; sys.path.append({str(extra)!r})"},
        {"code": REPORT_CELL},
        {"code": "import torch; print(torch.__version__)"},
        {"code": REPORT_CELL}],
        env={"PYTHONPATH": f"{SRC}:{base}"})
    assert report_in(shown[0])["code"] == "TORCH_MISSING"  # the scenario is real
    after = report_in(shown[2])
    assert after["code"] == "CPU_CHECK_PASSED", after["summary"]
    assert shown[3]["error"] is None
    assert "2.13.0" in shown[3]["text"]
    caller = report_in(shown[4])["runtime"]["caller"]
    assert caller["torch_imported"] is True
    assert caller["torch_same"] is True
    assert caller["torch_origin"] == "elsewhere"  # a category, never the folder


def test_a_notebooks_folder_hides_no_standard_library_module_in_a_kernel(
        kernel_python: Path, tmp_path: Path) -> None:
    """A kernel searches the notebook's folder after the standard library: a statistics.py
    there hides nothing of it (the cell's own import gets the real one), while a numpy.py, found
    before site-packages, does hide NumPy, and both are said as the kernel sees them."""
    (tmp_path / "statistics.py").write_text("raise ImportError('mine')\n")
    (tmp_path / "numpy.py").write_text("raise ImportError('mine too')\n")
    shown = cells(kernel_python, tmp_path, REPORT_CELL, "import statistics", "import numpy")
    report = report_in(shown[0])
    hidden = {entry["name"]: entry["hides"] for entry in report["runtime"]["local_modules"]}
    assert "statistics" not in hidden
    assert hidden.get("numpy") == "torch-dependency"
    assert [cell["error"] for cell in shown[1:]] == [None, "ImportError"]


def test_a_kernel_holding_another_torch_than_the_check_found_is_told(
        kernel_python: Path, tmp_path: Path) -> None:
    """torch imported by the kernel, then a torch.py put beside the notebook: the kernel's cells
    still run the installed torch, the kernel's next start would not."""
    shown = cells(kernel_python, tmp_path,
                  "import torch",
                  f"open('torch.py', 'w').write({RAISING_TORCH!r})",
                  REPORT_CELL)
    report = report_in(shown[2])
    assert report["code"] == "TORCH_IMPORT_FAILED"
    found = {finding["id"]: finding for finding in report["findings"]}
    assert {"TORCH_SHADOWED", "CALLER_TORCH_DIFFERS"} <= set(found)
    assert "Restart the kernel" in found["CALLER_TORCH_DIFFERS"]["next_action"]
    caller = report["runtime"]["caller"]
    assert caller["kernel"] is True
    assert caller["torch_version"] == envs.TORCH_CPU_VERSION + "+cpu"
    assert caller["torch_origin"] == "site-packages"


def test_advice_from_a_kernel_is_in_the_notebooks_words_and_works_as_printed(
        kernel_python: Path, tmp_path: Path) -> None:
    """``%pip install`` (the kernel's own interpreter; ``!python -m pip`` may be another's) and
    ``check(device="gpu")`` rather than flags; each applied as printed, in a real kernel of a
    hard-linked copy of the environment (numpy is installed into the copy alone)."""
    environment = tmp_path / "environment"
    subprocess.run(["cp", "-al", str(envs.torch_cpu_kernel()), str(environment)], check=True,
                   timeout=300)
    notebook = tmp_path / "notebook"
    notebook.mkdir()
    before = cells(envs.python_of(environment), notebook, REPORT_CELL)
    report = report_in(before[0])
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["next_action"] == ('Conclude nothing about CUDA or ROCm: run '
                                     'check(device="gpu") to check the GPU.')
    advice = {finding["id"]: finding["next_action"] for finding in report["findings"]}
    # The whole line, as printed: before, "%pip install numpy (with the same interpreter)."
    # ran pip with those words, a shell syntax error.
    assert advice["NUMPY_MISSING"] == "%pip install numpy"
    gpu = re.search(r"check\(device=\"gpu\"\)", report["next_action"])
    assert gpu is not None
    applied = cells(envs.python_of(environment), notebook, advice["NUMPY_MISSING"],
                    REPORT_CELL.replace("check(device='cpu')", gpu.group(0)),
                    REPORT_CELL)
    assert applied[0]["error"] is None, applied[0]["text"]
    on_gpu = report_in(applied[1])
    assert on_gpu["request"]["device"] == "gpu"
    assert on_gpu["code"] == "GPU_BACKEND_ABSENT"  # the CPU build, now asked about the GPU
    assert "NUMPY_MISSING" not in finding_ids(report_in(applied[2]))


def test_a_cell_running_the_check_shows_where_it_is(kernel_python: Path,
                                                    tmp_path: Path) -> None:
    """Before: a silent cell for as long as the check took (30 s on a hang). Now the cell shows
    the stage and the time used, as the command line's live line does; ``progress=`` takes a
    function of its own, and False shows nothing."""
    shown = cells(kernel_python, tmp_path,
                  "import kernodeck_diagnostic\nreport = kernodeck_diagnostic.check(device='cpu')",
                  "seen = []\nreport = kernodeck_diagnostic.check(device='cpu', "
                  "progress=lambda stage, elapsed: seen.append(stage))\n"
                  "print(sorted(set(seen)))",
                  "report = kernodeck_diagnostic.check(device='cpu', progress=False)")
    assert re.search(r"\.\.\. \d+\.\d s / 30 s", shown[0]["text"]), shown[0]
    assert "'import'" in shown[1]["text"]
    assert " s / 30 s" not in shown[1]["text"] + shown[2]["text"]


# -- the trial across cells ---------------------------------------------------------------------

def test_a_trial_spans_cells_and_refuses_use_after_its_end(kernel_python: Path,
                                                           tmp_path: Path) -> None:
    shown = cells(
        kernel_python, tmp_path,
        "from kernodeck_diagnostic import Trial\ntrial = Trial('runs').start()",
        "with trial.stage('load'):\n    loaded = True\ntrial",
        "trial.expect('accuracy', False, 'accuracy 0.2 < 0.9 | *wanted*')\ntrial.end()",
        "trial.stage('late')",
        "trial.expect('late', True)",
        "with trial:\n    pass")
    assert [step["error"] for step in shown] == [None, None, None, "RuntimeError",
                                                 "RuntimeError", "RuntimeError"]
    assert "this attempt has ended" in shown[3]["text"]
    assert "attempt running" in shown[1]["markdown"]  # ``trial`` as a cell's last line
    summary = shown[2]["markdown"]
    assert "attempt completed" in summary
    # Its plain-text form (a console, nbconvert --to script): text, not the markdown's escapes.
    plain = shown[2]["text"]
    assert plain.startswith("kernodeck-diagnostic: attempt completed; contract failed: "
                            "accuracy (accuracy 0.2 < 0.9 | *wanted*)"), plain
    assert "\nload   1      0 " in plain, plain
    assert "**" not in plain
    assert "&lt;" not in plain
    assert "contract `accuracy` **failed**: accuracy 0.2 &lt; 0.9 \\| \\*wanted\\*" in summary
    assert "| load | 1 | 0 |" in summary  # one call, none failed
    (folder,) = attempts(tmp_path / "runs")
    document = attempt(folder)
    assert document["status"] == "completed"
    assert document["contracts_passed"] is False
    assert document["command"] == ["python", "ipykernel"]


def test_passes_take_a_dataloader_and_a_pass_never_asked_for_is_no_missing_pass(
        kernel_python: Path, tmp_path: Path) -> None:
    loader = ("import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
              "loader = DataLoader(TensorDataset(torch.arange(6.0)), batch_size=2)\n"
              "from kernodeck_diagnostic import Trial\n")
    shown = cells(
        kernel_python, tmp_path,
        loader + "with Trial('runs') as whole:\n    for (batch,) in whole.passes(loader):\n"
                 "        with whole.stage('sum'):\n            total = batch.sum()",
        "with Trial('runs') as cut:\n    for step, (batch,) in zip(cut.passes(10), loader):\n"
        "        with cut.stage('sum'):\n            total = batch.sum()",
        "print(whole.folder, cut.folder)")
    assert [step["error"] for step in shown] == [None, None, None]
    whole, cut = (Path(tmp_path, name) for name in shown[2]["text"].split())
    assert attempt(whole)["status"] == "completed"
    assert attempt(whole)["passes"]["requested"] == attempt(whole)["passes"]["completed"] == 3
    # zip() asked passes(10) for a fourth pass, then the loader had no more: the work the
    # program asked for all ran (issue 41), and where it left the passes is said
    assert attempt(cut)["status"] == "completed"
    assert attempt(cut)["passes"]["completed"] == 3
    assert attempt(cut)["passes"]["left_at_pass"] == 3
    assert "attempt completed" in shown[1]["markdown"]


def test_interrupt_and_sigterm_inside_an_attempt_in_a_kernel(kernel_python: Path,
                                                             tmp_path: Path) -> None:
    """The stop button ends the attempt as interrupted and keeps the kernel; SIGTERM ends the
    attempt as interrupted, then the kernel (IPython alone would catch the SystemExit)."""
    wait = ("import time\nfrom kernodeck_diagnostic import Trial\n"
            "with Trial('runs') as trial:\n    with trial.stage('wait'):\n"
            "        time.sleep(60)")
    shown = cells(kernel_python, tmp_path,
                  {"code": wait, "interrupt_after_s": 4},
                  "print('still here', trial.folder)",
                  {"code": wait, "sigterm_after_s": 4},
                  "print('never')")
    assert shown[0]["error"] == "KeyboardInterrupt"
    assert shown[0]["alive"]
    assert "still here" in shown[1]["text"]
    assert shown[2]["alive"] is False
    assert len(shown) == 3
    first, second = attempts(tmp_path / "runs")
    for folder in (first, second):
        document = attempt(folder)
        assert document["status"] == "interrupted"
        assert document["stages"][-1]["status"] == "interrupted"


# -- docs/trial.md's notebook section, and a notebook executed end to end -----------------------

def notebook_cells() -> list[str]:
    """The python cells of docs/trial.md's "In a notebook" section, as written."""
    text = (ROOT / "docs" / "trial.md").read_text(encoding="utf-8")
    section = text.split("\n## In a notebook\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def test_the_notebook_section_of_the_trial_guide_runs_as_written(kernel_python: Path,
                                                                 tmp_path: Path) -> None:
    written = notebook_cells()
    assert len(written) >= 4
    shown = cells(kernel_python, tmp_path, *written)
    assert [step["error"] for step in shown] == [None] * len(written)
    assert "attempt completed" in shown[-1]["markdown"]
    (folder,) = attempts(tmp_path / "runs")
    document = attempt(folder)
    assert document["status"] == "completed"
    assert document["contracts_passed"] is True
    assert document["passes"]["completed"] == 3


def write_notebook(path: Path, sources: list[str]) -> None:
    """A notebook file (nbformat 4) of code cells."""
    path.write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
            "name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [{"cell_type": "code", "id": f"cell{index}", "metadata": {},
                   "execution_count": None, "outputs": [], "source": source}
                  for index, source in enumerate(sources)]}), encoding="utf-8")


def test_a_notebook_executed_end_to_end_shows_the_check_and_the_trial(
        kernel_python: Path, tmp_path: Path) -> None:
    """nbclient, as ``jupyter nbconvert --execute``: the check's report and the trial's summary
    are the cells' displays; two runs of the notebook record the same command (its name, never
    the kernel's connection file), so ``compare`` does not list it as changed."""
    notebook = tmp_path / "train.ipynb"
    write_notebook(notebook, [
        "import kernodeck_diagnostic\nkernodeck_diagnostic.check(device='cpu')",
        *notebook_cells()])
    # Jupyter Server 2 names the notebook to its kernels this way (a path: only its name stays).
    session = {"JPY_SESSION_NAME": str(notebook)}
    for _ in range(2):
        shown = drive(kernel_python, ["--notebook", str(notebook)], env=session)
        assert "CPU_CHECK_PASSED" in shown[0]["markdown"]
        assert "attempt completed" in shown[-1]["markdown"]
        # Before: the check's live line, emptied at its end, stayed as an empty output.
        assert re.search(r"check done in \d+\.\d s", shown[0]["text"]), shown[0]
        assert [cell["empty_outputs"] for cell in shown] == [0] * len(shown)
    first, second = attempts(tmp_path / "runs")
    assert attempt(first)["command"] == ["python", "ipykernel", "train.ipynb"]
    compared = run_tool(kernel_python, ["-m", "kernodeck_diagnostic", "compare"],
                        [str(first), str(second), "--format", "json"],
                        env=clean_env({"PYTHONPATH": str(SRC)}))
    fields = [change["field"] for change in json.loads(compared.stdout)["changes"]]
    assert not [field for field in fields if field.startswith("command")], fields


def test_the_stop_button_and_sigterm_end_an_attempt_begun_with_start(kernel_python: Path,
                                                                     tmp_path: Path) -> None:
    """Before: with ``start()``/``end()`` the stop button left the attempt open (inside
    ``passes()`` too: no attempt.json, later stages accepted) and the next ``end()`` recorded
    ``completed``; SIGTERM's ``SystemExit`` was swallowed by IPython with nothing written. Now
    the cell an interrupt or SIGTERM stopped ends the attempt, ``interrupted`` and whole, and
    every later use is refused in one line; SIGTERM then ends the kernel, as without a trial."""
    begin = ("import time\nfrom kernodeck_diagnostic import Trial\n"
             "trial = Trial('runs').start()\nwith trial.stage('load'):\n    pass\n")
    in_passes = ("for step in trial.passes(3):\n    with trial.stage('train'):\n"
                 "        time.sleep(60)")
    between = "with trial.stage('load'):\n    pass\ntime.sleep(60)"  # outside every stage
    shown = cells(kernel_python, tmp_path,
                  {"code": begin + in_passes, "interrupt_after_s": 4},
                  "with trial.stage('late'):\n    pass",
                  "trial.end()",
                  {"code": begin + between, "interrupt_after_s": 4},
                  "trial.end()",
                  {"code": begin + in_passes, "sigterm_after_s": 4},
                  "print('never')")
    assert [step["error"] for step in shown[:5]] == [
        "KeyboardInterrupt", "RuntimeError", "RuntimeError", "KeyboardInterrupt", "RuntimeError"]
    assert "attempt interrupted" in shown[0]["markdown"]  # the summary, in the stopped cell
    assert "RuntimeError: Trial.stage(): this attempt ended interrupted" in shown[1]["text"]
    assert "RuntimeError: Trial.end(): this attempt ended interrupted" in shown[2]["text"]
    assert all(step["alive"] for step in shown[:5])
    assert shown[5]["alive"] is False
    assert len(shown) == 6
    passes, outside, terminated = attempts(tmp_path / "runs")
    for folder in (passes, outside, terminated):
        document = attempt(folder)
        assert document["status"] == "interrupted", folder
        assert document["first_error"] is None
    assert attempt(passes)["stages"][-1]["name"] == "train"
    assert attempt(passes)["stages"][-1]["status"] == "interrupted"
    assert attempt(passes)["passes"]["completed"] == 0
    assert attempt(outside)["stages"][-1]["status"] == "completed"
    assert attempt(terminated)["signal"]["stage"] == "train"


def test_sigterm_between_cells_ends_an_attempt_begun_with_start(kernel_python: Path,
                                                                tmp_path: Path) -> None:
    """SIGTERM while the kernel is idle (a job's time limit between two cells): before, it
    raised in the kernel's own loop and no attempt.json was written; now the attempt ends at
    once, ``interrupted`` with no stage open, then the kernel."""
    shown = cells(kernel_python, tmp_path,
                  "from kernodeck_diagnostic import Trial\ntrial = Trial('runs').start()\n"
                  "with trial.stage('load'):\n    pass",
                  {"sigterm_idle_s": 2})
    assert shown[0]["error"] is None
    assert shown[1]["alive"] is False
    (folder,) = attempts(tmp_path / "runs")
    document = attempt(folder)
    assert document["status"] == "interrupted"
    assert document["signal"]["stage"] is None
    assert document["last_completed_stage"] == "load"


def test_advice_for_another_interpreter_checked_from_a_kernel_stays_in_the_notebooks_words(
        kernel_python: Path, cpu_torch_python: Path, tmp_path: Path) -> None:
    """``check(python=...)`` in a kernel: before, the report had no ``runtime.caller`` (another
    interpreter) and its advice went back to the command line's flags (``run without --device
    cpu``). Now check()'s arguments, applied as printed in the next cell (with the same
    ``python=``); pip's command stays the checked interpreter's (``%pip`` would install into
    the kernel's)."""
    notebook = tmp_path / "notebook"
    notebook.mkdir()
    other = REPORT_CELL.replace("check(device='cpu')",
                                f"check(python={str(cpu_torch_python)!r}, device='cpu')")
    report = report_in(cells(kernel_python, notebook, other)[0])
    assert report["runtime"]["caller"] is None  # another interpreter: nothing of the kernel's
    assert report["runtime"]["called_from_kernel"] is True
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["next_action"] == ('Conclude nothing about CUDA or ROCm: call check() again '
                                     'with the same python= and device="gpu" to check the GPU.')
    assert "--" not in report["next_action"]
    advice = {finding["id"]: finding["next_action"] for finding in report["findings"]}
    assert "%pip" not in " ".join(advice.values())
    gpu = re.search(r"device=\"gpu\"", report["next_action"])
    assert gpu is not None
    applied = report_in(cells(kernel_python, notebook,
                              other.replace("device='cpu'", gpu.group(0)))[0])
    assert applied["request"]["device"] == "gpu"
    assert applied["code"] == "GPU_BACKEND_ABSENT"  # the CPU build, now asked about the GPU
    assert applied["runtime"]["called_from_kernel"] is True
