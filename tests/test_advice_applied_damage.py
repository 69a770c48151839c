"""Issue 44: a damaged torch install named, and its pinned reinstall applied as printed.

The broken environments are built for real: a hard-linked copy of the cached CPU environment
whose ``torch/lib/libtorch_cpu.so`` is replaced (never written through the link) by a truncated
copy, which kills ``import torch`` with SIGBUS, or by a copy whose ELF header is zeroed, which
the loader rejects ("invalid ELF header"). docs/reliability.md's table "Advice applied" lists
them.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from conftest import run_tool
from test_verdicts_advice_applied import apply_pip, checked, findings, scratch_env, site_packages

pytestmark = pytest.mark.slow

LIBRARY = "torch/lib/libtorch_cpu.so"


def damage(library: Path, how: str) -> None:
    """Replace ``library`` (a hard link to the cache's) by a damaged copy of itself."""
    original = library.with_name(library.name + ".whole")
    library.rename(original)
    if how == "truncated":
        with original.open("rb") as source, library.open("wb") as target:
            target.write(source.read(original.stat().st_size // 8))
    else:
        shutil.copyfile(original, library)
        with library.open("r+b") as target:
            target.write(bytes(64))
    original.unlink()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF libraries")
@pytest.mark.parametrize(("how", "code"), [("truncated", "WORKER_FAILED"),
                                           ("zeroed_header", "TORCH_IMPORT_FAILED")])
def test_a_damaged_library_of_torch_is_named_and_the_pinned_reinstall_fixes_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, how: str, code: str) -> None:
    """Was, truncated: WORKER_FAILED "killed by signal SIGBUS during import" and no finding
    ("treat the control as failed"); zeroed: "invalid ELF header" and no finding."""
    python = scratch_env(cpu_torch_python, tmp_path)
    damage(site_packages(python) / LIBRARY, how)
    work = tmp_path / "work"
    work.mkdir()
    before = checked(run_tool(python, pyz, ["--device", "cpu", "--output",
                                            str(tmp_path / "before.json")], cwd=work))
    assert (before["code"], before["stage"]) == (code, "import"), before["error"]
    assert before["pytorch"]["damaged_libraries"] == [
        {"name": LIBRARY, "damage": "truncated" if how == "truncated" else "not_elf"}]
    damaged = findings(before)["TORCH_PARTIAL_INSTALL"]
    assert damaged["severity"] == "error"
    assert LIBRARY in damaged["summary"]
    assert str(tmp_path) not in str(before)  # a name relative to site-packages, never a path
    assert "--force-reinstall --no-deps torch==2.13.0+cpu --index-url " \
        "https://download.pytorch.org/whl/cpu" in damaged["next_action"]
    apply_pip(python, damaged["next_action"])
    after = checked(run_tool(python, pyz, ["--device", "cpu", "--output",
                                           str(tmp_path / "after.json")], cwd=work))
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert after["pytorch"]["damaged_libraries"] is None
    assert "TORCH_PARTIAL_INSTALL" not in findings(after)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF libraries")
def test_whole_libraries_are_not_called_damaged(cpu_torch_python: Path, tmp_path: Path) -> None:
    from kernodeck_diagnostic.worker import integrity

    package = site_packages(cpu_torch_python) / "torch"
    assert integrity.damaged_libraries(str(package / "__init__.py")) is None
    # Cut by a byte, any ELF file of this machine is short of what its header says.
    whole = Path(sys.executable).resolve().read_bytes()
    assert integrity.elf_damage(str(Path(sys.executable).resolve())) is None
    (tmp_path / "cut.so").write_bytes(whole[:-1])
    assert integrity.elf_damage(str(tmp_path / "cut.so")) == "truncated"
    (tmp_path / "text.so").write_bytes(b"INPUT(-lfoo)\n")  # a linker script: not loadable
    assert integrity.elf_damage(str(tmp_path / "text.so")) == "not_elf"
