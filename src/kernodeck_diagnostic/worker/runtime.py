"""What the worker reads of the interpreter and the system it runs in: the report's ``runtime``
block (the Python, the OS, the kind of environment, the device-visibility variables, the GPU
device nodes, the warning filters, tracemalloc). Read before torch is imported, and none of it
needs torch. Also where the run's own files go that torch would put elsewhere: the compiler's
caches (``compiler_caches``, set just before ``torch.compile``), and the file its stacks are
written to when the front asks where it hangs (``dump_stacks``).

A companion of the worker (see ``stages``): the standard library only, Python 3.9+.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import warnings
from typing import Any


def interpreter() -> dict[str, Any]:
    """The interpreter stage's ``runtime`` facts."""
    return {
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "os_family": {"win32": "windows", "darwin": "macos"}.get(
            sys.platform, "linux" if sys.platform.startswith("linux") else sys.platform),
        "machine": platform.machine() or None,
        "environment_kind": environment_kind(),
        "visibility": {name: visibility(os.environ.get(name)) for name in VISIBILITY_VARIABLES},
        "device_nodes": device_nodes(),
    }


VISIBILITY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


def visibility(value: str | None) -> str:
    """What a device-visibility variable does, never its value: unset, empty, hides_all, lists N.

    The runtimes read the comma-separated list up to the first invalid entry: a list starting
    with a negative or non-numeric entry hides every device.
    """
    if value is None:
        return "unset"
    if not value.strip():
        return "empty"
    count = 0
    for raw in value.split(","):
        entry = raw.strip()
        if entry.isdigit() or entry.upper().startswith(("GPU-", "MIG-")):
            count += 1
        else:
            break
    return f"lists {count}" if count else "hides_all"


DEVICE_NODES = {
    "nvidiactl": "/dev/nvidiactl",
    "nvidia_uvm": "/dev/nvidia-uvm",
    "proc_driver_nvidia": "/proc/driver/nvidia/version",
    "dxg": "/dev/dxg",  # WSL 2's GPU paravirtualisation
}


def device_nodes() -> dict[str, Any]:
    """Which GPU device nodes exist (booleans only); /dev/kfd also says if it is usable."""
    nodes: dict[str, Any] = {name: os.path.exists(path) for name, path in DEVICE_NODES.items()}
    if not os.path.exists("/dev/kfd"):
        nodes["kfd"] = "absent"
    else:
        nodes["kfd"] = "ok" if os.access("/dev/kfd", os.R_OK | os.W_OK) else "no_access"
    return nodes


def warnings_as_errors() -> bool:
    """An active warning filter turns warnings into errors (-W error, PYTHONWARNINGS=error...).

    Only the fact: a filter's text may name the user's modules.
    """
    return any(entry[0] == "error" for entry in warnings.filters)


def tracemalloc_frames() -> int:
    """How many frames tracemalloc records per allocation (PYTHONTRACEMALLOC=N, -X tracemalloc=N);
    0 when it is not tracing. Tracing every allocation makes `import torch` many times slower."""
    try:  # the C module: tracemalloc.py would import pickle and more for two calls
        import _tracemalloc
    except ImportError:  # an interpreter without it (PyPy) cannot trace this way
        return 0
    return int(_tracemalloc.get_traceback_limit()) if _tracemalloc.is_tracing() else 0


def environment_kind() -> str:
    if os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        return "conda"
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return "venv"
    if sys.prefix and os.path.isdir(sys.prefix):
        return "system"
    return "unknown"


