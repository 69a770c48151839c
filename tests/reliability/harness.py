"""Running the front as a user does, and measuring what the reliability suite asserts.

- ``run_front``: the single-file download run by a wrapper that reports the front's own peak
  resident memory and times the whole run. The peak is ``VmHWM`` of the front's address space,
  not ``ru_maxrss``: on Linux ``ru_maxrss`` keeps the peak of the image the process had before
  its exec (a fork of pytest, hundreds of MB in a long session), so it measures the test runner.
  ``VmHWM`` belongs to the front's own memory since its exec, and the worker is another process.
- ``recorded_run``: what a real worker said (the fake torch in the real worker), replayed
  through the real event reader, for in-process runs of the front that must not wait for one.
- ``record`` and ``Recording``: one whole check as its front saw it, kept in the repository
  (tests/snapshots/runs: the worker's event log byte for byte, and how the run ended) and built
  again into a report by the real code; see tests/test_snapshots.py, which records them anew
  with ``KERNODECK_RECORD_RUNS=1``.
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

from conftest import FAKES, ROOT, SRC, clean_env, fake_gpu_env, is_running
from kernodeck_diagnostic.api import Request
from kernodeck_diagnostic.report.build import Built, build
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.supervision.events import EventReader, WorkerState
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
    return WorkerRun(read_events(_recorded_events(scenario, device)), "finished", 0, 0.2)


def read_events(log: bytes) -> WorkerState:
    """What the front's event reader makes of a whole event log, read as the front reads it."""
    reader = EventReader(io.BytesIO(log))
    reader.poll()
    reader.close()
    return reader.state


# -- whole checks, recorded once and kept: the snapshot tests' input -------------------------------

RUNS = ROOT / "tests" / "snapshots" / "runs"
# Stand-ins for the recording machine's folders in what is kept: a recording names no machine,
# and recording again elsewhere changes only what the worker says differently. The replay's
# redaction knows the stand-ins as the real check knew the real folders (``STAND_IN_REDACTOR``).
STAND_IN_HOME = "/home/user"
STAND_IN_CWD = "/home/user/work"  # where the check was started: an empty folder
STAND_IN_CHECKOUT = "/home/user/kernodeck-diagnostic"
STAND_IN_REDACTOR = Redactor(folders={STAND_IN_HOME: "<home>", STAND_IN_CWD: "<cwd>"})
RECORD_LIMIT_S = 120

# The recording front: the real check, run as a script in a fresh folder (the user's working
# folder), with two taps: the bytes the front reads from the worker's event log, and what the
# front hands to ``build`` besides it (how the worker ended, the front's own facts).
RECORDER = """\
import json, sys
sys.path.insert(1, sys.argv[1])  # the sources under test; path[0] stays the working folder
import kernodeck_diagnostic
from kernodeck_diagnostic.report import build as report_build
from kernodeck_diagnostic.supervision import events as worker_events
python, device, events_file, run_file = sys.argv[2:6]
log, seen = bytearray(), {}

class Tee:
    def __init__(self, file):
        self.file = file
    def read(self, size=-1):
        data = self.file.read(size)
        log.extend(data)
        return data

class RecordingReader(worker_events.EventReader):
    def __init__(self, file):
        super().__init__(Tee(file))

def build(request, run, host, redactor, front=None, **place):
    seen["request"] = {name: getattr(request, name)
                       for name in ("device", "device_index", "timeout_s", "host_check")}
    seen.update(outcome=run.outcome, returncode=run.returncode, elapsed_s=run.elapsed_s,
                start_error=run.start_error, stderr_line=run.stderr_line, host=host, front=front)
    return real_build(request, run, host, redactor, front, **place)

worker_events.EventReader = RecordingReader  # the supervisor imports it once the worker runs
real_build, report_build.build = report_build.build, build
seen["report"] = kernodeck_diagnostic.check(device=device, python=python).to_dict()
with open(events_file, "wb") as file:
    file.write(log)
with open(run_file, "w", encoding="utf-8") as file:
    json.dump(seen, file)
"""


