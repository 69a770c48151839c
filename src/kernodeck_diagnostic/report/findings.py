"""Findings: the cause behind the failing layer, from facts the check already collected.

Each rule is a pure function of the (already redacted) report: it returns a finding or nothing,
and never changes the result code. A finding says what is wrong, the exact next step, and the
evidence it stands on, so a user can check the reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..i18n import ENGLISH, Translate

Report = dict[str, Any]

# Minimum driver per CUDA major, from NVIDIA's CUDA minor-version compatibility notes:
# (Linux, Windows). A driver at or above the minimum of a major runs every minor of that major.
MINIMUM_DRIVER = {11: ("450.80.02", "452.39"), 12: ("525.60.13", "528.33"),
                  13: ("580.65.06", None)}
SLOW_FIRST_CALL_MS = 5000.0


Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    """A finding's facts; its sentences come from the message catalog (``finding.<id>.*``)."""

    id: str
    severity: Severity
    evidence: tuple[str, ...]
    values: Mapping[str, Any] = field(default_factory=dict)  # the sentences' placeholders
    variant: str | None = None  # for a finding whose advice depends on the case

    def as_dict(self, translate: Translate = ENGLISH) -> dict[str, Any]:
        key = f"finding.{self.id}" + (f".{self.variant}" if self.variant else "")
        return {"id": self.id, "severity": self.severity,
                "summary": translate(f"{key}.summary", **self.values),
                "next_action": translate(f"{key}.next_action", **self.values),
                "evidence": list(self.evidence)}


Rule = Callable[[Report], "Finding | None"]
_SEVERITY_ORDER: dict[Severity, int] = {"error": 0, "warning": 1, "info": 2}


def derive(report: Report, translate: Translate = ENGLISH) -> list[dict[str, Any]]:
    """Every finding the rules see in ``report``, the most severe first.

    The report's JSON keeps English; the terminal and markdown derive them again from the same
    report with their language's ``translate``, English too: the rules are pure, so every list
    holds the same findings.
    """
    found = [finding for rule in RULES if (finding := rule(report)) is not None]
    found.sort(key=lambda finding: _SEVERITY_ORDER[finding.severity])
    return [finding.as_dict(translate) for finding in found]


# -- what the rules read --------------------------------------------------------------------------

def _messages(report: Report, stages: Iterable[str] | None = None) -> list[str]:
    """The backend's own initialisation message, the error and the warnings, in that order: the
    first text that matches is the one a finding quotes."""
    wanted = set(stages) if stages is not None else None
    texts = []
    init_error = report["pytorch"].get("init_error")
    if init_error and (wanted is None or "device" in wanted):
        texts.append(init_error)
    error = report.get("error")
    if error and (wanted is None or error.get("stage") in wanted):
        message = error.get("message") or ""
        texts.append(f"{error['type']}: {message}" if error.get("type") else message)
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


def _version_tuple(text: object) -> tuple[int, ...]:
    """The first three numbers of a version ("12.8" -> (12, 8)); () for anything else."""
    return tuple(int(part) for part in re.findall(r"\d{1,9}", text)[:3]) \
        if isinstance(text, str) else ()


def _other_vendor(report: Report) -> Literal["amd", "nvidia"] | None:
    """The vendor of the only GPU hardware the Linux device nodes show, when the build is for the
    other one: "amd" for a CUDA build where /dev/kfd exists and no NVIDIA node does, "nvidia" for
    a ROCm build where NVIDIA's nodes exist and /dev/kfd does not. None when it cannot be told:
    not Linux, no nodes read, both vendors' nodes, or none."""
    nodes = report["runtime"].get("device_nodes") or {}
    if report["runtime"].get("os_family") != "linux" or not nodes:
        return None
    amd = nodes.get("kfd") in ("ok", "no_access")
    # /dev/dxg is WSL 2's paravirtualised GPU, whatever its vendor: it rules out "AMD only" for a
    # CUDA build, and proves nothing about NVIDIA for a ROCm one.
    nvidia = any(nodes.get(name) for name in ("nvidiactl", "proc_driver_nvidia"))
    backend = report["pytorch"].get("backend")
    if backend == "cuda" and amd and not nvidia and not nodes.get("dxg"):
        return "amd"
    if backend == "rocm" and nvidia and not amd:
        return "nvidia"
    return None


