"""Driver and device: the GPU driver (its kernel module, its library, its version, its errors)
and the devices it gives this process (control 2 of the method): which are visible and in what
order, whether they can be opened, their state and health, their memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..codes import Verdict
from ..shapes import EMPTY, Node
from .core import (
    Finding,
    Layer,
    Report,
    Rule,
    check_passed,
    cuda_or_unknown,
    gpu_failed,
    gpu_mode,
    host_gpus,
    messages,
    node_block,
    other_vendor,
    pattern,
    quote,
    requested_device,
    search,
    version_tuple,
)
from .node import container_no_compute_capability

layer = Layer("driver and device")

# Minimum driver per CUDA major, from NVIDIA's CUDA minor-version compatibility notes:
# (Linux, Windows). A driver at or above the minimum of a major runs every minor of that major.
MINIMUM_DRIVER = {11: ("450.80.02", "452.39"), 12: ("525.60.13", "528.33"),
                  13: ("580.65.06", None)}
SLOW_FIRST_CALL_MS = 5000.0
MEMORY_HELD_FRACTION = 0.5  # less than this much of the device free before the check: "held"
_EXCLUSIVE_MODES = ("Exclusive_Process", "Exclusive_Thread", "Prohibited")


# -- the driver -----------------------------------------------------------------------------------

def _driver_cause(report: Report) -> bool:
    """The node's facts name why the driver cannot be reached (the module, nouveau, a container
    without compute libraries): those findings say it, with the right advice."""
    return any(rule(report) is not None for rule in (
        nvidia_module_not_loaded, nouveau_bound, container_no_compute_capability))


# cudaGetDeviceCount() errors only a loaded driver returns: out of memory (2), fabric manager not
# ready (802), driver and library mismatch (803), forward compatibility refused (804). A machine
# that gives one has a driver, whatever the device nodes this process sees.
_DRIVER_ANSWERED = pattern(r"cudaGetDeviceCount\(\).*\bError (?:2|802|803|804):")
_NO_DRIVER = pattern(r"found no nvidia driver|no nvidia driver")


@layer.rule(20, "NVIDIA_DRIVER_MISSING")
def nvidia_driver_missing(report: Report) -> Finding | None:
    pytorch, nodes = report["pytorch"], report["runtime"].get("device_nodes") or EMPTY
    # On a machine with only an AMD GPU a CUDA build says the same: BUILD_FOR_OTHER_VENDOR's case.
    if not (report["code"] == Verdict.GPU_UNAVAILABLE and pytorch["backend"] == "cuda") or \
            other_vendor(report) or _driver_cause(report) or \
            search(_DRIVER_ANSWERED, messages(report, ["device"])):
        return None
    said = search(_NO_DRIVER, messages(report, ["device"]))
    nodes_absent = report["runtime"].get("os_family") == "linux" and nodes and not any(
        nodes.get(name) for name in ("nvidiactl", "proc_driver_nvidia", "dxg"))
    if said is None and not nodes_absent:
        return None
    evidence = [f"torch.cuda.init(): {quote(said[0])}"] if said else []
    if nodes_absent:
        evidence.append("/dev/nvidiactl and /proc/driver/nvidia are absent")
    return Finding(
        "NVIDIA_DRIVER_MISSING", "error", tuple(evidence))


_DRIVER_TOO_OLD = pattern(r"too old \(found version (\d+)\)")


@layer.rule(30, "DRIVER_TOO_OLD", variants=(None, "forward_compat"))
def driver_too_old(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    build = pytorch.get("cuda_build")
    if not (gpu_mode(report) and build):
        return None
    build_major = next(iter(version_tuple(build)), None)
    if build_major is None:
        return None
    said = search(_DRIVER_TOO_OLD, messages(report, ["device", "compute"]))
    if said is not None:
        found = int(said[1].group(1))
        supported = f"{found // 1000}.{found % 1000 // 10}"
        evidence = (f"torch built for CUDA {build}",
                    f"the driver supports CUDA up to {supported} (found version {found})")
    else:
        driver, source = _driver_version(report)
        minimum = MINIMUM_DRIVER.get(build_major, (None, None))
        limit = minimum[1] if report["runtime"].get("os_family") == "windows" else minimum[0]
        if not (driver and limit and version_tuple(driver) < version_tuple(limit)):
            return None
        evidence = (f"torch built for CUDA {build}",
                    f"{source}: driver {driver}, below {limit}, the minimum for CUDA "
                    f"{build_major}.x")
        if report["code"] == Verdict.GPU_CHECK_PASSED or pytorch.get("gpu_available") is True:
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
    host = report.get("host") or EMPTY
    if host.get("tool") == "nvidia-smi" and host.get("driver_version"):
        return str(host["driver_version"]), "nvidia-smi"
    driver = (report.get("system") or EMPTY).get("nvidia_driver_version")
    return (str(driver) if driver else None), "/proc/driver/nvidia/version"


def _cuda_error(rank: int, code: int, pattern_text: str, finding_id: str) -> Rule:
    """The rule for one CUDA error that names its own cause, registered with ``rank``."""
    said_by_cuda = pattern(rf"(?:error {code}\b|\b{code}:|{pattern_text})")

    def rule(report: Report) -> Finding | None:
        # "unknown error" and the numbers are in other backends' messages too (ROCm's).
        if not (gpu_failed(report) and report["pytorch"].get("backend") == "cuda"):
            return None
        said = search(said_by_cuda, messages(report))
        if said is None:
            return None
        return Finding(finding_id, "error", (f"CUDA error {code}: {quote(said[0])}",))
    rule.__name__ = finding_id.lower()
    return layer.rule(rank, finding_id)(rule)


fabric_manager_not_ready = _cuda_error(70, 802, r"system not yet initialized",
                                       "FABRIC_MANAGER_NOT_READY")
driver_library_mismatch = _cuda_error(
    80, 803, r"unsupported display driver / cuda driver combination", "DRIVER_LIBRARY_MISMATCH")
forward_compat_unsupported = _cuda_error(
    90, 804, r"forward compatibility was attempted on non supported hw",
    "FORWARD_COMPAT_UNSUPPORTED")
cuda_unknown_error = _cuda_error(100, 999, r"unknown error", "CUDA_UNKNOWN_ERROR")


def _pci_evidence(node: Node | Mapping[str, Any]) -> str:
    drivers = node.get("pci_drivers") or {}
    bound = ", ".join(f"{count} bound to {name}" if name != "none" else f"{count} to no driver"
                      for name, count in drivers.items() if count)
    return f"{node.get('pci_gpus')} NVIDIA GPU(s) on the PCI bus" + (f": {bound}" if bound else "")


@layer.rule(380, "NVIDIA_MODULE_NOT_LOADED")
def nvidia_module_not_loaded(report: Report) -> Finding | None:
    node = node_block(report)
    if not (gpu_mode(report) and not check_passed(report)
            and report["pytorch"].get("backend") == "cuda"
            and node.get("pci_gpus") and node.get("nvidia_module_loaded") is False
            and not (node.get("pci_drivers") or {}).get("nouveau")):
        return None  # a GPU nouveau holds is NOUVEAU_BOUND's
    return Finding("NVIDIA_MODULE_NOT_LOADED", "error",
                   (_pci_evidence(node), "the NVIDIA kernel module is not loaded: "
                    "/proc/driver/nvidia and /sys/module/nvidia are absent"))


@layer.rule(390, "NOUVEAU_BOUND")
def nouveau_bound(report: Report) -> Finding | None:
    node = node_block(report)
    count = (node.get("pci_drivers") or {}).get("nouveau")
    if not (gpu_mode(report) and report["pytorch"].get("backend") == "cuda" and count):
        return None
    return Finding("NOUVEAU_BOUND", "warning" if check_passed(report) else "error",
                   (_pci_evidence(node), "CUDA cannot use a GPU the nouveau driver holds"),
                   {"count": count})


_LIBCUDA_LINK_FAILED = pattern(r"libcuda\.so cannot found|cannot find -lcuda")


@layer.rule(420, "LIBCUDA_LINK_MISSING")
def libcuda_link_missing(report: Report) -> Finding | None:
    """libcuda.so.1 is found but no libcuda.so: what Triton (torch.compile) links with -lcuda."""
    node, pytorch = node_block(report), report["pytorch"]
    said = search(_LIBCUDA_LINK_FAILED, messages(report))
    # Without Triton torch.compile generates no GPU code: nothing links with -lcuda (a report
    # without the field says nothing either way).
    triton = "triton_version" not in pytorch or pytorch["triton_version"] is not None or \
        not pytorch.get("imported")
    missing = node.get("libcuda") not in (None, "absent") and node.get("libcuda_unversioned") \
        is False and triton
    if not (gpu_mode(report) and pytorch.get("backend") == "cuda" and (missing or said)):
        return None
    evidence = ["libcuda.so.1 is found, no libcuda.so beside it"] if missing else []
    if said:
        evidence.append(quote(said[0]))
    return Finding("LIBCUDA_LINK_MISSING", "warning", tuple(evidence))


# -- which devices this process sees --------------------------------------------------------------

# The visibility variables each build's runtime reads: CUDA only its own; ROCm's ROCr reads
# ROCR_VISIBLE_DEVICES, and HIP its own and CUDA_VISIBLE_DEVICES too (HIP's environment variables
# reference, "GPU isolation variables").
_VISIBILITY_READ: dict[str | None, tuple[str, ...]] = {
    "cuda": ("CUDA_VISIBLE_DEVICES",),
    "rocm": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")}


@layer.rule(60, "DEVICES_HIDDEN")
def devices_hidden(report: Report) -> Finding | None:
    read = _VISIBILITY_READ.get(report["pytorch"].get("backend"), ())
    # Only when no GPU was usable: a variable that hid them all leaves none.
    if not (read and gpu_failed(report) and report["pytorch"].get("gpu_available") is not True):
        return None
    visibility = report["runtime"].get("visibility") or {}
    said = {"empty": "is set but empty", "hides_all": "starts with an invalid entry such as -1"}
    hiding = [name for name in read if visibility.get(name) in said]
    if not hiding:
        return None
    return Finding(
        "DEVICES_HIDDEN", "error",
        tuple(f"{name} {said[str(visibility.get(name))]}" for name in hiding),
        {"variable": hiding[0]})


_NO_DEVICE_DETECTED = pattern(r"no CUDA-capable device is detected")


@layer.rule(430, "GPU_NODES_MISMATCH")
def gpu_nodes_mismatch(report: Report) -> Finding | None:
    """Fewer GPUs reachable than the driver has: a scheduler's device limits (cgroup), a job that
    did not ask for GPUs."""
    pytorch, node = report["pytorch"], node_block(report)
    proc = node.get("proc_gpus")
    if not (gpu_mode(report) and pytorch.get("backend") == "cuda" and isinstance(proc, int)
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
    sliced = (report.get("host") or EMPTY).get("mig_devices") or any(
        "MIG" in (device.get("name") or "") for device in pytorch["devices"])
    nothing = search(_NO_DEVICE_DETECTED, messages(report))
    # A GPU that fell off the bus is missing from CUDA's count too: GPU_LOST says so.
    if ((report["runtime"].get("visibility") or {}).get("CUDA_VISIBLE_DEVICES") == "unset"
            and not sliced and isinstance(count, int) and count < proc and (count or nothing)
            and gpu_lost(report) is None):
        evidence.append(f"CUDA_VISIBLE_DEVICES is unset, yet CUDA enumerates {count} of them")
    if not evidence:
        return None
    return Finding("GPU_NODES_MISMATCH", "warning" if check_passed(report) else "error",
                   tuple(evidence))


@layer.rule(210, "ROCM_KFD_ACCESS", variants=("absent", "no_access", "wsl"))
def rocm_kfd_access(report: Report) -> Finding | None:
    """/dev/kfd absent or closed to this user. On WSL 2 (/dev/dxg) there is no /dev/kfd to load
    or pass: ROCm reaches the GPU through /dev/dxg, with AMD's Windows driver and ROCm's WSL
    packages (the "wsl" variant), never modprobe amdgpu."""
    nodes = report["runtime"].get("device_nodes") or EMPTY
    # On a machine with only an NVIDIA GPU /dev/kfd is rightly absent: BUILD_FOR_OTHER_VENDOR's.
    if not (gpu_failed(report) and report["pytorch"]["backend"] == "rocm") or \
            other_vendor(report):
        return None
    state = nodes.get("kfd")
    if state not in ("absent", "no_access"):
        return None
    evidence = ("/dev/kfd is absent" if state == "absent" else
                "/dev/kfd is not readable and writable by this user")
    if state == "absent" and (nodes.get("dxg") or node_block(report).get("wsl")):
        return Finding("ROCM_KFD_ACCESS", "error",
                       (evidence, "/dev/dxg exists: WSL 2, where ROCm uses /dev/dxg, not /dev/kfd"),
                       variant="wsl")
    return Finding("ROCM_KFD_ACCESS", "error", (evidence,), variant=state)


@layer.rule(510, "ROCM_VISIBILITY_CONFLICT")
def rocm_visibility_conflict(report: Report) -> Finding | None:
    conflicts = [str(name) for name in node_block(report).get("visibility_conflicts") or []]
    if not (conflicts and gpu_mode(report) and report["pytorch"].get("backend") == "rocm"):
        return None
    return Finding("ROCM_VISIBILITY_CONFLICT", "warning" if check_passed(report) else "error",
                   tuple(f"HIP_VISIBLE_DEVICES and {name} are both set and select differently"
                         for name in conflicts), {"variables": ", ".join(conflicts)})


def _models(report: Report) -> tuple[int, str]:
    """How many GPU models the machine has, and where that is seen (MIG slices aside)."""
    def distinct(names: Iterable[Any]) -> int:
        return len({name for name in names if isinstance(name, str) and "MIG" not in name})

    seen = [(distinct(d.get("name") for d in report["pytorch"]["devices"]), "PyTorch's devices"),
            (distinct(gpu.get("name") for gpu in host_gpus(report)), "nvidia-smi"),
            (node_block(report).get("pci_models") or 0, "the PCI bus")]
    return max(seen, key=lambda pair: pair[0])


@layer.rule(360, "DEVICE_ORDER_MISMATCH")
def device_order_mismatch(report: Report) -> Finding | None:
    """Different GPU models and an index in CUDA_VISIBLE_DEVICES, without PCI_BUS_ID order: CUDA
    numbers the fastest first, nvidia-smi by PCI bus, so "GPU 1" is not the same card."""
    if not (gpu_mode(report) and report["pytorch"].get("backend") == "cuda"):
        return None
    if "CUDA_VISIBLE_DEVICES" not in (node_block(report).get("visibility_by_index") or []):
        return None
    configuration = (report.get("system") or EMPTY).get("configuration")
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


@layer.rule(110, "MIG_SLICE")
def mig_slice(report: Report) -> Finding | None:
    host = report.get("host") or EMPTY
    slices = host.get("mig_devices") or 0
    named = [d["name"] for d in report["pytorch"]["devices"] if "MIG" in (d.get("name") or "")]
    if not slices and not named:
        return None
    evidence = ([f"nvidia-smi -L lists {slices} MIG device(s)"] if slices else []) + \
        [f"device name: {name}" for name in named]
    return Finding(
        "MIG_SLICE", "info", tuple(evidence))


@layer.rule(370, "MIG_MULTIPLE_LISTED")
def mig_multiple_listed(report: Report) -> Finding | None:
    count = (node_block(report).get("mig_entries") or {}).get("CUDA_VISIBLE_DEVICES")
    if not (gpu_mode(report) and isinstance(count, int) and count > 1):
        return None
    return Finding("MIG_MULTIPLE_LISTED", "warning",
                   (f"CUDA_VISIBLE_DEVICES lists {count} MIG devices",
                    "a CUDA process enumerates one MIG device only"), {"count": count})


# MPS needs macOS 12.3; PyTorch 2.5 and later need macOS 13, the latest releases macOS 14.
MPS_MACOS = (14, 0)


@layer.rule(300, "MPS_UNAVAILABLE", variants=("rosetta", "macos_too_old", "no_device"))
def mps_unavailable(report: Report) -> Finding | None:
    """A build with MPS on a Mac where MPS is not usable: an x86_64 Python (Rosetta 2 on Apple
    silicon), a macOS too old for this PyTorch, or no Metal GPU at all."""
    pytorch = report["pytorch"]
    mps = pytorch.get("mps") or EMPTY
    if not (gpu_mode(report) and pytorch.get("backend") == "mps"
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
    elif version and (*version_tuple(version), 0, 0)[:2] < MPS_MACOS:  # "14" is 14.0
        variant = "macos_too_old"
    else:
        variant = "no_device"
    return Finding("MPS_UNAVAILABLE", "error", tuple(evidence), {"version": version or "?"},
                   variant=variant)


# -- the devices' state and health ----------------------------------------------------------------

def _gib(size: int) -> str:
    return f"{size / 2**30:.1f}"


@layer.rule(440, "GPU_MEMORY_HELD")
def gpu_memory_held(report: Report) -> Finding | None:
    """Most of the requested device's memory was taken before the check started."""
    index = report["request"]["device_index"]
    device = requested_device(report)
    free, total = device.get("free_memory_bytes"), device.get("total_memory_bytes")
    if not (gpu_mode(report) and isinstance(free, int) and isinstance(total, int) and total > 0
            and free < total * MEMORY_HELD_FRACTION):
        return None
    evidence = [f"cuda:{index}: {_gib(free)} GiB of {_gib(total)} GiB free before the check"]
    counted = [gpu["compute_processes"] for gpu in host_gpus(report)
               if isinstance(gpu.get("compute_processes"), int)]
    if counted:
        evidence.append(f"nvidia-smi lists {sum(counted)} compute process(es) on the GPUs (this "
                        "check's own may be one)")
    return Finding("GPU_MEMORY_HELD",
                   "error" if report["code"] == Verdict.OUT_OF_MEMORY else "warning",
                   tuple(evidence), {"device": f"cuda:{index}", "free": _gib(free),
                                     "total": _gib(total)})


