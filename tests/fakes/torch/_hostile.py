"""Hostile workers: how a worker misbehaves on a machine that is already broken.

Chosen by ``KD_FAKE_TORCH`` like the other scenarios of the fake torch (tests/fakes/torch), each
named after the real failure it stands for. ``at(point)`` is called by the fake at ``import`` (its
module body), ``device`` (``torch.cuda.is_available``), ``allocate`` (the first GPU tensor) and
``synchronize`` (``torch.cuda.synchronize``); a scenario acts at its point and otherwise the fake
behaves like ``cuda_pass``.

    abort_in_device_query           a C++ assertion in the driver library aborts the process
                                    (a real SIGABRT) while the device is queried
    oom_killer_in_allocate          the kernel's OOM killer ends the worker (a real SIGKILL) at the
                                    first allocation
    exit_zero_in_synchronize        a native library calls exit(0) in the middle of the
                                    computation: a clean exit, but no final result
    exit_nonzero_in_device_query    a native library calls exit(3) while the device is queried
    cuda_error_terminate_in_synchronize
                                    an asynchronous CUDA error thrown where nothing catches it
                                    (a destructor, a CUDA callback): std::terminate writes the
                                    c10::Error and its C++ frames to stderr, then aborts (a real
                                    SIGABRT)
    hang_in_native_driver_call      stuck inside a native call (libc pause()) with SIGTERM and
                                    SIGINT ignored, and a forked child stuck the same way
    flooding_library                a library writing KD_FAKE_FLOOD_MB (default 100) MB to stdout
                                    and to stderr at import, while synchronising and at exit (a
                                    replaced sys.stdout flushed after the final event)
                                    (tests/fakes/startup_flood on PYTHONPATH adds a flood at
                                    interpreter start-up, before any stage)
    runaway_logging_in_synchronize  endless output while synchronising: only the limit ends it
    lingering_thread_after_result   a library's non-daemon thread keeps logging after the result:
                                    the interpreter never exits by itself
    helper_process_outlives_worker  a helper process started at import inherits stdout and stderr,
                                    keeps writing to them and outlives the worker
    forked_workers_outlive_oom_kill data-loader style forked children keep running after the
                                    worker itself is SIGKILLed by the OOM killer
    corrupt_event_log               garbage, truncated, non-object and over-long lines land in the
                                    event log; the check itself passes
    torn_event_then_killed          the worker is killed in the middle of writing an event line
    huge_exception_message          the backend raises an error whose message is 10 MB
    unbounded_error_event           a worker that does not bound its messages writes a 10 MB error
                                    event line, then ends
    non_utf8_messages               a warning and an error carrying bytes that are not UTF-8 (a
                                    file name and a driver message in a legacy encoding, decoded
                                    with surrogateescape)
    undecodable_error_event         raw non-UTF-8 bytes inside an error event line
    huge_integers_in_events         a worker whose numbers went wrong (a library that patched the
                                    clock, a corrupted value) writes the execution facts, the
                                    result and the end of compute with integers of 400 digits
                                    (valid JSON, beyond any float) as t_ms, duration_ms and the
                                    loss, then its final event, and ends
    private_data_in_messages        import fails after warnings; messages full of private data:
                                    paths through the home and working folders, Windows paths,
                                    user@host, URL credentials, token shapes, secret values
    settings_in_messages            a library that quotes its configuration, its host and its
                                    installer in its warnings, then fails to load its shared
                                    library quoting them again: the values of the plain variables
                                    named in KD_PLANTED_VARIABLES, the home folder by itself, the
                                    user who ran sudo (SUDO_USER) and that user's own folder

``KD_FAKE_TORCH_PIDS`` names a file where a scenario appends the pid of every process it makes
(the worker included), one per line; ``KD_FAKE_TORCH_WHERE`` a file where the fake appends the
worker's folder and its mode (proof of private temporary folders).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from typing import Any

SCENARIO = os.environ.get("KD_FAKE_TORCH", "cuda_pass")
_MIB = b"k" * (1024 * 1024 - 1) + b"\n"
_NEVER_WAITED: list[subprocess.Popen[bytes]] = []


def at(point: str) -> None:
    """Misbehave as the scenario says, if it acts at ``point``."""
    if point == "import":
        _record_where()
        _record_pids(os.getpid())  # the worker itself; a scenario adds what it makes
    action = _ACTIONS.get((SCENARIO, point))
    if action is not None:
        action()


def _record_where() -> None:
    where = os.environ.get("KD_FAKE_TORCH_WHERE")
    if where:
        folder = os.path.dirname(os.path.abspath(sys.argv[0]))
        with open(where, "a") as file:
            file.write(f"{folder} {os.stat(folder).st_mode & 0o777:o}\n")


def _record_pids(*pids: int) -> None:
    path = os.environ.get("KD_FAKE_TORCH_PIDS")
    if path:
        with open(path, "a") as file:
            file.write("".join(f"{pid}\n" for pid in pids))
            file.flush()
            os.fsync(file.fileno())


def _events_path() -> str:
    """The worker's event log: the file after ``--events`` on its command line."""
    return sys.argv[sys.argv.index("--events") + 1]


