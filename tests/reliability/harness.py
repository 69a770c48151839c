"""Running the front as a user does, and measuring what the reliability suite asserts.

- ``run_front``: the single-file download run by a wrapper that reports the front's own peak
  resident memory and times the whole run. The peak is ``VmHWM`` of the front's address space,
  not ``ru_maxrss``: on Linux ``ru_maxrss`` keeps the peak of the image the process had before
  its exec (a fork of pytest, hundreds of MB in a long session), so it measures the test runner.
  ``VmHWM`` belongs to the front's own memory since its exec, and the worker is another process.
- ``recorded_run``: what a real worker said (the fake torch in the real worker.py), replayed
  through the real event reader, for in-process runs of the front that must not wait for one.
- ``tagged_env``: every process of a run inherits a unique ``KD_RUN_TAG``; ``survivors`` finds
  any process still carrying it once the front has ended (the worker, its children, a helper that
  escaped the worker's exit...), by reading ``/proc/*/environ``.
"""

from __future__ import annotations

import functools
import io
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import FAKES, SRC, fake_gpu_env, is_running
from kernodeck_diagnostic.supervision.events import EventReader
from kernodeck_diagnostic.supervision.supervisor import WorkerRun

# The front, in-process in a small wrapper: the pyz runs as __main__ exactly as `python TOOL.pyz`
# would run it, then the wrapper writes the front's peak resident memory (KiB) to a file.
FRONT_WRAPPER = """\
import runpy, sys
rss_file, tool = sys.argv[1], sys.argv[2]
sys.argv = [tool, *sys.argv[3:]]
try:
    runpy.run_path(tool, run_name="__main__")
finally:
    with open("/proc/self/status") as status, open(rss_file, "w") as file:
        file.write(next(line for line in status if line.startswith("VmHWM:")).split()[1])
"""
STARTUP_FLOOD = FAKES / "startup_flood"
FRONT_MEMORY_LIMIT_MB = 50.0
RUN_LIMIT_S = 120


@dataclass
class FrontRun:
    """One run of the front: exit code, terminal output, time, its peak memory, its report."""

    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float
    max_rss_mb: float | None
    report: dict[str, Any] | None

    def describe(self) -> str:
        return (f"exit {self.returncode} in {self.elapsed_s:.2f} s\nstdout: {self.stdout[:2000]}"
                f"\nstderr: {self.stderr[:2000]}")


def tagged_env(scenario: str | None = None, **extra: str) -> tuple[dict[str, str], str]:
    """A user's environment (a fake-torch scenario when named), with a unique run tag."""
    from conftest import clean_env

    tag = secrets.token_hex(8)
    env = fake_gpu_env(scenario, **extra) if scenario else clean_env(extra)
    env["KD_RUN_TAG"] = tag
    return env, tag


def front_command(tool: Path, args: Sequence[str], rss_file: Path,
                  python_flags: Sequence[str] = ()) -> list[str]:
    return [sys.executable, *python_flags, "-c", FRONT_WRAPPER, str(rss_file), str(tool), *args]


def run_front(tool: Path, args: Sequence[str], *, env: Mapping[str, str], rss_file: Path,
              cwd: Path | None = None, output: Path | None = None,
              python_flags: Sequence[str] = (), timeout: float = RUN_LIMIT_S) -> FrontRun:
    """Run the front to its end; ``output`` (the --output file) is parsed when it was written."""
    rss_file.unlink(missing_ok=True)
    start = time.monotonic()
    completed = subprocess.run(front_command(tool, args, rss_file, python_flags),
                               capture_output=True, env=dict(env), cwd=cwd, timeout=timeout,
                               stdin=subprocess.DEVNULL, check=False)
    elapsed = time.monotonic() - start
    report = None
    if output is not None and output.is_file():
        report = json.loads(output.read_text(encoding="utf-8"))
    return FrontRun(completed.returncode, completed.stdout.decode("utf-8", "replace"),
                    completed.stderr.decode("utf-8", "replace"), elapsed, read_rss_mb(rss_file),
                    report)


def read_rss_mb(rss_file: Path) -> float | None:
    try:
        return int(rss_file.read_text()) / 1024  # VmHWM is in KiB
    except (OSError, ValueError):
        return None


def survivors(tag: str, within_s: float = 2.0) -> list[str]:
    """Processes still alive (zombies aside) that carry ``KD_RUN_TAG=tag``, after up to
    ``within_s`` seconds: a SIGKILL is delivered at once, but the kernel may take a moment."""
    needle = f"KD_RUN_TAG={tag}".encode()
    deadline = time.monotonic() + within_s
    while True:
        alive = [_describe(pid) for pid in _pids() if _carries(pid, needle) and is_running(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def wait_for(predicate: Any, within_s: float, what: str) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def recorded_pids(pids_file: Path) -> list[int]:
    return [int(pid) for pid in pids_file.read_text().split()] if pids_file.exists() else []


def send(process: subprocess.Popen[bytes], signum: signal.Signals) -> None:
    os.kill(process.pid, signum)


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _carries(pid: int, needle: bytes) -> bool:
    try:
        return needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _describe(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:200]
    except OSError:
        command = b"?"
    return f"{pid}: {command.decode('utf-8', 'replace')}"


@functools.cache
def _recorded_events(scenario: str, device: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        events = Path(folder) / "events.jsonl"
        subprocess.run([sys.executable, str(SRC / "kernodeck_diagnostic" / "worker" / "stages.py"),
                        "--events", str(events), "--device", device, "--device-index", "0"],
                       env=fake_gpu_env(scenario), capture_output=True, timeout=60, check=True)
        return events.read_bytes()


def recorded_run(scenario: str = "cuda_pass", device: str = "gpu") -> WorkerRun:
    """A finished run of the real worker under a fake-torch scenario (recorded once)."""
    reader = EventReader(io.BytesIO(_recorded_events(scenario, device)))
    reader.poll()
    reader.close()
    return WorkerRun(reader.state, "finished", 0, 0.2)
