"""The worker's wire protocol: what the worker says and the front reads, defined here once.

Both sides import this module: the front (supervision, report, trial, commands) from the package,
the worker from the copy the supervisor puts beside it (loaded by file path, see
``stages.companion``). It imports the standard library only, at its top and nowhere else, runs
on Python 3.9+, and holds no stage code: the stages, the events, the error kinds, the bounds, the
fixed computation's values and the encoding of its results, and the helpers both sides apply
the same way. The front holds every event to these names on arrival (see
``supervision/events.py``), because the interpreter under diagnosis may write anything.
(One exception to the imports: ``ctypes``, in ``dies_with_its_parent`` only, which a rank's
worker and its watch call before the user's folder is on their import path.)
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from typing import Any, Literal, get_args

# The worker's files besides its own module (stages.py) and its script (launcher.py, copied as
# worker.py), by file name without ".py": the supervisor copies each one beside the worker, which
# loads each by path, in this order, before the user's folder is on its import path (see
# stages.companion). Each comes after the ones it uses; this module first, as the worker loads it
# before anything else. The package names them too (worker/__init__.py), for the front.
COMPANIONS: tuple[str, ...] = ("protocol", "origin", "integrity", "runtime", "readings",
                               "accelerators", "all_devices", "inventory", "collective",
                               "extensions", "kernels", "plugins")

# The stages, in the order they run. A stable report field: never derived from a method's name.
Stage = Literal["interpreter", "import", "backend", "device", "compute", "extensions", "kernels",
                "collective"]
STAGES: tuple[Stage, ...] = get_args(Stage)
# At the time limit, before it kills the worker, the front asks it where it is
# (supervision/hang.py): the worker has armed faulthandler to write every thread's Python stack
# into this file of its private folder on this signal (runtime.dump_stacks; POSIX only, None
# elsewhere). The file's first line, written by the worker, is its standard library's folder.
STACK_FILE = "stacks.txt"
STACK_SIGNAL: signal.Signals | None = getattr(signal, "SIGUSR1", None)
# The kernels of the kernels stage (--kernels, worker/kernels.py), in the order they run: each
# is a step of that stage, so a kernel that hangs is named.
Kernel = Literal["matmul_float32", "matmul_tf32", "matmul_float16", "matmul_bfloat16", "conv2d",
                 "sdpa", "transfer", "compile"]
KERNELS: tuple[Kernel, ...] = get_args(Kernel)
# The steps of the compute stage, in order (``verify`` reads the values back to the host;
# ``copy``, with --all-devices only, copies a tensor from one device to another), then the
# kernels'.
Step = Literal["allocate", "product", "gradient", "synchronize", "verify", "copy", Kernel]
STEPS: tuple[Step, ...] = get_args(Step)
# Every event the worker writes: one JSON object a line, ``{"event": NAME, "t_ms": ..., ...}``.
# With --all-devices, ``step`` also names the ``device`` (and the ``peer`` a copy goes to), and
# each device's values come in a ``device_result``, each copy's in a ``peer_result``.
EventName = Literal["facts", "stage_started", "stage_finished", "stage_failed", "step",
                    "step_failed", "warning", "error", "result", "local_paths", "final",
                    "device_result", "peer_result", "rank", "collective"]
EVENTS: tuple[EventName, ...] = get_args(EventName)
# The report's blocks a ``facts`` event fills.
FactBlock = Literal["runtime", "pytorch", "execution", "libraries"]
FACT_BLOCKS: tuple[FactBlock, ...] = get_args(FactBlock)
# What went wrong, as the worker names it; the front maps each to a result code.
ErrorKind = Literal["import_failed", "backend_absent", "gpu_unavailable",
                    "device_index_invalid", "out_of_memory", "runtime_error",
                    "extension_failed"]
ERROR_KINDS: tuple[ErrorKind, ...] = get_args(ErrorKind)
# The stages that run only when their flag asks for them (--extensions, --kernels).
LIBRARY_STAGES: frozenset[Stage] = frozenset(("extensions", "kernels"))
# Any string of an event, messages included, is at most this long (the front cuts longer ones).
MAX_TEXT_CHARS = 2000
MAX_WARNINGS_PER_STAGE = 20

# The collective stage's events (--distributed, worker/collective.py).
# passed: the sum was computed (the front compares it); failed: forming the group or the
# all-reduce raised; timeout: a rank did not join, or the collective did not end, in time;
# skipped: every rank joined but one's own check had failed (or the ranks disagree on the world
# size, or a rank was claimed twice), so no group was formed; not_reached: this rank's own
# check ended before the stage (the front says so, never the worker).
CollectiveStatus = Literal["passed", "failed", "timeout", "skipped", "not_reached"]
COLLECTIVE_STATUSES: tuple[CollectiveStatus, ...] = get_args(CollectiveStatus)
# The job's store as this rank found it: joined; its address does not resolve; nothing listens
# there; no answer; a program there that is not the store; rank 0 could not serve it (in use);
# another job's store holds the port (foreign).
StoreState = Literal["joined", "unresolvable", "refused", "unreachable", "silent", "in_use",
                     "foreign"]
STORE_STATES: tuple[StoreState, ...] = get_args(StoreState)
# A launcher's SIGTERM to a rank (--distributed): what is left of the collective stage is cut to
# this (worker/collective.py), and the front's limit to this and a margin (supervision), so that
# rank 0's report is written before the launcher's kill (30 s on: torchrun, Slurm's KillWait).
LAUNCHER_HURRY_S = 10.0
Backend = Literal["gloo", "nccl"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)

# The fixed computation: exact in float32 on any backend (every value is a small integer), so
# the expected values are compared exactly. The worker sends the values it got (the ``result``
# event); the front compares them with these: the worker never says whether they are right.
A_VALUES = [[1.0, 2.0], [3.0, 4.0]]
B_VALUES = [[2.0, 0.0], [1.0, 2.0]]
EXPECTED_PRODUCT = [[4.0, 4.0], [10.0, 8.0]]  # A @ B
EXPECTED_LOSS = 196.0  # ((A @ B) ** 2).sum()
EXPECTED_GRADIENT = [[16.0, 24.0], [40.0, 52.0]]  # d loss / d A = 2 (A @ B) B^T
# The ``result`` event's fields, in the order a wrong one is named, and their expected values.
EXPECTED: dict[str, Any] = {"product": EXPECTED_PRODUCT, "loss": EXPECTED_LOSS,
                            "gradient": EXPECTED_GRADIENT}
# The largest difference from the known answer a kernel (--kernels) may show and still pass
# (front-side verdict: the worker sends the difference it measured). The matrix products and
# the convolution use small integers, exact in every precision tried (see libraries.matmul):
# they must match exactly. Attention is compared with its own math reference, computed in
# float32 from the same inputs: half precision rounds.
TOLERANCE: dict[str, float] = {"sdpa.float16": 1e-2, "sdpa.bfloat16": 5e-2, "sdpa.float32": 1e-4}
# torch's own libraries, in its package's lib/ folder, by name without version; a C++ libtorch
# ships the same names. One of them loaded from elsewhere (the worker reads it) or lying on
# LD_LIBRARY_PATH when the import failed (the front reads it) mixes two builds.
TORCH_OWN_LIBRARIES = frozenset((
    "libc10", "libc10_cuda", "libc10_hip", "libc10_xpu", "libtorch", "libtorch_cpu",
    "libtorch_cuda", "libtorch_hip", "libtorch_xpu", "libtorch_python", "libtorch_global_deps",
    "libshm", "libcaffe2_nvrtc"))

# JSON has no NaN nor infinity: a non-finite value travels as one of these strings.
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


# The front's time limit reaches the worker in one argument, whatever the check asks for:
# ``--deadline``, the moment the limit ends as ``time.time()`` says it (seconds since the epoch),
# which the worker turns into a ``time.monotonic()`` of its own as soon as it starts (the library
# stages and the collective end before it; a plain check does not read it). Not a budget in
# seconds: the worker starts after the front (its interpreter, site, its companions), so a budget
# counted from its own start would end after the front's limit, by as much as a slow start
# takes, and the collective's last events would come after the front stopped reading. Not the
# front's ``time.monotonic()`` either: its reference point is undefined between processes, and
# the worker runs under the user's Python, whose monotonic clock may not be the front's (on
# Windows, GetTickCount64 before 3.13, QueryPerformanceCounter since). The wall clock is the one
# every process of the machine shares; read once, when the worker starts, only a step of the
# system clock between the front's start of the worker and that read can move the limit. Each
# rank of a distributed job gets its own front's limit: nothing is shared across machines.


def deadline_argument(timeout_s: float) -> str:
    """The front's side: the value of ``--deadline`` for a limit ``timeout_s`` seconds from now."""
    return repr(time.time() + timeout_s)


