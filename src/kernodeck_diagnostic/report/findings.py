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
from . import libraries as library_facts

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

def _driver_cause(report: Report) -> bool:
    """The node's facts name why the driver cannot be reached (the module, nouveau, a container
    without compute libraries): those findings say it, with the right advice."""
    return any(rule(report) is not None for rule in (
        nvidia_module_not_loaded, nouveau_bound, container_no_compute_capability))


# cudaGetDeviceCount() errors only a loaded driver returns: out of memory (2), fabric manager not
# ready (802), driver and library mismatch (803), forward compatibility refused (804). A machine
# that gives one has a driver, whatever the device nodes this process sees.
_DRIVER_ANSWERED = r"cudaGetDeviceCount\(\).*\bError (?:2|802|803|804):"


def cpu_only_build(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    if not (_gpu_mode(report) and pytorch["imported"] and pytorch["backend"] == "cpu"):
        return None
    # A Mac's GPU is MPS: the CUDA and ROCm builds are no advice there.
    return Finding(
        "CPU_ONLY_BUILD", "error",
        (f"torch {pytorch['version']}", "torch.version.cuda is None", "torch.version.hip is None"),
        variant="macos" if report["runtime"].get("os_family") == "macos" else None)


# MPS needs macOS 12.3; PyTorch 2.5 and later need macOS 13, the latest releases macOS 14.
MPS_MACOS = (14, 0)


def mps_unavailable(report: Report) -> Finding | None:
    """A build with MPS on a Mac where MPS is not usable: an x86_64 Python (Rosetta 2 on Apple
    silicon), a macOS too old for this PyTorch, or no Metal GPU at all."""
    pytorch = report["pytorch"]
    mps = pytorch.get("mps") or {}
    if not (_gpu_mode(report) and pytorch.get("backend") == "mps"
            and mps.get("available") is False):
        return None
    version, machine, translated = mps.get("macos_version"), mps.get("machine"), \
        mps.get("translated")
    evidence = ["torch.backends.mps.is_built() is True",
                "torch.backends.mps.is_available() is False"]
    if version:
        evidence.append(f"macOS {version}")
    if translated or (machine == "x86_64" and translated is not False):
        evidence.append(f"process architecture {machine}" + (
            ", translated by Rosetta 2 (sysctl.proc_translated = 1)" if translated else ""))
        variant = "rosetta"
    elif version and _version_tuple(version) < MPS_MACOS:
        variant = "macos_too_old"
    else:
        variant = "no_device"
    return Finding("MPS_UNAVAILABLE", "error", tuple(evidence), {"version": version or "?"},
                   variant=variant)


def nvidia_driver_missing(report: Report) -> Finding | None:
    pytorch, nodes = report["pytorch"], report["runtime"].get("device_nodes") or {}
    # On a machine with only an AMD GPU a CUDA build says the same: BUILD_FOR_OTHER_VENDOR's case.
    if not (report["code"] == "GPU_UNAVAILABLE" and pytorch["backend"] == "cuda") or \
            _other_vendor(report) or _driver_cause(report) or \
            _search(_DRIVER_ANSWERED, _messages(report, ["device"])):
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
        driver, source = _driver_version(report)
        minimum = MINIMUM_DRIVER.get(build_major, (None, None))
        limit = minimum[1] if report["runtime"].get("os_family") == "windows" else minimum[0]
        if not (driver and limit and _version_tuple(driver) < _version_tuple(limit)):
            return None
        evidence = (f"torch built for CUDA {build}",
                    f"{source}: driver {driver}, below {limit}, the minimum for CUDA "
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


def _driver_version(report: Report) -> tuple[str | None, str]:
    """The NVIDIA driver's version and who said it: nvidia-smi (``--host-check``), else the
    kernel module's own file, read on every Linux check (``system.nvidia_driver_version``)."""
    host = report.get("host") or {}
    if host.get("tool") == "nvidia-smi" and host.get("driver_version"):
        return str(host["driver_version"]), "nvidia-smi"
    driver = (report.get("system") or {}).get("nvidia_driver_version")
    return (str(driver) if driver else None), "/proc/driver/nvidia/version"


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


def tracemalloc_on(report: Report) -> Finding | None:
    """tracemalloc records every allocation in the worker's interpreter (PYTHONTRACEMALLOC, -X
    tracemalloc): ``import torch`` then takes many times longer (2.3 s became 27 s with 5 frames,
    a CUDA build here), enough to end the check on its limit. An error when the limit ended it,
    a warning on a check that passed (the user's program pays the same); nothing otherwise."""
    frames = report["runtime"].get("tracemalloc_frames")
    timed_out = report["code"] == "TIMEOUT"
    if not (isinstance(frames, int) and frames > 0 and (timed_out or _passed(report))):
        return None
    evidence = [f"tracemalloc traces every allocation with {frames} frame(s) each "
                "(PYTHONTRACEMALLOC or -X tracemalloc)"]
    if timed_out:
        evidence.append(f"the time limit ended the check at the {report['stage']} stage")
    return Finding("TRACEMALLOC_ON", "error" if timed_out else "warning", tuple(evidence),
                   {"frames": str(frames)})


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


def pythonpath_module_breaks_import(report: Report) -> Finding | None:
    """``import torch`` failed inside a module found in a PYTHONPATH folder, which the import
    system searches before the environment's own packages: a stale copy (another Python's
    packages, a module system's setting) replaces the one installed with torch. The message's
    path is redacted, so without this the clue is gone. torch itself found there is
    TORCH_SHADOWED's or TORCH_DUPLICATE_INSTALL's case."""
    origin = report["pytorch"].get("import_error_origin") or {}
    if not (report["code"] == "TORCH_IMPORT_FAILED" and origin.get("place") == "pythonpath"
            and origin.get("module") != "torch"):
        return None
    module = origin.get("module")
    evidence = [f"the import failed in {module or 'a module'}, found in a folder on PYTHONPATH "
                "(searched before this environment's own packages)"]
    message = (report.get("error") or {}).get("message")
    if message:
        evidence.append(_quote(str(message)))
    return Finding("PYTHONPATH_MODULE_BREAKS_IMPORT", "error", tuple(evidence),
                   {"module": module or "a module"})


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
    if _override_unneeded(report):
        return None  # the override itself is the cause: HSA_OVERRIDE_ON_SUPPORTED_GPU says so
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
    # With persistence mode off, each process also pays the GPUs' initialisation: not JIT alone.
    off = _persistence_off(report)
    return Finding(
        "SLOW_FIRST_CALL", "warning", (f"execution.duration_ms = {duration:.0f}",) + (
            ("nvidia-smi: persistence mode is disabled",) if off else ()),
        {"seconds": f"{duration / 1000:.1f}"}, variant="persistence_off" if off else None)


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


# How running out of host memory reads: C++'s std::bad_alloc (the worker then aborts), the dynamic
# loader's fatal error for a thread's TLS (exit 127), ENOMEM in an OSError, a MemoryError the worker
# could not even report (the report's sentence quotes its last line on stderr; one it reported is
# the error's type). Not glibc's "cannot allocate memory in static TLS block", a fixed-size area
# that no amount of memory enlarges.
_OUT_OF_MEMORY = (r"std::bad_alloc|cannot allocate memory for thread-local data"
                  r"|\[Errno 12\] Cannot allocate memory|on stderr: MemoryError\b"
                  r"|Cannot recover from MemoryErrors")
# What counts only when a limit on memory is set: the loader could not map a library (ENOMEM
# under a limit, but also a noexec mount or a damaged file), and CPython's fatal "Cannot recover
# from stack overflow", which a MemoryError in the middle of an import gives with a stack of 30
# frames (CPython 3.11 under ulimit -d, seen for real), and a deep recursion gives without one.
_UNDER_A_LIMIT = (r"failed to map segment from shared object"
                  r"|Fatal Python error: \S+: Cannot recover from stack overflow")
# The limits that fail an allocation (node.memory_limits), with the shell's command for each.
_MEMORY_LIMITS = (("address_space_bytes", "ulimit -v"), ("data_bytes", "ulimit -d"))
# CUDA starting up says "out of memory" (cudaErrorMemoryAllocation, error 2) when it cannot
# reserve the host address space it maps the GPUs' memory into: cudaGetDeviceCount()'s "Error 2:
# out of memory", or the raw "CUDA error: out of memory" of a context that could not be made
# (never the caching allocator's "CUDA out of memory. Tried to allocate", which needs a context).
_CUDA_START_OUT_OF_MEMORY = r"\bError 2: out of memory|CUDA error: out of memory"


def host_memory_exhausted(report: Report) -> Finding | None:
    """The process ran out of host memory: std::bad_alloc, MemoryError, the loader's own words;
    under a limit on memory (``ulimit -v``, ``-d``), the limit is named and raising it is the
    advice; CUDA that cannot start under ``ulimit -v`` is told apart from a full GPU."""
    error = report.get("error") or {}
    limits = (report.get("node") or {}).get("memory_limits") or {}
    limited = [(command, f"{_mib(limits[key])} MiB") for key, command in _MEMORY_LIMITS
               if isinstance(limits.get(key), int)]
    address_space = next((limit for command, limit in limited if command == "ulimit -v"), None)
    reservation = _cuda_reservation_refused(report, address_space)
    if reservation is not None:
        return reservation
    said = _search(_OUT_OF_MEMORY + (f"|{_UNDER_A_LIMIT}" if limited else ""), _messages(report))
    if said is None and error.get("type") != "MemoryError":
        return None
    evidence = [_quote(said[0]) if said else f"MemoryError at the {error.get('stage')} stage"]
    evidence += [_limit_evidence(command, limit) for command, limit in limited]
    if not limited:
        return Finding("HOST_MEMORY_EXHAUSTED", "error", tuple(evidence))
    command, limit = limited[0]
    return Finding("HOST_MEMORY_EXHAUSTED", "error", tuple(evidence),
                   {"command": command, "limit": limit}, variant="limited")


def _limit_evidence(command: str, limit: str) -> str:
    return f"{command}: {limit} for this process and the worker"


def _cuda_reservation_refused(report: Report, address_space: str | None) -> Finding | None:
    """CUDA's "out of memory" before it had a context on the device, under an address-space
    limit: the driver could not reserve the host address space it maps every GPU's memory into
    (at least as large as their memory), so the limit, not the GPU, ran out. Once
    the device's free memory could be read (a context exists), a later "out of memory" is the
    GPU's own and this says nothing."""
    if not (address_space and _gpu_mode(report) and not _passed(report)
            and report["pytorch"].get("backend") == "cuda"
            and not isinstance(_requested_device(report).get("free_memory_bytes"), int)):
        return None
    said = _search(_CUDA_START_OUT_OF_MEMORY, _messages(report))
    if said is None:
        return None
    return Finding("HOST_MEMORY_EXHAUSTED", "error",
                   (_quote(said[0]), _limit_evidence("ulimit -v", address_space),
                    "the device's free memory could not be read: CUDA had no context on it yet"),
                   {"command": "ulimit -v", "limit": address_space}, variant="cuda_reservation")


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


def _configuration(report: Report) -> dict[str, Any]:
    """The allow-listed configuration variables that are set (``system.configuration``)."""
    return ((report.get("system") or {}).get("configuration")) or {}


def cuda_toolkit_mismatch(report: Report) -> Finding | None:
    """The toolkit an extension build would compile with has another CUDA major than the build:
    torch.utils.cpp_extension refuses it ("The detected CUDA version ... mismatches")."""
    pytorch = report["pytorch"]
    toolkit = (report.get("system") or {}).get("cuda_toolkit") or {}
    build, version = pytorch.get("cuda_build"), toolkit.get("version")
    if not (pytorch.get("backend") == "cuda" and toolkit.get("status") == "ok"):
        return None
    build_major, toolkit_major = _version_tuple(build)[:1], _version_tuple(version)[:1]
    if not build_major or not toolkit_major or build_major == toolkit_major:
        return None
    via = toolkit.get("found_via")
    return Finding(
        "CUDA_TOOLKIT_MISMATCH", "warning",
        (f"torch built for CUDA {build}",
         f"the CUDA toolkit extensions compile with: nvcc {version} (found via {via})"),
        {"build": build, "toolkit": version, "via": via})


def cuda_library_shadowed(report: Report) -> Finding | None:
    """The process loaded another copy of a CUDA library than the nvidia-* wheel's next to torch:
    the cuDNN (cuBLAS, NCCL...) torch was built against is not the one it runs with."""
    libraries = [entry for entry in report["pytorch"].get("cuda_libraries") or []
                 if entry.get("loaded") == "other"]
    if not libraries:
        return None
    evidence = []
    for entry in libraries:
        where = ("a folder on LD_LIBRARY_PATH" if entry.get("loaded_from") == "LD_LIBRARY_PATH"
                 else "a folder outside the wheel")
        evidence.append(f"{entry.get('loaded_file')} was loaded from {where}, not from the "
                        f"{entry.get('name')} {entry.get('version')} wheel next to torch")
    first = libraries[0]
    passed = str(report["code"]).endswith("_PASSED")
    return Finding(
        "CUDA_LIBRARY_SHADOWED", "warning" if passed else "error", tuple(evidence),
        {"library": first.get("loaded_file"), "wheel": first.get("name")},
        variant="library_path" if first.get("loaded_from") == "LD_LIBRARY_PATH" else "elsewhere")


def cuda_launch_blocking(report: Report) -> Finding | None:
    """CUDA_LAUNCH_BLOCKING=1 makes every kernel launch wait for the GPU: for debugging only."""
    if report["pytorch"].get("backend") != "cuda" or \
            _configuration(report).get("CUDA_LAUNCH_BLOCKING") != "1":
        return None
    return Finding("CUDA_LAUNCH_BLOCKING_ON", "warning", ("CUDA_LAUNCH_BLOCKING=1",))


def _override_unneeded(report: Report) -> list[str] | None:
    """The real architectures of the AMD GPUs (the kernel's KFD topology, which the override does
    not change) when HSA_OVERRIDE_GFX_VERSION is set and the build has code for every one."""
    pytorch = report["pytorch"]
    if pytorch.get("backend") != "rocm" or "HSA_OVERRIDE_GFX_VERSION" not in _configuration(report):
        return None
    real = (report.get("system") or {}).get("kfd_gfx_targets") or []
    built = {str(arch).split(":")[0] for arch in pytorch.get("arch_list") or []}
    return real if real and built and all(gfx in built for gfx in real) else None


def hsa_override_on_supported_gpu(report: Report) -> Finding | None:
    real = _override_unneeded(report)
    if real is None:
        return None
    value = _configuration(report)["HSA_OVERRIDE_GFX_VERSION"]
    arch_list = " ".join(str(arch) for arch in report["pytorch"].get("arch_list") or [])
    passed = str(report["code"]).endswith("_PASSED")
    return Finding(
        "HSA_OVERRIDE_ON_SUPPORTED_GPU", "warning" if passed else "error",
        (f"HSA_OVERRIDE_GFX_VERSION={value}",
         f"the GPUs are {', '.join(real)} (KFD topology); the build has {arch_list}"),
        {"value": value})


# -- the node, the GPUs' health and the variables (facts.node; the host check's health fields) -----

SHM_MINIMUM_BYTES = 256 * 2**20  # a container's default is 64 MiB: too small for both users
MEMORY_HELD_FRACTION = 0.5  # less than this much of the device free before the check: "held"
_SHM = "/dev/shm"  # noqa: S108 - named in evidence, never opened here
_EXCLUSIVE_MODES = ("Exclusive_Process", "Exclusive_Thread", "Prohibited")


def _node(report: Report) -> dict[str, Any]:
    node = report.get("node")
    return node if isinstance(node, dict) else {}


def _host_gpus(report: Report) -> list[dict[str, Any]]:
    """``nvidia-smi``'s GPUs, in its order (its index), with the health fields it gave."""
    host = report.get("host") or {}
    if host.get("tool") != "nvidia-smi":
        return []
    return [gpu for gpu in host.get("gpus") or [] if isinstance(gpu, dict)]


def _passed(report: Report) -> bool:
    return str(report["code"]).endswith("_PASSED")


def _cuda_or_unknown(report: Report) -> bool:
    return report["pytorch"].get("backend") in ("cuda", None)


def _mib(size: int) -> str:
    return f"{size / 2**20:.0f}"


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f}"


def shm_too_small(report: Report) -> Finding | None:
    """The shared-memory folder too small or read-only: DataLoader workers (CPU and GPU alike)
    die of SIGBUS and NCCL cannot create its segments."""
    shm = _node(report).get("shm") or {}
    size, free = shm.get("size_bytes"), shm.get("free_bytes")
    small = isinstance(size, int) and size < SHM_MINIMUM_BYTES
    if not small and shm.get("writable") is not False:
        return None
    evidence = []
    if isinstance(size, int) and small:
        evidence.append(f"{_SHM} is {_mib(size)} MiB"
                        + (f" ({_mib(free)} MiB free)" if isinstance(free, int) else "")
                        + f", below {_mib(SHM_MINIMUM_BYTES)} MiB")
    if shm.get("writable") is False:
        evidence.append(f"{_SHM} is not writable by this user")
    return Finding("SHM_TOO_SMALL", "warning", tuple(evidence),
                   {"size_mib": _mib(size) if isinstance(size, int) else "?"},
                   variant="small" if small else "read_only")


def _models(report: Report) -> tuple[int, str]:
    """How many GPU models the machine has, and where that is seen (MIG slices aside)."""
    def distinct(names: Iterable[Any]) -> int:
        return len({name for name in names if isinstance(name, str) and "MIG" not in name})

    seen = [(distinct(d.get("name") for d in report["pytorch"]["devices"]), "PyTorch's devices"),
            (distinct(gpu.get("name") for gpu in _host_gpus(report)), "nvidia-smi"),
            (_node(report).get("pci_models") or 0, "the PCI bus")]
    return max(seen, key=lambda pair: pair[0])


def device_order_mismatch(report: Report) -> Finding | None:
    """Different GPU models and an index in CUDA_VISIBLE_DEVICES, without PCI_BUS_ID order: CUDA
    numbers the fastest first, nvidia-smi by PCI bus, so "GPU 1" is not the same card."""
    if not (_gpu_mode(report) and report["pytorch"].get("backend") == "cuda"):
        return None
    if "CUDA_VISIBLE_DEVICES" not in (_node(report).get("visibility_by_index") or []):
        return None
    configuration = (report.get("system") or {}).get("configuration")
    if not isinstance(configuration, dict):
        return None  # a report without it: the order is unknown, not unset
    order = configuration.get("CUDA_DEVICE_ORDER")
    models, where = _models(report)
    if order == "PCI_BUS_ID" or models < 2:
        return None
    said = ("CUDA_DEVICE_ORDER is unset (CUDA's default: FASTEST_FIRST)" if order is None else
            f"CUDA_DEVICE_ORDER={order}" if order == "FASTEST_FIRST" else
            "CUDA_DEVICE_ORDER is set, not to PCI_BUS_ID")
    return Finding("DEVICE_ORDER_MISMATCH", "warning",
                   (f"{models} different GPU models ({where})",
                    "CUDA_VISIBLE_DEVICES selects devices by index", said))


def mig_multiple_listed(report: Report) -> Finding | None:
    count = (_node(report).get("mig_entries") or {}).get("CUDA_VISIBLE_DEVICES")
    if not (_gpu_mode(report) and isinstance(count, int) and count > 1):
        return None
    return Finding("MIG_MULTIPLE_LISTED", "warning",
                   (f"CUDA_VISIBLE_DEVICES lists {count} MIG devices",
                    "a CUDA process enumerates one MIG device only"), {"count": count})


def _pci_evidence(node: dict[str, Any]) -> str:
    drivers = node.get("pci_drivers") or {}
    bound = ", ".join(f"{count} bound to {name}" if name != "none" else f"{count} to no driver"
                      for name, count in drivers.items() if count)
    return f"{node.get('pci_gpus')} NVIDIA GPU(s) on the PCI bus" + (f": {bound}" if bound else "")


def nvidia_module_not_loaded(report: Report) -> Finding | None:
    node = _node(report)
    if not (_gpu_mode(report) and not _passed(report) and report["pytorch"].get("backend") == "cuda"
            and node.get("pci_gpus") and node.get("nvidia_module_loaded") is False
            and not (node.get("pci_drivers") or {}).get("nouveau")):
        return None  # a GPU nouveau holds is NOUVEAU_BOUND's
    return Finding("NVIDIA_MODULE_NOT_LOADED", "error",
                   (_pci_evidence(node), "the NVIDIA kernel module is not loaded: "
                    "/proc/driver/nvidia and /sys/module/nvidia are absent"))


def nouveau_bound(report: Report) -> Finding | None:
    node = _node(report)
    count = (node.get("pci_drivers") or {}).get("nouveau")
    if not (_gpu_mode(report) and report["pytorch"].get("backend") == "cuda" and count):
        return None
    return Finding("NOUVEAU_BOUND", "warning" if _passed(report) else "error",
                   (_pci_evidence(node), "CUDA cannot use a GPU the nouveau driver holds"),
                   {"count": count})


def container_no_compute_capability(report: Report) -> Finding | None:
    """NVIDIA's device nodes and NVML are here, libcuda is not: a container given the driver's
    utility libraries (nvidia-smi works) without its compute ones."""
    node, nodes = _node(report), report["runtime"].get("device_nodes") or {}
    if not (_gpu_mode(report) and not _passed(report) and node.get("libcuda") == "absent"
            and node.get("nvml") is True and (nodes.get("nvidiactl") or node.get("dev_gpus"))):
        return None
    if not (report["pytorch"].get("backend") == "cuda"
            or _search(r"libcuda\.so", _messages(report, ["import"]))):
        return None
    return Finding("CONTAINER_NO_COMPUTE_CAPABILITY", "error",
                   ("NVIDIA device nodes are present (/dev/nvidiactl or /dev/nvidiaN)",
                    "libnvidia-ml.so.1 (NVML, utility) is found; libcuda.so.1 (compute) is not"))


def wsl_linux_driver_installed(report: Report) -> Finding | None:
    node = _node(report)
    place = node.get("libcuda")
    if not (_gpu_mode(report) and not _passed(report) and _cuda_or_unknown(report)
            and node.get("wsl") and place in ("system", "library_path")):
        return None
    where = "a folder of LD_LIBRARY_PATH" if place == "library_path" else "the system's folders"
    return Finding("WSL_LINUX_DRIVER_INSTALLED", "error",
                   ("/dev/dxg exists: WSL 2",
                    f"the loader finds libcuda.so.1 first in {where}, not in WSL's driver folder"),
                   variant=str(place))


def libcuda_link_missing(report: Report) -> Finding | None:
    """libcuda.so.1 is found but no libcuda.so: what Triton (torch.compile) links with -lcuda."""
    node, pytorch = _node(report), report["pytorch"]
    said = _search(r"libcuda\.so cannot found|cannot find -lcuda", _messages(report))
    # Without Triton torch.compile generates no GPU code: nothing links with -lcuda (a report
    # without the field says nothing either way).
    triton = "triton_version" not in pytorch or pytorch["triton_version"] is not None or \
        not pytorch.get("imported")
    missing = node.get("libcuda") not in (None, "absent") and node.get("libcuda_unversioned") \
        is False and triton
    if not (_gpu_mode(report) and pytorch.get("backend") == "cuda" and (missing or said)):
        return None
    evidence = ["libcuda.so.1 is found, no libcuda.so beside it"] if missing else []
    if said:
        evidence.append(_quote(said[0]))
    return Finding("LIBCUDA_LINK_MISSING", "warning", tuple(evidence))


def gpu_nodes_mismatch(report: Report) -> Finding | None:
    """Fewer GPUs reachable than the driver has: a scheduler's device limits (cgroup), a job that
    did not ask for GPUs."""
    pytorch, node = report["pytorch"], _node(report)
    proc = node.get("proc_gpus")
    if not (_gpu_mode(report) and pytorch.get("backend") == "cuda" and isinstance(proc, int)
            and proc > 0):
        return None
    evidence = []
    accessible = node.get("dev_gpus_accessible")
    if isinstance(accessible, int) and accessible < proc:
        evidence.append(f"/proc/driver/nvidia/gpus lists {proc} GPU(s); this process may open "
                        f"{accessible} of the {node.get('dev_gpus')} /dev/nvidiaN nodes")
    # cgroup v2 keeps its device filter out of sight: then CUDA's own count tells, when no
    # variable and no MIG slice (CUDA enumerates one) explain a smaller one.
    count = pytorch.get("visible_device_count")
    sliced = (report.get("host") or {}).get("mig_devices") or any(
        "MIG" in (device.get("name") or "") for device in pytorch["devices"])
    nothing = _search(r"no CUDA-capable device is detected", _messages(report))
    # A GPU that fell off the bus is missing from CUDA's count too: GPU_LOST says so.
    if ((report["runtime"].get("visibility") or {}).get("CUDA_VISIBLE_DEVICES") == "unset"
            and not sliced and isinstance(count, int) and count < proc and (count or nothing)
            and gpu_lost(report) is None):
        evidence.append(f"CUDA_VISIBLE_DEVICES is unset, yet CUDA enumerates {count} of them")
    if not evidence:
        return None
    return Finding("GPU_NODES_MISMATCH", "warning" if _passed(report) else "error",
                   tuple(evidence))


def _requested_device(report: Report) -> dict[str, Any]:
    """The requested device's entry in ``pytorch.devices`` ({} when it has none)."""
    index = report["request"]["device_index"]
    return next((device for device in report["pytorch"].get("devices") or []
                 if device.get("index") == index), {})


def gpu_memory_held(report: Report) -> Finding | None:
    """Most of the requested device's memory was taken before the check started."""
    index = report["request"]["device_index"]
    device = _requested_device(report)
    free, total = device.get("free_memory_bytes"), device.get("total_memory_bytes")
    if not (_gpu_mode(report) and isinstance(free, int) and isinstance(total, int) and total > 0
            and free < total * MEMORY_HELD_FRACTION):
        return None
    evidence = [f"cuda:{index}: {_gib(free)} GiB of {_gib(total)} GiB free before the check"]
    counted = [gpu["compute_processes"] for gpu in _host_gpus(report)
               if isinstance(gpu.get("compute_processes"), int)]
    if counted:
        evidence.append(f"nvidia-smi lists {sum(counted)} compute process(es) on the GPUs (this "
                        "check's own may be one)")
    return Finding("GPU_MEMORY_HELD", "error" if report["code"] == "OUT_OF_MEMORY" else "warning",
                   tuple(evidence), {"device": f"cuda:{index}", "free": _gib(free),
                                     "total": _gib(total)})


def gpu_busy(report: Report) -> Finding | None:
    if not (_gpu_mode(report) and _cuda_or_unknown(report)):
        return None
    said = _search(r"(?:all CUDA-capable devices are|CUDA-capable device\(s\) is/are) busy or "
                   r"unavailable", _messages(report))
    modes = [f"nvidia-smi GPU {i}: compute mode {gpu['compute_mode']}"
             for i, gpu in enumerate(_host_gpus(report))
             if gpu.get("compute_mode") in _EXCLUSIVE_MODES]
    if said is None and not (modes and not _passed(report)):
        return None
    return Finding("GPU_BUSY", "error", tuple(([_quote(said[0])] if said else []) + modes))


def ecc_uncorrectable(report: Report) -> Finding | None:
    said = _search(r"uncorrectable ECC error encountered", _messages(report))
    counts = [f"nvidia-smi GPU {i}: {gpu['ecc_uncorrected_volatile']} uncorrectable ECC "
              "error(s) since the driver loaded" for i, gpu in enumerate(_host_gpus(report))
              if isinstance(gpu.get("ecc_uncorrected_volatile"), int)
              and gpu["ecc_uncorrected_volatile"] > 0]
    if said is None and not counts:
        return None
    return Finding("ECC_UNCORRECTABLE", "error",
                   tuple(([_quote(said[0])] if said else []) + counts))


def gpu_needs_reset(report: Report) -> Finding | None:
    pending = [f"nvidia-smi GPU {i}: {what} pending" for i, gpu in enumerate(_host_gpus(report))
               for field, what in (("retired_pages_pending", "retired pages"),
                                   ("remapped_rows_pending", "row remapping"))
               if gpu.get(field) is True]
    if not pending:
        return None
    return Finding("GPU_NEEDS_RESET", "warning" if _passed(report) else "error", tuple(pending))


def gpu_lost(report: Report) -> Finding | None:
    lost = (report.get("host") or {}).get("lost_gpus")
    said = _search(r"GPU is lost|fallen off the bus|Unable to determine the device handle",
                   _messages(report))
    if said is None and not (isinstance(lost, int) and lost > 0):
        return None
    evidence = [f"nvidia-smi cannot reach {lost} GPU(s): \"Unable to determine the device "
                "handle\" or \"GPU is lost\""] if isinstance(lost, int) and lost > 0 else []
    if said:
        evidence.append(_quote(said[0]))
    return Finding("GPU_LOST", "error", tuple(evidence))


def _slow(report: Report) -> list[str]:
    """What was slow: the first computation, or the device stage (initialising the GPUs)."""
    duration = report["execution"].get("duration_ms")
    device = (report.get("timings_ms") or {}).get("device")
    slow = [f"execution.duration_ms = {duration:.0f}"] \
        if isinstance(duration, (int, float)) and duration > SLOW_FIRST_CALL_MS else []
    if isinstance(device, (int, float)) and device > SLOW_FIRST_CALL_MS:
        slow.append(f"timings_ms.device = {device:.0f}")
    return slow


def _persistence_off(report: Report) -> list[int]:
    return [i for i, gpu in enumerate(_host_gpus(report)) if gpu.get("persistence_mode") is False]


def persistence_mode_off(report: Report) -> Finding | None:
    """Persistence off and a slow start: each process pays the GPUs' initialisation."""
    off, slow = _persistence_off(report), _slow(report)
    if not (off and slow):
        return None
    return Finding("PERSISTENCE_MODE_OFF", "warning",
                   (f"nvidia-smi: persistence mode is disabled on {len(off)} of "
                    f"{len(_host_gpus(report))} GPU(s)", *slow))


def debug_injection_set(report: Report) -> Finding | None:
    names = [str(name) for name in _node(report).get("debug_variables") or []]
    if not (names and _gpu_mode(report) and _cuda_or_unknown(report)):
        return None
    return Finding("DEBUG_INJECTION_SET", "warning",
                   (f"set (names only): {', '.join(names)}",), {"names": ", ".join(names)})


def rocm_visibility_conflict(report: Report) -> Finding | None:
    conflicts = [str(name) for name in _node(report).get("visibility_conflicts") or []]
    if not (conflicts and _gpu_mode(report) and report["pytorch"].get("backend") == "rocm"):
        return None
    return Finding("ROCM_VISIBILITY_CONFLICT", "warning" if _passed(report) else "error",
                   tuple(f"HIP_VISIBLE_DEVICES and {name} are both set and select differently"
                         for name in conflicts), {"variables": ", ".join(conflicts)})


# -- the library layer (--extensions, --kernels: report/libraries.py, docs/libraries.md) ----------

def _extensions(report: Report) -> list[dict[str, Any]]:
    return list((report.get("libraries") or {}).get("extensions") or [])


def _kernel(report: Report, name: str) -> dict[str, Any] | None:
    kernels = (report.get("libraries") or {}).get("kernels") or []
    return next((kernel for kernel in kernels if kernel.get("name") == name), None)


def _pinned_install(report: Report, name: str) -> str:
    """The command that installs torch and ``name`` together from torch's own index, torch
    pinned, so that pip picks the extension built for it."""
    version = str(report["pytorch"].get("version") or "")
    public, _, label = version.partition("+")
    command = f'python -m pip install "torch=={public}" "{name}"' if public else \
        f'python -m pip install torch "{name}"'
    if re.fullmatch(r"cpu|cu\d+|rocm[\d.]+|xpu", label):
        command += f" --index-url https://download.pytorch.org/whl/{label}"
    return command


def _extension_evidence(extension: dict[str, Any]) -> str:
    said = f"{extension.get('name')} {extension.get('version')}"
    if extension.get("requires_torch") is not None:
        said += f" requires torch{extension['requires_torch'] or ' (any version)'}"
    if extension.get("cuda"):
        said += f", built for {extension['cuda']}"
    error = extension.get("error") or {}
    if extension.get("status") == "timeout":
        said += f"; its import did not finish within {extension.get('limit_s')} s"
    elif error:
        said += "; import: " + _quote(f"{error['type']}: {error.get('message')}"
                                      if error.get("type") else str(error.get("message")))
    return said


def extension_torch_mismatch(report: Report) -> Finding | None:
    """An extension built for another torch: its declared requirement excludes the installed
    torch, or its import fails with the signs of it (an unregistered operator, an undefined
    symbol)."""
    found = [extension for extension in _extensions(report) if library_facts.torch_mismatch(
        extension)]
    if not found:
        return None
    first = found[0]
    torch = str((report.get("libraries") or {}).get("torch_version")
                or report["pytorch"].get("version"))
    declared = first.get("requirement_met") is False
    failed = any(extension.get("status") in ("failed", "timeout") for extension in found)
    evidence = [f"torch {torch} is installed", *map(_extension_evidence, found)]
    return Finding("EXTENSION_TORCH_MISMATCH", "error" if failed else "warning",
                   tuple(evidence),
                   {"name": first.get("name"), "version": first.get("version"),
                    "wants": first.get("requires_torch") or "", "torch": torch,
                    "command": _pinned_install(report, str(first.get("name")))},
                   variant="declared" if declared else "built")


def _build_name(cuda: str | None) -> str:
    return f"CUDA {cuda}" if cuda and cuda[0].isdigit() else str(cuda or "the CPU only")


def extension_cuda_mismatch(report: Report) -> Finding | None:
    """An extension whose CUDA is not torch's, where both can be read (or its import says so)."""
    ours = report["pytorch"].get("cuda_build")
    found = [extension for extension in _extensions(report)
             if library_facts.cuda_mismatch(extension, ours)]
    if not found:
        return None
    first = found[0]
    failed = any(extension.get("status") == "failed" for extension in found)
    evidence = [f"torch {report['pytorch'].get('version')} is built for {_build_name(ours)}",
                *map(_extension_evidence, found)]
    return Finding("EXTENSION_CUDA_MISMATCH", "error" if failed else "warning", tuple(evidence),
                   {"name": first.get("name"), "version": first.get("version"),
                    "theirs": _build_name(first.get("cuda")), "ours": _build_name(ours),
                    "torch": report["pytorch"].get("version"),
                    "command": _pinned_install(report, str(first.get("name")))})


def extension_import_failed(report: Report) -> Finding | None:
    """An extension that failed to import or hung, for no reason the two rules above name."""
    ours = report["pytorch"].get("cuda_build")
    found = [extension for extension in _extensions(report)
             if extension.get("status") in ("failed", "timeout")
             and not library_facts.torch_mismatch(extension)
             and not library_facts.cuda_mismatch(extension, ours)]
    if not found:
        return None
    first = found[0]
    error = first.get("error") or {}
    what = f"{error['type']}: {error.get('message')}" if error.get("type") else \
        str(error.get("message"))
    return Finding("EXTENSION_IMPORT_FAILED", "error", tuple(map(_extension_evidence, found)),
                   {"name": first.get("name"), "version": first.get("version"),
                    "module": first.get("module") or first.get("name"), "what": _quote(what),
                    "seconds": first.get("limit_s")},
                   variant="timeout" if first.get("status") == "timeout" else "failed")


def dtype_unsupported(report: Report) -> Finding | None:
    """A half-precision matrix product the device does not support (--kernels)."""
    for dtype, instead in (("bfloat16", "float16"), ("float16", "float32")):
        kernel = _kernel(report, f"matmul_{dtype}")
        if kernel is not None and kernel.get("status") == "unsupported":
            device = str(kernel.get("device") or report["execution"].get("device"))
            name = next((str(d.get("name")) for d in report["pytorch"]["devices"]
                         if device.endswith(f":{d.get('index')}") and d.get("name")), device)
            return Finding("DTYPE_UNSUPPORTED", "warning",
                           (f"matmul_{dtype} on {device}: {kernel.get('reason')}",),
                           {"dtype": dtype, "device": name, "instead": instead})
    return None


# torch.compile's words for a missing or broken compiler: Inductor's C++ one on the CPU,
# Triton on a GPU.
_NO_CXX = re.compile(r"InvalidCxxCompiler|No working C\+\+ compiler|CppCompileError.*"
                     r"(not found|No such file)", re.IGNORECASE)
_NO_TRITON = re.compile(r"Cannot find a working triton|triton.*(not installed|not found|"
                        r"No module named)|No module named '?triton", re.IGNORECASE)


def compiler_missing(report: Report) -> Finding | None:
    """torch.compile failed for want of a working C++ compiler (CPU) or Triton (GPU)."""
    kernel = _kernel(report, "compile")
    error = (kernel or {}).get("error") or {}
    message = f"{error.get('type')}: {error.get('message')}"
    for variant, pattern in (("cpp", _NO_CXX), ("triton", _NO_TRITON)):
        if kernel is not None and kernel.get("status") == "failed" and pattern.search(message):
            return Finding("COMPILER_MISSING", "error",
                           (f"torch.compile on {kernel.get('device')}: {_quote(message)}",),
                           variant=variant)
    return None


def fused_attention_unavailable(report: Report) -> Finding | None:
    """On a GPU, fused attention backends torch cannot use here, with its reasons (info)."""
    kernel = _kernel(report, "sdpa")
    if not (_gpu_mode(report) and kernel):
        return None
    missing = {name: backend for name, backend in (kernel.get("backends") or {}).items()
               if backend.get("available") is False}
    if not missing:
        return None
    evidence = tuple(f"{name}: {_quote(str(backend.get('reason') or 'no reason given'))}"
                     for name, backend in missing.items())
    return Finding("FUSED_ATTENTION_UNAVAILABLE", "info", evidence,
                   {"backends": ", ".join(missing)})


# -- --distributed: the node's facts and the ranks' devices (the ``distributed`` block) ----------

def _distributed(report: Report) -> dict[str, Any]:
    block = report.get("distributed")
    return block if isinstance(block, dict) else {}


def master_port_in_use(report: Report) -> Finding | None:
    """Rank 0 serves the job's store and its port was taken: "Address already in use"."""
    if _distributed(report).get("port_in_use") is not True:
        return None
    return Finding("MASTER_PORT_IN_USE", "error", (
        "distributed.port_in_use: the store's port was taken on rank 0's node when the "
        "check started",))


def duplicate_gpu_per_rank(report: Report) -> Finding | None:
    """Two ranks on one GPU of one node: NCCL's "Duplicate GPU detected"."""
    groups = [group for group in _distributed(report).get("shared_devices") or [] if group]
    if not groups:
        return None
    ranks = {entry.get("rank"): entry for entry in _distributed(report).get("ranks") or []}
    evidence = []
    for group in groups[:5]:
        first = ranks.get(group[0]) or {}
        evidence.append(f"ranks {', '.join(map(str, group))} on node {first.get('node')} all "
                        f"use {first.get('device')}, no visibility variable set")
    return Finding("DUPLICATE_GPU_PER_RANK", "error", tuple(evidence))


def nccl_socket_ifname_missing(report: Report) -> Finding | None:
    """NCCL_SOCKET_IFNAME (or GLOO_SOCKET_IFNAME) names no interface of this node."""
    states = _distributed(report).get("socket_interfaces") or {}
    missing = sorted(name for name, state in states.items() if state == "missing")
    if not missing:
        return None
    # The cause of a collective that failed; otherwise a trap for the next job (this one may
    # have used the other backend).
    passed = (_distributed(report).get("collective") or {}).get("status") == "passed"
    return Finding("NCCL_SOCKET_IFNAME_MISSING", "warning" if passed else "error", tuple(
        f"{name} is set and names no network interface of this node" for name in missing),
        {"variables": ", ".join(missing)})


def memlock_low(report: Report) -> Finding | None:
    """RDMA devices under a locked-memory limit: NCCL cannot register its buffers."""
    block = _distributed(report)
    devices, limit = block.get("rdma_devices"), block.get("memlock_limit_bytes")
    if not (isinstance(devices, int) and devices > 0 and isinstance(limit, int)):
        return None
    shown = f"{limit // 1024} KiB" if limit < 2**20 else f"{_mib(limit)} MiB"
    return Finding("MEMLOCK_LOW", "warning", (
        f"{devices} RDMA device(s) in /sys/class/infiniband",
        f"locked-memory limit (ulimit -l) {shown}, not unlimited"))


def nccl_p2p_broken(report: Report) -> Finding | None:
    """--all-devices: a direct (peer-to-peer) copy between two GPUs that each computed right
    arrived wrong or never ended, the way PCIe ACS or an IOMMU in the path breaks P2P, which NCCL
    uses between such GPUs. A failed copy between GPUs without peer access went through host
    memory: another fault, not this one."""
    pytorch = report["pytorch"]
    passed = {device.get("index") for device in pytorch.get("devices") or []
              if (device.get("check") or {}).get("code") == "GPU_CHECK_PASSED"}
    broken = [peer for peer in pytorch.get("peers") or []
              if peer.get("access") is True and peer.get("code") in ("CHECK_FAILED", "TIMEOUT")
              and {peer.get("source"), peer.get("target")} <= passed]
    if not broken:
        return None
    backend = str(pytorch.get("backend") or "cuda")
    prefix = "cuda" if backend in ("cuda", "rocm") else backend
    return Finding("NCCL_P2P_BROKEN", "error", tuple(
        f"{prefix}:{peer['source']} -> {prefix}:{peer['target']}: peer access reported, copy "
        + ("wrong" if peer["code"] == "CHECK_FAILED" else "never ended") for peer in broken[:6]))


RULES: tuple[Rule, ...] = (
    cpu_only_build, nvidia_driver_missing, driver_too_old, arch_not_in_build, arch_ptx_only,
    devices_hidden, fabric_manager_not_ready, driver_library_mismatch, forward_compat_unsupported,
    cuda_unknown_error, mig_slice, numpy_missing, numpy_abi_mismatch, torch_shadowed,
    local_module_shadows, pythonpath_module_breaks_import,
    torch_duplicate_install, shared_library_missing, undefined_symbol, windows_dll_load_failed,
    rocm_kfd_access, rocm_gfx_unsupported, slow_first_call, warning_as_error, tracemalloc_on,
    library_path_override, host_memory_exhausted, tool_isolated_install, build_for_other_vendor,
    mps_unavailable,
    cuda_toolkit_mismatch, cuda_library_shadowed, cuda_launch_blocking,
    hsa_override_on_supported_gpu,
    shm_too_small, device_order_mismatch, mig_multiple_listed, nvidia_module_not_loaded,
    nouveau_bound, container_no_compute_capability, wsl_linux_driver_installed,
    libcuda_link_missing, gpu_nodes_mismatch, gpu_memory_held, gpu_busy, ecc_uncorrectable,
    gpu_needs_reset, gpu_lost, persistence_mode_off, debug_injection_set, rocm_visibility_conflict,
    extension_torch_mismatch, extension_cuda_mismatch, extension_import_failed, dtype_unsupported,
    compiler_missing, fused_attention_unavailable,
    master_port_in_use, duplicate_gpu_per_rank, nccl_socket_ifname_missing, memlock_low,
    nccl_p2p_broken,
)
