"""What surrounds the imported torch (worker/inventory.py): the nvidia-* wheels next to it and the
copy of each library the process really loaded, the debug flag, the git revision, and the
versions of triton, torchvision and torchaudio, all from installed metadata."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import required_pyenv_python
from facts_helpers import checked
from findings_helpers import report as fixture
from kernodeck_diagnostic.report.compare import compare
from kernodeck_diagnostic.report.render import markdown, text
from kernodeck_diagnostic.worker import inventory


def site_packages(python: Path) -> Path:
    return next((python.parent.parent / "lib").glob("python3.*/site-packages"))


def installed(python: Path, prefix: str) -> dict[str, str]:
    """name -> version of the distributions whose dist-info starts with ``prefix``, as pip's
    metadata says (read here from each METADATA, the way pip show does)."""
    found = {}
    for dist_info in site_packages(python).glob(f"{prefix}*.dist-info"):
        headers = dict(line.split(": ", 1) for line in
                       (dist_info / "METADATA").read_text().split("\n\n")[0].splitlines()
                       if ": " in line)
        found[headers["Name"]] = headers["Version"]
    return found


def _by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in report["pytorch"]["cuda_libraries"]}


def test_library_names_without_their_versions() -> None:
    assert inventory.library_stem("libcudnn.so.9.1.0") == "libcudnn"
    assert inventory.library_stem("libcudnn_graph.so.9") == "libcudnn_graph"
    assert inventory.library_stem("cudnn64_9.dll") == "cudnn64_9"
    assert inventory.is_library("libnccl.so.2")
    assert inventory.is_library("libcublas.so")
    assert not inventory.is_library("__init__.py")
    assert not inventory.is_library("include.h")


@pytest.mark.slow
def test_real_cuda_build_lists_its_wheels(cuda_torch_python: Path, pyz: Path,
                                          tmp_path: Path) -> None:
    report, shown = checked(cuda_torch_python, pyz, tmp_path, "--device", "cpu")
    pytorch = report["pytorch"]
    wheels = installed(cuda_torch_python, "nvidia")
    assert len(wheels) >= 10
    assert {name: entry["version"] for name, entry in _by_name(report).items()} == wheels
    # After import torch, the process has the wheels' own copies of cuDNN, cuBLAS, NCCL...
    for name in ("nvidia-cudnn-cu13", "nvidia-cublas", "nvidia-nccl-cu13",
                 "nvidia-cuda-runtime"):
        assert _by_name(report)[name]["loaded"] == "wheel", name
    assert pytorch["triton_version"] == installed(cuda_torch_python, "triton")["triton"]
    assert pytorch["torchvision_version"] is None
    assert pytorch["torchaudio_version"] is None
    assert pytorch["debug_build"] is False
    assert re.fullmatch(r"[0-9a-f]{40}", pytorch["git_version"])
    assert f"cudnn {wheels['nvidia-cudnn-cu13']}" in shown
    assert "triton 3.8.0" in shown


@pytest.mark.slow
def test_cpu_build_has_no_cuda_libraries(cpu_torch_python: Path, pyz: Path,
                                         tmp_path: Path) -> None:
    report, _ = checked(cpu_torch_python, pyz, tmp_path, "--device", "cpu")
    assert report["pytorch"]["cuda_libraries"] == []
    assert report["pytorch"]["debug_build"] is False


def _a_library_file(target: Path) -> None:
    """A real shared library under another name: what a system cuDNN folder holds, as far as
    the file name the loader searches for is concerned."""
    source = next(Path(p) for p in ("/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/libz.so.1",
                                    "/lib64/libz.so.1") if Path(p).exists())
    shutil.copy(source, target)


@pytest.mark.slow
def test_a_system_cudnn_on_ld_library_path_is_listed_and_the_wheel_still_wins(
        cuda_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """The classic setup: a system cuDNN folder on LD_LIBRARY_PATH. torch 2.14 preloads its
    wheels' libraries by path first, so the process really runs with the wheel's copy: the copy
    is named, and no finding claims it was loaded."""
    folder = tmp_path / "system-cudnn-planted"
    folder.mkdir()
    _a_library_file(folder / "libcudnn.so.9.1.0")
    (folder / "libcudnn.so.9").symlink_to("libcudnn.so.9.1.0")
    report, shown = checked(cuda_torch_python, pyz, tmp_path, "--device", "cpu",
                           LD_LIBRARY_PATH=str(folder))
    cudnn = _by_name(report)["nvidia-cudnn-cu13"]
    assert cudnn["library_path_copies"] == ["libcudnn.so.9", "libcudnn.so.9.1.0"]
    assert cudnn["loaded"] == "wheel"
    assert "CUDA_LIBRARY_SHADOWED" not in [f["id"] for f in report["findings"]]
    assert "system-cudnn-planted" not in shown


@pytest.mark.slow
@pytest.mark.parametrize("on_library_path", [False, True])
def test_another_copy_loaded_before_the_wheel_is_found(cuda_torch_python: Path, pyz: Path,
                                                       tmp_path: Path,
                                                       on_library_path: bool) -> None:
    """A second nvidia-cudnn copy earlier on the search path (a pip install --target folder on
    PYTHONPATH): torch's preloader takes the first it finds, and the process runs with it. The
    same folder also on LD_LIBRARY_PATH is named as that variable's."""
    wheel = site_packages(cuda_torch_python) / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
    target = tmp_path / "target-planted"
    lib = target / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    shutil.copy(wheel, lib / "libcudnn.so.9")
    env = {"PYTHONPATH": str(target)}
    if on_library_path:
        env["LD_LIBRARY_PATH"] = str(lib)
    report, shown = checked(cuda_torch_python, pyz, tmp_path, "--device", "cpu", **env)
    cudnn = _by_name(report)["nvidia-cudnn-cu13"]
    assert (cudnn["loaded"], cudnn["loaded_file"]) == ("other", "libcudnn.so.9")
    assert cudnn["loaded_from"] == ("LD_LIBRARY_PATH" if on_library_path else "elsewhere")
    finding = next(f for f in report["findings"] if f["id"] == "CUDA_LIBRARY_SHADOWED")
    assert finding["severity"] == "warning"  # the CPU check passed: cuDNN was never used
    where = "a folder on LD_LIBRARY_PATH" if on_library_path else "a folder outside the wheel"
    assert finding["evidence"] == [f"libcudnn.so.9 was loaded from {where}, not from the "
                                   f"nvidia-cudnn-cu13 {cudnn['version']} wheel next to torch"]
    assert "another copy loaded: libcudnn.so.9" in text(report)
    assert "CUDA_LIBRARY_SHADOWED" in markdown(report)
    assert "target-planted" not in shown