def monotonic_deadline(deadline: float) -> float:
    """The worker's side: ``--deadline`` as this process's ``time.monotonic()``."""
    return time.monotonic() + (deadline - time.time())


def tolerance(name: str, dtype: str | None) -> float:
    """How far a kernel's result may be from the known answer and still pass."""
    return TOLERANCE.get(f"{name}.{dtype}", 0.0)


def encode_number(value: float) -> float | str:
    """A computed value as JSON carries it: the number, or "nan", "inf" or "-inf"."""
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"


def decode_number(value: Any) -> float | None:
    """A computed value as the front reads it back; None when it is not one (a wrong type)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return NON_FINITE.get(value) if isinstance(value, str) else None


def bounded(text: str) -> str:
    """One line, at most MAX_TEXT_CHARS characters."""
    line = " ".join(str(text).split())
    if len(line) > MAX_TEXT_CHARS:
        line = line[: MAX_TEXT_CHARS - 1] + "\u2026"
    return line


def is_out_of_memory(torch: Any, exc: BaseException) -> bool:
    """Whether ``exc`` is the ``out_of_memory`` kind: torch's own type, or its usual words."""
    oom_type = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None)
    if isinstance(oom_type, type) and isinstance(exc, oom_type):
        return True
    return "out of memory" in str(exc).lower()


