"""``compare`` and ``summarize`` on real reports written by the tool, run from the zipapp.

Reports come from real runs: fake-GPU scenarios (a pass, out of memory, an architecture missing from
the build, a ROCm pass) and, marked slow, a real CPU torch build and a Python without torch. Then
they are compared and summarized the way a user does, together with files that are not readable
reports: invalid JSON, another schema version, not a report, missing. Content is asserted, not
whole outputs.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Result, fake_gpu_env, run_tool
from kernodeck_diagnostic.report.codes import VERDICTS
from kernodeck_diagnostic.report.compare import compare
from kernodeck_diagnostic.report.summary import SEVERITY
from library_fixtures import extension, kernel, with_libraries

SCENARIOS = {"pass": "cuda_pass", "oom": "oom_at_allocation", "arch": "arch_not_in_build",
             "rocm": "rocm_pass"}


@pytest.fixture(scope="module")
def made(pyz: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of real reports, one per fake-GPU scenario, plus files that are not reports."""
    folder = tmp_path_factory.mktemp("made")
    for name, scenario in SCENARIOS.items():
        result = run_tool(sys.executable, pyz, ["--output", str(folder / f"{name}.json")],
                          env=fake_gpu_env(scenario))
        assert result.report is not None, result.stdout + result.stderr
    shutil.copy(folder / "pass.json", folder / "pass-copy.json")
    (folder / "bad.json").write_text('{"schema_version": 1, "code": ', encoding="utf-8")
    (folder / "v2.json").write_text(json.dumps({**_read(folder / "pass.json"),
                                                "schema_version": 2}), encoding="utf-8")
    (folder / "list.json").write_text("[1, 2, 3]", encoding="utf-8")
    (folder / "unknown-code.json").write_text(json.dumps({**_read(folder / "pass.json"),
                                                          "code": "NO_SUCH_CODE"}),
                                              encoding="utf-8")
    slow_import = _read(folder / "pass.json")
    slow_import["timings_ms"]["import"] = 2500.0
    (folder / "slow-import.json").write_text(json.dumps(slow_import), encoding="utf-8")
    return folder


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _tool(pyz: Path, *args: str | Path) -> Result:
    return run_tool(sys.executable, pyz, [str(arg) for arg in args])


def _row(output: str, label: str) -> list[str]:
    """The cells of the text table's row whose first cell is ``label``."""
    rows = [line.split() for line in output.splitlines() if line.split()[:1] == [label]]
    assert len(rows) == 1, output
    return rows[0]


def _no_machine_paths(result: Result, folder: Path) -> None:
    for text in (result.stdout, result.stderr):
        assert str(folder) not in text
        assert "Traceback" not in text


# -- compare ---------------------------------------------------------------------------------------

def test_compare_a_pass_with_out_of_memory(pyz: Path, made: Path) -> None:
    result = _tool(pyz, "compare", made / "pass.json", made / "oom.json")
    assert result.returncode == 21, result.stderr  # COMPARE_REGRESSION: a pass became a failure
    lines = result.stdout.splitlines()
    assert lines[0] == "code changed: GPU_CHECK_PASSED -> OUT_OF_MEMORY"
    assert lines[1] == "regression: A passed (GPU_CHECK_PASSED), B failed (OUT_OF_MEMORY)"
    lines = [lines[0], *lines[2:]]
    assert lines[1].split() == ["field", "A", "(pass.json)", "B", "(oom.json)"]
    assert _row(result.stdout, "exit_code") == ["exit_code", "0", "9"]
    assert _row(result.stdout, "status") == ["status", "passed", "failed"]
    assert _row(result.stdout, "execution.product_verified")[1:] == ["true", "false"]
    assert _row(result.stdout, "error.type")[1:] == ["null", "OutOfMemoryError"]
    assert _row(result.stdout, "error.step")[1:] == ["null", "allocate"]
    # What did not change is not shown; neither is the code row (the first line says it).
    for unchanged in ("pytorch.version", "pytorch.backend", "runtime.python_version", "code"):
        assert not any(line.startswith(unchanged + " ") for line in lines[1:])
    assert result.stderr == ""
    _no_machine_paths(result, made)


