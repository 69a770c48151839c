"""Environments people break with interpreter settings, and the build facts known without a GPU.

Issue 9, items 3 and 7. Every case runs the tool as a user does (the zipapp or ``python -m``) in
a real interpreter with a real torch build, and first shows what the user's own program does in
the same setting: the check must agree with it.

- The real torch 2.13.0 CPU build in a venv without NumPy warns at import ("Failed to initialize
  NumPy"): under ``-W error`` or ``PYTHONWARNINGS=error`` the user's ``import torch`` fails.
- ``-P``/``-I`` keep the program's folder off the search path, ``-E`` ignores ``PYTHONPATH``,
  ``-S`` skips site-packages: the worker must import under the same options.
- The real torch 2.14.1 CUDA build, on this machine without a driver, knows its architectures,
  cuDNN and NCCL all the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import ROOT, Result, assert_valid_report, clean_env, run_tool
from kernodeck_diagnostic.worker import accelerators as worker

pytestmark = pytest.mark.slow

SRC = str(ROOT / "src")
NUMPY_WARNING = "Failed to initialize NumPy: No module named 'numpy'"
LOCAL_TORCH = "raise ImportError('a local torch.py, not the installed package')\n"


def user_program(python: Path, options: list[str], code: str = "import torch", *,
                 env: dict[str, str] | None = None, cwd: Path | None = None,
                 script: Path | None = None) -> subprocess.CompletedProcess[str]:
    """What the user's own program does with these interpreter options and environment."""
    target = [str(script)] if script is not None else ["-c", code]
    return subprocess.run([str(python), *options, *target], capture_output=True, text=True,
                          env=clean_env(env), cwd=cwd, timeout=180, check=False)


def check(python: Path, front: list[str], args: list[str], tmp_path: Path, *,
          env: dict[str, str] | None = None, cwd: Path | None = None) -> Result:
    """The tool run as ``python [OPTIONS] TOOL ARGS``, its report parsed and validated."""
    out = tmp_path / "report.json"
    if out.exists():
        out.unlink()
    result = run_tool(python, front, [*args, "--output", str(out)], env=clean_env(env), cwd=cwd)
    assert result.report is not None, result.stdout + result.stderr
    assert_valid_report(result.report)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def found(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in report["findings"]}


def entry(kind: str, pyz: Path) -> tuple[list[str], dict[str, str]]:
    """The tool's command after the interpreter, and the environment it needs."""
    if kind == "zipapp":
        return [str(pyz)], {}
    return ["-m", "kernodeck_diagnostic"], {"PYTHONPATH": SRC}


# -- item 3: warnings turned into errors ----------------------------------------------------------

@pytest.mark.parametrize("how", ["-W error", "PYTHONWARNINGS=error"])
@pytest.mark.parametrize("kind", ["zipapp", "python -m"])
def test_warnings_as_errors_fail_the_import_as_they_do_for_the_user(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, kind: str, how: str) -> None:
    options = ["-W", "error"] if how == "-W error" else []
    extra = {} if options else {"PYTHONWARNINGS": "error"}
    # The user's program: the real build's NumPy warning, as an error, stops `import torch`.
    program = user_program(cpu_torch_python, options, env=extra)
    assert program.returncode != 0
    assert f"UserWarning: {NUMPY_WARNING}" in program.stderr

    command, env = entry(kind, pyz)
    result = check(cpu_torch_python, [*options, *command], ["--device", "cpu"], tmp_path,
                   env={**env, **extra})
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"], report["stage"]) == (4, "TORCH_IMPORT_FAILED",
                                                                    "import")
    # Reported as what it is: the import error's type is the warning's category.
    assert report["error"]["type"] == "UserWarning"
    assert NUMPY_WARNING in report["error"]["message"]
    assert report["runtime"]["warnings_as_errors"] is True
    findings = found(report)
    warning_as_error = findings["WARNING_AS_ERROR"]
    assert warning_as_error["severity"] == "error"
    evidence = " ".join(warning_as_error["evidence"])
    assert "UserWarning" in evidence
    assert NUMPY_WARNING in evidence
    assert "turns warnings into errors" in evidence
    assert "-W error" in warning_as_error["next_action"]
    assert "ignore::UserWarning" in warning_as_error["next_action"]
    assert "NUMPY_MISSING" in findings  # the warning's own cause, read from the error
    assert report["findings"][0]["id"] == "WARNING_AS_ERROR"  # the error comes first
    assert "WARNING_AS_ERROR" in result.stdout


