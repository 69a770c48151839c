"""Libraries: the extensions and kernels beside torch (``--extensions``, ``--kernels``; their
facts in report/libraries.py, docs/libraries.md): an extension built for another torch or
another CUDA, one that fails to import, a data type, a compiler or a fused attention the device
or the machine lacks.
"""

from __future__ import annotations

import re

from .. import libraries as library_facts
from ..shapes import EMPTY, Extension, Kernel
from .core import Finding, Layer, Report, gpu_mode, node_block, quote

layer = Layer("libraries")


def _extensions(report: Report) -> list[Extension]:
    return list((report.get("libraries") or EMPTY).get("extensions") or [])


def _kernel(report: Report, name: str) -> Kernel | None:
    kernels = (report.get("libraries") or EMPTY).get("kernels") or []
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


def _extension_evidence(extension: Extension) -> str:
    said = f"{extension.get('name')} {extension.get('version')}"
    if extension.get("requires_torch") is not None:
        said += f" requires torch{extension['requires_torch'] or ' (any version)'}"
    if extension.get("cuda"):
        said += f", built for {extension['cuda']}"
    error = extension.get("error") or EMPTY
    if extension.get("status") == "timeout":
        said += f"; its import did not finish within {extension.get('limit_s')} s"
    elif error:
        said += "; import: " + quote(f"{error['type']}: {error.get('message')}"
                                      if error.get("type") else str(error.get("message")))
    return said


@layer.rule(520, "EXTENSION_TORCH_MISMATCH", variants=("declared", "built"))
def extension_torch_mismatch(report: Report) -> Finding | None:
    """An extension built for another torch: its declared requirement excludes the installed
    torch, or its import fails with the signs of it (an unregistered operator, an undefined
    symbol)."""
    found = [extension for extension in _extensions(report) if library_facts.torch_mismatch(
        extension)]
    if not found:
        return None
    first = found[0]
    torch = str((report.get("libraries") or EMPTY).get("torch_version")
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


@layer.rule(530, "EXTENSION_CUDA_MISMATCH")
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


@layer.rule(540, "EXTENSION_IMPORT_FAILED", variants=("timeout", "failed"))
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
    error = first.get("error") or EMPTY
    what = f"{error['type']}: {error.get('message')}" if error.get("type") else \
        str(error.get("message"))
    return Finding("EXTENSION_IMPORT_FAILED", "error", tuple(map(_extension_evidence, found)),
                   {"name": first.get("name"), "version": first.get("version"),
                    "module": first.get("module") or first.get("name"), "what": quote(what),
                    "seconds": first.get("limit_s")},
                   variant="timeout" if first.get("status") == "timeout" else "failed")


@layer.rule(550, "DTYPE_UNSUPPORTED")
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


@layer.rule(560, "COMPILER_MISSING", variants=("cpp", "cxx_not_found", "triton"))
def compiler_missing(report: Report) -> Finding | None:
    """torch.compile failed for want of a working C++ compiler (CPU) or Triton (GPU). Where
    ``CXX`` names a program this ``PATH`` cannot run (``node.compilers_not_found``), the only
    one the C++ builder tries: that setting is the cause, whatever compilers are installed."""
    kernel = _kernel(report, "compile")
    error = (kernel or EMPTY).get("error") or EMPTY
    message = f"{error.get('type')}: {error.get('message')}"
    for variant, pattern in (("cpp", _NO_CXX), ("triton", _NO_TRITON)):
        if kernel is not None and kernel.get("status") == "failed" and pattern.search(message):
            evidence = [f"torch.compile on {kernel.get('device')}: {quote(message)}"]
            unrunnable = "CXX" in (node_block(report).get("compilers_not_found") or ())
            if variant == "cpp" and unrunnable:
                evidence.append("CXX is set (its value not shown) to no program this PATH runs")
            return Finding("COMPILER_MISSING", "error", tuple(evidence),
                           variant="cxx_not_found" if variant == "cpp" and unrunnable else variant)
    return None


@layer.rule(565, "COMPILE_CACHE_UNUSABLE", variants=("not_a_folder", "not_writable"))
def compile_cache_unusable(report: Report) -> Finding | None:
    """torch.compile's default cache folder ($TMPDIR/torchinductor_<user>) is one the user's
    programs cannot use (``libraries.kernels[compile].default_cache``): each of their
    ``torch.compile`` calls fails there, while the check's own, in a folder of its own, says
    nothing of it. A warning: the folder's state is read, not tried (the check never writes,
    nor runs what another user may have left, in that folder)."""
    kernel = _kernel(report, "compile")
    problem = (kernel or EMPTY).get("default_cache")
    if not problem:
        return None
    what = {"not_a_folder": "is not a folder", "not_writable": "is a folder this user cannot write"}
    return Finding("COMPILE_CACHE_UNUSABLE", "warning",
                   (f"torch.compile's default cache folder {what.get(str(problem), problem)}",
                    "the check compiled in a folder of its own"), variant=str(problem))


@layer.rule(570, "FUSED_ATTENTION_UNAVAILABLE")
def fused_attention_unavailable(report: Report) -> Finding | None:
    """On a GPU, fused attention backends torch cannot use here, with its reasons (info)."""
    kernel = _kernel(report, "sdpa")
    if not (gpu_mode(report) and kernel):
        return None
    missing = {name: backend for name, backend in (kernel.get("backends") or EMPTY).items()
               if isinstance(backend, dict) and backend.get("available") is False}
    if not missing:
        return None
    evidence = tuple(f"{name}: {quote(str(backend.get('reason') or 'no reason given'))}"
                     for name, backend in missing.items())
    return Finding("FUSED_ATTENTION_UNAVAILABLE", "info", evidence,
                   {"backends": ", ".join(missing)})