def test_compare_names_findings_added_and_removed(pyz: Path, made: Path) -> None:
    there = _tool(pyz, "compare", made / "pass.json", made / "arch.json")
    assert there.returncode == 21
    assert there.stdout.splitlines()[0] == "code changed: GPU_CHECK_PASSED -> RUNTIME_ERROR"
    assert "findings added in B: ARCH_NOT_IN_BUILD" in there.stdout.splitlines()
    back = _tool(pyz, "compare", made / "arch.json", made / "pass.json", "--lang", "pt")
    assert back.returncode == 20  # COMPARE_CHANGED: a failure fixed is no regression
    assert back.stdout.splitlines()[0] == "o código mudou: RUNTIME_ERROR -> GPU_CHECK_PASSED"
    assert "achados que sumiram em B: ARCH_NOT_IN_BUILD" in back.stdout.splitlines()
    assert back.stdout.splitlines()[1].split()[0] == "campo"


def test_compare_the_same_report_says_nothing_else_changed(pyz: Path, made: Path) -> None:
    result = _tool(pyz, "compare", made / "pass.json", made / "pass-copy.json")
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["same code: GPU_CHECK_PASSED", "nothing else changed"]
    french = _tool(pyz, "compare", made / "pass.json", made / "pass-copy.json", "--lang", "fr")
    assert french.returncode == 0
    assert french.stdout.splitlines() == ["même code : GPU_CHECK_PASSED",
                                          "rien d'autre n'a changé"]


def test_compare_same_code_still_lists_what_changed(pyz: Path, made: Path) -> None:
    result = _tool(pyz, "compare", made / "pass.json", made / "rocm.json")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "same code: GPU_CHECK_PASSED"
    assert _row(result.stdout, "pytorch.backend")[1:] == ["cuda", "rocm"]
    assert _row(result.stdout, "pytorch.cuda_build")[1:] == ["12.8", "null"]
    assert _row(result.stdout, "pytorch.hip_build")[1] == "null"
    names = _row(result.stdout, "pytorch.devices[0].name")
    assert "NVIDIA" in names
    assert "AMD" in names


def test_compare_shows_a_stage_timing_that_moved_with_its_delta(pyz: Path, made: Path) -> None:
    before = _read(made / "pass.json")["timings_ms"]["import"]
    result = _tool(pyz, "compare", made / "pass.json", made / "slow-import.json")
    assert result.returncode == 0
    assert _row(result.stdout, "timings_ms.import") == [
        "timings_ms.import", f"{before:.1f}", "ms", "2500.0", "ms", f"({2500.0 - before:+.1f}",
        "ms)"]
    # Stages that did not move are not timing changes.
    assert "timings_ms.compute" not in result.stdout


def test_compare_json(pyz: Path, made: Path) -> None:
    result = _tool(pyz, "compare", made / "pass.json", made / "arch.json", "--format", "json")
    assert result.returncode == 21
    data = json.loads(result.stdout)
    assert set(data) == {"compare_version", "same_code", "verdict", "regressions", "changes",
                         "findings_added", "findings_removed"}
    assert data["same_code"] is False
    assert data["verdict"] == "regression"
    assert data["regressions"] == [{"kind": "passed_to_failed", "a": "GPU_CHECK_PASSED",
                                    "b": "RUNTIME_ERROR"}]
    changes = {change["field"]: (change["a"], change["b"]) for change in data["changes"]}
    assert changes["code"] == ("GPU_CHECK_PASSED", "RUNTIME_ERROR")
    assert changes["exit_code"] == (0, 9)
    assert changes["execution.gradient_verified"] == (True, False)
    assert all(set(change) == {"field", "a", "b"} for change in data["changes"])
    assert data["findings_added"] == ["ARCH_NOT_IN_BUILD"]
    assert data["findings_removed"] == []
    # JSON keeps ids and English whatever the language.
    assert json.loads(_tool(pyz, "compare", made / "pass.json", made / "arch.json", "--format",
                            "json", "--lang", "pt").stdout) == data
    same = json.loads(_tool(pyz, "compare", made / "pass.json", made / "pass-copy.json",
                            "--format", "json").stdout)
    assert same == {"compare_version": 1, "same_code": True, "verdict": "same",
                    "regressions": [], "changes": [], "findings_added": [],
                    "findings_removed": []}