def test_an_ignore_filter_drops_the_warning_as_it_does_for_the_user(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """PYTHONWARNINGS=error,ignore::UserWarning: the user's import works and shows nothing."""
    extra = {"PYTHONWARNINGS": "error,ignore::UserWarning"}
    program = user_program(cpu_torch_python, [], env=extra)
    assert program.returncode == 0, program.stderr
    assert "Warning" not in program.stderr

    result = check(cpu_torch_python, [str(pyz)], ["--device", "cpu"], tmp_path, env=extra)
    report = result.report
    assert report is not None
    assert report["code"] == "CPU_CHECK_PASSED", result.stdout
    assert report["warnings"] == []  # the user's filter dropped it: it was never shown
    assert report["runtime"]["warnings_as_errors"] is True
    assert "WARNING_AS_ERROR" not in found(report)
    assert report["pytorch"]["numpy_present"] is False  # NumPy's absence is still a fact
    assert "NUMPY_MISSING" in found(report)


def test_default_filters_still_record_the_warning(cpu_torch_python: Path, pyz: Path,
                                                  tmp_path: Path) -> None:
    """No filter set: the warning the user sees is in the report; nothing is an error."""
    result = check(cpu_torch_python, [str(pyz)], ["--device", "cpu"], tmp_path)
    report = result.report
    assert report is not None
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["runtime"]["warnings_as_errors"] is False
    assert [(w["stage"], w["category"]) for w in report["warnings"]] == [("import",
                                                                          "UserWarning")]
    assert NUMPY_WARNING in report["warnings"][0]["message"]
    assert "WARNING_AS_ERROR" not in found(report)


def test_another_interpreter_does_not_get_the_fronts_options(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """``--python OTHER``: the front's -W error says nothing about how OTHER's program starts."""
    result = check(Path(sys.executable), ["-W", "error", str(pyz)],
                   ["--device", "cpu", "--python", str(cpu_torch_python)], tmp_path)
    report = result.report
    assert report is not None
    assert report["code"] == "CPU_CHECK_PASSED", result.stdout
    assert report["runtime"]["warnings_as_errors"] is False
    assert [w["category"] for w in report["warnings"]] == ["UserWarning"]


# Threading and dispatch variables holding values their libraries refuse (a typo in a job script):
# torch ignores them, or says so in a warning, and the user's program computes; so does the check,
# and the value never reaches the report or the terminal.
BOGUS_THREADING = {"OMP_NUM_THREADS": "abc", "MKL_THREADING_LAYER": "bogus",
                   "OMP_PROC_BIND": "bogus", "KMP_AFFINITY": "bogus",
                   "ATEN_CPU_CAPABILITY": "zq-avx9000-secret"}


def test_threading_variables_torch_refuses_are_no_failure(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    program = user_program(cpu_torch_python, [], "import torch; "
                           "print((torch.ones(2, 2) @ torch.ones(2, 2)).sum().item())",
                           env=BOGUS_THREADING)
    assert (program.returncode, program.stdout.strip()) == (0, "8.0"), program.stderr
    assert "ATEN_CPU_CAPABILITY" in program.stderr  # torch's own warning, to the user too
    result = check(cpu_torch_python, [str(pyz)], ["--device", "cpu"], tmp_path,
                   env=BOGUS_THREADING)
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"]) == (0, "CPU_CHECK_PASSED"), result.stdout
    said = [w["message"] for w in report["warnings"] if "ATEN_CPU_CAPABILITY" in w["message"]]
    assert len(said) == 1, report["warnings"]
    assert "<redacted>" in said[0]
    assert "avx9000" not in json.dumps(report) + result.stdout + result.stderr


# tracemalloc records every allocation: a real `import torch` of the CPU build took 2.0 s, 6.1 s
# with one frame and 66 s with 25 here. The check passes its limit at import with no word of why.
def test_tracemalloc_that_slows_the_import_past_the_limit_is_named(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    result = check(cpu_torch_python, [str(pyz)], ["--device", "cpu", "--timeout", "5"], tmp_path,
                   env={"PYTHONTRACEMALLOC": "25"})
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"], report["stage"]) == (10, "TIMEOUT", "import")
    assert report["runtime"]["tracemalloc_frames"] == 25
    finding = found(report)["TRACEMALLOC_ON"]
    assert finding["severity"] == "error"
    assert finding["evidence"] == [
        "tracemalloc traces every allocation with 25 frame(s) each (PYTHONTRACEMALLOC or -X "
        "tracemalloc)", "the time limit ended the check at the import stage"]
    assert "Unset PYTHONTRACEMALLOC" in result.stdout


def test_tracemalloc_as_an_interpreter_option_is_seen_too(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # `python -X tracemalloc app.py`: the worker gets the front's options, tracing included; the
    # check passes and says what it cost.
    result = check(cpu_torch_python, ["-X", "tracemalloc=1", str(pyz)], ["--device", "cpu"],
                   tmp_path)
    report = result.report
    assert report is not None
    assert (result.returncode, report["code"]) == (0, "CPU_CHECK_PASSED"), result.stdout
    assert report["runtime"]["tracemalloc_frames"] == 1
    assert found(report)["TRACEMALLOC_ON"]["severity"] == "warning"
    plain = check(cpu_torch_python, [str(pyz)], ["--device", "cpu"], tmp_path)
    assert plain.report is not None
    assert plain.report["runtime"]["tracemalloc_frames"] == 0
    assert "TRACEMALLOC_ON" not in found(plain.report)


# -- item 3: options that change where imports come from ------------------------------------------

@pytest.mark.parametrize("option", ["-P", "-I"])
def test_safe_path_keeps_the_programs_folder_off_the_search_path(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, option: str) -> None:
    """A torch.py beside the program: ``python -P app.py`` never sees it, nor must the check."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "torch.py").write_text(LOCAL_TORCH)
    (project / "app.py").write_text("import torch\nprint(torch.__version__)\n")
    tool = project / "kernodeck-diagnostic.pyz"
    shutil.copy(pyz, tool)
    shadowed = user_program(cpu_torch_python, [], script=project / "app.py", cwd=project)
    assert "a local torch.py" in shadowed.stderr  # without the option, it shadows
    program = user_program(cpu_torch_python, [option], script=project / "app.py", cwd=project)
    assert program.returncode == 0, program.stderr

    result = check(cpu_torch_python, [option, str(tool)], ["--device", "cpu"], tmp_path,
                   cwd=project)
    report = result.report
    assert report is not None
    assert report["code"] == "CPU_CHECK_PASSED", result.stdout
    assert report["pytorch"]["origin"] == "site-packages"


def test_ignore_environment_ignores_pythonpath_as_the_program_does(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """``python -E``: a PYTHONPATH entry holding a torch.py hides nothing."""
    elsewhere = tmp_path / "on-pythonpath"
    elsewhere.mkdir()
    (elsewhere / "torch.py").write_text(LOCAL_TORCH)
    extra = {"PYTHONPATH": str(elsewhere)}
    assert "a local torch.py" in user_program(cpu_torch_python, [], env=extra).stderr
    program = user_program(cpu_torch_python, ["-E"], env=extra)
    assert program.returncode == 0, program.stderr

    result = check(cpu_torch_python, ["-E", str(pyz)], ["--device", "cpu"], tmp_path, env=extra)
    report = result.report
    assert report is not None
    assert report["code"] == "CPU_CHECK_PASSED", result.stdout
    assert report["pytorch"]["origin"] == "site-packages"


def test_no_site_finds_no_torch_as_the_program_does(cpu_torch_python: Path, pyz: Path,
                                                    tmp_path: Path) -> None:
    """``python -S``: site-packages is not searched, so ``import torch`` fails."""
    program = user_program(cpu_torch_python, ["-S"])
    assert "No module named 'torch'" in program.stderr

    result = check(cpu_torch_python, ["-S", str(pyz)], ["--device", "cpu"], tmp_path)
    report = result.report
    assert report is not None
    assert report["code"] == "TORCH_MISSING", result.stdout
    assert report["stage"] == "import"


def test_a_pycache_prefix_gets_nothing_of_the_tools_temporary_folders(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """``PYTHONPYCACHEPREFIX`` names where bytecode goes, by each source's path: the worker's
    companions, loaded from a folder made for the run, write none there (one tree per run
    would pile up under the user's prefix); torch's own bytecode goes where it always does."""
    prefix = tmp_path / "prefix"
    for _ in range(2):
        report = check(cpu_torch_python, [str(pyz)], ["--device", "cpu"], tmp_path,
                       env={"PYTHONPYCACHEPREFIX": str(prefix)}).report
        assert report is not None
        assert report["code"] == "CPU_CHECK_PASSED"
    written = [path for path in prefix.rglob("*.pyc")] if prefix.exists() else []
    runs = [path for path in written
            if any(part.startswith("kernodeck-") and part != "kernodeck-diagnostic-test-envs"
                   for part in path.parts)]  # the run's folder: tempfile.mkdtemp("kernodeck-")
    assert written  # the prefix is used: torch's own bytecode is there
    assert runs == []


OPTION_SETS = {
    "optimise, bytes, user site, dev mode, filters": [
        "-OO", "-bb", "-s", "-X", "dev", "-X", "frozen_modules=off", "-W", "error::UserWarning",
        "-W", "ignore::DeprecationWarning:email"],
    "isolated": ["-I", "-W", "default", "-X", "utf8"],
    "no environment, safe path, no site": ["-E", "-P", "-S", "-O"],
}
STATE = ("import json, sys, warnings\n"
         "text = lambda p: getattr(p, 'pattern', p)\n"
         "print(json.dumps({'flags': list(sys.flags), 'warnoptions': sys.warnoptions,\n"
         "    'xoptions': sorted(sys._xoptions.items()),\n"
         "    'filters': [(f[0], text(f[1]), f[2].__name__, text(f[3]), f[4])\n"
         "                for f in warnings.filters]}))\n")


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_the_worker_options_recreate_the_fronts_interpreter(tmp_path: Path, name: str) -> None:
    """The options given to the worker start an interpreter in the front's very state: the
    same flags, -X options and warning filters (PYTHONWARNINGS given twice keeps its place)."""
    options = OPTION_SETS[name]
    env = {"PYTHONWARNINGS": "ignore::FutureWarning"}
    ask = (f"import sys; sys.path.insert(0, {SRC!r})\n"
           "from kernodeck_diagnostic.supervision.start import (\n"
           "    worker_options, interpreter_options)\n"
           "import json; print(json.dumps([interpreter_options(), worker_options(sys.executable),"
           " worker_options('/elsewhere/python3')]))\n")
    asked = user_program(Path(sys.executable), options, ask, env=env)
    assert asked.returncode == 0, asked.stderr
    given, for_same, for_other = json.loads(asked.stdout)
    assert for_same == given
    assert for_other == []  # another interpreter: the front's options say nothing about it
    front = user_program(Path(sys.executable), options, STATE, env=env)
    recreated = user_program(Path(sys.executable), given, STATE, env=env)
    assert front.returncode == recreated.returncode == 0, front.stderr + recreated.stderr
    front_state, worker_state = json.loads(front.stdout), json.loads(recreated.stdout)
    assert worker_state["flags"] == front_state["flags"]
    assert worker_state["xoptions"] == front_state["xoptions"]
    assert worker_state["filters"] == front_state["filters"]


def test_the_worker_puts_no_folder_back_under_safe_path(tmp_path: Path) -> None:
    """The worker's own -P/-I, whoever gave them (PYTHONSAFEPATH too), keep path0 out."""
    ask = (f"import sys; sys.path.insert(0, {SRC!r})\n"
           "from kernodeck_diagnostic.worker.stages import search_path0\n"
           "print(search_path0('/project'))\n")
    plain = user_program(Path(sys.executable), [], ask)
    assert plain.stdout.strip() == "/project"
    for options, env in ((["-P"], None), (["-I"], None), ([], {"PYTHONSAFEPATH": "1"})):
        if sys.version_info < (3, 11) and options != ["-I"]:
            continue
        said = user_program(Path(sys.executable), options, ask, env=env)
        assert said.stdout.strip() == "None", (options, env, said.stderr)


# -- item 7: build facts without a driver ---------------------------------------------------------

BUILD = ("import json, torch\n"
         "print(json.dumps([torch._C._cuda_getArchFlags(), torch.backends.cudnn.version(),\n"
         "                  '.'.join(map(str, torch.cuda.nccl.version())),\n"
         "                  torch.cuda.is_available()]))\n")


def test_cuda_build_without_a_driver_reports_its_build_facts(
        cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    said = user_program(cuda_torch_python, [], BUILD)
    assert said.returncode == 0, said.stderr
    flags, cudnn, nccl, available = json.loads(said.stdout)
    assert available is False
    assert flags  # known without a driver
    assert cudnn
    assert nccl

    result = check(cuda_torch_python, [str(pyz)], [], tmp_path)
    report = result.report
    assert report is not None
    assert report["code"] == "GPU_UNAVAILABLE", result.stdout
    pytorch = report["pytorch"]
    assert pytorch["arch_list"] == flags.split()
    assert "sm_90" in pytorch["arch_list"]
    assert pytorch["cudnn_version"] == str(cudnn)
    assert pytorch["nccl_version"] == nccl
    assert pytorch["build_fact_errors"] == {}


def test_cpu_build_has_no_build_facts_and_none_raised(cpu_torch_python: Path, pyz: Path,
                                                      tmp_path: Path) -> None:
    result = check(cpu_torch_python, [str(pyz)], [], tmp_path)
    report = result.report
    assert report is not None
    assert report["code"] == "GPU_BACKEND_ABSENT", result.stdout
    pytorch = report["pytorch"]
    assert (pytorch["arch_list"], pytorch["cudnn_version"], pytorch["nccl_version"]) == \
        (None, None, None)
    assert pytorch["build_fact_errors"] == {}  # absent, not raised


def test_cpu_mode_reads_no_build_fact(cuda_torch_python: Path, pyz: Path,
                                      tmp_path: Path) -> None:
    """CPU mode asks nothing of the GPU stack: the facts stay null, unread."""
    result = check(cuda_torch_python, [str(pyz)], ["--device", "cpu"], tmp_path)
    report = result.report
    assert report is not None
    assert report["code"] == "CPU_CHECK_PASSED"
    pytorch = report["pytorch"]
    assert (pytorch["arch_list"], pytorch["cudnn_version"], pytorch["nccl_version"],
            pytorch["build_fact_errors"]) == (None, None, None, None)


def test_a_build_fact_that_raises_is_kept_apart_from_one_that_is_absent() -> None:
    """Each fact on its own: a raising cuDNN query (a cuDNN version mismatch raises
    RuntimeError) spoils neither the architectures nor NCCL, and is named."""
    def cudnn_mismatch() -> int:
        raise RuntimeError("cuDNN version incompatibility")

    torch = SimpleNamespace(
        _C=SimpleNamespace(_cuda_getArchFlags=lambda: "sm_80 sm_90"),  # no _nccl_version
        backends=SimpleNamespace(cudnn=SimpleNamespace(version=cudnn_mismatch)),
        cuda=SimpleNamespace(get_arch_list=lambda: []))
    values, raised = worker.build_facts(torch)
    assert values == {"arch_list": ["sm_80", "sm_90"], "cudnn_version": None,
                      "nccl_version": None}
    assert raised == {"cudnn_version": "RuntimeError"}


def test_a_build_without_a_usable_gpu_still_lists_its_architectures() -> None:
    """Releases whose get_arch_list() returns [] without a usable GPU: the build's own flags."""
    torch = SimpleNamespace(_C=SimpleNamespace(_cuda_getArchFlags=lambda: "sm_120 compute_120"),
                            cuda=SimpleNamespace(get_arch_list=lambda: []))
    assert worker.build_arch_list(torch) == ["sm_120", "compute_120"]


def test_the_fronts_own_options_pass_by_default(monkeypatch: pytest.MonkeyPatch,
                                                notorch_python: Path) -> None:
    """The worker's argv: the front's options before the worker's path, only for its own
    interpreter; no first import path (--places) under -P/-I."""
    from kernodeck_diagnostic.supervision import events, start, supervisor

    seen: list[list[str]] = []

    def fake_supervise(started: Any, request: list[str], **_: Any) -> Any:
        seen.append([*started.argv, *request])  # the worker's whole command line
        return supervisor.WorkerRun(events.WorkerState(), "finished", 0, 0.0)

    monkeypatch.setattr(supervisor, "_supervise", fake_supervise)
    monkeypatch.setattr(start, "interpreter_options", lambda: ["-P", "-W", "error"])
    supervisor.run_worker(sys.executable, device="cpu", device_index=0, timeout_s=5,
                          path0=os.getcwd())
    supervisor.run_worker(str(notorch_python), device="cpu", device_index=0, timeout_s=5,
                          path0=os.getcwd())
    same, other = seen
    assert same[1:4] == ["-P", "-W", "error"]
    assert same[4].endswith("worker.py")
    assert "--places" not in same
    assert other[1].endswith("worker.py")
    assert "--places" in other