_BUSY = pattern(r"(?:all CUDA-capable devices are|CUDA-capable device\(s\) is/are) busy or "
                r"unavailable")


@layer.rule(450, "GPU_BUSY")
def gpu_busy(report: Report) -> Finding | None:
    if not (gpu_mode(report) and cuda_or_unknown(report)):
        return None
    said = search(_BUSY, messages(report))
    modes = [f"nvidia-smi GPU {i}: compute mode {gpu['compute_mode']}"
             for i, gpu in enumerate(host_gpus(report))
             if gpu.get("compute_mode") in _EXCLUSIVE_MODES]
    if said is None and not (modes and not check_passed(report)):
        return None
    return Finding("GPU_BUSY", "error", tuple(([quote(said[0])] if said else []) + modes))


_ECC_UNCORRECTABLE = pattern(r"uncorrectable ECC error encountered")


@layer.rule(460, "ECC_UNCORRECTABLE")
def ecc_uncorrectable(report: Report) -> Finding | None:
    said = search(_ECC_UNCORRECTABLE, messages(report))
    counts = [f"nvidia-smi GPU {i}: {gpu['ecc_uncorrected_volatile']} uncorrectable ECC "
              "error(s) since the driver loaded" for i, gpu in enumerate(host_gpus(report))
              if isinstance(gpu.get("ecc_uncorrected_volatile"), int)
              and gpu["ecc_uncorrected_volatile"] > 0]
    if said is None and not counts:
        return None
    return Finding("ECC_UNCORRECTABLE", "error",
                   tuple(([quote(said[0])] if said else []) + counts))


