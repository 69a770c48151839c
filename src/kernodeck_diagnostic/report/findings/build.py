"""The build: what the installed torch was built for, against the machine it runs on (control
2 of the method): a CPU-only build, a build for the other GPU vendor, no code for the GPU's
architecture, the CUDA toolkit or libraries it meets that are not its own, an override of the
architecture that the build does not need.
"""

from __future__ import annotations

import re

from ..shapes import EMPTY
from .core import (
    Finding,
    Layer,
    Report,
    check_passed,
    configuration_variables,
    gpu_failed,
    gpu_mode,
    installed_version,
    messages,
    other_build_loaded,
    other_vendor,
    pattern,
    pinned_requirement,
    quote,
    search,
    version_tuple,
)

layer = Layer("build")


@layer.rule(10, "CPU_ONLY_BUILD", variants=(None, "macos"))
def cpu_only_build(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    if not (gpu_mode(report) and pytorch["imported"] and pytorch["backend"] == "cpu"):
        return None
    if other_build_loaded(report):
        return None  # the environment's own build is hidden: TORCH_SHADOWED.other_build says it
    # A Mac's GPU is MPS: the CUDA and ROCm builds are no advice there.
    return Finding(
        "CPU_ONLY_BUILD", "error",
        (f"torch {pytorch['version']}", "torch.version.cuda is None", "torch.version.hip is None"),
        {"torch": pinned_requirement(installed_version(report))},
        variant="macos" if report["runtime"].get("os_family") == "macos" else None)


@layer.rule(290, "BUILD_FOR_OTHER_VENDOR", variants=("amd", "nvidia"))
def build_for_other_vendor(report: Report) -> Finding | None:
    """A CUDA build on a machine whose only GPU is AMD, or a ROCm build on an NVIDIA one."""
    vendor = other_vendor(report)
    pytorch = report["pytorch"]
    if vendor is None or not gpu_failed(report) or pytorch.get("gpu_available") is True:
        return None
    nodes = report["runtime"]["device_nodes"] or EMPTY
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
    return Finding("BUILD_FOR_OTHER_VENDOR", "error", evidence,
                   {"torch": pinned_requirement(installed_version(report))}, variant=vendor)


def _sm(capability: str) -> tuple[int, int] | None:
    parts = version_tuple(capability)
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


_NO_KERNEL_IMAGE = pattern(r"no kernel image is available")


@layer.rule(40, "ARCH_NOT_IN_BUILD")
def arch_not_in_build(report: Report) -> Finding | None:
    match = _arch_match(report)
    texts = messages(report, ["compute"])
    said = search(_NO_KERNEL_IMAGE, texts)
    if (match is None or match[0] != "missing") and said is None:
        return None
    evidence = list(match[1]) if match else []
    if said:
        evidence.append(quote(said[0]))
    return Finding(
        "ARCH_NOT_IN_BUILD", "error", tuple(evidence))


@layer.rule(50, "ARCH_PTX_ONLY")
def arch_ptx_only(report: Report) -> Finding | None:
    match = _arch_match(report)
    if match is None or match[0] != "ptx_only":
        return None
    return Finding(
        "ARCH_PTX_ONLY", "warning", tuple(match[1]))


def _override_unneeded(report: Report) -> list[str] | None:
    """The real architectures of the AMD GPUs (the kernel's KFD topology, which the override does
    not change) when HSA_OVERRIDE_GFX_VERSION is set and the build has code for every one."""
    pytorch = report["pytorch"]
    if pytorch.get("backend") != "rocm" or \
            "HSA_OVERRIDE_GFX_VERSION" not in configuration_variables(report):
        return None
    real = (report.get("system") or EMPTY).get("kfd_gfx_targets") or []
    built = {str(arch).split(":")[0] for arch in pytorch.get("arch_list") or []}
    return real if real and built and all(gfx in built for gfx in real) else None


_NO_BINARY_FOR_THE_GPU = pattern(
    r"hipErrorNoBinaryForGpu|no binary for gpu|invalid device function")


@layer.rule(220, "ROCM_GFX_UNSUPPORTED")
def rocm_gfx_unsupported(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    # A check that passed ran its kernels: a gfx missing from the build's list then runs through
    # HSA_OVERRIDE_GFX_VERSION (or a compatible code object), which is the advice, not a fault.
    if not (gpu_mode(report) and pytorch["backend"] == "rocm") or report.get("status") == "passed":
        return None
    if _override_unneeded(report):
        return None  # the override itself is the cause: HSA_OVERRIDE_ON_SUPPORTED_GPU says so
    evidence = []
    said = search(_NO_BINARY_FOR_THE_GPU, messages(report))
    if said:
        evidence.append(quote(said[0]))
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


@layer.rule(340, "HSA_OVERRIDE_ON_SUPPORTED_GPU")
def hsa_override_on_supported_gpu(report: Report) -> Finding | None:
    real = _override_unneeded(report)
    if real is None:
        return None
    value = configuration_variables(report)["HSA_OVERRIDE_GFX_VERSION"]
    arch_list = " ".join(str(arch) for arch in report["pytorch"].get("arch_list") or [])
    passed = check_passed(report)
    return Finding(
        "HSA_OVERRIDE_ON_SUPPORTED_GPU", "warning" if passed else "error",
        (f"HSA_OVERRIDE_GFX_VERSION={value}",
         f"the GPUs are {', '.join(real)} (KFD topology); the build has {arch_list}"),
        {"value": value})


@layer.rule(310, "CUDA_TOOLKIT_MISMATCH")
def cuda_toolkit_mismatch(report: Report) -> Finding | None:
    """The toolkit an extension build would compile with has another CUDA major than the build:
    torch.utils.cpp_extension refuses it ("The detected CUDA version ... mismatches")."""
    pytorch = report["pytorch"]
    toolkit = (report.get("system") or EMPTY).get("cuda_toolkit") or EMPTY
    build, version = pytorch.get("cuda_build"), toolkit.get("version")
    if not (pytorch.get("backend") == "cuda" and toolkit.get("status") == "ok"):
        return None
    build_major, toolkit_major = version_tuple(build)[:1], version_tuple(version)[:1]
    if not build_major or not toolkit_major or build_major == toolkit_major:
        return None
    via = toolkit.get("found_via")
    return Finding(
        "CUDA_TOOLKIT_MISMATCH", "warning",
        (f"torch built for CUDA {build}",
         f"the CUDA toolkit extensions compile with: nvcc {version} (found via {via})"),
        {"build": build, "toolkit": version, "via": via})


@layer.rule(320, "CUDA_LIBRARY_SHADOWED", variants=("library_path", "elsewhere"))
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
    passed = check_passed(report)
    return Finding(
        "CUDA_LIBRARY_SHADOWED", "warning" if passed else "error", tuple(evidence),
        {"library": first.get("loaded_file"), "wheel": first.get("name")},
        variant="library_path" if first.get("loaded_from") == "LD_LIBRARY_PATH" else "elsewhere")
