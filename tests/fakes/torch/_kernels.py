"""The fake torch's kernels (--kernels), for the GPU situations this machine cannot produce.

The fake computes nothing here: every tensor a kernel makes is an ``Ideal`` one, whose
arithmetic is exact by construction (a difference between two of them is zero). What the
scenarios change is what the real GPU does before any arithmetic: a dtype it lacks, a fused
attention backend it cannot run (with torch's own reason), a library that fails. The arithmetic
of the kernels is exercised for real by the real CPU build (tests/test_kernels_cpu.py).

    tesla_t4_turing         a Tesla T4 (sm 7.5, Turing): no native bfloat16
                            (``is_bf16_supported(including_emulation=False)`` is False), and no
                            flash attention ("Flash attention only supports gpu architectures in
                            the range [sm80, sm121]. Attempting to run on a sm 7.5 gpu.")
    faulty_tensor_cores     a GPU whose half-precision matrix units compute wrong products (a
                            faulty or overclocked card): float16 products are off by one
    triton_cache_lock_held  torch.compile's first call never returns: Triton waits on a lock of its
                            cache (~/.triton/cache) held by a process that is gone
    cudnn_status_not_initialized
                            cuDNN fails to start (a cuDNN that does not match the build, or no
                            memory left for its handle): the convolution raises "cuDNN error:
                            CUDNN_STATUS_NOT_INITIALIZED"
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

SCENARIO = os.environ.get("KD_FAKE_TORCH", "cuda_pass")
TURING = SCENARIO == "tesla_t4_turing"
FAULTY_TENSOR_CORES = SCENARIO == "faulty_tensor_cores"

int32, int64, float16, bfloat16, float64 = "int32", "int64", "float16", "bfloat16", "float64"
_precision = ["highest"]
# The backends sdpa may use, as sdpa_kernel() sets them (None: torch's own choice).
enabled_backends: list[Any] = []


class Ideal:
    """A tensor whose values are the right ones, give or take ``error``: any arithmetic gives
    another carrying the largest error of its operands, and the largest difference between two
    of them is that error (0 unless a scenario put one in)."""

    def __init__(self, device: str = "cpu", dtype: str = "float32", error: float = 0.0) -> None:
        self.device = device
        self.dtype = dtype
        self.error = error

    def _new(self, *args: Any, **kwargs: Any) -> Ideal:
        error = max([self.error, *(arg.error for arg in args if isinstance(arg, Ideal))])
        return Ideal(self.device, self.dtype, error)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _new
    __mod__ = __pow__ = __neg__ = _new
    view = float = transpose = abs = max = detach = _new

    def __matmul__(self, other: Any) -> Ideal:
        result = self._new(other)
        if FAULTY_TENSOR_CORES and self.dtype == "float16" and self.device.startswith("cuda"):
            result.error = 1.0
        return result

    def to(self, *args: Any, **kwargs: Any) -> Ideal:
        device = next((arg for arg in args if isinstance(arg, str) and (
            arg.startswith(("cuda", "cpu")))), self.device)
        dtype = next((arg for arg in args if arg in (int32, int64, float16, bfloat16, float64,
                                                     "float32")), self.dtype)
        return Ideal(device, dtype, self.error)

    def cpu(self) -> Ideal:
        return Ideal("cpu", self.dtype, self.error)

    def item(self) -> float:
        return self.error


def nested_depth(values: Any) -> int:
    depth = 0
    while isinstance(values, (list, tuple)) and values:
        values, depth = values[0], depth + 1
    return depth


def arange(*args: Any, **kwargs: Any) -> Ideal:
    return Ideal()


ones = randn = arange


def softmax(tensor: Any, dim: int = -1) -> Ideal:
    return Ideal(tensor.device)


class Generator:
    def manual_seed(self, seed: int) -> Generator:
        return self


def compile(function: Any) -> Any:  # mirrors torch.compile
    if SCENARIO == "triton_cache_lock_held":
        def waiting(*args: Any) -> Any:
            while True:
                time.sleep(1)
        return waiting
    return function


def get_float32_matmul_precision() -> str:
    return _precision[0]


def set_float32_matmul_precision(value: str) -> None:
    _precision[0] = value


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return not TURING or including_emulation


# What torch itself offers of this module (torch.arange, torch.float16...).
TOP_LEVEL = ("Generator", "arange", "bfloat16", "compile", "float16", "float64",
             "get_float32_matmul_precision", "int32", "int64", "ones", "randn",
             "set_float32_matmul_precision", "softmax")


def conv2d(x: Any, weight: Any) -> Ideal:
    if SCENARIO == "cudnn_status_not_initialized" and x.device.startswith("cuda"):
        raise RuntimeError("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    return Ideal(x.device)


def scaled_dot_product_attention(q: Any, k: Any, v: Any) -> Ideal:
    if TURING and enabled_backends and all(
            backend == "FLASH_ATTENTION" for backend in enabled_backends):
        warnings.warn("Flash attention only supports gpu architectures in the range [sm80, "
                      "sm121]. Attempting to run on a sm 7.5 gpu.", UserWarning, stacklevel=2)
        warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=2)
        raise RuntimeError("No available kernel. Aborting execution.")
    return Ideal(q.device)