def test_compare_names_each_library_and_each_variable() -> None:
    cudnn = {"name": "nvidia-cudnn-cu12", "version": "9.10.2.21", "loaded": "wheel",
             "loaded_file": None, "loaded_from": None, "library_path_copies": []}
    cublas = dict(cudnn, name="nvidia-cublas-cu12", version="12.8.4.1")
    a = fixture(**{"pytorch.cuda_libraries": [cublas, cudnn],
                   "system": {"configuration": {"NCCL_DEBUG": "INFO"}}})
    b = fixture(**{"pytorch.cuda_libraries": [dict(cudnn, loaded="other",
                                                   loaded_file="libcudnn.so.9.1.0",
                                                   loaded_from="LD_LIBRARY_PATH")],
                   "system": {"configuration": {"NCCL_DEBUG": "WARN"}}})
    changes = {change["field"]: (change["a"], change["b"]) for change in compare(a, b).changes}
    assert changes["pytorch.cuda_libraries[nvidia-cudnn-cu12].loaded"] == ("wheel", "other")
    assert changes["pytorch.cuda_libraries[nvidia-cudnn-cu12].loaded_from"] == (
        None, "LD_LIBRARY_PATH")
    assert changes["pytorch.cuda_libraries[nvidia-cublas-cu12].version"] == ("12.8.4.1", None)
    assert changes["system.configuration.NCCL_DEBUG"] == ("INFO", "WARN")
    assert not any(field.startswith("pytorch.cuda_libraries[0]") for field in changes)


def test_the_zipapp_on_python_3_9_imports_the_companion(pyz: Path) -> None:
    """Python 3.9's zipimport runs a module before setting its __package__: the companion must
    still find the worker module it extends when the front imports it from the zipapp."""
    python = required_pyenv_python("3.9")
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); "
             "from kernodeck_diagnostic.worker import inventory; print(inventory.stages.__name__)")
    done = subprocess.run([str(python), "-c", probe, str(pyz)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.stdout.strip() == "kernodeck_diagnostic.worker.stages", done.stderr