# The compiler's cache variables (Inductor's, Triton's) and their folder in the run's folder.
COMPILER_CACHE_VARIABLES = (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton"))


def compiler_caches(events_path: object) -> tuple[str | None, str | None]:
    """The compiler's caches go to the run's private folder (removed when the check ends),
    not to $TMPDIR/torchinductor_<user> (150 MB named after the user, left behind), unless
    the user chose where: a variable already set is theirs and is used as it is.

    Inductor's precompiled headers ignore its variable (codecache._HEADER_DIR, from the
    default folder, fixed at import): they are moved too. Returns the default folder when
    it did not exist before (the compilation's own, to remove after it), else None; and what
    stands in the way of the user's own programs there (``default_cache_problem``), which the
    check's compilation, in its own folder, never meets. ``events_path``: the worker's events
    file, in the run's folder."""
    path = events_path
    if not isinstance(path, str) or os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        return None, None
    folder = os.path.join(os.path.dirname(os.path.abspath(path)), "compiler-cache")
    for name, place in COMPILER_CACHE_VARIABLES:
        if not os.environ.get(name):
            os.environ[name] = os.path.join(folder, place)
    default = None
    # Another torch's layout: the variables still hold for the rest.
    with contextlib.suppress(Exception):
        import importlib

        codecache = importlib.import_module("torch._inductor.codecache")
        utils = importlib.import_module("torch._inductor.runtime.cache_dir_utils")
        default = str(utils.default_cache_dir())
        if isinstance(getattr(codecache, "_HEADER_DIR", None), str):
            headers = os.path.join(folder, "inductor", "precompiled_headers")
            setattr(codecache, "_HEADER_DIR", headers)  # noqa: B010 - torch's private name
            setattr(codecache, "_HEADER_LOCK_DIR", os.path.join(headers, "locks"))  # noqa: B010
    problem = default_cache_problem(default) if default is not None else None
    return (default if default is not None and not os.path.exists(default) else None), problem


def default_cache_problem(default: str) -> str | None:
    """Why Inductor's default cache folder (``default``: $TMPDIR/torchinductor_<user>) would stop
    a program's ``torch.compile`` (POSIX): ``not_a_folder`` (a file, or a link to one or to
    nothing), ``not_writable`` (a folder this user cannot write: left by a run as another user,
    such as ``sudo -E``, or by another user on a shared machine). None when it is usable or
    absent (its temporary folder is one ``tempfile`` could write), or none of this can be told."""
    if os.name != "posix":
        return None
    try:
        if not os.path.lexists(default):
            return None
        if not os.path.isdir(default):
            return "not_a_folder"
        return None if os.access(default, os.W_OK | os.X_OK) else "not_writable"
    except (OSError, ValueError):
        return None


def setting_hiding_torch() -> str | None:
    """The interpreter's setting that keeps a torch it has off the import path, for a
    ``No module named 'torch'``: ``-S`` (the site module not run: no site-packages at all), or
    what disables the user site-packages where torch is installed: ``PYTHONNOUSERSITE``, ``-s``
    or ``-I``. pip, run without -S or -s, answers "Requirement already satisfied" (with
    PYTHONNOUSERSITE set it misses that torch too and installs a second copy). None when
    no folder these settings hide holds torch (a venv made without the system's packages never
    searches the user site-packages, whatever is set)."""
    import site

    def holds_torch(folder: str) -> bool:
        return os.path.isfile(os.path.join(folder, "torch", "__init__.py"))

    venv = venv_prefix()
    own_only = venv is not None and not venv_includes_system(venv)
    user = "" if own_only else str(getattr(site, "getusersitepackages", lambda: "")() or "")
    if sys.flags.no_site:
        prefixes = [venv] if venv is not None else [sys.prefix, sys.exec_prefix]
        folders = list(getattr(site, "getsitepackages", lambda _: [])(prefixes))
        if not sys.flags.no_user_site and user:
            folders.append(user)
        return "-S" if any(holds_torch(folder) for folder in folders) else None
    if own_only or site.ENABLE_USER_SITE or not user or not holds_torch(user):
        return None
    if not sys.flags.ignore_environment and os.environ.get("PYTHONNOUSERSITE"):
        return "PYTHONNOUSERSITE"
    return "-I" if sys.flags.isolated else "-s"


def venv_prefix() -> str | None:
    """The virtual environment this interpreter belongs to (the folder holding pyvenv.cfg, as
    the site module finds it), or None."""
    executable = os.path.dirname(os.path.abspath(sys.executable or ""))
    for folder in (executable, os.path.dirname(executable)):
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return folder
    return None


def venv_includes_system(prefix: str) -> bool:
    """Whether a virtual environment's pyvenv.cfg says include-system-site-packages = true."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8", errors="replace") as file:
            for line in file:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    return value.strip().lower() == "true"
    except OSError:
        pass
    return False


def dump_stacks(events_path: str, signum: int | None, name: str) -> None:
    """Arm faulthandler: on ``signum`` (the front's, at the time limit: supervision/hang.py),
    every thread's Python stack is written to the file ``name`` of this run's private folder,
    the folder of ``events_path``. It is written by the signal's handler in C, which runs even
    while a native call holds the interpreter's lock. The file is new (never a link followed),
    readable by its owner only; its first line names this interpreter's standard library's
    folder, which the front tells apart from the user's code. Nothing where the system has no
    such signal (Windows), nor outside one of the front's private folders."""
    folder = os.path.dirname(os.path.abspath(events_path))
    if signum is None or not os.path.basename(folder).startswith("kernodeck-"):
        return
    import faulthandler  # built into the interpreter: nothing to find on a path

    register = getattr(faulthandler, "register", None)  # POSIX's only
    if register is None:
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(os.path.join(folder, name), flags, 0o600)
        os.write(fd, os.path.dirname(os.path.abspath(platform.__file__)).encode(
            "utf-8", "surrogateescape") + b"\n")
        # The descriptor stays open for the whole run: faulthandler writes to it by number.
        register(signum, fd, all_threads=True, chain=False)
    except (OSError, RuntimeError, ValueError):
        return  # no stack to give: the time limit names the stage alone, as before