def _append_events(data: bytes) -> None:
    with open(_events_path(), "ab") as file:
        file.write(data)


def _no_core_dump() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _abort() -> None:
    _no_core_dump()
    ctypes.CDLL(None).abort()  # what a failed C++ assertion does


def _oom_kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


# What libstdc++'s std::terminate and c10 write for an uncaught c10::Error (PyTorch's CUDA check
# message, then its C++ frames), byte for byte but for the frames' addresses.
_UNCAUGHT_CUDA_ERROR = (
    "terminate called after throwing an instance of 'c10::Error'\n"
    "  what():  CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\n"
    "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 "
    "(most recent call first):\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f3c5e1b0f78 in "
    "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so)\n"
    "frame #1: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) "
    "+ 0x3c2 (0x7f3c5e2a1b52 in /opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so)\n"
    "frame #2: <unknown function> + 0x1e8c0 (0x7f3c5e2628c0 in "
    "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10_cuda.so)\n\n")


def _uncaught_cuda_error() -> None:
    os.write(2, _UNCAUGHT_CUDA_ERROR.encode())
    _abort()


def _exit_zero() -> None:
    ctypes.CDLL(None).exit(0)  # exit(3) from native code: atexit of C, no Python cleanup


def _exit_three() -> None:
    os._exit(3)


def _deaf_native_hang() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctypes.CDLL(None).pause()  # returns only for a handled signal; there is none


def _hang_in_native_call() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    child = os.fork()
    if child == 0:
        _deaf_native_hang()
        os._exit(0)
    _record_pids(child)
    _deaf_native_hang()


def _flood(megabytes: int | None = None, phase: str = "") -> None:
    count = int(os.environ.get("KD_FAKE_FLOOD_MB", "100")) if megabytes is None else megabytes
    for _ in range(count):
        os.write(1, _MIB)
        os.write(2, _MIB)
    log = os.environ.get("KD_FAKE_FLOOD_LOG")
    if phase and log:
        with open(log, "a") as file:
            file.write(f"{phase} {count}\n")