def test_compare_markdown_is_a_table_to_paste(pyz: Path, made: Path) -> None:
    result = _tool(pyz, "compare", made / "pass.json", made / "oom.json", "--format", "markdown")
    assert result.returncode == 21
    lines = result.stdout.splitlines()
    assert lines[0] == "**code changed: GPU_CHECK_PASSED -> OUT_OF_MEMORY**"
    assert "| field | A (`pass.json`) | B (`oom.json`) |" in lines
    assert "|---|---|---|" in lines
    assert "| `exit_code` | 0 | 9 |" in lines
    assert "| `error.type` | null | OutOfMemoryError |" in lines
    _no_machine_paths(result, made)


@pytest.mark.parametrize(("a", "b", "message"), [
    ("missing.json", "pass.json", "A (missing.json): not found"),
    ("pass.json", "bad.json", "B (bad.json): not JSON"),
    ("v2.json", "pass.json",
     "A (v2.json): schema version 2 (this version of the tool reads version 1)"),
    ("pass.json", "list.json", "B (list.json): not a report"),
    ("unknown-code.json", "pass.json", "A (unknown-code.json): not a report"),
    (".", "pass.json", "A ("),  # a folder: named by its last component, never its full path
])
def test_compare_refuses_what_is_not_a_readable_report(pyz: Path, made: Path, a: str, b: str,
                                                       message: str) -> None:
    result = _tool(pyz, "compare", made / a, made / b)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("kernodeck-diagnostic compare: cannot compare: ")
    assert message in result.stderr
    _no_machine_paths(result, made)


def test_compare_names_both_unreadable_arguments_in_one_line_in_portuguese(
        pyz: Path, made: Path) -> None:
    result = _tool(pyz, "compare", made / "missing.json", made / "bad.json", "--lang", "pt")
    assert result.returncode == 2
    assert result.stderr == ("kernodeck-diagnostic compare: impossível comparar: A (missing.json): "
                             "não encontrado; B (bad.json): não é JSON\n")


@pytest.mark.parametrize("args", [[], ["only-one.json"], ["a.json", "b.json", "--format", "xml"],
                                  ["a.json", "b.json", "--lang", "de"], ["--no-such-flag"]])
