"""--extensions, the parts that need no torch: finding the extensions from installed metadata
(without importing them), reading a version's CUDA, judging the declared requirement, and the
findings and code a failed import gives (worker/extensions.py, report/libraries.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from findings_helpers import ids
from kernodeck_diagnostic.api import check, library_arguments, validate
from kernodeck_diagnostic.report.codes import classify
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.report.libraries import library_block
from kernodeck_diagnostic.worker.extensions import (
    build_cuda,
    cuda_of,
    find_extensions,
    torch_requirement,
)
from library_fixtures import LIBRARY_FIRES, extension, with_libraries


def dist_info(site: Path, name: str, version: str, requires: list[str],
              top_level: str | None = None, *, files: dict[str, str] | None = None) -> None:
    """An installed distribution as pip leaves it: METADATA, and top_level.txt or a RECORD."""
    folder = site / f"{name.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
             *(f"Requires-Dist: {line}" for line in requires)]
    (folder / "METADATA").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if top_level is not None:
        (folder / "top_level.txt").write_text(top_level + "\n", encoding="utf-8")
    record = [f"{folder.name}/METADATA,,"]
    for path, text in (files or {}).items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text, encoding="utf-8")
        record.append(f"{path},,")
    (folder / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("requires", "expected"), [
    (["numpy", "torch (>=2.14.0)", "pillow (!=8.3.*,>=5.3.0)"], ">=2.14.0"),  # torchvision's
    (["torch==2.8.0; platform_system == 'Linux'"], "==2.8.0"),
    (["Torch>=2.1,<3"], ">=2.1,<3"),
    (["torch"], ""),
    (["torch[opt] ~= 2.5"], "~= 2.5"),
    (["torch>=2; extra == \"torch\""], None),  # only through an extra: optional
    (["torchvision>=0.20", "torchaudio"], None),
    ([], None),
])
def test_torch_requirement(requires: list[str], expected: str | None) -> None:
    assert torch_requirement(requires) == expected


def test_extensions_are_found_from_metadata_without_importing_them(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    # Each module would fail the test if imported: discovery reads metadata only.
    boom = "raise SystemExit('imported during discovery')\n"
    dist_info(site, "torchvision", "0.29.1+cu128", ["numpy", "torch (==2.9.1)"], "torchvision",
              files={"torchvision/__init__.py": boom})
    dist_info(site, "flash-attn", "2.8.3", ["torch", "einops"], "flash_attn\nflash_attn_2_cuda",
              files={"flash_attn/__init__.py": boom})
    dist_info(site, "torch-scatter", "2.1.2", ["torch>=2"], None,
              files={"torch_scatter/__init__.py": boom})  # no top_level.txt: read from RECORD
    dist_info(site, "transformers", "4.56.0", ["torch>=2.2; extra == 'torch'"], "transformers")
    dist_info(site, "numpy", "2.3.2", [], "numpy")
    dist_info(site, "torch", "2.9.1", ["filelock"], "torch")
    found = find_extensions([str(site)])
    assert [(e["name"], e["version"], e["requires_torch"], e["module"], e["cuda"])
            for e in found] == [
        ("flash-attn", "2.8.3", "", "flash_attn", None),
        ("torch-scatter", "2.1.2", ">=2", "torch_scatter", None),
        ("torchvision", "0.29.1+cu128", "==2.9.1", "torchvision", "12.8"),
    ]


def test_the_first_of_a_name_on_the_path_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "user-site", tmp_path / "site-packages"
    dist_info(first, "torchvision", "0.29.1", ["torch>=2.14.0"], "torchvision")
    dist_info(second, "torchvision", "0.24.1", ["torch==2.9.1"], "torchvision")
    assert [e["version"] for e in find_extensions([str(first), str(second)])] == ["0.29.1"]


@pytest.mark.parametrize(("version", "cuda"), [
    ("0.29.1+cu130", "13.0"), ("0.23.0+cu128", "12.8"), ("2.1.0+cu118", "11.8"),
    ("0.24.1+cpu", "cpu"), ("2.7.0+rocm6.3", "rocm6.3"), ("0.29.1", None), (None, None),
])
def test_build_cuda_from_the_version_label(version: str | None, cuda: str | None) -> None:
    assert build_cuda(version) == cuda


@pytest.mark.parametrize(("value", "cuda"), [
    (13000, "13.0"), (12080, "12.8"), ("12.8", "12.8"), ("11.8.0", "11.8"), (-1, None),
    (None, None), (True, None), ("unknown", None),
])
def test_cuda_a_module_reports(value: object, cuda: str | None) -> None:
    assert cuda_of(value) == cuda


def test_the_front_judges_each_requirement_against_the_installed_torch() -> None:
    facts = {"extensions": [
        {"name": "torchvision", "version": "0.29.1", "requires_torch": ">=2.14.0",
         "module": "torchvision", "cuda": None, "status": "failed", "duration_ms": 20.0,
         "error": {"type": "RuntimeError", "message": "operator torchvision::nms does not exist"},
         "requirement_met": True},  # a worker's verdict is never taken
        {"name": "kornia", "version": "0.8.1", "requires_torch": ">=1.9.1", "module": "kornia",
         "cuda": None}]}  # found, but the time ran out before its import
    block = library_block({"extensions": True}, facts, {"distribution_version": "2.13.0+cpu"})
    assert block is not None
    assert [(e["requirement_met"], e["status"]) for e in block["extensions"]] == [
        (False, "failed"), (True, "skipped")]
    assert block["kernels"] is None
    assert library_block({}, facts, {"version": "2.13.0"}) is None


def test_an_extension_failure_is_its_own_code() -> None:
    code = classify("cpu", {"stage": "extensions", "kind": "extension_failed"})
    assert (code.name, code.exit_code, code.passed) == ("EXTENSION_FAILED", 14, False)


def test_a_failed_import_without_signs_of_a_mismatch_is_an_import_failure() -> None:
    assert ids(LIBRARY_FIRES["EXTENSION_IMPORT_FAILED"]) == ["EXTENSION_IMPORT_FAILED"]
    assert ids(LIBRARY_FIRES["EXTENSION_TORCH_MISMATCH"]) == ["EXTENSION_TORCH_MISMATCH"]
    assert ids(LIBRARY_FIRES["EXTENSION_CUDA_MISMATCH"]) == ["EXTENSION_CUDA_MISMATCH"]


def test_a_matching_set_of_extensions_gives_no_finding() -> None:
    assert ids(with_libraries()) == []


def test_a_declared_mismatch_that_still_imports_is_a_warning() -> None:
    case = with_libraries([extension(requires_torch=">=2.9", requirement_met=False)])
    found = {f["id"]: f for f in derive(case)}
    assert found["EXTENSION_TORCH_MISMATCH"]["severity"] == "warning"
    assert "torch>=2.9" in found["EXTENSION_TORCH_MISMATCH"]["summary"]
    # The command pins the installed torch and uses its own index (its version's label).
    assert ('python -m pip install "torch==2.8.0" "torchvision" --index-url '
            "https://download.pytorch.org/whl/cu128") in found[
        "EXTENSION_TORCH_MISMATCH"]["next_action"]


def test_a_cpu_extension_beside_a_cuda_torch_is_a_cuda_mismatch() -> None:
    case = with_libraries([extension(version="0.23.0+cpu", cuda="cpu")])
    assert ids(case) == ["EXTENSION_CUDA_MISMATCH"]
    same = copy.deepcopy(case)
    same["libraries"]["extensions"][0]["cuda"] = "12.8"
    assert ids(same) == []


def test_the_flags_are_bools_and_are_said_in_the_request() -> None:
    with pytest.raises(TypeError, match=r"check\(kernels=\.\.\.\) takes True or False; not int"):
        check(device="cpu", kernels=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"check\(extensions=\.\.\.\) takes True or False"):
        check(device="cpu", extensions="yes")  # type: ignore[arg-type]
    asked = validate(device="cpu", device_index=0, timeout=30, extensions=True).as_dict()
    assert (asked.get("extensions"), asked.get("kernels")) == (True, None)
    # The worker is told (the check's limit, which bounds each import, reaches every worker
    # alike: test_worker_protocol.py).
    options = validate(device="cpu", device_index=0, timeout=45, extensions=True, kernels=True)
    assert library_arguments(options) == ["--extensions", "--kernels"]
    assert library_arguments(validate(device="cpu", device_index=0, timeout=45)) == []