class _FloodOnLastFlush:
    """sys.stdout replaced by a library that buffers its output and writes it all out when the
    stream is flushed on the way out (after the worker's final event)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._flooded = False

    def write(self, text: str) -> int:
        return int(self._stream.write(text))

    def flush(self) -> None:
        self._stream.flush()
        if not self._flooded and _final_written():
            self._flooded = True
            _flood(phase="exit")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _final_written() -> bool:
    with open(_events_path(), "rb") as file:
        file.seek(max(os.fstat(file.fileno()).st_size - 200, 0))
        return b'"final"' in file.read()


def _flood_now_and_at_exit() -> None:
    _flood(phase="import")
    sys.stdout = _FloodOnLastFlush(sys.stdout)


def _flood_in_synchronize() -> None:
    _flood(phase="synchronize")


def _flood_forever() -> None:
    while True:
        _flood(1)


def _lingering_thread() -> None:

    def log_forever() -> None:
        while True:
            os.write(2, b"telemetry: still here\n")
            time.sleep(0.01)

    threading.Thread(target=log_forever, name="telemetry", daemon=False).start()


def _helper_process() -> None:
    # Started like a library's helper: inherits stdout and stderr, not waited for.
    helper = subprocess.Popen(
        [sys.executable, "-c",
         "import os, time\n"
         "while True:\n"
         "    os.write(1, b'helper output\\n'); os.write(2, b'helper log\\n'); time.sleep(0.05)\n"])
    _record_pids(helper.pid)
    _NEVER_WAITED.append(helper)  # kept: collected, it would warn that it is still running


def _forked_workers_then_oom_kill() -> None:
    children = []
    for _ in range(3):
        child = os.fork()
        if child == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            while True:
                time.sleep(0.5)
        children.append(child)
    _record_pids(*children)
    os.kill(os.getpid(), signal.SIGKILL)


def _corrupt_event_log() -> None:
    _append_events(b"\x00\xff\xfe garbage from another writer\n"
                   b'{"event": "facts", "block": "pyto\n'
                   b"[1, 2, 3]\n"
                   b"null\n"
                   b'{"event": 5, "stage": ["compute"]}\n'
                   + b"z" * 300_000 + b"\n")


def _torn_event_then_killed() -> None:
    _append_events(b'{"event": "error", "stage": "compute", "kind": "runtime_')
    os.kill(os.getpid(), signal.SIGKILL)


def _huge_exception() -> None:
    raise RuntimeError("CUDA error: misaligned address; kernel source follows: "
                       + "x = y + z; " * (10 * 1024 * 1024 // 11))


def _unbounded_error_event() -> None:
    message = "CUDA error: an illegal instruction was encountered " + "0xdeadbeef " * 1_000_000
    lines = [{"event": "error", "stage": "compute", "kind": "runtime_error",
              "type": "RuntimeError", "message": message},
             {"event": "stage_failed", "stage": "compute", "duration_ms": 1.0},
             {"event": "final"}]
    _append_events("".join(json.dumps(line) + "\n" for line in lines).encode())
    os._exit(0)


def _non_utf8_warning() -> None:
    warnings.warn("could not read " + os.fsdecode(b"/opt/rocm/lib/libcaf\xe9.so.6")
                  + ": " + b"acc\xe8s refus\xe9".decode("utf-8", "surrogateescape"),
                  RuntimeWarning, stacklevel=2)


def _non_utf8_error() -> None:
    raise RuntimeError(b"erreur du p\xe9riph\xe9rique: m\xe9moire insuffisante \xff\xfe".decode(
        "utf-8", "surrogateescape"))


def _undecodable_error_event() -> None:
    _append_events(b'{"event": "error", "stage": "compute", "kind": "runtime_error", '
                   b'"type": "RuntimeError", "message": "erreur du p\xe9riph\xe9rique \xff"}\n'
                   b'{"event": "stage_failed", "stage": "compute", "duration_ms": 1.0}\n'
                   b'{"event": "final"}\n')
    os._exit(0)


def _huge_integers_in_events() -> None:
    huge = int("9" * 400)
    lines = [{"event": "facts", "t_ms": 5.0, "block": "execution",
              "values": {"device": "cuda:0", "synchronized": True, "duration_ms": huge}},
             {"event": "result", "t_ms": huge, "product": [[19, 22], [43, 50]], "loss": huge,
              "gradient": [[11, 15], [11, 15]]},
             {"event": "stage_finished", "t_ms": 6.0, "stage": "compute", "duration_ms": huge},
             {"event": "final", "t_ms": 7.0}]
    _append_events("".join(json.dumps(line) + "\n" for line in lines).encode())
    os._exit(0)


def _private_data() -> None:
    env = os.environ
    user, host = env.get("KD_PLANTED_USER", "someone"), env.get("KD_PLANTED_HOST", "somehost")
    home, cwd = os.path.expanduser("~"), os.getcwd()
    hf, ghp, sk = env.get("KD_PLANTED_SHAPES", "hf_x ghp_x sk-x").split()
    secrets = " ".join(env.get(name, "") for name in
                       ("HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "WANDB_API_KEY"))
    warnings.warn(f"NVIDIA driver on {host} is older than the build; cache at {home}/.cache/"
                  f"torch/kernels, project {cwd}", UserWarning, stacklevel=2)
    warnings.warn(f"retrying https://{user}:{secrets.split()[0]}@hub.example.com/api as "
                  f"{user}@{host} with {hf} {ghp} {sk}", UserWarning, stacklevel=2)
    raise ImportError(
        f"libcudnn.so.9: cannot open shared object file: No such file or directory (searched "
        f"{home}/venvs/gpu/lib/python3.11/site-packages/nvidia/cudnn/lib and {cwd}/lib; "
        f"also C:\\Users\\{user}\\AppData\\Local\\Programs\\torch\\lib\\cudnn64_9.dll); "
        f"Permission denied: '{cwd}'; login {user}@{host}; mirror "
        f"https://{user}:hunter2-{host}@mirror.example.com/simple; keys {hf} {ghp} {sk}; "
        f"environment {secrets}")


def _settings_in_messages() -> None:
    env = os.environ
    settings = ", ".join(f"{name}={env.get(name, '')}"
                         for name in env.get("KD_PLANTED_VARIABLES", "").split())
    home, host = os.path.expanduser("~"), socket.gethostname()
    user = env.get("SUDO_USER", "someone")
    warnings.warn(f"plugin configured from {settings}; cache in {home}", UserWarning, stacklevel=2)
    warnings.warn(f"plugin installed by {user} on {host} from /home/{user}", UserWarning,
                  stacklevel=2)
    raise ImportError(f"libnccl.so.2: cannot open shared object file: No such file or directory "
                      f"(configured from {settings}; home {home}; installed by {user} on {host})")


_ACTIONS = {
    ("abort_in_device_query", "device"): _abort,
    ("oom_killer_in_allocate", "allocate"): _oom_kill,
    ("exit_zero_in_synchronize", "synchronize"): _exit_zero,
    ("exit_nonzero_in_device_query", "device"): _exit_three,
    ("cuda_error_terminate_in_synchronize", "synchronize"): _uncaught_cuda_error,
    ("hang_in_native_driver_call", "synchronize"): _hang_in_native_call,
    ("flooding_library", "import"): _flood_now_and_at_exit,
    ("flooding_library", "synchronize"): _flood_in_synchronize,
    ("runaway_logging_in_synchronize", "synchronize"): _flood_forever,
    ("lingering_thread_after_result", "import"): _lingering_thread,
    ("helper_process_outlives_worker", "import"): _helper_process,
    ("forked_workers_outlive_oom_kill", "allocate"): _forked_workers_then_oom_kill,
    ("corrupt_event_log", "import"): _corrupt_event_log,
    ("torn_event_then_killed", "synchronize"): _torn_event_then_killed,
    ("huge_exception_message", "synchronize"): _huge_exception,
    ("unbounded_error_event", "synchronize"): _unbounded_error_event,
    ("non_utf8_messages", "import"): _non_utf8_warning,
    ("non_utf8_messages", "synchronize"): _non_utf8_error,
    ("undecodable_error_event", "synchronize"): _undecodable_error_event,
    ("huge_integers_in_events", "synchronize"): _huge_integers_in_events,
    ("private_data_in_messages", "import"): _private_data,
    ("settings_in_messages", "import"): _settings_in_messages,
}