@layer.rule(470, "GPU_NEEDS_RESET")
def gpu_needs_reset(report: Report) -> Finding | None:
    pending = [f"nvidia-smi GPU {i}: {what} pending" for i, gpu in enumerate(host_gpus(report))
               for field, what in (("retired_pages_pending", "retired pages"),
                                   ("remapped_rows_pending", "row remapping"))
               if gpu.get(field) is True]
    if not pending:
        return None
    return Finding("GPU_NEEDS_RESET", "warning" if check_passed(report) else "error",
                   tuple(pending))


_LOST = pattern(r"GPU is lost|fallen off the bus|Unable to determine the device handle")


@layer.rule(480, "GPU_LOST")
def gpu_lost(report: Report) -> Finding | None:
    lost = (report.get("host") or EMPTY).get("lost_gpus")
    said = search(_LOST, messages(report))
    if said is None and not (isinstance(lost, int) and lost > 0):
        return None
    evidence = [f"nvidia-smi cannot reach {lost} GPU(s): \"Unable to determine the device "
                "handle\" or \"GPU is lost\""] if isinstance(lost, int) and lost > 0 else []
    if said:
        evidence.append(quote(said[0]))
    return Finding("GPU_LOST", "error", tuple(evidence))


@layer.rule(230, "SLOW_FIRST_CALL", variants=(None, "persistence_off"))
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
    return [i for i, gpu in enumerate(host_gpus(report)) if gpu.get("persistence_mode") is False]


