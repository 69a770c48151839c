"""Findings: the cause behind the failing layer, from facts the check already collected.

Each rule is a pure function of the (already redacted) report: it returns a finding or nothing,
and never changes the result code. A finding says what is wrong, the exact next step, and the
evidence it stands on, so a user can check the reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

Report = dict[str, Any]

# Minimum driver per CUDA major, from NVIDIA's CUDA minor-version compatibility notes:
# (Linux, Windows). A driver at or above the minimum of a major runs every minor of that major.
MINIMUM_DRIVER = {11: ("450.80.02", "452.39"), 12: ("525.60.13", "528.33"),
                  13: ("580.65.06", None)}
SLOW_FIRST_CALL_MS = 5000.0
INSTALL_CUDA_OR_ROCM = (
    "python -m pip install --force-reinstall torch --index-url "
    "https://download.pytorch.org/whl/cu128 (NVIDIA; pick the CUDA version your driver supports) "
    "or --index-url https://download.pytorch.org/whl/rocm6.4 (AMD)")


@dataclass(frozen=True)
class Finding:
    id: str
    severity: str  # error | warning | info
    summary: str
    next_action: str
    evidence: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "severity": self.severity, "summary": self.summary,
                "next_action": self.next_action, "evidence": list(self.evidence)}


Rule = Callable[[Report], "Finding | None"]
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def derive(report: Report) -> list[dict[str, Any]]:
    """Every finding the rules see in ``report``, the most severe first."""
    found = [finding for rule in RULES if (finding := rule(report)) is not None]
    found.sort(key=lambda finding: _SEVERITY_ORDER[finding.severity])
    return [finding.as_dict() for finding in found]


# -- what the rules read --------------------------------------------------------------------------

def _messages(report: Report, stages: Iterable[str] | None = None) -> list[str]:
    """The error message, the backend's initialisation message and the warnings, in that order."""
    wanted = set(stages) if stages is not None else None
    texts = []
    error = report.get("error")
    if error and (wanted is None or error.get("stage") in wanted):
        texts.append(f"{error.get('type') or ''}: {error.get('message') or ''}")
    init_error = report["pytorch"].get("init_error")
    if init_error and (wanted is None or "device" in wanted):
        texts.append(init_error)
    texts += [str(w.get("message") or "") for w in report.get("warnings", [])
              if wanted is None or w.get("stage") in wanted]
    return texts


def _search(pattern: str, texts: Iterable[str]) -> tuple[str, re.Match[str]] | None:
    for text in texts:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            return text, match
    return None


def _gpu_mode(report: Report) -> bool:
    return bool(report["request"]["device"] == "gpu")


def _gpu_failed(report: Report) -> bool:
    return _gpu_mode(report) and report["code"] in ("GPU_UNAVAILABLE", "DEVICE_INDEX_INVALID",
                                                     "RUNTIME_ERROR", "WORKER_FAILED", "TIMEOUT")


