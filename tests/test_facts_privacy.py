"""The new facts (system block, CUDA libraries, configuration) under planted secrets: no value of a
variable outside the allow-list, no path from CUDA_HOME or nvcc's folder, bounded values."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from facts_helpers import checked
from kernodeck_diagnostic.facts.system import MAX_VALUE_CHARS
from kernodeck_diagnostic.report.redact import Redactor

NVCC = "#!/bin/sh\nprintf 'Cuda compilation tools, release 13.0, V13.0.88\\n'\n"
PLANTED = "planted-value-k7q2w9"  # in a variable outside the allow-list: never shown
TOKEN = "hf_PlantedTokenValue123456"  # noqa: S105 - a planted fake, to be hidden


@pytest.mark.slow
def test_planted_values_stay_out_and_allowed_ones_are_bounded(cpu_torch_python: Path, pyz: Path,
                                                               tmp_path: Path) -> None:
    toolkit = tmp_path / "secret-toolkit-folder" / "bin"
    toolkit.mkdir(parents=True)
    (toolkit / "nvcc").write_text(NVCC)
    (toolkit / "nvcc").chmod(0o755)
    env = {
        "MY_APP_SETTING": PLANTED,
        "HF_TOKEN": TOKEN,
        "CUDA_HOME": str(toolkit.parent),
        "CUDA_PATH": "/opt/another-secret-place",
        "CUDA_VISIBLE_DEVICES": "GPU-planted-uuid-0000",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "NCCL_DEBUG": "INFO",
        # An allow-listed variable holding what it should not: a path, a token, a flood.
        "TORCH_CUDA_ARCH_LIST": f"/home/alice/private/arch {TOKEN}",
        "OMP_NUM_THREADS": "8" * 5000,
    }
    report, shown = checked(cpu_torch_python, pyz, tmp_path, "--device", "cpu", **env)
    configuration = report["system"]["configuration"]
    assert configuration["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    assert configuration["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert configuration["NCCL_DEBUG"] == "INFO"
    assert len(configuration["OMP_NUM_THREADS"]) <= MAX_VALUE_CHARS
    assert set(configuration) <= {"PYTORCH_CUDA_ALLOC_CONF", "CUDA_DEVICE_ORDER", "NCCL_DEBUG",
                                  "TORCH_CUDA_ARCH_LIST", "OMP_NUM_THREADS"}
    assert "CUDA_VISIBLE_DEVICES" not in configuration
    assert report["system"]["cuda_toolkit"] == {"status": "ok", "version": "13.0",
                                                "found_via": "CUDA_HOME", "cuda_home_set": True,
                                                "cuda_path_set": True}
    for secret in (PLANTED, TOKEN, "secret-toolkit-folder", "another-secret-place", "alice",
                   "planted-uuid", "8" * (MAX_VALUE_CHARS + 1), str(tmp_path)):
        assert secret not in shown, secret
    # The terminal shows the allow-listed values too, and nothing else of the environment.
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in shown


def test_allow_listed_values_survive_redaction_others_do_not() -> None:
    environ = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
               "MY_APP_SETTING": "expandable_segments:True-ish-secret", "HOME": "/home/bob"}
    redactor = Redactor.for_this_machine(environ)
    assert redactor.text("expandable_segments:True") == "expandable_segments:True"
    assert redactor.text("expandable_segments:True-ish-secret") == "<redacted>"
    assert redactor.text("/home/bob/cuda") == "<home>/cuda"


@pytest.mark.slow
def test_no_path_of_the_library_copies(cuda_torch_python: Path, pyz: Path,
                                       tmp_path: Path) -> None:
    folder = tmp_path / "lib-folder-of-someone"
    folder.mkdir()
    (folder / "libcudnn.so.9").write_bytes(b"\x7fELF")  # a name is all the inventory reads
    report, shown = checked(cuda_torch_python, pyz, tmp_path, "--device", "cpu",
                            LD_LIBRARY_PATH=f"{folder}{os.pathsep}/nonexistent")
    entries = {e["name"]: e for e in report["pytorch"]["cuda_libraries"]}
    assert entries["nvidia-cudnn-cu13"]["library_path_copies"] == ["libcudnn.so.9"]
    assert "lib-folder-of-someone" not in shown
    assert str(tmp_path) not in shown
    assert all("/" not in name for entry in entries.values()
               for name in entry["library_path_copies"])
    assert json.loads(json.dumps(report))["system"] is not None
