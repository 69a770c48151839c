"""Shared fixtures: the real environments, the built zipapp, and running the tool as a user does."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import envs

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
FAKES = ROOT / "tests" / "fakes"
RUN_TIMEOUT_S = 180


# -- the signal dispositions the tests mean -----------------------------------------------------
# The tests that send SIGINT, SIGHUP or SIGTERM to the tool mean a process started from a
# terminal, where each has its default action. A suite started under `nohup` inherits SIGHUP
# ignored, and one started as a background job of a script inherits SIGINT ignored: an ignored
# signal stays ignored across exec, so every child would ignore it too and those tests would wait
# for an ending that never comes. The suite's own process keeps ignoring them (nohup keeps its
# meaning), through a handler that does nothing: exec resets a handled signal to its default
# action, so every child starts with the default, as the tests mean. A test that means an ignored
# signal sets that up itself for its child.
TERMINAL_SIGNALS = ("SIGINT", "SIGHUP", "SIGTERM", "SIGQUIT")
_inherited: dict[int, Any] = {}


def _ignore(signum: int, frame: Any) -> None:
    """The suite ignores a signal it inherited as ignored; its children get the default."""


def _sources_checked() -> None:
    """The tests run the tool as ``python -m kernodeck_diagnostic`` with this interpreter: it must
    import this clone's sources, not another clone's installed into the same dev venv."""
    found = subprocess.run(
        [sys.executable, "-c", "import kernodeck_diagnostic; print(kernodeck_diagnostic.__file__)"],
        capture_output=True, text=True, env=clean_env(), timeout=60, check=False).stdout.strip()
    if not found or not Path(found).resolve().is_relative_to(SRC.resolve()):
        pytest.exit(f"this interpreter imports the tool from {found or 'nowhere'}, not from {SRC}:"
                    " run the suite with scripts/test (its dev venv is keyed by the clone)", 3)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("collectonly"):  # a collection runs no tool: any interpreter lists
        _sources_checked()
    for name in TERMINAL_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) == signal.SIG_IGN:
            _inherited[signum] = signal.signal(signum, _ignore)


def pytest_unconfigure(config: pytest.Config) -> None:
    for signum, disposition in _inherited.items():
        signal.signal(signum, disposition)
    _inherited.clear()


@pytest.fixture(scope="session", autouse=True)
def _launcher_and_compiler_files_kept_in_the_suites_folder(
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """torchrun (and the launchers built on it) makes a ``torchelastic_*`` folder in the system's
    temporary folder for its logs and never removes it: every job the suite launches gets one in
    this session's own temporary folder instead (``--log-dir`` as its variable, which each of
    the suite's children inherits), which pytest removes with its other folders."""
    kept = {"PET_LOG_DIR": str(tmp_path_factory.mktemp("torchrun-logs")),
            # Importing Lightning, transformers or accelerate makes $TMPDIR/torchinductor_<user>
            # (torch._inductor's default cache) and leaves it: the frameworks' programs are given
            # the session's own (``inductor_cache``). Not the tool's runs (``clean_env`` drops
            # KD_*): a cache the user chose keeps --kernels from moving Inductor's headers.
            "KD_TEST_INDUCTOR_CACHE": str(tmp_path_factory.mktemp("inductor-cache"))}
    previous = {name: os.environ.get(name) for name in kept}
    os.environ.update(kept)
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@dataclass
class Result:
    """One run of the tool: exit code, terminal output, and the JSON report when one was asked."""

    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float
    report: dict[str, Any] | None = None

    @property
    def headline(self) -> str:
        return self.stdout.splitlines()[0] if self.stdout else ""


@pytest.fixture(scope="session")
def pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The single-file download, built from the current sources."""
    target = tmp_path_factory.mktemp("dist") / "kernodeck-diagnostic-v1.pyz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_pyz.py"), "--output",
                    str(target)], check=True, timeout=60, capture_output=True)
    return target


@pytest.fixture(scope="session")
def notorch_python() -> Path:
    return envs.python_of(envs.notorch())


@pytest.fixture(scope="session")
def cpu_torch_python() -> Path:
    return envs.python_of(envs.torch_cpu())


@pytest.fixture(scope="session")
def broken_torch_python() -> Path:
    return envs.python_of(envs.torch_broken())


@pytest.fixture(scope="session")
def cuda_torch_python() -> Path:
    return envs.python_of(envs.torch_cuda())


def inductor_cache() -> dict[str, str]:
    """The variable giving a program that imports a framework the session's Inductor cache (see
    ``_launcher_and_compiler_files_kept_in_the_suites_folder``)."""
    folder = os.environ.get("KD_TEST_INDUCTOR_CACHE")
    return {} if folder is None else {"TORCHINDUCTOR_CACHE_DIR": folder}


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a user's shell would give: ours, minus what would leak test machinery."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "KD_", "COV_", "PYTHON"))}
    env.pop("NO_COLOR", None)
    env.update(extra or {})
    return env


def run_tool(python: Path | str, tool: Path | Sequence[str], args: Sequence[str], *,
             env: Mapping[str, str] | None = None, cwd: Path | None = None,
             timeout: float = RUN_TIMEOUT_S) -> Result:
    """Run the tool the way a user does: ``python TOOL.pyz ARGS`` or ``python -m ...`` ARGS.

    When ``--output`` is among the arguments and the file was written, it is parsed into
    ``Result.report``.
    """
    command = [str(python), str(tool)] if isinstance(tool, Path) else [str(python), *tool]
    start = time.monotonic()
    completed = subprocess.run([*command, *args], capture_output=True, text=True,
                               env=clean_env() if env is None else dict(env), cwd=cwd,
                               timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    result = Result(completed.returncode, completed.stdout, completed.stderr,
                    time.monotonic() - start)
    if "--output" in args[:-1]:
        path = Path(args[list(args).index("--output") + 1])
        if cwd is not None and not path.is_absolute():
            path = cwd / path
        with contextlib.suppress(OSError):  # a name too long for the file system, say
            if path.is_file():
                result.report = json.loads(path.read_text(encoding="utf-8"))
    return result


@contextlib.contextmanager
def small_tmpfs(folder: Path, free_pages: int) -> Iterator[Path]:
    """A real file system (tmpfs, root only) with ``free_pages`` 4 KiB pages left after one is
    taken by a filler file: 0 for a full disk where a new file can still be created."""
    mount_point = folder / f"tmpfs-{free_pages}-free"
    mount_point.mkdir()
    size = 4 * (free_pages + 1)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}k,mode=0700", "tmpfs",
                              str(mount_point)], capture_output=True, timeout=30, check=False)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs root: " + mounted.stderr.decode().strip())
    try:
        (mount_point / "filler").write_bytes(b"x" * 4096)
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], timeout=30, check=False)


@pytest.fixture
def nearly_full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real file system with one 4 KiB page free."""
    with small_tmpfs(tmp_path, free_pages=1) as mount_point:
        yield mount_point