def test_compare_usage_errors_are_one_line(pyz: Path, args: list[str]) -> None:
    result = _tool(pyz, "compare", *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("kernodeck-diagnostic compare: error: ")
    assert result.stderr.rstrip().endswith("(see --help)")


def test_compare_help(pyz: Path) -> None:
    result = _tool(pyz, "compare", "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: kernodeck-diagnostic compare")
    for name, status in (("COMPARE_SAME", 0), ("COMPARE_CHANGED", 20),
                         ("COMPARE_REGRESSION", 21)):
        assert any(line.split()[:2] == [name, str(status)] for line in result.stdout.splitlines())


def test_compare_exit_statuses_are_in_the_codes_table() -> None:
    from kernodeck_diagnostic.report.codes import CODES

    assert {name: (code.exit_code, code.kind, code.command) for name, code in CODES.items()
            if name.startswith("COMPARE_")} == {
        "COMPARE_SAME": (0, "command", "compare"), "COMPARE_CHANGED": (20, "command", "compare"),
        "COMPARE_REGRESSION": (21, "command", "compare")}


# -- summarize -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fleet(made: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Reports as collected from several machines, with a few files that are not reports."""
    folder = tmp_path_factory.mktemp("fleet")
    for name, source in {"node-1/pass.json": "pass.json", "node-2/oom.json": "oom.json",
                         "node-3/deeper/arch.json": "arch.json", "bad.json": "bad.json",
                         "v2.json": "v2.json", "node-4/pass.json": "pass.json"}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(made / source, folder / name)
    (folder / "notes.txt").write_text("not a report, and not *.json: ignored")
    return folder


def test_summarize_a_folder(pyz: Path, fleet: Path) -> None:
    result = _tool(pyz, "summarize", fleet)
    assert result.returncode == 22  # SUMMARY_SOME_FAILED: a report failed, a file unreadable
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["report", "code", "exit", "stage", "python", "torch", "backend",
                                "devices"]
    python = _read(fleet / "node-1" / "pass.json")["runtime"]["python_version"]
    assert lines[1].split() == ["node-1/pass.json", "GPU_CHECK_PASSED", "0", "compute", python,
                                "2.7.0+cu128", "cuda", "1"]
    assert lines[2].split()[:3] == ["node-2/oom.json", "OUT_OF_MEMORY", "9"]
    assert lines[3].split()[:3] == ["node-3/deeper/arch.json", "RUNTIME_ERROR", "9"]
    assert lines[4].split()[:2] == ["node-4/pass.json", "GPU_CHECK_PASSED"]
    counts = lines[lines.index("counts per code, worst first") + 1:]
    assert [line.split() for line in counts[:3]] == [
        ["RUNTIME_ERROR", "1"], ["OUT_OF_MEMORY", "1"], ["GPU_CHECK_PASSED", "2"]]
    # The files that are no report: one line, their count and kinds; listed when asked.
    assert lines[-3:] == [
        "unreadable: 2 file(s), 1 not JSON, 1 schema version 2 (this version of the tool reads "
        "version 1) (--list-unreadable lists them)",
        "", "6 file(s): 4 report(s), 2 passed, 2 failed, 2 unreadable"]
    assert "notes.txt" not in result.stdout
    _no_machine_paths(result, fleet)
    listed = _tool(pyz, "summarize", fleet, "--list-unreadable")
    assert listed.returncode == 22
    lines = listed.stdout.splitlines()
    unreadable = lines[lines.index("unreadable (2)") + 1:]
    assert unreadable[0].split() == ["bad.json", "not", "JSON"]
    assert unreadable[1].split()[:4] == ["v2.json", "schema", "version", "2"]
    assert lines[-1] == "6 file(s): 4 report(s), 2 passed, 2 failed, 2 unreadable"


def test_summarize_in_portuguese_with_a_missing_file(pyz: Path, fleet: Path) -> None:
    result = _tool(pyz, "summarize", fleet / "node-1", fleet / "missing.json", "--lang", "pt")
    assert result.returncode == 22
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["relatório", "código", "saída"]
    assert lines[1].split()[:2] == ["node-1/pass.json", "GPU_CHECK_PASSED"]
    assert "contagem por código, do pior ao melhor" in lines
    assert "ilegíveis: 1 arquivo(s), 1 não encontrado (--list-unreadable os lista)" in lines
    listed = _tool(pyz, "summarize", fleet / "node-1", fleet / "missing.json", "--lang", "pt",
                   "--list-unreadable").stdout.splitlines()
    assert "ilegíveis (1)" in listed
    assert ["missing.json", "não", "encontrado"] in [line.split() for line in listed]
    assert lines[-1] == ("2 arquivo(s): 1 relatório(s), 1 aprovado(s), 0 com falha, "
                         "1 ilegível(is)")
    _no_machine_paths(result, fleet)


def test_summarize_exit_0_only_when_every_report_passed(pyz: Path, made: Path,
                                                         fleet: Path) -> None:
    assert _tool(pyz, "summarize", made / "pass.json", fleet / "node-4").returncode == 0
    assert _tool(pyz, "summarize", made / "pass.json", made / "oom.json").returncode == 22
    assert _tool(pyz, "summarize", made / "pass.json", made / "bad.json").returncode == 22


def test_summarize_exit_23_when_no_readable_report(pyz: Path, made: Path,
                                                  tmp_path: Path) -> None:
    empty = _tool(pyz, "summarize", tmp_path)
    assert empty.returncode == 23
    assert empty.stderr == ("kernodeck-diagnostic summarize: no file to read in the paths "
                            "given\n")
    only_bad = _tool(pyz, "summarize", made / "bad.json", made / "missing.json")
    assert only_bad.returncode == 23
    assert "unreadable: 2 file(s), 1 not JSON, 1 not found (--list-unreadable lists them)" in (
        only_bad.stdout.splitlines())
    usage = _tool(pyz, "summarize")
    assert usage.returncode == 2
    assert usage.stderr.startswith("kernodeck-diagnostic summarize: error: ")
    assert usage.stderr.count("\n") == 1
    assert _tool(pyz, "summarize", made, "--format", "yaml").returncode == 2


def test_summarize_json(pyz: Path, fleet: Path) -> None:
    result = _tool(pyz, "summarize", fleet, "--format", "json", "--lang", "fr")
    assert result.returncode == 22
    data = json.loads(result.stdout)
    assert set(data) == {"summarize_version", "reports", "counts", "unreadable"}
    assert [report["file"] for report in data["reports"]] == [
        "node-1/pass.json", "node-2/oom.json", "node-3/deeper/arch.json", "node-4/pass.json"]
    assert data["reports"][1] == {
        "file": "node-2/oom.json", "code": "OUT_OF_MEMORY", "exit_code": 9, "stage": "compute",
        "python_version": data["reports"][0]["python_version"], "torch_version": "2.7.0+cu128",
        "backend": "cuda", "devices": 1}
    assert data["counts"] == [{"code": "RUNTIME_ERROR", "count": 1},
                              {"code": "OUT_OF_MEMORY", "count": 1},
                              {"code": "GPU_CHECK_PASSED", "count": 2}]
    assert data["unreadable"] == [
        {"file": "bad.json", "reason": "not_json", "detail": None},
        {"file": "v2.json", "reason": "schema_version", "detail": "2"}]


def test_summarize_sorts_numbers_in_names_by_value(pyz: Path, made: Path,
                                                  tmp_path: Path) -> None:
    for name in ("r-10/report.json", "r-2/report.json", "r-1/report-10.json",
                 "r-1/report-9.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(made / "pass.json", tmp_path / name)
    data = json.loads(_tool(pyz, "summarize", tmp_path, "--format", "json").stdout)
    assert [report["file"] for report in data["reports"]] == [
        "r-1/report-9.json", "r-1/report-10.json", "r-2/report.json", "r-10/report.json"]


def test_summarize_markdown(pyz: Path, fleet: Path) -> None:
    result = _tool(pyz, "summarize", fleet, "--format", "markdown")
    assert result.returncode == 22
    lines = result.stdout.splitlines()
    assert lines[0] == "**6 file(s): 4 report(s), 2 passed, 2 failed, 2 unreadable**"
    assert "| report | code | exit | stage | python | torch | backend | devices |" in lines
    assert any(line.startswith("| `node-2/oom.json` | `OUT_OF_MEMORY` | 9 | compute |")
               for line in lines)
    assert "| `RUNTIME_ERROR` | 1 |" in lines
    assert "unreadable: 2 file(s), 1 not JSON, 1 schema version 2 (this version of the tool " \
           "reads version 1)" in lines
    listed = _tool(pyz, "summarize", fleet, "--format", "markdown", "--list-unreadable")
    assert "- `bad.json`: not JSON" in listed.stdout.splitlines()
    _no_machine_paths(result, fleet)


# -- real builds (slow) ----------------------------------------------------------------------------

@pytest.mark.slow
def test_compare_and_summarize_real_cpu_and_missing_torch_reports(
        pyz: Path, made: Path, cpu_torch_python: Path, notorch_python: Path,
        tmp_path: Path) -> None:
    cpu = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output",
                                           str(tmp_path / "cpu.json")])
    assert cpu.returncode == 0, cpu.stdout + cpu.stderr
    missing = run_tool(notorch_python, pyz, ["--device", "cpu", "--output",
                                             str(tmp_path / "notorch.json")])
    assert missing.returncode == 3, missing.stdout + missing.stderr

    fixed = _tool(pyz, "compare", tmp_path / "notorch.json", tmp_path / "cpu.json")
    assert fixed.returncode == 20
    assert fixed.stdout.splitlines()[0] == "code changed: TORCH_MISSING -> CPU_CHECK_PASSED"
    assert _row(fixed.stdout, "exit_code")[1:] == ["3", "0"]
    assert _row(fixed.stdout, "stage")[1:] == ["import", "compute"]
    assert _row(fixed.stdout, "pytorch.version")[1:] == ["null", "2.13.0+cpu"]
    assert _row(fixed.stdout, "execution.device")[1:] == ["null", "cpu"]
    assert "findings removed" not in fixed.stdout

    # A CPU pass and a GPU pass: different codes, and the GPU was not even queried in CPU mode.
    modes = json.loads(_tool(pyz, "compare", tmp_path / "cpu.json", made / "pass.json",
                             "--format", "json").stdout)
    changes = {change["field"]: (change["a"], change["b"]) for change in modes["changes"]}
    assert changes["request.device"] == ("cpu", "gpu")
    assert changes["pytorch.gpu_available"] == (None, True)
    assert changes["execution.device"] == ("cpu", "cuda:0")

    summary = _tool(pyz, "summarize", tmp_path, made / "pass.json", "--lang", "pt")
    assert summary.returncode == 22
    lines = summary.stdout.splitlines()
    # Named relative to the folder both arguments share: the test's folder shows, never above.
    assert lines[1].split()[:6] == [
        f"{tmp_path.name}/cpu.json", "CPU_CHECK_PASSED", "0", "compute",
        cpu.report["runtime"]["python_version"] if cpu.report else "", "2.13.0+cpu"]
    assert lines[1].split()[-1] == "-"  # devices: not queried in CPU mode
    assert lines[2].split()[:4] == [f"{tmp_path.name}/notorch.json", "TORCH_MISSING", "3",
                                    "import"]
    counts = lines[lines.index("contagem por código, do pior ao melhor") + 1:]
    assert [line.split()[0] for line in counts[:3]] == [
        "TORCH_MISSING", "CPU_CHECK_PASSED", "GPU_CHECK_PASSED"]


