"""The ways people run and share the check: formats, languages, other interpreters, the API."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

import kernodeck_diagnostic
from conftest import (
    ROOT,
    assert_valid_report,
    clean_env,
    fake_gpu_env,
    pyenv_python,
    read_terminal,
    run_tool,
)

# -- formats ------------------------------------------------------------------------------------

def test_json_format_is_the_report(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--format", "json", "--output", str(out)],
                      env=fake_gpu_env("cuda_pass"))
    printed = json.loads(result.stdout)
    assert_valid_report(printed)
    assert printed == result.report


def test_markdown_format_is_ready_to_paste(pyz: Path) -> None:
    result = run_tool(sys.executable, pyz, ["--format", "markdown"],
                      env=fake_gpu_env("oom_at_allocation"))
    assert result.returncode == 9
    lines = result.stdout.splitlines()
    assert lines[0] == "### kernodeck-diagnostic report"
    assert "**FAILED** `OUT_OF_MEMORY` (exit 9), stage `compute`" in lines[2]
    assert "| Field | Value |" in lines
    assert "\033[" not in result.stdout


# -- languages ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("env", "args", "headline"), [
    ({"LANG": "pt_BR.UTF-8"}, [], "APROVADO GPU_CHECK_PASSED (código de saída 0) na etapa compute"),
    ({"LANG": "fr_FR.UTF-8"}, [], "RÉUSSI GPU_CHECK_PASSED (code de sortie 0) à l'étape compute"),
    ({"LC_ALL": "fr_FR.UTF-8", "LANG": "pt_BR.UTF-8"}, [], "RÉUSSI GPU_CHECK_PASSED"),
    ({"LANG": "pt_BR.UTF-8"}, ["--lang", "en"], "PASSED GPU_CHECK_PASSED (exit 0)"),
    ({"LANG": "de_DE.UTF-8"}, [], "PASSED GPU_CHECK_PASSED (exit 0)"),
])
def test_language_from_locale_and_flag(pyz: Path, env: dict[str, str], args: list[str],
                                       headline: str) -> None:
    result = run_tool(sys.executable, pyz, args, env=fake_gpu_env("cuda_pass", **env))
    assert result.headline.startswith(headline)


def test_json_keeps_english_whatever_the_language(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--lang", "pt", "--output", str(out)],
                      env=fake_gpu_env("oom_at_allocation"))
    assert result.headline.startswith("FALHOU")
    assert result.report is not None
    assert result.report["summary"] == "Allocation on the device failed: out of memory."


@pytest.mark.parametrize(("language", "prefix", "words"), [
    ("pt", "kernodeck-diagnostic: erro: ", "entre 5 e 120"),
    ("fr", "kernodeck-diagnostic: erreur: ", "entre 5 et 120"),
])
def test_usage_errors_in_the_users_language(pyz: Path, language: str, prefix: str,
                                            words: str) -> None:
    result = run_tool(sys.executable, pyz, ["--lang", language, "--timeout", "2"])
    assert result.returncode == 2
    assert result.stderr.startswith(prefix)
    assert words in result.stderr


# -- another interpreter ------------------------------------------------------------------------

@pytest.mark.slow
def test_python_flag_diagnoses_the_cpu_venv_from_another_interpreter(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    front = pyenv_python("3.12") or Path(sys.executable)
    out = tmp_path / "report.json"
    result = run_tool(front, pyz, ["--python", str(cpu_torch_python), "--device", "cpu",
                                   "--output", str(out)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.report is not None
    assert result.report["code"] == "CPU_CHECK_PASSED"
    assert result.report["runtime"]["python_version"].startswith("3.11.")
    assert result.report["runtime"]["environment_kind"] == "venv"
    assert str(cpu_torch_python) not in json.dumps(result.report) + result.stdout


@pytest.mark.slow
def test_python_flag_diagnoses_the_cuda_venv(cuda_torch_python: Path, pyz: Path,
                                             tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--python", str(cuda_torch_python), "--output",
                                            str(out)])
    assert result.returncode == 6
    assert result.report is not None
    assert result.report["pytorch"]["cuda_build"] == "13.0"


@pytest.mark.slow
def test_python_flag_with_a_bare_pyenv_python(pyz: Path, tmp_path: Path) -> None:
    python = pyenv_python("3.9")
    if python is None:
        pytest.skip("no pyenv Python 3.9 here")
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--python", str(python), "--output", str(out)])
    assert result.returncode == 3
    assert result.report is not None
    assert result.report["runtime"]["python_version"].startswith("3.9.")


@pytest.mark.parametrize(("target", "said"), [
    ("/nonexistent/python", "--python: no such file;"),
    ("README.md", "--python: that file is not executable;"),
    ("LICENSE", "--python: that file is not executable;")])
def test_python_flag_refuses_what_is_not_a_python(pyz: Path, target: str, said: str) -> None:
    # Each reason has its own message (tests/test_verdicts_processes.py tries the others).
    result = run_tool(sys.executable, pyz, ["--python", str(ROOT / target)
                                            if not target.startswith("/") else target])
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"kernodeck-diagnostic: error: {said}")
    assert result.stderr.rstrip().endswith("(see --help)")


@pytest.mark.parametrize("minor", ["2.7", "3.6", "3.8"])
def test_python_flag_names_the_minimum_version(pyz: Path, minor: str) -> None:
    python = pyenv_python(minor)
    if python is None:
        pytest.skip(f"no pyenv Python {minor} here")
    result = run_tool(sys.executable, pyz, ["--python", str(python)])
    assert result.returncode == 2
    assert f"Python {minor}; the minimum is 3.9" in result.stderr
    assert len(result.stderr.splitlines()) == 1


# -- paths, for the user's eyes only ------------------------------------------------------------

def test_show_paths_only_on_the_terminal(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    env = fake_gpu_env("cuda_pass")
    shown = run_tool(sys.executable, pyz, ["--show-paths", "--output", str(out)], env=env)
    fakes = str(ROOT / "tests" / "fakes" / "torch")
    assert f"torch {fakes}" in shown.stdout
    assert f"interpreter {sys.executable}" in shown.stdout
    assert fakes not in out.read_text()
    for fmt in ("json", "markdown"):  # paths never go there: asking for both is refused
        other = run_tool(sys.executable, pyz, ["--show-paths", "--format", fmt], env=env)
        assert other.returncode == 2
        assert other.stdout == ""
        assert other.stderr == (f"kernodeck-diagnostic: error: --show-paths contradicts --format "
                                f"{fmt}: the paths are shown in the text output only, never in "
                                f"JSON or markdown; give one of them (see --help)\n")


# -- the live line ------------------------------------------------------------------------------

def test_live_stage_line_on_a_terminal_only(pyz: Path) -> None:
    env = fake_gpu_env("cuda_pass", KD_FAKE_TORCH_IMPORT_DELAY="1.5")
    leader, follower = pty.openpty()
    with subprocess.Popen([sys.executable, str(pyz)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=follower, env=env) as process:
        stdout, _ = process.communicate(timeout=60)
    os.close(follower)
    seen = read_terminal(leader)
    assert b"importing torch... " in seen
    assert b" s / 30 s" in seen
    assert seen.endswith(b"\r\033[K")  # the line is cleared before the report
    assert b"importing torch" not in stdout
    piped = run_tool(sys.executable, pyz, [], env=env)
    assert "importing torch" not in piped.stderr  # not a terminal: nothing live


# -- the Python API -----------------------------------------------------------------------------

@pytest.mark.slow
def test_api_returns_a_report_for_a_diagnosed_failure() -> None:
    report = kernodeck_diagnostic.check(device="cpu", python=str(_notorch()))
    assert (report.code, report.exit_code, report.passed) == ("TORCH_MISSING", 3, False)
    data = report.to_dict()
    assert_valid_report(data)
    assert json.loads(report.to_json()) == data
    assert report._repr_markdown_().startswith("### kernodeck-diagnostic report")
    assert repr(report) == "<Report TORCH_MISSING exit=3 stage=import>"


def _notorch() -> Path:
    import envs

    return envs.python_of(envs.notorch())


@pytest.mark.parametrize("arguments", [
    {"device": "rocm"}, {"device": "tpu"}, {"device_index": -1},
    {"timeout": 4}, {"timeout": 121}, {"timeout": float("nan")},
    {"python": "/nonexistent/python"},
])
def test_api_refuses_invalid_arguments(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"."):
        kernodeck_diagnostic.check(**arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize("arguments", [{"device_index": 1.5}, {"timeout": "soon"}])
def test_api_refuses_arguments_of_the_wrong_type(arguments: dict[str, object]) -> None:
    with pytest.raises(TypeError, match=r"."):
        kernodeck_diagnostic.check(**arguments)  # type: ignore[arg-type]


@pytest.mark.slow
def test_api_from_a_notebook_like_script(cpu_torch_python: Path, tmp_path: Path) -> None:
    """A notebook kernel runs its own interpreter: check() diagnoses exactly that one."""
    script = tmp_path / "notebook_cell.py"
    script.write_text(
        "import sys, kernodeck_diagnostic\n"
        "report = kernodeck_diagnostic.check(device='cpu', timeout=60)\n"
        "assert report.passed, report.code\n"
        "assert report.to_dict()['runtime']['environment_kind'] == 'venv'\n"
        "assert 'torch' not in sys.modules  # the kernel itself did not import torch\n"
        "print(report._repr_markdown_().splitlines()[2])\n"
        "print(report.local_paths['interpreter'] == sys.executable)\n")
    completed = subprocess.run([str(cpu_torch_python), str(script)], capture_output=True,
                               text=True, timeout=180, check=False,
                               env=clean_env({"PYTHONPATH": str(ROOT / "src")}))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == [
        "**PASSED** `CPU_CHECK_PASSED` (exit 0), stage `compute`: Product and gradient verified "
        "on the CPU only.", "True"]


def test_output_refusal_in_the_users_language(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken.json"
    out.write_text("{}")
    result = run_tool(sys.executable, pyz, ["--lang", "pt", "--output", str(out)],
                      env=fake_gpu_env("cuda_pass"))
    assert result.returncode == 12
    assert "nunca é sobrescrito" in result.stderr
    assert out.read_text() == "{}"


TOOL_SENTENCES = {
    # scenario: (language, on the terminal, in the report)
    "wrong_product": ("fr", "résultat faux : product, loss, gradient",
                      "wrong product, loss, gradient"),
    "segfault_in_compute": (
        "pt", "o worker foi encerrado pelo sinal SIGSEGV durante compute (product)",
        "the worker was killed by signal SIGSEGV during compute (product), without a final "
        "result"),
}


@pytest.mark.parametrize("scenario", sorted(TOOL_SENTENCES))
def test_the_tools_own_error_sentences_are_translated(pyz: Path, tmp_path: Path,
                                                      scenario: str) -> None:
    language, says, english = TOOL_SENTENCES[scenario]
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--lang", language, "--output", str(out)],
                      env=fake_gpu_env(scenario))
    assert says in result.stdout
    assert result.report is not None
    assert result.report["error"]["message"] == english  # the report keeps English


def test_the_api_gives_the_kernels_the_command_lines_default_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: check(kernels=True) had 30 s, where a cold torch.compile alone takes 20-50 s.
    ``timeout=None`` (the default) means the default limit of what is asked."""
    from kernodeck_diagnostic import api

    seen: list[float] = []
    monkeypatch.setattr(api, "run",
                        lambda options, on_progress=None: seen.append(options.timeout_s))
    api.check(device="cpu", kernels=True)
    api.check(device="cpu")
    api.check(device="cpu", kernels=True, timeout=40)
    api.check(device="cpu", timeout=None)
    assert seen == [api.KERNELS_TIMEOUT_DEFAULT_S, api.TIMEOUT_DEFAULT_S, 40,
                    api.TIMEOUT_DEFAULT_S]


def test_the_lazy_public_names_are_listed_for_tab_completion() -> None:
    """Before: dir(kernodeck_diagnostic) lacked check, Report, Trial and OutputLedger (loaded on
    first use by __getattr__), so a notebook's tab completion never offered them."""
    import kernodeck_diagnostic

    assert {"check", "Report", "Trial", "OutputLedger"} <= set(dir(kernodeck_diagnostic))