def fake_gpu_env(scenario: str, **extra: str) -> dict[str, str]:
    """Environment selecting a fake-torch scenario (see tests/fakes/torch)."""
    return clean_env({"PYTHONPATH": str(FAKES), "KD_FAKE_TORCH": scenario, **extra})


def schema() -> dict[str, Any]:
    path = SRC / "kernodeck_diagnostic" / "report" / "schema" / "report-v1.json"
    return json.loads(path.read_text(encoding="utf-8"))


def assert_valid_report(report: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(report, schema(), format_checker=jsonschema.FormatChecker())


def pids_gone(pids: Sequence[int], within_s: float = 3.0) -> list[int]:
    """The pids still alive (not zombies) after waiting up to ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while True:
        alive = [pid for pid in pids if is_running(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


class Lifetime:
    """How long the process whose pid a fake tool writes into ``pid_file`` lived, watched from
    outside while the tool runs (``with Lifetime(path) as life: ...; life.seconds``): from its pid
    written to its end, not the whole command's run, which a loaded machine stretches."""

    def __init__(self, pid_file: Path) -> None:
        self.pid_file = pid_file
        self.seconds: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Lifetime:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _watch(self) -> None:
        pid = None
        while pid is None and not self._stop.is_set():
            with contextlib.suppress(OSError, ValueError):
                pid = int(self.pid_file.read_text())
            time.sleep(0.005)
        if pid is None:
            return
        start = time.monotonic()
        while is_running(pid):
            time.sleep(0.005)
        self.seconds = time.monotonic() - start


def is_running(pid: int) -> bool:
    """Alive and not a zombie (a killed process its parent has not reaped yet is gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def read_terminal(leader: int) -> bytes:
    """Everything a pseudo-terminal's other side wrote, once that side is closed."""
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other side is closed and everything was read
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return seen


# -- other Pythons, and the checkout as a clone of it holds it ----------------------------------

SUPPORTED_PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")  # every one pyenv gives this machine


def pyenv_root() -> Path | None:
    """pyenv's root: what ``pyenv root`` says, else (pyenv not on ``PATH``: a suite started with
    ``env -i``, a cron job) ``PYENV_ROOT`` or pyenv's default, ``~/.pyenv``, when it is there."""
    try:
        return Path(subprocess.run(["pyenv", "root"], capture_output=True, text=True,
                                   timeout=30, check=True).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    return root if (root / "versions").is_dir() else None


def pyenv_python(minor: str) -> Path | None:
    """pyenv's newest Python ``minor`` on this machine (``"3.9"``), or None."""
    root = pyenv_root()
    if root is None:
        return None
    candidates = sorted(Path(root, "versions").glob(f"{minor}.*/bin/python{minor}"))
    return candidates[-1] if candidates else None


def required_pyenv_python(minor: str) -> Path:
    """pyenv's Python ``minor``: a failure in CI, where every one must be there; else a skip."""
    python = pyenv_python(minor)
    if python is None:
        if os.environ.get("CI"):
            pytest.fail(f"Python {minor} is missing from pyenv on this machine")
        pytest.skip(f"no pyenv Python {minor} here")
    return python


def fresh_checkout(target: Path, checkout: Path = ROOT) -> Path:
    """Copy ``checkout`` to ``target`` as a fresh clone holds it, with the tree's changes.

    Only what git tracks or would track: never what ``.gitignore`` keeps out (a venv, build
    folders, the reports the tool wrote in the checkout), whatever commands ran in it before.
    """
    import shutil

    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=checkout, capture_output=True, check=True, timeout=60).stdout
    for name in sorted({name for name in listed.decode("utf-8").split("\0") if name}):
        source = checkout / name
        if not source.is_file():
            continue  # deleted in this tree, not yet in git
        copied = target / name
        copied.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, copied)
    return target


# -- a command blocked writing to a reader that stopped reading (a paused pager) ----------------

def pipe_full(stream: Any) -> bool:
    """The reader's end of a pipe holds as much as the pipe can: the writer is blocked in write().

    Linux only (F_GETPIPE_SZ), like the tests that use it.
    """
    import fcntl
    import termios

    pending = bytearray(4)
    fcntl.ioctl(stream.fileno(), termios.FIONREAD, pending)
    capacity = fcntl.fcntl(stream.fileno(), 1032)  # F_GETPIPE_SZ
    return int.from_bytes(pending, sys.byteorder) >= capacity