# -- in-process: the order and the noise rules -----------------------------------------------

def test_severity_ranks_every_code_once() -> None:
    assert sorted(SEVERITY) == sorted(VERDICTS)  # every code a report can carry
    passes = [name for name in SEVERITY if VERDICTS[name].passed]
    assert list(SEVERITY[-len(passes):]) == passes  # passes last


def test_timing_jitter_is_not_a_change(made: Path) -> None:
    a = _read(made / "pass.json")
    b = json.loads(json.dumps(a))
    b["timings_ms"] = {stage: ms * 1.1 + 20 for stage, ms in a["timings_ms"].items()}
    assert compare(a, b).changes == []
    b["timings_ms"]["compute"] = a["timings_ms"]["compute"] + 6000.0
    assert [change["field"] for change in compare(a, b).changes] == ["timings_ms.compute"]
    del b["timings_ms"]["compute"]
    assert compare(a, b).changes == [{"field": "timings_ms.compute",
                                      "a": a["timings_ms"]["compute"], "b": None}]


def test_compare_markdown_of_alike_reports_says_nothing_else_changed() -> None:
    from findings_helpers import report as passing
    from kernodeck_diagnostic.i18n import translator
    from kernodeck_diagnostic.report.compare import render_markdown

    same = passing()
    shown = render_markdown(compare(same, same), "a.json", "b.json", translator("en"))
    assert "nothing else changed" in shown
    other = passing(**{"pytorch.cudnn_version": "91003"})
    shown = render_markdown(compare(same, other), "a.json", "b.json", translator("en"))
    assert "nothing else changed" not in shown