@dataclass(frozen=True)
class Recording:
    """One check as its front saw it: the worker's event log, byte for byte, and ``run``: the
    request, how the worker ended (outcome, returncode, elapsed_s, start_error, stderr_line),
    the host facts and the front's own facts (``front``)."""

    events: bytes
    run: dict[str, Any]

    def worker_run(self) -> WorkerRun:
        """The run, its events read again by the front's real event reader."""
        start_error = self.run["start_error"]  # JSON keeps the (key, detail) pair as a list
        return WorkerRun(read_events(self.events), self.run["outcome"], self.run["returncode"],
                         self.run["elapsed_s"], tuple(start_error) if start_error else None,
                         self.run["stderr_line"])

    def built(self) -> Built:
        """The report the real code builds from this recording, on any machine, with its
        findings as the rules gave them."""
        return build(Request(**self.run["request"]), self.worker_run(), self.run["host"],
                     STAND_IN_REDACTOR, self.run["front"])

    def report(self) -> dict[str, Any]:
        """The report alone, as the JSON holds it."""
        return self.built().report

    def save(self, case: str, folder: Path = RUNS) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{case}.events.jsonl").write_bytes(self.events)
        (folder / f"{case}.run.json").write_text(json.dumps(self.run, indent=2) + "\n",
                                                 encoding="utf-8")

    @classmethod
    def load(cls, case: str, folder: Path = RUNS) -> Recording:
        run: dict[str, Any] = json.loads((folder / f"{case}.run.json").read_text(encoding="utf-8"))
        return cls((folder / f"{case}.events.jsonl").read_bytes(), run)


def record(python: Path, device: str, env: Mapping[str, str]) -> tuple[Recording, dict[str, Any]]:
    """Run one real check of ``python`` from a fresh folder, in ``env`` as a user's shell gives
    it; the recording (the recording machine's folders replaced by the stand-ins) and the report
    the check itself made (redacted for the stand-ins' names in the same way)."""
    with tempfile.TemporaryDirectory(prefix="kd-record-") as scratch:
        work = Path(scratch) / "work"
        work.mkdir()
        events_file, run_file = Path(scratch) / "events.jsonl", Path(scratch) / "run.json"
        recorder = subprocess.run([sys.executable, "-c", RECORDER, str(SRC), str(python), device,
                                   str(events_file), str(run_file)],
                                  env=dict(env), cwd=work, capture_output=True, text=True,
                                  timeout=RECORD_LIMIT_S, stdin=subprocess.DEVNULL, check=False)
        assert recorder.returncode == 0, f"the recording failed:\n{recorder.stderr[-4000:]}"
        stand_ins = _stand_ins(work)
        events = _replace(events_file.read_text(encoding="utf-8", errors="surrogateescape"),
                          stand_ins).encode("utf-8", "surrogateescape")
        seen = json.loads(_replace(run_file.read_text(encoding="utf-8"), stand_ins))
    live = seen.pop("report")
    return Recording(events, seen), live


def _stand_ins(work: Path) -> list[tuple[str, str]]:
    """The recording machine's folders and their stand-ins, the longest (most precise) first."""
    pairs = {}
    for real, stand_in in ((work, STAND_IN_CWD), (ROOT, STAND_IN_CHECKOUT),
                           (Path.home(), STAND_IN_HOME)):
        for form in {str(real), os.path.realpath(real)}:
            if len(form) > 1:  # never the file system's root
                pairs.setdefault(form, stand_in)
    return sorted(pairs.items(), key=lambda pair: len(pair[0]), reverse=True)


def _replace(text: str, stand_ins: list[tuple[str, str]]) -> str:
    for real, stand_in in stand_ins:
        text = text.replace(real, stand_in)
    return text