# -- the rules ------------------------------------------------------------------------------------

def cpu_only_build(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    if not (_gpu_mode(report) and pytorch["imported"] and pytorch["backend"] == "cpu"):
        return None
    return Finding(
        "CPU_ONLY_BUILD", "error",
        (f"torch {pytorch['version']}", "torch.version.cuda is None", "torch.version.hip is None"))


def nvidia_driver_missing(report: Report) -> Finding | None:
    pytorch, nodes = report["pytorch"], report["runtime"].get("device_nodes") or {}
    # On a machine with only an AMD GPU a CUDA build says the same: BUILD_FOR_OTHER_VENDOR's case.
    if not (report["code"] == "GPU_UNAVAILABLE" and pytorch["backend"] == "cuda") or \
            _other_vendor(report):
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
        "NVIDIA_DRIVER_MISSING", "error", tuple(evidence))


def driver_too_old(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    build = pytorch.get("cuda_build")
    if not (_gpu_mode(report) and build):
        return None
    build_major = next(iter(_version_tuple(build)), None)
    if build_major is None:
        return None
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
        if report["code"] == "GPU_CHECK_PASSED" or pytorch.get("gpu_available") is True:
            # The driver did run this build: only CUDA forward compatibility (the cuda-compat
            # libraries NGC containers ship) runs a newer CUDA on an older driver. Nothing to fix.
            return Finding(
                "DRIVER_TOO_OLD", "info",
                (*evidence, "torch.cuda.is_available() is True: the driver ran this build"),
                {"build": build, "driver": driver, "minimum": limit, "major": build_major},
                variant="forward_compat")
    minimum_linux = MINIMUM_DRIVER.get(build_major, ("a newer version", None))[0]
    return Finding(
        "DRIVER_TOO_OLD", "error", evidence,
        {"build": build, "minimum": minimum_linux, "major": build_major})


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
        "ARCH_NOT_IN_BUILD", "error", tuple(evidence))


def arch_ptx_only(report: Report) -> Finding | None:
    match = _arch_match(report)
    if match is None or match[0] != "ptx_only":
        return None
    return Finding(
        "ARCH_PTX_ONLY", "warning", tuple(match[1]))