def test_compare_lists_a_finding_only_a_has_as_removed_whole() -> None:
    from findings_helpers import report as passing

    finding = {"id": "NUMPY_MISSING", "severity": "warning", "summary": "s", "next_action": "n",
               "evidence": ["e"]}
    a, b = passing(findings=[finding]), passing()
    changes = [change for change in compare(a, b).changes
               if change["field"].startswith("findings")]
    assert changes == [{"field": "findings[NUMPY_MISSING]", "a": finding, "b": None}]



# The library layer's lists, each row ONE change to both checks passing (--extensions,
# --kernels): a fact is listed by its entry's name, a time only when it moved, a bandwidth never.
LIBRARY_CHANGES = [
    ("nothing", {}, []),
    ("a kernel's status", {"kernels": kernel("compile", status="failed")},
     ["libraries.kernels[compile].status"]),
    ("an extension's version", {"extensions": [extension(version="0.23.1")]},
     ["libraries.extensions[torchvision].version"]),
    ("a kernel's time, jitter", {"kernels": kernel("conv2d", duration_ms=3.5)}, []),
    ("a kernel's time moved", {"kernels": kernel("sdpa", duration_ms=900.0)},
     ["libraries.kernels[sdpa].duration_ms"]),
    ("an extension's import time moved", {"extensions": [extension(duration_ms=900.0)]},
     ["libraries.extensions[torchvision].duration_ms"]),
    ("a transfer's bandwidth", {"kernels": kernel("transfer", host_to_device_bytes_per_s=1.0)},
     []),
]


@pytest.mark.parametrize(("lists", "fields"), [row[1:] for row in LIBRARY_CHANGES],
                         ids=[row[0] for row in LIBRARY_CHANGES])
def test_compare_lists_a_library_change_by_its_entrys_name(lists: dict[str, Any],
                                                            fields: list[str]) -> None:
    changes = compare(with_libraries(), with_libraries(**lists)).changes
    assert [change["field"] for change in changes] == fields