# Linux's prctl(2) option that has the kernel send a signal to this process when its parent ends.
PR_SET_PDEATHSIG = 1


def dies_with_its_parent(signum: int, parent: int) -> bool:
    """Linux: the kernel sends ``signum`` to this process when ``parent``, the process that
    started it, ends (``PR_SET_PDEATHSIG``; strictly, when the thread that started it ends: the
    front's and the worker's main thread). The only way out for a process that is stopped
    (SIGSTOP: a frozen rank's whole tree) when what watches it is gone: no code of its own can
    run, and a launcher that killed the front signals nothing in the worker's session. Sent at
    once when ``parent`` is gone already. False where it cannot be asked (another system, a libc
    without prctl): nothing changes then."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError, ImportError):
        return False
    if os.getppid() != parent:  # it ended before the request: its end already came
        os.kill(os.getpid(), signum)
    return True


def watch_wakes_with_the_worker(worker: int) -> None:
    """The worker's watch (stages.watch_front), forked before the request says whether the
    worker is a rank: woken (SIGCONT) once ``worker`` ends, where it may be one (torchrun's
    ``RANK`` or Slurm's ``SLURM_PROCID`` set), the only worker that dies with its front
    (collective.place). A frozen rank's watch, woken, sees the front gone and kills what is left
    of the worker's group. Elsewhere nothing is asked: an ordinary check spares the import."""
    if sys.platform == "win32" or not {"RANK", "SLURM_PROCID"} & os.environ.keys():
        return
    dies_with_its_parent(signal.SIGCONT, worker)
