"""Issue 44: causes named where the report had them and said less, proven by applying the advice.

Each broken environment is built for real with the cached CPU build (a module of the user's in
the working folder that torch imports in place of its own...), the tool run in it as a user of
the single-file download would, the advice applied exactly as printed and the verdict seen to
change. docs/reliability.md's table "Advice applied" lists them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import clean_env, run_tool
from test_verdicts_advice_applied import checked, findings

pytestmark = pytest.mark.slow


def check(python: Path, pyz: Path, work: Path, name: str, env: dict[str, str] | None = None,
          *args: str) -> dict[str, object]:
    output = work.parent / name
    output.unlink(missing_ok=True)
    return checked(run_tool(python, pyz, ["--device", "cpu", *args, "--output", str(output)],
                            env=clean_env() if env is None else env, cwd=work))


def test_a_module_of_the_users_that_breaks_the_import_is_its_cause_not_a_warning(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """A typing_extensions.py of the user's in the working folder: torch imports it and fails
    ("cannot import name ... from 'typing_extensions'"). Was TORCH_IMPORT_FAILED with
    LOCAL_MODULE_SHADOWS a warning beside the generic "check the interpreter"."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "typing_extensions.py").write_text("# the user's own helpers\n", encoding="utf-8")
    before = check(cpu_torch_python, pyz, work, "before.json")
    assert before["code"] == "TORCH_IMPORT_FAILED"
    shadow = findings(before)["LOCAL_MODULE_SHADOWS"]
    assert shadow["severity"] == "error"
    assert shadow["summary"].startswith("import torch failed in typing_extensions")
    renamed = re.search(r"Rename (\S+) ", shadow["next_action"])
    assert renamed is not None, shadow["next_action"]
    (work / renamed.group(1)).rename(work / ("my_" + renamed.group(1)))
    after = check(cpu_torch_python, pyz, work, "after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "LOCAL_MODULE_SHADOWS" not in findings(after)


def test_a_module_of_the_users_that_does_not_break_the_import_stays_a_warning(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "sympy.py").write_text("# the user's own helpers\n", encoding="utf-8")
    report = check(cpu_torch_python, pyz, work, "report.json")
    assert report["code"] == "CPU_CHECK_PASSED", report["error"]
    assert findings(report)["LOCAL_MODULE_SHADOWS"]["severity"] == "warning"