@layer.rule(490, "PERSISTENCE_MODE_OFF")
def persistence_mode_off(report: Report) -> Finding | None:
    """Persistence off and a slow start: each process pays the GPUs' initialisation."""
    off, slow = _persistence_off(report), _slow(report)
    if not (off and slow):
        return None
    return Finding("PERSISTENCE_MODE_OFF", "warning",
                   (f"nvidia-smi: persistence mode is disabled on {len(off)} of "
                    f"{len(host_gpus(report))} GPU(s)", *slow))


_WRONG_HOW = {"wrong": "finite values other than the known answer",
              "non_finite": "NaN or infinity where the known answer is finite"}


@layer.rule(630, "SILENT_DATA_CORRUPTION", variants=("wrong", "non_finite"))
def silent_data_corruption(report: Report) -> Finding | None:
    """The device ran the fixed computation and gave back a wrong or non-finite product, loss or
    gradient, without an error: the signature of silent data corruption (a faulty GPU, its
    memory, its matrix units). A transient fault is no less a faulty device."""
    error = report.get("error") or EMPTY
    how = report["execution"].get("wrong_values") or {}
    if not (gpu_mode(report) and report["code"] == Verdict.CHECK_FAILED
            and error.get("stage") == "compute" and how):
        return None
    device = report["execution"].get("device") or f"device {report['request']['device_index']}"
    evidence = [f"{name}: {_WRONG_HOW.get(str(kind), str(kind))}" for name, kind in how.items()]
    evidence.append(f"the computation ran on {device} without an error")
    variant = "non_finite" if "non_finite" in how.values() else "wrong"
    return Finding("SILENT_DATA_CORRUPTION", "error", tuple(evidence),
                   {"device": device, "values": ", ".join(how)}, variant=variant)


