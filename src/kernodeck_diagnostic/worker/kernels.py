"""The library layer's ``--kernels``, in the worker: the kernels applications lean on, each
bounded and each with its own result.

Kernels run in the worker, on the device of the fixed computation, after it passed, each against
a known answer: the worker sends the largest difference it measured, never a verdict; the front
holds it to ``TOLERANCE``. The kernels are the protocol's ``protocol.Kernel`` (each one is a step of
the ``kernels`` stage, so a hang is named by its kernel).

A companion of the worker (see ``stages``): the standard library only at its top, Python 3.9+.
The extensions (--extensions) are ``extensions``'.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import protocol, runtime, stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    protocol = sys.modules["_kernodeck_worker_protocol"]
    runtime = sys.modules["_kernodeck_worker_runtime"]
    stages = sys.modules["_kernodeck_worker_stages"]

MATMUL_SIZE = 256  # big enough for the vendor BLAS; every partial sum of +-1 products is <= 256
COPY_BYTES = 64 * 2**20
FUSED_BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                  "cudnn": "CUDNN_ATTENTION"}



class Unsupported(Exception):
    """This device or build does not offer what the kernel needs: not a failure."""


class Skipped(Exception):
    """The kernel does not apply here (the copy in CPU mode)."""


def unsupported_dtype(exc: BaseException) -> bool:
    """The backend has no kernel for this dtype: "not implemented for 'BFloat16'"."""
    return bool(re.search(r"not implemented for '(Half|BFloat16)'|"
                          r"(bf16|bfloat16|half|float16)\b.*\bnot supported", str(exc), re.I))


def native_bfloat16(module: Any) -> bool | None:
    """Whether the device computes bfloat16 natively (torch emulates it on older GPUs, slowly);
    None when the backend cannot say (the CPU, a torch without the call)."""
    ask = getattr(module, "is_bf16_supported", None) if module is not None else None
    if ask is None:
        return None
    try:
        return bool(ask(including_emulation=False))
    except TypeError:  # a torch from before emulation was counted
        return bool(ask())
    except Exception:
        return None


class Kernels:
    """The kernels, on the device the fixed computation used."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        self.torch = worker.torch
        self.on_gpu = worker.device == "gpu"
        accelerator = getattr(worker, "accelerator", None) if self.on_gpu else None
        self.accelerator = accelerator
        # The requested device (--device-index), where the fixed computation ran (with
        # --all-devices, the first of those it ran on).
        self.target: str = (accelerator.target(worker.index) if accelerator is not None
                            else f"cuda:{worker.index}" if self.on_gpu else "cpu")
        self.module: Any = (getattr(accelerator, "module", None) if accelerator is not None
                            else (self.torch.cuda if self.on_gpu else None))

    def synchronize(self) -> None:
        if self.accelerator is not None:
            self.accelerator.synchronize(self.worker.index)
        elif self.module is not None:
            self.module.synchronize(self.worker.index)

    def run(self) -> None:
        bodies: dict[str, Callable[[dict[str, Any]], None]] = {
            "matmul_float32": lambda entry: self.matmul(entry, "float32", tf32=False),
            "matmul_tf32": lambda entry: self.matmul(entry, "float32", tf32=True),
            "matmul_float16": lambda entry: self.matmul(entry, "float16"),
            "matmul_bfloat16": lambda entry: self.matmul(entry, "bfloat16"),
            "conv2d": self.conv2d, "sdpa": self.sdpa, "transfer": self.transfer,
            "compile": self.compile,
        }
        done: list[dict[str, Any]] = []
        first_error: tuple[str, BaseException] | None = None
        for name in protocol.KERNELS:
            self.worker.events.emit("step", stage="kernels", step=name)
            entry: dict[str, Any] = {"name": name, "device": self.target, "dtype": None,
                                     "duration_ms": None, "max_abs_error": None, "error": None}
            start = time.monotonic()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # a kernel's advice is not the check's
                    bodies[name](entry)
                    self.synchronize()
            except Unsupported as exc:
                entry.update(status="unsupported", reason=protocol.bounded(str(exc)))
            except Skipped as exc:
                entry.update(status="skipped", reason=protocol.bounded(str(exc)))
            except Exception as exc:
                if unsupported_dtype(exc):
                    entry.update(status="unsupported", reason=protocol.bounded(str(exc)))
                else:
                    entry.update(status="failed", max_abs_error=None,
                                 error=stages.describe_exception(exc))
                    self.worker.events.emit("step_failed", stage="kernels", step=name)
                    first_error = first_error or (name, exc)
            entry["duration_ms"] = round((time.monotonic() - start) * 1000, 1)
            done.append(entry)
            # Each kernel as it ends: a later hang still leaves the earlier results.
            self.worker.facts("libraries", kernels=done)
        if first_error is not None:
            failed, failure = first_error
            # The error names the kernel that raised, not the last one that ran.
            self.worker.events.emit("step", stage="kernels", step=failed)
            kind: protocol.ErrorKind = ("out_of_memory" if protocol.is_out_of_memory(
                self.torch, failure) else "runtime_error")
            raise stages.StageError(kind, failure)

    # -- the kernels --------------------------------------------------------------------------

    def tensor(self, rows: Any, dtype: Any) -> Any:
        return self.torch.tensor(rows, dtype=dtype).to(self.target)

    def matmul(self, entry: dict[str, Any], dtype_name: str, tf32: bool = False) -> None:
        """A @ B in ``dtype_name`` through the vendor BLAS, against the exact integer product.

        A and B hold -1, 0 and 1, so every partial sum is an integer of at most MATMUL_SIZE
        (256) in size: exact in float16 (to 2048), bfloat16 (to 256), TF32 and float32, whatever
        order or precision the library accumulates in. The expected product is computed on the
        CPU in int64 (no BLAS).
        """
        torch = self.torch
        dtype = getattr(torch, dtype_name)
        entry["dtype"] = "tf32" if tf32 else dtype_name
        if dtype_name == "bfloat16" and native_bfloat16(self.module) is False:
            raise Unsupported(f"torch.{self.accelerator_kind()}.is_bf16_supported("
                              "including_emulation=False) is False on this device")
        n = MATMUL_SIZE
        index = torch.arange(n, dtype=torch.int64)
        a_int = (index.view(-1, 1) * 7 + index.view(1, -1) * 3) % 3 - 1
        b_int = (index.view(-1, 1) * 5 + index.view(1, -1) * 11 + 1) % 3 - 1
        expected = a_int @ b_int
        previous = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
        try:
            a = a_int.to(dtype).to(self.target)
            b = b_int.to(dtype).to(self.target)
            product = a @ b
            self.synchronize()
        finally:
            torch.set_float32_matmul_precision(previous)
        entry["max_abs_error"] = _largest_difference(torch, product, expected)

    def accelerator_kind(self) -> str:
        return str(getattr(self.accelerator, "kind", "cuda"))

    def conv2d(self, entry: dict[str, Any]) -> None:
        """A 3x3 convolution (cuDNN or MIOpen on a GPU, oneDNN on the CPU) of small integers
        with a kernel of ones: each output is the sum of its window, computed here in Python."""
        torch = self.torch
        entry["dtype"] = "float32"
        batch, channels, size, out_channels = 2, 8, 16, 4
        values = [[[[float((b + 2 * c + 3 * h + 5 * w) % 4) for w in range(size)]
                    for h in range(size)] for c in range(channels)] for b in range(batch)]
        x = self.tensor(values, torch.float32)
        weight = torch.ones(out_channels, channels, 3, 3, dtype=torch.float32).to(self.target)
        output = torch.nn.functional.conv2d(x, weight)
        self.synchronize()
        expected = [[[[sum(values[b][c][h + dh][w + dw] for c in range(channels)
                           for dh in range(3) for dw in range(3))
                       for w in range(size - 2)] for h in range(size - 2)]
                     for _ in range(out_channels)] for b in range(batch)]
        entry["max_abs_error"] = _largest_difference(
            torch, output, torch.tensor(expected, dtype=torch.float64))

    def sdpa(self, entry: dict[str, Any]) -> None:
        """scaled_dot_product_attention as torch picks it, against the math written out in
        float32; then each fused backend alone, to say which this device has and why not."""
        torch = self.torch
        dtype_name = "float16" if self.on_gpu else "float32"
        dtype = getattr(torch, dtype_name)
        entry["dtype"] = dtype_name
        generator = torch.Generator().manual_seed(15)
        shape = (1, 4, 128, 64)  # batch, heads, sequence, head size (a multiple of 8)
        q, k, v = (torch.randn(shape, generator=generator).to(dtype).to(self.target)
                   for _ in range(3))
        attention = torch.nn.functional.scaled_dot_product_attention
        reference = torch.softmax(
            (q.float() @ k.float().transpose(-2, -1)) / (shape[-1] ** 0.5), dim=-1) @ v.float()
        output = attention(q, k, v)
        self.synchronize()
        entry["max_abs_error"] = _largest_difference(torch, output, reference)
        entry["backends"] = self.fused_backends(attention, (q, k, v), reference)

    def fused_backends(self, attention: Any, inputs: tuple[Any, Any, Any],
                       reference: Any) -> dict[str, Any]:
        """Each fused backend alone: ``available`` with its largest difference, or not, and the
        reason torch gives (its warnings, else its error)."""
        torch = self.torch
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except Exception:
            return {name: {"available": None, "reason": "this torch cannot choose a backend "
                                                        "(no torch.nn.attention.sdpa_kernel)"}
                    for name in FUSED_BACKENDS}
        found: dict[str, Any] = {}
        for name, member in FUSED_BACKENDS.items():
            backend = getattr(SDPBackend, member, None)
            if backend is None:
                found[name] = {"available": False,
                               "reason": f"this torch has no SDPBackend.{member}"}
                continue
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                try:
                    with sdpa_kernel([backend]):
                        output = attention(*inputs)
                    self.synchronize()
                except Exception as exc:
                    reasons = [protocol.bounded(str(w.message)) for w in said][:3]
                    found[name] = {"available": False, "reason": protocol.bounded(
                        "; ".join(reasons) or f"{type(exc).__name__}: {exc}")}
                    continue
            found[name] = {"available": True, "reason": None,
                           "max_abs_error": _largest_difference(torch, output, reference)}
        return found

    def transfer(self, entry: dict[str, Any]) -> None:
        """A COPY_BYTES buffer to the device and back, verified exactly; each way's bandwidth."""
        if not self.on_gpu:
            raise Skipped("CPU mode: no host-device copy")
        torch = self.torch
        entry["dtype"] = "int32"
        host = torch.arange(COPY_BYTES // 4, dtype=torch.int32) % 65521
        self.synchronize()
        start = time.monotonic()
        device = host.to(self.target)
        self.synchronize()
        middle = time.monotonic()
        back = device.cpu()
        end = time.monotonic()
        entry["bytes"] = COPY_BYTES
        entry["host_to_device_bytes_per_s"] = _rate(COPY_BYTES, middle - start)
        entry["device_to_host_bytes_per_s"] = _rate(COPY_BYTES, end - middle)
        # Every element compared, and the sums (int64) as the checksum the report shows.
        entry["max_abs_error"] = float((back.to(torch.int64) - host.to(torch.int64))
                                       .abs().max().item())

    def compile(self, entry: dict[str, Any]) -> None:
        """torch.compile of a small pointwise function (generated C++ on the CPU, Triton on a
        GPU), its first call (compilation) timed apart from the second (the run)."""
        torch = self.torch
        entry["dtype"] = "float32"

        def function(x: Any) -> Any:
            return (x * 3 + 1) - x

        x = torch.arange(1024, dtype=torch.float32).to(self.target)
        start = time.monotonic()  # torch.compile itself loads the compiler stack: counted
        left_behind, problem = runtime.compiler_caches(getattr(self.worker.events, "path", None))
        if problem is not None:  # the user's programs' cache, never this compilation's
            entry["default_cache"] = problem
        try:
            compiled = torch.compile(function)
            compiled(x)
            self.synchronize()
            middle = time.monotonic()
            output = compiled(x)
            self.synchronize()
            end = time.monotonic()
        finally:
            if left_behind is not None:
                shutil.rmtree(left_behind, ignore_errors=True)
        entry["compile_ms"] = round((middle - start) * 1000, 1)
        entry["run_ms"] = round((end - middle) * 1000, 3)
        expected = torch.arange(1024, dtype=torch.float64) * 2 + 1
        entry["max_abs_error"] = _largest_difference(torch, output, expected)


def _largest_difference(torch: Any, computed: Any, expected: Any) -> float | str:
    """max |computed - expected|, in float64 on the CPU (``nan`` when a value is not finite)."""
    difference = (computed.detach().to("cpu", torch.float64)
                   - expected.to(torch.float64)).abs().max().item()
    return protocol.encode_number(float(difference))


def _rate(size: int, seconds: float) -> float | None:
    return round(size / seconds) if seconds > 0 else None


def stage_kernels(worker: Any) -> None:
    """The ``kernels`` stage."""
    Kernels(worker).run()