def _quote(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


# -- the rules ------------------------------------------------------------------------------------

def cpu_only_build(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    if not (_gpu_mode(report) and pytorch["imported"] and pytorch["backend"] == "cpu"):
        return None
    return Finding(
        "CPU_ONLY_BUILD", "error",
        "The installed PyTorch is a CPU-only build: it cannot use any GPU.",
        f"Install a GPU build into this interpreter: {INSTALL_CUDA_OR_ROCM}.",
        (f"torch {pytorch['version']}", "torch.version.cuda is None", "torch.version.hip is None"))


def nvidia_driver_missing(report: Report) -> Finding | None:
    pytorch, nodes = report["pytorch"], report["runtime"].get("device_nodes") or {}
    if not (report["code"] == "GPU_UNAVAILABLE" and pytorch["backend"] == "cuda"):
        return None
    said = _search(r"found no nvidia driver|no nvidia driver", _messages(report, ["device"]))
    nodes_absent = report["runtime"].get("os_family") == "linux" and nodes and not any(
        nodes.get(name) for name in ("nvidiactl", "proc_driver_nvidia", "dxg"))
    if said is None and not nodes_absent:
        return None
    evidence = [f"torch.cuda.init(): {_quote(said[0])}"] if said else []
    if nodes_absent:
        evidence.append("/dev/nvidiactl and /proc/driver/nvidia are absent")
    return Finding(
        "NVIDIA_DRIVER_MISSING", "error",
        "No NVIDIA driver is reachable from this process (none installed, or a container started "
        "without the GPU runtime).",
        "On a host: install the NVIDIA driver (nvidia-smi must work). In a container: start it "
        "with the GPU runtime, e.g. docker run --gpus all (NVIDIA Container Toolkit).",
        tuple(evidence))


def driver_too_old(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    build = pytorch.get("cuda_build")
    if not (_gpu_mode(report) and build):
        return None
    build_major = _version_tuple(build)[0]
    said = _search(r"too old \(found version (\d+)\)", _messages(report, ["device", "compute"]))
    if said is not None:
        found = int(said[1].group(1))
        supported = f"{found // 1000}.{found % 1000 // 10}"
        evidence = (f"torch built for CUDA {build}",
                    f"the driver supports CUDA up to {supported} (found version {found})")
    else:
        host = report.get("host") or {}
        driver = host.get("driver_version") if host.get("tool") == "nvidia-smi" else None
        minimum = MINIMUM_DRIVER.get(build_major, (None, None))
        limit = minimum[1] if report["runtime"].get("os_family") == "windows" else minimum[0]
        if not (driver and limit and _version_tuple(driver) < _version_tuple(limit)):
            return None
        evidence = (f"torch built for CUDA {build}",
                    f"nvidia-smi: driver {driver}, below {limit}, the minimum for CUDA "
                    f"{build_major}.x")
    minimum_linux = MINIMUM_DRIVER.get(build_major, ("a newer version", None))[0]
    return Finding(
        "DRIVER_TOO_OLD", "error",
        f"The NVIDIA driver is too old for this PyTorch build (CUDA {build}).",
        f"Update the driver (at least {minimum_linux} on Linux for CUDA {build_major}.x), or "
        "install a torch build for the CUDA version the driver supports, e.g. --index-url "
        "https://download.pytorch.org/whl/cu126.",
        evidence)


def _sm(capability: str) -> tuple[int, int] | None:
    parts = _version_tuple(capability)
    return (parts[0], parts[1]) if len(parts) >= 2 else None


def _arch_match(report: Report) -> tuple[str, list[str]] | None:
    """('missing' | 'ptx_only', evidence) for the requested CUDA device, if it can be told."""
    pytorch = report["pytorch"]
    arch_list = [str(arch) for arch in pytorch.get("arch_list") or []]
    index = report["request"]["device_index"]
    device = next((d for d in pytorch["devices"] if d["index"] == index), None)
    if pytorch["backend"] != "cuda" or not arch_list or device is None or not device["capability"]:
        return None
    wanted = _sm(device["capability"])
    if wanted is None:
        return None
    major, minor = wanted
    native = [a for a in arch_list if (m := re.fullmatch(r"sm_(\d+?)(\d)a?", a))
              and int(m.group(1)) == major and int(m.group(2)) <= minor]
    if native:
        return None
    ptx = [a for a in arch_list if (m := re.fullmatch(r"compute_(\d+?)(\d)a?", a))
           and (int(m.group(1)), int(m.group(2))) <= wanted]
    evidence = [f"cuda:{index} {device['name']}: capability {device['capability']} "
                f"(sm_{major}{minor})", "torch.cuda.get_arch_list(): " + " ".join(arch_list)]
    return ("ptx_only" if ptx else "missing"), evidence


def arch_not_in_build(report: Report) -> Finding | None:
    match = _arch_match(report)
    texts = _messages(report, ["compute"])
    said = _search(r"no kernel image is available", texts)
    if (match is None or match[0] != "missing") and said is None:
        return None
    evidence = list(match[1]) if match else []
    if said:
        evidence.append(_quote(said[0]))
    return Finding(
        "ARCH_NOT_IN_BUILD", "error",
        "This PyTorch build has no code for this GPU's architecture.",
        "Install a build that lists this GPU's sm_XY in torch.cuda.get_arch_list() (newer GPUs "
        "need newer CUDA builds, e.g. --index-url https://download.pytorch.org/whl/cu128 for "
        "Blackwell), or build PyTorch with TORCH_CUDA_ARCH_LIST set for it.",
        tuple(evidence))


def arch_ptx_only(report: Report) -> Finding | None:
    match = _arch_match(report)
    if match is None or match[0] != "ptx_only":
        return None
    return Finding(
        "ARCH_PTX_ONLY", "warning",
        "This GPU runs PyTorch only through PTX compiled just in time: the first calls are slow.",
        "Install a build with native code (sm_XY) for this GPU; meanwhile keep the JIT cache "
        "(CUDA_CACHE_MAXSIZE, ~/.nv/ComputeCache) between runs.",
        tuple(match[1]))


def devices_hidden(report: Report) -> Finding | None:
    if not _gpu_mode(report):
        return None
    visibility = report["runtime"].get("visibility") or {}
    said = {"empty": "is set but empty", "hides_all": "starts with an invalid entry such as -1"}
    hiding = [name for name, state in visibility.items() if state in said]
    if not hiding:
        return None
    return Finding(
        "DEVICES_HIDDEN", "error",
        "A device-visibility variable hides every GPU from this process.",
        f"Unset it (unset {hiding[0]}) or list the GPUs to use, e.g. {hiding[0]}=0.",
        tuple(f"{name} {said[visibility[name]]}" for name in hiding))


def _cuda_error(code: int, pattern: str, finding_id: str, summary: str,
                next_action: str) -> Rule:
    def rule(report: Report) -> Finding | None:
        if not _gpu_failed(report):
            return None
        said = _search(rf"(?:error {code}\b|\b{code}:|{pattern})", _messages(report))
        if said is None:
            return None
        return Finding(finding_id, "error", summary, next_action,
                       (f"CUDA error {code}: {_quote(said[0])}",))
    rule.__name__ = finding_id.lower()
    return rule


fabric_manager_not_ready = _cuda_error(
    802, r"system not yet initialized", "FABRIC_MANAGER_NOT_READY",
    "The GPUs are not ready: on NVSwitch systems the Fabric Manager is not running (CUDA 802).",
    "Start it with the driver's exact version: sudo systemctl enable --now nvidia-fabricmanager; "
    "then check systemctl status nvidia-fabricmanager.")
driver_library_mismatch = _cuda_error(
    803, r"unsupported display driver / cuda driver combination", "DRIVER_LIBRARY_MISMATCH",
    "The kernel driver and the user-space driver library (libcuda) have different versions "
    "(CUDA 803).",
    "Reboot after a driver update, or reinstall the driver so both match; in a container, do not "
    "ship libcuda in the image (let the GPU runtime mount the host's).")
forward_compat_unsupported = _cuda_error(
    804, r"forward compatibility was attempted on non supported hw", "FORWARD_COMPAT_UNSUPPORTED",
    "A CUDA forward-compatibility library is in use on a GPU that does not support it (CUDA 804).",
    "Remove the cuda-compat libraries from LD_LIBRARY_PATH (or the image), or update the driver "
    "so that it supports this build's CUDA directly.")
cuda_unknown_error = _cuda_error(
    999, r"unknown error", "CUDA_UNKNOWN_ERROR",
    "The CUDA driver reports an unknown error (999), often after a suspend and resume.",
    "Reload the unified memory module (sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm) or "
    "reboot; then run the check again.")


def mig_slice(report: Report) -> Finding | None:
    host = report.get("host") or {}
    slices = host.get("mig_devices") or 0
    named = [d["name"] for d in report["pytorch"]["devices"] if "MIG" in (d.get("name") or "")]
    if not slices and not named:
        return None
    evidence = ([f"nvidia-smi -L lists {slices} MIG device(s)"] if slices else []) + \
        [f"device name: {name}" for name in named]
    return Finding(
        "MIG_SLICE", "info",
        "A MIG slice is in use: it has a fraction of the GPU's memory and compute.",
        "Size your work for the slice, not the whole card; address a slice by its UUID from "
        "nvidia-smi -L in CUDA_VISIBLE_DEVICES.",
        tuple(evidence))


def numpy_missing(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    said = _search(r"Failed to initialize NumPy: No module named 'numpy'",
                   _messages(report, ["import"]))
    if said is None and not (pytorch["imported"] and pytorch.get("numpy_present") is False):
        return None
    return Finding(
        "NUMPY_MISSING", "warning",
        "NumPy is not installed next to torch: tensor.numpy() and most data loading will fail.",
        "python -m pip install numpy (with the same interpreter).",
        (_quote(said[0]),) if said else ("numpy is not importable",))


def numpy_abi_mismatch(report: Report) -> Finding | None:
    said = _search(r"compiled using NumPy 1\.x|_ARRAY_API not found|"
                   r"numpy\.core\.multiarray failed to import", _messages(report, ["import"]))
    if said is None:
        return None
    numpy = report["pytorch"].get("numpy_version")
    return Finding(
        "NUMPY_ABI_MISMATCH", "warning",
        "NumPy's version does not match the one this torch (or an extension) was compiled with.",
        'python -m pip install "numpy<2" for a build compiled against NumPy 1.x, or upgrade torch '
        "and the extension to builds made for NumPy 2.",
        tuple(x for x in (_quote(said[0]), f"numpy {numpy}" if numpy else None) if x))


def torch_shadowed(report: Report) -> Finding | None:
    if report["pytorch"].get("origin") != "current-folder":
        return None
    return Finding(
        "TORCH_SHADOWED", "error",
        "'import torch' loads a torch.py file or torch folder from the working folder, not the "
        "installed package.",
        "Rename or remove the local torch.py (or torch/ folder) and any __pycache__ beside it.",
        ("torch was imported from the working folder",))


def torch_duplicate_install(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    if not pytorch["imported"]:
        return None
    evidence = []
    count = pytorch.get("distributions_on_path") or 0
    if count > 1:
        evidence.append(f"{count} torch distributions are visible on sys.path")
    version, installed = pytorch.get("version"), pytorch.get("distribution_version")
    if version and installed and version.split("+")[0] != installed.split("+")[0]:
        evidence.append(f"torch.__version__ {version} but the installed distribution is "
                        f"{installed}")
    if pytorch.get("origin") == "user-site":
        evidence.append("torch was imported from the user site-packages (pip install --user)")
    if not evidence:
        return None
    return Finding(
        "TORCH_DUPLICATE_INSTALL", "warning",
        "More than one PyTorch install is visible to this interpreter; the one imported may not "
        "be the one you installed.",
        "python -m pip uninstall torch (repeat until none is left, also with --user), then "
        "install one build; python -m pip list -v shows where each lives.",
        tuple(evidence))


def shared_library_missing(report: Report) -> Finding | None:
    said = _search(r"([\w.+-]+\.so(?:\.[\d.]+)?): cannot open shared object file",
                   _messages(report, ["import"]))
    if said is None:
        return None
    library = said[1].group(1)
    cuda_library = re.match(r"lib(cu|nv|nccl|cudnn|cublas|cusparse|cufft|curand|cusolver)", library)
    where = ("it comes with the nvidia-* wheels torch depends on: python -m pip install "
             "--force-reinstall torch" if cuda_library else
             "reinstall torch (python -m pip install --force-reinstall torch); if the library "
             "belongs to the system, install it with the system's package manager")
    return Finding(
        "SHARED_LIBRARY_MISSING", "error",
        f"import torch needs {library}, which cannot be found.",
        f"Restore {library}: {where}. Also check that LD_LIBRARY_PATH does not point elsewhere.",
        (_quote(said[0]),))


def undefined_symbol(report: Report) -> Finding | None:
    said = _search(r"undefined symbol: ?(\S+)", _messages(report, ["import"]))
    if said is None:
        return None
    library = re.search(r"([\w.+-]+\.so(?:\.[\d.]+)?)", said[0])
    named = library.group(1) if library else "a library"
    return Finding(
        "UNDEFINED_SYMBOL", "error",
        f"{named} does not match the code that loads it (undefined symbol {said[1].group(1)}): "
        "two builds are mixed.",
        "Unset LD_LIBRARY_PATH (it often points at another CUDA or cuDNN), then reinstall torch "
        "and its extensions from one index.",
        (_quote(said[0]),))


def windows_dll_load_failed(report: Report) -> Finding | None:
    said = _search(r"WinError 126|DLL load failed", _messages(report, ["import"]))
    if said is None:
        return None
    dll = re.search(r"([\w.+-]+\.dll)", said[0], re.IGNORECASE)
    named = dll.group(1) if dll else "a DLL"
    return Finding(
        "WINDOWS_DLL_LOAD_FAILED", "error",
        f"Windows could not load {named} or one of its dependencies.",
        "Install the latest Microsoft Visual C++ Redistributable (x64), then reinstall torch "
        "(python -m pip install --force-reinstall torch).",
        (_quote(said[0]),))


def rocm_kfd_access(report: Report) -> Finding | None:
    nodes = report["runtime"].get("device_nodes") or {}
    if not (_gpu_failed(report) and report["pytorch"]["backend"] == "rocm"):
        return None
    state = nodes.get("kfd")
    if state not in ("absent", "no_access"):
        return None
    if state == "absent":
        return Finding(
            "ROCM_KFD_ACCESS", "error",
            "/dev/kfd is absent: the AMD GPU driver (amdgpu) is not loaded or not exposed here.",
            "Load the driver (sudo modprobe amdgpu) or, in a container, pass --device=/dev/kfd "
            "--device=/dev/dri.",
            ("/dev/kfd is absent",))
    return Finding(
        "ROCM_KFD_ACCESS", "error",
        "/dev/kfd exists but this user cannot open it.",
        "Add the user to the render and video groups (sudo usermod -aG render,video $USER), then "
        "log in again; in a container, also pass --group-add video.",
        ("/dev/kfd is not readable and writable by this user",))


def rocm_gfx_unsupported(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    if not (_gpu_mode(report) and pytorch["backend"] == "rocm"):
        return None
    evidence = []
    said = _search(r"hipErrorNoBinaryForGpu|no binary for gpu|invalid device function",
                   _messages(report))
    if said:
        evidence.append(_quote(said[0]))
    arch_list = [str(a) for a in pytorch.get("arch_list") or []]
    for device in pytorch["devices"]:
        gfx = (device.get("gcn_arch") or "").split(":")[0]
        if gfx and arch_list and gfx not in arch_list:
            evidence.append(f"cuda:{device['index']} is {gfx}; the build has {' '.join(arch_list)}")
    aborted = report["code"] == "WORKER_FAILED" and report["stage"] in ("device", "compute")
    if aborted and not evidence:
        evidence.append(f"the worker died at the {report['stage']} stage of a ROCm build")
    if not evidence:
        return None
    return Finding(
        "ROCM_GFX_UNSUPPORTED", "error",
        "This ROCm build has no code for this GPU's gfx architecture.",
        "Install a ROCm build that supports this GPU; for a close consumer card, "
        "HSA_OVERRIDE_GFX_VERSION (e.g. 11.0.0 for gfx110x) is the known workaround.",
        tuple(evidence))


def slow_first_call(report: Report) -> Finding | None:
    duration = report["execution"].get("duration_ms")
    if not isinstance(duration, (int, float)) or duration <= SLOW_FIRST_CALL_MS:
        return None
    return Finding(
        "SLOW_FIRST_CALL", "warning",
        f"The first computation took {duration / 1000:.1f} s: kernels were probably compiled just "
        "in time (PTX) or the device woke slowly.",
        "Run the check again: if it is fast the second time, it was the JIT cache; install a build "
        "with native code for this GPU to avoid it.",
        (f"execution.duration_ms = {duration:.0f}",))


RULES: tuple[Rule, ...] = (
    cpu_only_build, nvidia_driver_missing, driver_too_old, arch_not_in_build, arch_ptx_only,
    devices_hidden, fabric_manager_not_ready, driver_library_mismatch, forward_compat_unsupported,
    cuda_unknown_error, mig_slice, numpy_missing, numpy_abi_mismatch, torch_shadowed,
    torch_duplicate_install, shared_library_missing, undefined_symbol, windows_dll_load_failed,
    rocm_kfd_access, rocm_gfx_unsupported, slow_first_call,
)