@layer.rule(640, "VISIBLE_DEVICE_UNMATCHED")
def visible_device_unmatched(report: Report) -> Finding | None:
    """CUDA_VISIBLE_DEVICES names a GPU UUID that none of the driver's GPUs has (a UUID from
    another machine, or from a job's allocation that is gone): CUDA then gives no such device,
    and nothing says why. DEVICES_HIDDEN covers an empty value and an invalid first entry."""
    unmatched = (node_block(report).get("visibility_unmatched") or {}).get("CUDA_VISIBLE_DEVICES")
    if not (gpu_mode(report) and cuda_or_unknown(report) and isinstance(unmatched, int)
            and unmatched > 0):
        return None
    gpus = node_block(report).get("proc_gpus")
    evidence = [f"CUDA_VISIBLE_DEVICES lists {unmatched} GPU UUID(s) that no GPU here has"
                + (f" (the driver has {gpus} GPU(s): /proc/driver/nvidia/gpus)"
                   if isinstance(gpus, int) else "")]
    count = report["pytorch"].get("visible_device_count")
    if isinstance(count, int):
        evidence.append(f"CUDA enumerates {count} device(s)")
    return Finding("VISIBLE_DEVICE_UNMATCHED", "warning" if check_passed(report) else "error",
                   tuple(evidence), {"count": unmatched})