# The visibility variables each build's runtime reads: CUDA only its own; ROCm's ROCr reads
# ROCR_VISIBLE_DEVICES, and HIP its own and CUDA_VISIBLE_DEVICES too (HIP's environment variables
# reference, "GPU isolation variables").
_VISIBILITY_READ = {"cuda": ("CUDA_VISIBLE_DEVICES",),
                    "rocm": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")}


def devices_hidden(report: Report) -> Finding | None:
    read = _VISIBILITY_READ.get(report["pytorch"].get("backend"), ())
    # Only when no GPU was usable: a variable that hid them all leaves none.
    if not (read and _gpu_failed(report) and report["pytorch"].get("gpu_available") is not True):
        return None
    visibility = report["runtime"].get("visibility") or {}
    said = {"empty": "is set but empty", "hides_all": "starts with an invalid entry such as -1"}
    hiding = [name for name in read if visibility.get(name) in said]
    if not hiding:
        return None
    return Finding(
        "DEVICES_HIDDEN", "error",
        tuple(f"{name} {said[visibility[name]]}" for name in hiding), {"variable": hiding[0]})


def _cuda_error(code: int, pattern: str, finding_id: str) -> Rule:
    def rule(report: Report) -> Finding | None:
        # "unknown error" and the numbers are in other backends' messages too (ROCm's).
        if not (_gpu_failed(report) and report["pytorch"].get("backend") == "cuda"):
            return None
        said = _search(rf"(?:error {code}\b|\b{code}:|{pattern})", _messages(report))
        if said is None:
            return None
        return Finding(finding_id, "error", (f"CUDA error {code}: {_quote(said[0])}",))
    rule.__name__ = finding_id.lower()
    return rule


fabric_manager_not_ready = _cuda_error(802, r"system not yet initialized",
                                       "FABRIC_MANAGER_NOT_READY")
driver_library_mismatch = _cuda_error(803, r"unsupported display driver / cuda driver combination",
                                      "DRIVER_LIBRARY_MISMATCH")
forward_compat_unsupported = _cuda_error(
    804, r"forward compatibility was attempted on non supported hw", "FORWARD_COMPAT_UNSUPPORTED")
cuda_unknown_error = _cuda_error(999, r"unknown error", "CUDA_UNKNOWN_ERROR")


def build_for_other_vendor(report: Report) -> Finding | None:
    """A CUDA build on a machine whose only GPU is AMD, or a ROCm build on an NVIDIA one."""
    vendor = _other_vendor(report)
    pytorch = report["pytorch"]
    if vendor is None or not _gpu_failed(report) or pytorch.get("gpu_available") is True:
        return None
    nodes = report["runtime"]["device_nodes"]
    if vendor == "amd":
        evidence = (f"torch {pytorch.get('version')} is a CUDA (NVIDIA) build: CUDA "
                    f"{pytorch.get('cuda_build')}",
                    "/dev/kfd (AMD) is present; no NVIDIA device node: /dev/nvidiactl, "
                    "/proc/driver/nvidia and /dev/dxg are absent")
    else:
        present = [path for name, path in (("nvidiactl", "/dev/nvidiactl"),
                                           ("proc_driver_nvidia", "/proc/driver/nvidia"))
                   if nodes.get(name)]
        evidence = (f"torch {pytorch.get('version')} is a ROCm (AMD) build: HIP "
                    f"{pytorch.get('hip_build')}",
                    f"NVIDIA device nodes present: {', '.join(present)}; /dev/kfd (AMD) is absent")
    return Finding("BUILD_FOR_OTHER_VENDOR", "error", evidence, variant=vendor)


def mig_slice(report: Report) -> Finding | None:
    host = report.get("host") or {}
    slices = host.get("mig_devices") or 0
    named = [d["name"] for d in report["pytorch"]["devices"] if "MIG" in (d.get("name") or "")]
    if not slices and not named:
        return None
    evidence = ([f"nvidia-smi -L lists {slices} MIG device(s)"] if slices else []) + \
        [f"device name: {name}" for name in named]
    return Finding(
        "MIG_SLICE", "info", tuple(evidence))


def numpy_missing(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    said = _search(r"Failed to initialize NumPy: No module named 'numpy'",
                   _messages(report, ["import"]))
    if said is None and not (pytorch["imported"] and pytorch.get("numpy_present") is False):
        return None
    return Finding(
        "NUMPY_MISSING", "warning",
        (_quote(said[0]),) if said else ("numpy is not importable",))


def numpy_abi_mismatch(report: Report) -> Finding | None:
    said = _search(r"compiled using NumPy 1\.x|_ARRAY_API not found|"
                   r"numpy\.core\.multiarray failed to import", _messages(report, ["import"]))
    if said is None:
        return None
    numpy = report["pytorch"].get("numpy_version")
    return Finding(
        "NUMPY_ABI_MISMATCH", "warning",
        tuple(x for x in (_quote(said[0]), f"numpy {numpy}" if numpy else None) if x))


def warning_as_error(report: Report) -> Finding | None:
    """A warning the interpreter's filters turned into an error (-W error, PYTHONWARNINGS=error)
    stopped the check: the failure is the filter, not what the warning says."""
    error = report.get("error") or {}
    category = str(error.get("type") or "")
    if not (category.endswith("Warning") and report["runtime"].get("warnings_as_errors") is True):
        return None
    message = " ".join(str(error.get("message") or "").split())
    return Finding(
        "WARNING_AS_ERROR", "error",
        (f"{category} raised as an error at the {error.get('stage')} stage: "
         f"\"{_quote(message)}\"",
         "a warning filter turns warnings into errors (action 'error')"),
        {"category": category})


# What ``import torch`` found instead of the installed package (pytorch.module_kind): how the
# evidence names it, and the name the sentences use.
_SHADOWS = {"file": ("a file torch.py", "torch.py"),
            "compiled": ("a compiled torch.pyc", "torch.pyc"),
            "extension": ("a compiled extension module torch", "torch"),
            "package": ("a package folder torch/", "torch/"),
            "folder": ("a folder torch/ without __init__.py", "torch/"),
            "source-checkout": ("a PyTorch source checkout (torch/ beside setup.py)", "torch/")}
_LOCAL_FOLDERS = ("working-folder", "script-folder")


def torch_shadowed(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    kind, origin = pytorch.get("module_kind"), pytorch.get("origin") or "elsewhere"
    if kind not in _SHADOWS:
        return None
    described, module = _SHADOWS[kind]
    installed = pytorch.get("distribution_version")
    evidence = (f"import torch would load {described} (origin: {origin})",
                f"the installed torch distribution is {installed}" if installed
                else "no torch distribution is installed")
    if kind == "source-checkout":
        variant = "checkout"
    elif origin == "pythonpath":
        variant = "pythonpath"
    elif origin in _LOCAL_FOLDERS:
        variant = "local_folder" if module == "torch/" else "local_file"
    else:
        variant = "stray"
    return Finding("TORCH_SHADOWED", "error", evidence, {"module": module}, variant=variant)


def local_module_shadows(report: Report) -> Finding | None:
    """Modules of the user's, where their program imports first, named like ones it needs."""
    pytorch = report["pytorch"]
    entries = [entry for entry in report["runtime"].get("local_modules") or []
               # torch hidden where the check imports it from is TORCH_SHADOWED's to say
               if not (entry.get("name") == "torch" and pytorch.get("module_kind") in _SHADOWS
                       and entry.get("folder") == pytorch.get("origin"))]
    if not entries:
        return None
    evidence = []
    for entry in entries:
        name, hides = entry.get("name"), entry.get("hides")
        what = ("the installed torch" if hides == "torch" else
                f"{name}, which torch needs" if hides == "torch-dependency" else
                f"the standard library's {name}")
        evidence.append(f"{entry.get('file')} in the {entry.get('folder')} hides {what}")
    names = ", ".join(dict.fromkeys(str(entry.get("name")) for entry in entries))
    return Finding("LOCAL_MODULE_SHADOWS", "warning", tuple(evidence), {"names": names})


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
    # A single pip install --user is one install: the user site-packages is only context.
    if not evidence:
        return None
    if pytorch.get("origin") == "user-site":
        evidence.append("torch was imported from the user site-packages (pip install --user)")
    return Finding(
        "TORCH_DUPLICATE_INSTALL", "warning", tuple(evidence))


def shared_library_missing(report: Report) -> Finding | None:
    # Intel oneMKL's own loader aborts the process with the second form: the message is then the
    # last line of the worker's stderr, in a WORKER_FAILED report.
    said = _search(r"([\w.+-]+\.so(?:\.[\d.]+)?): cannot open shared object file|"
                   r"FATAL ERROR: Cannot load (?:\S*/)?([\w.+-]+\.so(?:\.[\d.]+)?)",
                   _messages(report, ["import"]))
    if said is None:
        return None
    library = said[1].group(1) or said[1].group(2)
    # libcuda and libnvidia-* (libnvidia-ml...) belong to the driver, never to a wheel.
    if re.match(r"libcuda\.so|libnvidia-", library):
        variant = "driver"
    elif re.match(r"lib(cu|nv|nccl|cudnn|cublas|cusparse|cufft|curand|cusolver)", library):
        variant = "cuda"
    else:
        variant = "system"
    return Finding("SHARED_LIBRARY_MISSING", "error", (_quote(said[0]),), {"library": library},
                   variant=variant)


def undefined_symbol(report: Report) -> Finding | None:
    said = _search(r"undefined symbol: ?(\S+)", _messages(report, ["import"]))
    if said is None:
        return None
    library = re.search(r"([\w.+-]+\.so(?:\.[\d.]+)?)", said[0])
    named = library.group(1) if library else "a library"
    return Finding("UNDEFINED_SYMBOL", "error", (_quote(said[0]),),
                   {"library": named, "symbol": said[1].group(1)})


def windows_dll_load_failed(report: Report) -> Finding | None:
    said = _search(r"WinError 126|DLL load failed", _messages(report, ["import"]))
    if said is None:
        return None
    dll = re.search(r"([\w.+-]+\.dll)", said[0], re.IGNORECASE)
    named = dll.group(1) if dll else "a DLL"
    return Finding("WINDOWS_DLL_LOAD_FAILED", "error", (_quote(said[0]),), {"dll": named})


def rocm_kfd_access(report: Report) -> Finding | None:
    nodes = report["runtime"].get("device_nodes") or {}
    # On a machine with only an NVIDIA GPU /dev/kfd is rightly absent: BUILD_FOR_OTHER_VENDOR's.
    if not (_gpu_failed(report) and report["pytorch"]["backend"] == "rocm") or \
            _other_vendor(report):
        return None
    state = nodes.get("kfd")
    if state not in ("absent", "no_access"):
        return None
    evidence = ("/dev/kfd is absent" if state == "absent" else
                "/dev/kfd is not readable and writable by this user")
    return Finding("ROCM_KFD_ACCESS", "error", (evidence,), variant=state)


def rocm_gfx_unsupported(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    # A check that passed ran its kernels: a gfx missing from the build's list then runs through
    # HSA_OVERRIDE_GFX_VERSION (or a compatible code object), which is the advice, not a fault.
    if not (_gpu_mode(report) and pytorch["backend"] == "rocm") or report.get("status") == "passed":
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
    # A worker that died (an OOM kill, a segfault) is no evidence by itself: when the missing code
    # object is the cause, its last stderr line, in error.message, says hipErrorNoBinaryForGpu.
    if not evidence:
        return None
    return Finding(
        "ROCM_GFX_UNSUPPORTED", "error", tuple(evidence))


def slow_first_call(report: Report) -> Finding | None:
    duration = report["execution"].get("duration_ms")
    if not isinstance(duration, (int, float)) or duration <= SLOW_FIRST_CALL_MS:
        return None
    return Finding(
        "SLOW_FIRST_CALL", "warning", (f"execution.duration_ms = {duration:.0f}",),
        {"seconds": f"{duration / 1000:.1f}"})


def library_path_override(report: Report) -> Finding | None:
    """A folder on a library-path variable (or the conda environment's lib) supplied a library
    the loader rejected: a wrong version, an empty file, the wrong ELF class."""
    override = report["runtime"].get("library_override")
    if not override:
        return None
    library, variable = str(override.get("library")), override.get("variable")
    if variable:
        where = f"a folder on {variable}" + (
            " (a conda environment's lib)" if override.get("conda_env_lib") else "")
    else:
        where = "the active conda environment's lib folder"
    evidence = [f"{where} holds {library}"]
    said = _search(re.escape(library), _messages(report))
    if said:
        evidence.append(_quote(said[0]))
    passed = str(report["code"]).endswith("_PASSED")
    return Finding("LIBRARY_PATH_OVERRIDE", "warning" if passed else "error", tuple(evidence),
                   {"variable": variable or "", "library": library},
                   variant="variable" if variable else "conda")


def host_memory_exhausted(report: Report) -> Finding | None:
    """The process ran out of host memory: C++'s std::bad_alloc (the worker then aborts) or
    Python's MemoryError."""
    error = report.get("error") or {}
    said = _search(r"std::bad_alloc", _messages(report))
    if said is None and error.get("type") != "MemoryError":
        return None
    evidence = _quote(said[0]) if said else f"MemoryError at the {error.get('stage')} stage"
    return Finding("HOST_MEMORY_EXHAUSTED", "error", (evidence,))


def tool_isolated_install(report: Report) -> Finding | None:
    """TORCH_MISSING for the tool's own isolated install: true of that interpreter, and useless
    for the project the user meant to check."""
    kind = report["runtime"].get("tool_environment")
    if not (kind and report["code"] == "TORCH_MISSING"):
        return None
    said = {"pipx": "the check ran in the tool's own pipx environment",
            "uv_tool": "the check ran in the tool's own uv tool environment",
            "venv": "the check ran in the virtual environment holding the kernodeck-diagnostic "
                    "command"}
    return Finding("TOOL_ISOLATED_INSTALL", "info" if kind == "venv" else "warning",
                   (said.get(kind, str(kind)), "torch is not installed in it"), variant=kind)


RULES: tuple[Rule, ...] = (
    cpu_only_build, nvidia_driver_missing, driver_too_old, arch_not_in_build, arch_ptx_only,
    devices_hidden, fabric_manager_not_ready, driver_library_mismatch, forward_compat_unsupported,
    cuda_unknown_error, mig_slice, numpy_missing, numpy_abi_mismatch, torch_shadowed,
    local_module_shadows,
    torch_duplicate_install, shared_library_missing, undefined_symbol, windows_dll_load_failed,
    rocm_kfd_access, rocm_gfx_unsupported, slow_first_call, warning_as_error,
    library_path_override, host_memory_exhausted, tool_isolated_install, build_for_other_vendor,
)
