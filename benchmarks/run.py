"""Side-by-side timings of the check against its floor, in one run on one torch environment.

    $ python3 benchmarks/run.py
    [bench] torch environment: tests/envs.py torch-cpu (built on first use)
    [bench] installing the tool into a hard-linked copy, building the zipapp
    ...
    [bench] round 16/16: tool 1.78s, bare 1.91s, collect_env 2.50s, zipapp 1.53s, host_none
    1.57s, host_slow 2.59s, tool_fake 0.22s, bare_fake 0.06s
    [bench] timeout latency
    [bench] front memory
    [bench] import times
    ## Results (full: 15 alternated runs per command after 1 warm-up round(s); medians)

    - date: 2026-11-29 18:55 UTC
    - CPU: AMD EPYC, 2 logical cores
    ...
    | # | measurement | median | compared with | ratio / growth | target | |
    |---|---|---|---|---|---|---|
    | 1 | `kernodeck-diagnostic --device cpu` | 1.839 s | `python -c "import torch; <the
    computation>"` 2.121 s | ratio 0.867 | <= 1.10 | met |
    ...
    | 4 | front peak RSS, installed | 16.2 MB | bare interpreter 10.5 MB | +5.7 MB | <= 30 MB |
    met |
    ...
    | 6 | `kernodeck-diagnostic --timeout 5 (worker hangs in synchronize)` | 5.091 s | --timeout 5
    s | +0.091 s | <= 6.0 s | met |
    ...
    Targets missed: #5 `kernodeck-diagnostic --device cpu --host-check (nvidia-smi answers in
    2.5 s)`

(long table rows folded here); docs/performance.md holds a whole run and reads it.

The floor of the check is: start the interpreter, ``import torch``, run the tiny computation. Every
compared command runs with the same interpreter and the same torch build, alternated round by
round (A B C ... then A ... C B, rotated and reversed: ``alternate``), each started once every
process of the one before has ended (``settle``), after warm-up runs, and the table reports
medians. The torch environment is the ``torch-cpu`` one of ``tests/envs.py`` (built once and
cached); the tool is installed into a throwaway hard-linked copy of it with pip, exactly as a
user installs it, and the zipapp is built from the same sources with ``scripts/build_pyz.py``.
Nothing is left behind.

What is measured (issue 4), with its target:

1f. ``kernodeck-diagnostic --device cpu`` vs the floor: the same one-liner ending with
   ``os._exit(0)``, without the interpreter's teardown that the check never waits for either
   (issue 28; target <= 1.03), and 3f. the zipapp vs that floor (target <= 1.05), both judged
   on the paired ratio, the median of the per-round ratios (see ``paired_ratio``), and its 95 %
   interval: met only when the whole interval is within the target, **undecided** when the
   target lies inside it (see ``floor_rows``);
1. ``kernodeck-diagnostic --device cpu`` vs ``python -c "import torch; <the same computation>"``;
2. the same vs ``python -m torch.utils.collect_env``;
3. the zipapp vs the installed package;
4. peak resident memory of the front process alone (run in-process, the worker not counted);
5. ``--host-check`` with no ``nvidia-smi``, and with a fake one that answers after 2.5 s;
6. the TIMEOUT verdict's latency with a worker that hangs (``--timeout 5``);
7. ``python -X importtime`` of the front: what it imports and what that costs;
8. the trial toolkit in a program (``benchmarks/trial_probe.py``): ``with trial.stage(...)`` per
   call against ``torch.profiler.record_function`` and a bare ``with`` in the same rounds (target:
   below ``record_function``); a pass of ``trial.passes(n)`` with a stage in it against two
   ``record_function`` ranges (target: below them); and the size of ``events.jsonl`` after a
   million stage calls of three names (target < 5 MB);
9. one event written to its ``events.jsonl`` (in the program's thread; its fsync apart);
10. ``OutputLedger.append`` (records of 256 floats): the group-commit mode against a bare write +
   flush (target <= 1.20) and SQLite in WAL mode (target: faster), the per-record mode against a
   write + flush + fsync (information).
12a. ``--all-devices`` on four fake GPUs (one worker, one import, twelve verified copies) vs the
   default check of one of them (target <= 1.20);
12b. ``summarize`` on a fleet of 20,000 reports (text): its time (target <= 1.5 s) and its peak
   memory against 2,000 reports (target: at most 2 KiB more per report: a row and a name, never
   the report), with --baseline the baseline's too, alternated in the same rounds.

``--quick`` (about a minute) and ``--smoke`` (one run each, no collect_env: a check that the
script works, not a measurement) trade precision for time; the numbers in docs/performance.md come
from a full run. Linux only: tests/envs.py locks with fcntl, the memory probe reads /proc and the
fake nvidia-smi stamps its start with GNU date.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
FAKES = ROOT / "tests" / "fakes"
# summarize's status for the benchmark's fleet, where some reports failed (report/codes.py's
# SUMMARY_SOME_FAILED; tests/test_benchmark_script.py holds this to the table).
SUMMARY_SOME_FAILED = 22
TOOL = "kernodeck-diagnostic"

# The fixed computation of the check (README, "What it does", step 4; docs/method.md, control 3),
# written as a user would, verified the same way: this is the floor the tool is compared with.
BARE_CHECK = (
    "import torch\n"
    "a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float32, requires_grad=True)\n"
    "b = torch.tensor([[2.0, 0.0], [1.0, 2.0]], dtype=torch.float32)\n"
    "product = a @ b\n"
    "loss = (product ** 2).sum()\n"
    "loss.backward()\n"
    "assert product.detach().cpu().tolist() == [[4.0, 4.0], [10.0, 8.0]]\n"
    "assert float(loss.detach().cpu().item()) == 196.0\n"
    "assert a.grad.detach().cpu().tolist() == [[16.0, 24.0], [40.0, 52.0]]\n"
)
# The honest floor (issue 28): the same computation without the interpreter's teardown, which the
# check never waits for either (its worker ends with os._exit once its events are written).
FLOOR_CHECK = BARE_CHECK + "import os\nos._exit(0)\n"
FLOOR_LABEL = 'python -c "import torch; <the computation>; os._exit(0)" (the floor)'
# Torch's double, for the tool's own time against the floor (rows 1d and 3d): the fake torch of
# tests/fakes, whose import first loads the standard modules that the real build loads (listed
# from it by ``prepare``: the worker loads most of them before its import, so the real import is
# that much shorter there, and the double must be too), then waits DOUBLE_IMPORT_S without using
# the processor, as long as the front's own work beside the import needs (it reads the command
# line and loads what reads the result while the worker imports). Both sides of each round run
# the same double: what differs is the tool's own time, in commands of well under a second,
# where the machine's changing speed moves a round by tens of milliseconds, not by the ±15 % of
# the real 1.5 s import.
DOUBLE_IMPORT_S = 0.5
STANDARD_MODULES = "torch-standard-modules.txt"
# And the double holds as much memory as the real import leaves resident (the difference of the
# two, measured by ``prepare``): a process's exit waits for the system to take it back (10-15 ms
# for torch's here), which the floor pays and a check whose worker has said it is done does not
# wait for (supervision/start.py's fork_early).
RESIDENT_MB = "torch-resident-mb.txt"
# The memory resident once the floor's computation has run, in MiB (Linux's /proc).
RESIDENT_PROBE = BARE_CHECK + (
    "with open('/proc/self/status') as status:\n"
    "    print(next(int(line.split()[1]) for line in status if line.startswith('VmRSS:')) >> 10)\n")
LIST_STANDARD_MODULES = (
    "import os, sys\n"
    "before = set(sys.modules)\n"
    "import torch\n"
    "standard = getattr(sys, 'stdlib_module_names', None)\n"
    "if standard is None:  # Python 3.9: what the standard library's folders hold\n"
    "    folder = os.path.dirname(os.__file__)\n"
    "    found = os.listdir(folder) + os.listdir(os.path.join(folder, 'lib-dynload'))\n"
    "    standard = {name.partition('.')[0] for name in found} | set(sys.builtin_module_names)\n"
    "print('\\n'.join(sorted(name for name in set(sys.modules) - before\n"
    "                       if name.partition('.')[0] in standard)))\n"
)

# Runs the front in this very process (so only the front's memory counts: the worker is a child
# with its own), then prints the peak resident set size on stderr. On Linux it reads VmHWM, the
# peak of this process image: ru_maxrss survives exec, so a probe spawned by a larger process
# (this script) would report that process's peak instead of its own.
MEMORY_PROBE = """
import json, resource, runpy, sys
where, mode = sys.argv[1], sys.argv[2]
if where != "-":
    sys.path.insert(0, where)
code = None
if mode == "summarize":  # row 12b: a fleet of reports, the folder after the mode
    sys.argv = ["kernodeck-diagnostic", "summarize", sys.argv[3]]
elif mode == "front":
    sys.argv = ["kernodeck-diagnostic", "--device", "cpu"]
if mode in ("front", "summarize"):
    try:
        runpy.run_module("kernodeck_diagnostic", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
peak = None
try:  # this process image's own peak (Linux)
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1])
except OSError:
    pass
if peak is None:  # elsewhere; it may include the spawning process's peak
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak = peak // 1024 if sys.platform == "darwin" else peak
# The largest child's own peak (summarize's parts, forked.py); 0 when none ran.
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
children = children // 1024 if sys.platform == "darwin" else children
sys.stderr.write("KD-BENCH-RSS " + json.dumps({"peak_kib": peak, "children_peak_kib": children,
                                               "exit": code}) + "\\n")
"""

# The trial toolkit inside a program (issues 13 and 25): benchmarks/trial_probe.py, run with the
# benchmark's interpreter; stage calls per round, rounds, stage calls for the event log's size,
# ledger records (smoke: a tenth, one round).
TRIAL_PROBE = Path(__file__).resolve().parent / "trial_probe.py"
TRIAL_CALLS = 20_000
TRIAL_EVENT_CALLS = 1_000_000
LEDGER_RECORDS = 2_000

FAKE_SMI_DELAY_S = 2.5
# A slow nvidia-smi: answers the host probe's query after FAKE_SMI_DELAY_S. It first writes the
# time it started (GNU date) to {stamp}: when the front started the probe, and so how long the
# front ran before it and after its answer.
FAKE_SMI = """#!/bin/sh
date +%s.%N > '{stamp}'
sleep {delay}
echo "NVIDIA H200, 570.124.06, 143771"
"""
HANG_TIMEOUT_S = 5
RUN_LIMIT_S = 120  # no single benchmarked command may take longer: a hang is a failure here
# How long a process a command leaves behind may run on after it (``settle``): the check's worker
# ends 10-15 ms after its front; anything still there after this is a leftover, and a failure.
SETTLE_LIMIT_S = 10.0
TARGETS = {"tool_vs_floor": 1.03, "zipapp_vs_floor": 1.05,
           "tool_vs_bare": 1.10, "tool_vs_collect_env": 0.80, "zipapp_vs_installed": 1.05,
           "front_rss_mb": 30.0, "host_margin_s": 0.1, "timeout_margin_s": 1.0,
           "stage_vs_record_function": 1.0, "events_mb_per_million": 5.0,
           "step_vs_two_record_functions": 1.0,
           "ledger_vs_write": 1.20, "ledger_vs_sqlite": 1.0, "all_devices_vs_one": 1.20,
           "summarize_s": 1.5, "summarize_kib_per_report": 2.0}
# Row 12b: summarize on a fleet of this many reports, and on a tenth of it for the memory's
# growth per report (smoke: a tenth of each, to prove the script works).
FLEET_REPORTS = 20_000
FLEET_PER_FOLDER = 200  # reports per subfolder, as one folder per rack of machines


class BenchmarkError(Exception):
    """A command did not behave as expected: the numbers would mean nothing."""


@dataclass
class Command:
    """One benchmarked command: how to run it and what a correct run prints and exits with."""

    key: str
    label: str
    argv: list[str]
    env: dict[str, str]
    expect_exit: int = 0
    expect_text: str | None = None
    stamp_file: Path | None = None  # where the fake nvidia-smi writes when it started
    times: list[float] = field(default_factory=list)
    # Per measured run, with stamp_file: (probe start - command start, end - probe answer), in s.
    probe_gaps: list[tuple[float, float]] = field(default_factory=list)
    last_gap: tuple[float, float] | None = None
    last_s: float = 0.0

    def run(self) -> float:
        if self.stamp_file is not None:
            self.stamp_file.unlink(missing_ok=True)
        wall_start, start = time.time(), time.perf_counter()
        completed = subprocess.run(self.argv, env=self.env, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, errors="replace",
                                   timeout=RUN_LIMIT_S, check=False)
        elapsed = self.last_s = time.perf_counter() - start
        settle(self.label)
        if self.stamp_file is not None and self.stamp_file.exists():
            probe_start = float(self.stamp_file.read_text())
            self.last_gap = (probe_start - wall_start,
                             wall_start + elapsed - probe_start - FAKE_SMI_DELAY_S)
        output = completed.stdout + completed.stderr
        if completed.returncode != self.expect_exit or (
                self.expect_text is not None and self.expect_text not in output):
            raise BenchmarkError(
                f"{self.label}: exit {completed.returncode} (expected {self.expect_exit}"
                f"{', and ' + repr(self.expect_text) if self.expect_text else ''}); "
                f"output ends with:\n{output[-2000:]}")
        return elapsed

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def spread(self) -> str:
        return f"{min(self.times):.3f}-{max(self.times):.3f}"


@dataclass
class Settings:
    runs: int
    warmups: int
    hang_runs: int
    memory_runs: int
    importtime_runs: int
    collect_env: bool
    mode: str


@dataclass
class Setup:
    """The compared installations, all on the same torch environment."""

    python: Path  # the torch environment's interpreter (the hard-linked copy)
    installed: Path  # the console script pip installed into that copy
    pyz: Path
    fake_smi_dir: Path
    work: Path


def adopt_orphans() -> None:
    """Make this process the child subreaper (Linux's ``PR_SET_CHILD_SUBREAPER``): a process a
    command leaves running when it exits becomes this process's child, not init's, so that
    ``settle`` can wait for it. The check's worker is one: the front prints the verdict and exits
    once the worker has written its last event, and the worker's exit, which releases torch's
    memory, ends about 10 ms later here. Left to run on, it would share the machine with the
    start of the next command, and so flatter the check against whatever follows it."""
    import ctypes

    pr_set_child_subreaper = 36  # <linux/prctl.h>
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) != 0:
        raise BenchmarkError(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def settle(label: str) -> None:
    """Wait until every process the last command left behind has ended (``adopt_orphans``), so
    that the next command starts on a machine where nothing of it still runs. Not timed: the
    user waits for the command, not for its worker's exit. A process still running
    SETTLE_LIMIT_S later is a leftover (a worker or a watch the tool failed to end):
    BenchmarkError."""
    if sys.platform == "win32":  # never: this script is Linux's (said so that mypy reads it)
        return
    limit_s = SETTLE_LIMIT_S
    deadline = time.monotonic() + limit_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # no child left
            return
        if pid:
            continue
        if time.monotonic() > deadline:
            raise BenchmarkError(f"{label}: a process it started was still running "
                                 f"{limit_s:g} s after it exited")
        time.sleep(0.001)


# -- set-up ---------------------------------------------------------------------------------------

def load_envs() -> ModuleType:
    """``tests/envs.py``, imported by path: it builds and caches the real torch environments."""
    spec = importlib.util.spec_from_file_location("kd_test_envs", ROOT / "tests" / "envs.py")
    if spec is None or spec.loader is None:
        raise BenchmarkError("tests/envs.py cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(work: Path, torch_env: Path, project: Path) -> Setup:
    """A throwaway copy of the torch environment with the tool pip-installed, and the zipapp."""
    # Hard links: the copy costs no disk space and pip only adds files, so the cached environment
    # is never modified. It must live on the cache's file system for the links to be possible.
    env = work / "torch-env"
    shutil.copytree(torch_env, env, symlinks=True, copy_function=_link_or_copy)
    (env / ".complete").unlink(missing_ok=True)
    python = env / "bin" / "python"
    # pip builds from a copy of the sources, so nothing is written into the working tree.
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(project / name, source / name)
    shutil.copytree(project / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    _quiet([str(python), "-m", "pip", "install", "--quiet", "--no-input", "--no-deps",
            "--no-build-isolation", "--no-index", "--disable-pip-version-check", str(source)],
           "pip install of the tool (offline: it needs the setuptools of the torch environment)")
    (work / STANDARD_MODULES).write_text(
        _quiet([str(python), "-c", LIST_STANDARD_MODULES],
               "listing the standard modules torch loads", base_env()), encoding="utf-8")
    (work / RESIDENT_MB).write_text(str(resident_difference(python, work)), encoding="utf-8")
    pyz = work / "kernodeck-diagnostic-v1.pyz"
    _quiet([sys.executable, str(project / "scripts" / "build_pyz.py"), "--output", str(pyz)],
           "zipapp build")
    fake_smi_dir = work / "fake-nvidia-smi"
    fake_smi_dir.mkdir()
    (fake_smi_dir / "nvidia-smi").write_text(
        FAKE_SMI.format(stamp=work / "nvidia-smi-started", delay=FAKE_SMI_DELAY_S))
    (fake_smi_dir / "nvidia-smi").chmod(0o755)
    return Setup(python, env / "bin" / TOOL, pyz, fake_smi_dir, work)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system: a real copy (slower, same result)
        shutil.copy2(source, target)


def _quiet(argv: list[str], what: str, env: Mapping[str, str] | None = None) -> str:
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                               stdin=subprocess.DEVNULL, check=False, env=env)
    if completed.returncode != 0:
        raise BenchmarkError(f"{what} failed:\n{(completed.stdout + completed.stderr)[-2000:]}")
    return completed.stdout


def base_env(path: str | None = None, **extra: str) -> dict[str, str]:
    """This environment without anything that changes how Python starts, and no nvidia-smi."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "KD_", "PYTEST_")) and key != "NO_COLOR"}
    folders = (path or os.environ.get("PATH", os.defpath)).split(os.pathsep)
    # No real nvidia-smi either: the "no tool" case must really have none.
    env["PATH"] = os.pathsep.join(f for f in folders
                                  if f and not os.path.exists(os.path.join(f, "nvidia-smi")))
    env.update(extra)
    return env


def double_env(work: Path, resident_mb: int | None = None) -> dict[str, str]:
    """The environment in which ``import torch`` is torch's double (DOUBLE_IMPORT_S), with what
    ``prepare`` wrote in ``work``, holding ``resident_mb`` (default: RESIDENT_MB) once imported."""
    if resident_mb is None:
        resident_mb = int((work / RESIDENT_MB).read_text(encoding="utf-8"))
    return base_env(PYTHONPATH=str(FAKES), KD_FAKE_TORCH="cuda_pass",
                    KD_FAKE_TORCH_IMPORTS=str(work / STANDARD_MODULES),
                    KD_FAKE_TORCH_IMPORT_DELAY=str(DOUBLE_IMPORT_S),
                    KD_FAKE_TORCH_RESIDENT_MB=str(resident_mb))


def resident_difference(python: Path, work: Path) -> int:
    """How much more memory (MiB) the floor's computation leaves resident with the real torch
    than with its double holding none: what the double holds (RESIDENT_MB); 0 where /proc
    cannot tell."""
    if not sys.platform.startswith("linux"):
        return 0
    real = _quiet([str(python), "-c", RESIDENT_PROBE], "the real import's memory", base_env())
    double = _quiet([str(python), "-c", RESIDENT_PROBE], "the double's memory",
                    double_env(work, resident_mb=0))
    return max(0, int(real.split()[-1]) - int(double.split()[-1]))


def commands(setup: Setup, settings: Settings) -> list[Command]:
    python, tool = str(setup.python), str(setup.installed)
    plain = base_env()
    passed = "CPU_CHECK_PASSED"
    fake = base_env(PYTHONPATH=str(FAKES), KD_FAKE_TORCH="cuda_pass")
    four_gpus = {**fake, "KD_FAKE_DEVICES": "4"}
    double = double_env(setup.work)
    smi_path = str(setup.fake_smi_dir) + os.pathsep + plain["PATH"]
    found = [
        # Rows 1f and 3f: the check, the floor and the zipapp, run back to back (``alternate``).
        Command("tool", f"{TOOL} --device cpu", [tool, "--device", "cpu"], plain,
                expect_text=passed),
        Command("floor", FLOOR_LABEL, [python, "-c", FLOOR_CHECK], plain),
        Command("zipapp", "python kernodeck-diagnostic-v1.pyz --device cpu",
                [python, str(setup.pyz), "--device", "cpu"], plain, expect_text=passed),
        Command("bare", 'python -c "import torch; <the computation>"',
                [python, "-c", BARE_CHECK], plain),
        Command("host_none", f"{TOOL} --device cpu --host-check (no nvidia-smi)",
                [tool, "--device", "cpu", "--host-check"], plain,
                expect_text="nvidia-smi not found"),
        Command("host_slow", f"{TOOL} --device cpu --host-check (nvidia-smi answers in "
                             f"{FAKE_SMI_DELAY_S} s)",
                [tool, "--device", "cpu", "--host-check"], {**plain, "PATH": smi_path},
                expect_text="NVIDIA H200", stamp_file=setup.work / "nvidia-smi-started"),
        # The same pair with a fake torch that imports instantly: what is left is the tool's own
        # overhead (front, worker launch, events, rendering), without the import's noise.
        Command("tool_fake", f"{TOOL} --device cpu (fake instant torch)",
                [tool, "--device", "cpu"], fake, expect_text=passed),
        Command("bare_fake", 'python -c "import torch; ..." (fake instant torch)',
                [python, "-c", BARE_CHECK], fake),
        # Rows 1d and 3d: the floor, the check and the zipapp with torch's double (double_env).
        Command("floor_double", f"{FLOOR_LABEL} (torch's double)",
                [python, "-c", FLOOR_CHECK], double),
        Command("tool_double", f"{TOOL} --device cpu (torch's double)",
                [tool, "--device", "cpu"], double, expect_text=passed),
        Command("zipapp_double", "python kernodeck-diagnostic-v1.pyz --device cpu (torch's double)",
                [python, str(setup.pyz), "--device", "cpu"], double, expect_text=passed),
        # --all-devices: four (fake, instantly imported) GPUs checked in one worker, one import,
        # with the twelve copies between them, vs the default check of the first one.
        Command("one_gpu", f"{TOOL} (4 fake GPUs, the first checked)", [tool], four_gpus,
                expect_text="GPU_CHECK_PASSED"),
        Command("all_gpus", f"{TOOL} --all-devices (4 fake GPUs)", [tool, "--all-devices"],
                four_gpus, expect_text="12 of 12 copies verified"),
    ]
    if settings.collect_env:
        # collect_env runs pip: without its weekly self-check it cannot wait on the network,
        # which only makes it faster, so the comparison stays on the strict side.
        quiet_pip = {**plain, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
        found.insert(4, Command("collect_env", "python -m torch.utils.collect_env",
                                [python, "-m", "torch.utils.collect_env"], quiet_pip,
                                expect_text="PyTorch version"))
    return found


def baseline_commands(baseline: Setup) -> list[Command]:
    """The --baseline checkout's check, with the real torch and with the instant fake one,
    alternated with this checkout's in the same rounds."""
    tool = str(baseline.installed)
    fake = base_env(PYTHONPATH=str(FAKES), KD_FAKE_TORCH="cuda_pass")
    return [Command("baseline", f"{TOOL} --device cpu (--baseline)", [tool, "--device", "cpu"],
                    base_env(), expect_text="CPU_CHECK_PASSED"),
            Command("baseline_fake", f"{TOOL} --device cpu (--baseline, fake instant torch)",
                    [tool, "--device", "cpu"], fake, expect_text="CPU_CHECK_PASSED"),
            Command("baseline_zipapp", "python kernodeck-diagnostic-v1.pyz --device cpu "
                    "(--baseline)", [str(baseline.python), str(baseline.pyz), "--device", "cpu"],
                    base_env(), expect_text="CPU_CHECK_PASSED")]


def baseline_table(by_key: Mapping[str, Command]) -> str:
    """This checkout against --baseline, medians of the same alternated rounds, with the two
    targets each must meet (<= 1.10 of the bare one-liner, <= 0.80 of collect_env)."""
    lines = ["", "## Against --baseline (same rounds, medians)", "",
             "| measurement | this checkout | --baseline | ratio | growth (paired) |",
             "|---|---|---|---|---|"]
    for key, theirs_key, label in (
            ("tool", "baseline", "`--device cpu`"),
            ("tool_fake", "baseline_fake", "`--device cpu`, fake instant torch"),
            ("zipapp", "baseline_zipapp", "zipapp `--device cpu`")):
        mine, theirs = by_key[key], by_key[theirs_key]
        # The median of the per-round differences: both ran in the same round, so the load of
        # the moment cancels out (the medians of a loaded machine move by seconds).
        paired = statistics.median(a - b for a, b in zip(mine.times, theirs.times))
        lines.append(f"| {label} | {_s(mine.median)} | {_s(theirs.median)} | "
                     f"{mine.median / theirs.median:.3f} | {paired * 1000:+.0f} ms |")
    tool, base = by_key["tool"].median, by_key["baseline"].median
    lines.append(f"| zipapp / installed (<= {TARGETS['zipapp_vs_installed']:.2f}) | "
                 f"{by_key['zipapp'].median / tool:.3f} | "
                 f"{by_key['baseline_zipapp'].median / base:.3f} | - | - |")
    if "floor" in by_key:  # judged paired, as row 1f
        floor = by_key["floor"]
        lines.append(f"| check / floor (os._exit), paired ratio "
                     f"(<= {TARGETS['tool_vs_floor']:.2f}) | "
                     f"{paired_ratio(by_key['tool'], floor):.3f} | "
                     f"{paired_ratio(by_key['baseline'], floor):.3f} | - | - |")
    for key, label, target in (("bare", "/ bare import+compute", TARGETS["tool_vs_bare"]),
                               ("collect_env", "/ collect_env", TARGETS["tool_vs_collect_env"])):
        if key in by_key:
            other = by_key[key].median
            lines.append(f"| check {label} (<= {target:.2f}) | {tool / other:.3f} | "
                         f"{base / other:.3f} | - | - |")
    return "\n".join(lines) + "\n"


# -- measurements ---------------------------------------------------------------------------------

def alternate(found: list[Command], settings: Settings) -> None:
    """Warm-ups, then rounds that run every command once, rotating the order each round and
    reversing it every other round.

    Commands compared round by round (the check, the floor and the zipapp; the check and the
    --baseline's) sit side by side in ``found``, so that they run back to back: the load of the
    moment, which drifts over seconds on a shared machine, then weighs on both alike. Reversed
    every other round, each runs as often before the other as after it; each starts once the
    last one's processes have all ended (``settle``). The rotation separates a pair (its first
    command last, its second first) in one round out of len(found)."""
    total = settings.warmups + settings.runs
    for round_index in range(total):
        shift = round_index % len(found)
        order = found[shift:] + found[:shift]
        if round_index % 2:
            order.reverse()
        for command in order:
            elapsed = command.run()
            if round_index >= settings.warmups:
                command.times.append(elapsed)
                if command.last_gap is not None:
                    command.probe_gaps.append(command.last_gap)
        kind = "warm-up" if round_index < settings.warmups else "round"
        _log(f"{kind} {round_index + 1}/{total}: "
             + ", ".join(f"{c.key} {c.last_s:.2f}s" for c in found))


def timeout_latency(setup: Setup, runs: int) -> Command:
    """The TIMEOUT verdict with a worker stuck in synchronisation (fake torch, GPU mode)."""
    env = base_env(PYTHONPATH=str(FAKES), KD_FAKE_TORCH="hang_in_synchronize")
    command = Command("hang", f"{TOOL} --timeout {HANG_TIMEOUT_S} (worker hangs in synchronize)",
                      [str(setup.installed), "--timeout", str(HANG_TIMEOUT_S)], env,
                      expect_exit=10, expect_text="TIMEOUT")
    for _ in range(runs):
        command.times.append(command.run())
    return command


def front_memory(setup: Setup, runs: int) -> dict[str, float]:
    """Median peak RSS in MB: the bare probe interpreter, the front installed, the zipapp."""
    peaks: dict[str, list[float]] = {"bare": [], "installed": [], "zipapp": []}
    for _ in range(runs):
        for key, where, mode in (("bare", "-", "bare"), ("installed", "-", "front"),
                                 ("zipapp", str(setup.pyz), "front")):
            peaks[key].append(_peak_rss_mb(setup.python, where, mode))
    return {key: statistics.median(values) for key, values in peaks.items()}


def _peak_rss_mb(python: Path, where: str, mode: str, *more: str, expect_exit: int = 0) -> float:
    return _peaks_mb(python, where, mode, *more, expect_exit=expect_exit)[0]


def _peaks_mb(python: Path, where: str, mode: str, *more: str,
              expect_exit: int = 0) -> tuple[float, float]:
    """The peak resident memory of the front (in-process), and of its largest child."""
    completed = subprocess.run([str(python), "-c", MEMORY_PROBE, where, mode, *more],
                               env=base_env(), capture_output=True, text=True,
                               timeout=RUN_LIMIT_S, stdin=subprocess.DEVNULL, check=False)
    match = re.search(r"^KD-BENCH-RSS (\{.*\})$", completed.stderr, re.MULTILINE)
    if match is None:
        raise BenchmarkError(f"memory probe ({mode}) failed:\n{completed.stderr[-2000:]}")
    result = json.loads(match.group(1))
    if mode != "bare" and result["exit"] != expect_exit:
        raise BenchmarkError(f"memory probe: the front exited {result['exit']}:\n"
                             f"{completed.stdout[-1000:]}")
    return (float(result["peak_kib"]) * 1024 / 1e6,
            float(result.get("children_peak_kib", 0)) * 1024 / 1e6)


def trial_overhead(setup: Setup, smoke: bool) -> dict[str, float]:
    """The trial toolkit's costs inside a program and their anchors (see TRIAL_PROBE)."""
    share, rounds = (10, 1) if smoke else (1, 7)
    sizes = [TRIAL_CALLS // share, rounds, TRIAL_EVENT_CALLS // share, LEDGER_RECORDS // share]
    completed = subprocess.run([str(setup.python), str(TRIAL_PROBE), *map(str, sizes)],
                               env=base_env(), capture_output=True, text=True,
                               timeout=RUN_LIMIT_S * 5, stdin=subprocess.DEVNULL, check=False)
    match = re.search(r"^KD-BENCH-TRIAL (\{.*\})$", completed.stderr, re.MULTILINE)
    if match is None:
        raise BenchmarkError(f"trial probe failed:\n{completed.stderr[-2000:]}")
    found: dict[str, float] = json.loads(match.group(1))
    return found


@dataclass
class ImportCost:
    """One import the front makes itself, with what it pulled in."""

    name: str
    cumulative_ms: float
    nested: int


@dataclass
class Imports:
    costs: list[ImportCost]
    modules: int
    total_ms: float


def import_times(setup: Setup, runs: int) -> Imports:
    """The front's own imports during a check (not the bare interpreter's), fastest of ``runs``."""
    baseline = {name for name, _, _ in _importtime([str(setup.python), "-X", "importtime", "-c",
                                                    "pass"])}
    best: Imports | None = None
    for _ in range(runs):
        rows = [row for row in _importtime([str(setup.python), "-X", "importtime",
                                            str(setup.installed), "--device", "cpu"])
                if row[0] not in baseline]
        costs: list[ImportCost] = []
        nested = 0
        # importtime prints a module when its import ends: the rows it nested come before it.
        for name, level, cumulative_us in rows:
            if level == 0:
                costs.append(ImportCost(name, cumulative_us / 1000, nested))
                nested = 0
            else:
                nested += 1
        found = Imports(sorted(costs, key=lambda cost: -cost.cumulative_ms), len(rows),
                        sum(cost.cumulative_ms for cost in costs))
        if best is None or found.total_ms < best.total_ms:
            best = found
    if best is None:
        raise BenchmarkError("no import-time run")
    return best


def _importtime(argv: list[str]) -> list[tuple[str, int, int]]:
    """(module, nesting level, cumulative microseconds) for each import ``-X importtime`` lists."""
    completed = subprocess.run(argv, env=base_env(), capture_output=True, text=True,
                               timeout=RUN_LIMIT_S, stdin=subprocess.DEVNULL, check=False)
    rows = []
    for line in completed.stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( +)(\S+)$", line)
        if match:
            rows.append((match.group(3), (len(match.group(2)) - 1) // 2, int(match.group(1))))
    if not rows:
        raise BenchmarkError(f"no import times from {argv[1:]}:\n{completed.stderr[-1000:]}")
    return rows


# -- summarize on a fleet of reports (row 12b) ----------------------------------------------------

@dataclass
class Fleet:
    """``summarize`` timed on the large fleet, and its peak memory on both fleets, for this
    checkout (``this``) and, with --baseline, the baseline's (``baseline``)."""

    sizes: tuple[int, int]  # the small fleet, the large one
    commands: dict[str, Command]
    peaks_mb: dict[str, tuple[float, float]]
    child_peak_mb: dict[str, float]  # on the large fleet: the largest part's child (forked.py)


def make_fleet(folder: Path, count: int) -> Path:
    """``count`` reports, copies in turn of those recorded from real runs (tests/snapshots: a
    pass, an out-of-memory, a GPU unavailable, torch missing), FLEET_PER_FOLDER per subfolder."""
    templates = [path.read_bytes() for path in sorted((ROOT / "tests" / "snapshots")
                                                      .glob("*.json"))]
    for index in range(count):
        rack = folder / f"rack-{index // FLEET_PER_FOLDER:03d}"
        if index % FLEET_PER_FOLDER == 0:
            rack.mkdir(parents=True)
        (rack / f"node-{index:05d}.json").write_bytes(templates[index % len(templates)])
    return folder


def summarize_fleet(setups: Mapping[str, Setup], settings: Settings, work: Path) -> Fleet:
    """Each setup's summarize on the large fleet, alternated round by round, then its peak
    resident memory on the small and the large fleet (the front in-process, VmHWM)."""
    large = FLEET_REPORTS // (10 if settings.mode == "smoke" else 1)
    sizes = (large // 10, large)
    folders = [make_fleet(work / f"fleet-{size}", size) for size in sizes]
    commands = {name: Command(f"summarize_{name}",
                              f"{TOOL} summarize ({large} reports, text)"
                              + (" (--baseline)" if name == "baseline" else ""),
                              [str(setup.installed), "summarize", str(folders[1])], base_env(),
                              expect_exit=SUMMARY_SOME_FAILED, expect_text=f"{large} file(s)")
                for name, setup in setups.items()}
    alternate(list(commands.values()), settings)
    # Exit 1: some reports of the fleet failed, as they should.
    peaks, child_peaks = {}, {}
    for name, setup in setups.items():
        small = _peak_rss_mb(setup.python, "-", "summarize", str(folders[0]),
                             expect_exit=SUMMARY_SOME_FAILED)
        large_peak, child_peaks[name] = _peaks_mb(setup.python, "-", "summarize", str(folders[1]),
                                                  expect_exit=SUMMARY_SOME_FAILED)
        peaks[name] = (small, large_peak)
    return Fleet(sizes, commands, peaks, child_peaks)


def fleet_rows(fleet: Fleet) -> list[Row]:
    """Row 12b: the time on the large fleet (<= 1.5 s), and the memory's growth per report
    between the two fleets (a row and a name per report at most, never the report)."""
    mine = fleet.commands["this"]
    base = fleet.commands.get("baseline")
    small, large = fleet.sizes
    found = [Row("12b", f"`{mine.label}`", _s(mine.median),
                 f"`--baseline` {_s(base.median)}" if base else "-",
                 f"ratio {mine.median / base.median:.3f}" if base else "-",
                 f"<= {TARGETS['summarize_s']:.1f} s", mine.median <= TARGETS["summarize_s"])]
    for name in ("this", "baseline"):
        if name not in fleet.peaks_mb:
            continue
        low, high = fleet.peaks_mb[name]
        per_report = (high - low) * 1e6 / 1024 / (large - small)
        child = fleet.child_peak_mb.get(name, 0.0)
        found.append(Row("12b", f"summarize peak RSS{' (--baseline)' if name != 'this' else ''}"
                                f", {large} reports", f"{high:.1f} MB"
                         + (f" (largest child {child:.1f} MB)" if child else ""),
                         f"{small} reports {low:.1f} MB",
                         f"+{per_report:.2f} KiB per report",
                         f"<= {TARGETS['summarize_kib_per_report']:.1f} KiB per report",
                         per_report <= TARGETS["summarize_kib_per_report"]
                         if name == "this" else None))
    return found


# -- the machine ----------------------------------------------------------------------------------

def machine(setup: Setup, project: Path) -> list[tuple[str, str]]:
    versions = _quiet([str(setup.python), "-c",
                       "import platform; from importlib.metadata import version; "
                       "print(platform.python_version(), platform.python_implementation(), "
                       "version('torch'))"], "version query").split()
    return [
        ("date", datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("CPU", f"{_cpu_model()}, {os.cpu_count()} logical cores"),
        ("memory", _memory()),
        ("system", platform.platform()),
        ("Python", f"{versions[0]} ({versions[1]}), in a venv"),
        ("torch", f"{versions[2]} (the torch-cpu environment of tests/envs.py)"),
        ("tool", _tool_revision(project)),
    ]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def _tool_revision(project: Path) -> str:
    from_init = re.search(r'__version__ = "([^"]+)"',
                          (project / "src" / "kernodeck_diagnostic" / "__init__.py").read_text())
    version = from_init.group(1) if from_init else "unknown"
    git = shutil.which("git")
    if git is None:
        return version
    try:
        head = subprocess.run([git, "rev-parse", "--short", "HEAD"], cwd=project,
                              capture_output=True, text=True, timeout=30,
                              check=True).stdout.strip()
        dirty = subprocess.run([git, "status", "--porcelain", "--", "src"], cwd=project,
                               capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return version
    return f"{version}, commit {head}" + (" with uncommitted changes in src/" if dirty else "")


# -- the table ------------------------------------------------------------------------------------

@dataclass
class Row:
    number: str
    measurement: str
    value: str
    reference: str
    result: str
    target: str
    met: bool | None  # None: no target (information), not measured, or not decided
    # False: the run cannot tell (the target lies within the measurement's interval)
    decided: bool = True

    @property
    def verdict(self) -> str:
        if not self.decided:
            return "**undecided**"
        return {True: "met", False: "**missed**", None: "-"}[self.met]


def rows(by_key: Mapping[str, Command], hang: Command, memory: Mapping[str, float],
         imports: Imports, trial: Mapping[str, float]) -> list[Row]:
    tool, bare, zipapp = by_key["tool"], by_key["bare"], by_key["zipapp"]
    found = floor_rows(by_key) + double_rows(by_key)
    found += [Row("1", f"`{tool.label}`", _s(tool.median),
                 f"`{bare.label}` {_s(bare.median)}", f"ratio {tool.median / bare.median:.3f}",
                 f"<= {TARGETS['tool_vs_bare']:.2f}",
                 tool.median / bare.median <= TARGETS["tool_vs_bare"])]
    collect_env = by_key.get("collect_env")
    if collect_env is not None:
        ratio = tool.median / collect_env.median
        found.append(Row("2", f"`{tool.label}`", _s(tool.median),
                         f"`{collect_env.label}` {_s(collect_env.median)}", f"ratio {ratio:.3f}",
                         f"<= {TARGETS['tool_vs_collect_env']:.2f}",
                         ratio <= TARGETS["tool_vs_collect_env"]))
    else:
        found.append(Row("2", f"`{tool.label}`", _s(tool.median), "collect_env not run (--smoke)",
                         "-", f"<= {TARGETS['tool_vs_collect_env']:.2f}", None))
    ratio = zipapp.median / tool.median
    found.append(Row("3", f"`{zipapp.label}`", _s(zipapp.median),
                     f"installed `{tool.label}` {_s(tool.median)}", f"ratio {ratio:.3f}",
                     f"<= {TARGETS['zipapp_vs_installed']:.2f}",
                     ratio <= TARGETS["zipapp_vs_installed"]))
    for key, label in (("installed", "front peak RSS, installed"),
                       ("zipapp", "front peak RSS, zipapp")):
        found.append(Row("4", label, f"{memory[key]:.1f} MB",
                         f"bare interpreter {memory['bare']:.1f} MB",
                         f"+{memory[key] - memory['bare']:.1f} MB",
                         f"<= {TARGETS['front_rss_mb']:.0f} MB",
                         memory[key] <= TARGETS["front_rss_mb"]))
    for key, delay in (("host_none", 0.0), ("host_slow", FAKE_SMI_DELAY_S)):
        command = by_key[key]
        # Paired: each round ran both, so the load of the moment cancels out.
        growth = statistics.median(a - b for a, b in zip(command.times, tool.times))
        allowed = max(0.0, delay - tool.median) + TARGETS["host_margin_s"]
        found.append(Row("5", f"`{command.label}`", _s(command.median),
                         f"without --host-check {_s(tool.median)}",
                         f"{growth:+.3f} s (paired)",
                         f"<= +{allowed:.3f} s", growth <= allowed))
    gaps = by_key["host_slow"].probe_gaps
    if gaps:
        before = statistics.median(gap[0] for gap in gaps) * 1000
        after = statistics.median(gap[1] for gap in gaps) * 1000
        # With a probe slower than the check, the wall time is: the front until it starts the
        # probe, the probe, the front after the answer. The row above allows 0.1 s for both.
        found.append(Row("5", "front time around the slow probe (timestamped by the fake)",
                         f"{before:.0f} ms + {after:.0f} ms",
                         "launch to probe start + probe answer to exit",
                         f"{before + after:.0f} ms",
                         f"<= {TARGETS['host_margin_s'] * 1000:.0f} ms for the row above",
                         None))
    limit = HANG_TIMEOUT_S + TARGETS["timeout_margin_s"]
    found.append(Row("6", f"`{hang.label}`", _s(hang.median), f"--timeout {HANG_TIMEOUT_S} s",
                     f"+{hang.median - HANG_TIMEOUT_S:.3f} s", f"<= {limit:.1f} s",
                     hang.median <= limit))
    found.append(Row("7", "front imports (`-X importtime`, beyond the bare interpreter's)",
                     f"{imports.modules} modules", "see the import list",
                     f"{imports.total_ms:.1f} ms", "information", None))
    found += trial_rows(trial)
    fake, fake_bare = by_key["tool_fake"], by_key["bare_fake"]
    found.append(Row("+", "tool overhead with a fake torch that imports instantly",
                     _s(fake.median), f"bare {_s(fake_bare.median)}",
                     f"+{(fake.median - fake_bare.median) * 1000:.0f} ms", "information", None))
    every, one = by_key["all_gpus"], by_key["one_gpu"]
    ratio = every.median / one.median
    found.append(Row("12a", f"`{every.label}`", _s(every.median), f"`{one.label}` {_s(one.median)}",
                     f"ratio {ratio:.3f}", f"<= {TARGETS['all_devices_vs_one']:.2f}",
                     ratio <= TARGETS["all_devices_vs_one"]))
    return found


def paired_ratio(command: Command, other: Command) -> float:
    """The median of the per-round ratios: both ran in the same round, one after the other, so
    the load of the moment, which moves a 1.5 s command by ±100 ms on a shared machine, weighs
    on both (the ratio of the medians compares two distributions that it shifts apart)."""
    return statistics.median(a / b for a, b in zip(command.times, other.times))


def median_interval(values: Sequence[float],
                    confidence: float = 0.95) -> tuple[float, float] | None:
    """A distribution-free confidence interval for the median of what ``values`` sample: the
    k-th smallest and the k-th largest value, with the largest k whose coverage is at least
    ``confidence`` (the sign test's interval: the median lies below the k-th smallest of n values
    with probability P(X <= k - 1), X ~ Binomial(n, 1/2)). None with too few values (fewer than
    6 for 95 %). For 20 values: the 6th smallest and the 6th largest (coverage 95.9 %)."""
    ordered = sorted(values)
    n = len(ordered)
    k, below = 0, 0.0
    for rank in range(1, n // 2 + 1):
        below += math.comb(n, rank - 1) / 2**n  # P(X <= rank - 1)
        if 1 - 2 * below < confidence:
            break
        k = rank
    return (ordered[k - 1], ordered[n - k]) if k else None


def judged(interval: tuple[float, float] | None, limit: float) -> bool | None:
    """Met (True) when all of ``interval`` is within ``limit``, missed (False) when all of it is
    above, None when this run cannot tell (``limit`` inside it, or no interval at all)."""
    if interval is None:
        return None
    low, high = interval
    if high <= limit:
        return True
    return False if low > limit else None


def floor_rows(by_key: Mapping[str, Command]) -> list[Row]:
    """The check and the zipapp against the floor (issue 28), judged on the paired ratio (the
    median of the per-round ratios) and its 95 % interval (``median_interval``): met when the
    whole interval is within the target, missed when all of it is above, undecided otherwise
    (this run cannot tell: more rounds, or a quieter machine, may). Shown with the median of the
    per-round differences and the ratio of the medians."""
    floor = by_key["floor"]
    found = []
    for number, key, target in (("1f", "tool", "tool_vs_floor"),
                                ("3f", "zipapp", "zipapp_vs_floor")):
        command = by_key[key]
        ratio = paired_ratio(command, floor)
        interval = median_interval([a / b for a, b in zip(command.times, floor.times)])
        paired = statistics.median(a - b for a, b in zip(command.times, floor.times))
        limit = TARGETS[target]
        shown = (f"95 % interval {interval[0]:.3f}-{interval[1]:.3f}" if interval is not None
                 else "too few rounds for an interval")
        met = judged(interval, limit)
        found.append(Row(number, f"`{command.label}` / floor", _s(command.median),
                         f"`{floor.label}` {_s(floor.median)}",
                         f"paired ratio {ratio:.3f} ({shown}; {paired * 1000:+.0f} ms paired; "
                         f"ratio of the medians {command.median / floor.median:.3f})",
                         f"<= {limit:.2f}", met, decided=met is not None))
    return found


def double_rows(by_key: Mapping[str, Command]) -> list[Row]:
    """Rows 1d and 3d: the tool's own time, measured with torch's double (DOUBLE_IMPORT_S), as a
    ratio against the real floor of the same run. Each round's difference between the check and
    the floor, both with the double, is the time the tool adds; its median and 95 % interval
    (``median_interval``), divided by the real floor's median, give the ratio the target is
    judged on, as rows 1f and 3f are (met, missed or undecided by the whole interval). What the
    real import adds to both sides cancels out here instead of adding its noise; the real
    floor's median is taken as it is (its own spread moves the ratio by a few thousandths)."""
    floor, real_floor = by_key["floor_double"], by_key["floor"]
    found = []
    for number, key, target in (("1d", "tool_double", "tool_vs_floor"),
                                ("3d", "zipapp_double", "zipapp_vs_floor")):
        command = by_key[key]
        differences = [a - b for a, b in zip(command.times, floor.times)]
        added = statistics.median(differences)
        interval = median_interval(differences)
        limit = TARGETS[target]
        ratios: tuple[float, float] | None = None
        shown = "too few rounds for an interval"
        if interval is not None:
            ratios = (1 + interval[0] / real_floor.median, 1 + interval[1] / real_floor.median)
            shown = (f"95 % interval {interval[0] * 1000:+.0f} to {interval[1] * 1000:+.0f} ms, "
                     f"ratio {ratios[0]:.3f}-{ratios[1]:.3f}")
        met = judged(ratios, limit)
        found.append(Row(number, f"`{command.label}`, its own time / the floor",
                         f"{_s(command.median)} in all",
                         f"`{floor.label}` {_s(floor.median)}; the floor with the real torch "
                         f"{_s(real_floor.median)}",
                         f"{added * 1000:+.0f} ms paired ({shown}): ratio "
                         f"{1 + added / real_floor.median:.3f} against the real floor",
                         f"<= {limit:.2f}", met, decided=met is not None))
    return found


def trial_rows(trial: Mapping[str, float]) -> list[Row]:
    """Rows 8 to 10: the trial toolkit and the ledger in a program, against their anchors."""
    ratio = trial["stage_vs_record_function"]
    found = [Row("8", "`with trial.stage(...)` in a program (no sync, CPU, torch imported)",
                 f"{trial['stage_us']:.1f} µs per call",
                 f"`torch.profiler.record_function` {trial['record_function_us']:.1f} µs; bare "
                 f"`with` {trial['bare_us']:.2f} µs",
                 f"ratio {ratio:.3f} (paired; fastest round {trial['stage_min_us']:.1f} µs; CPU "
                 f"time of the program's thread {trial['stage_cpu_us']:.1f} µs)",
                 f"< {TARGETS['stage_vs_record_function']:.2f}",
                 ratio < TARGETS["stage_vs_record_function"])]
    steps = trial["step_vs_two_record_functions"]
    found.append(Row("8", "a step: a pass of `trial.passes(n)` with a stage in it (no sync, CPU)",
                     f"{trial['step_us']:.1f} µs per step",
                     f"two `torch.profiler.record_function` ranges "
                     f"{trial['two_record_functions_us']:.1f} µs", f"ratio {steps:.3f} (paired)",
                     f"< {TARGETS['step_vs_two_record_functions']:.2f}",
                     steps < TARGETS["step_vs_two_record_functions"]))
    per_million = trial["events_bytes"] / trial["events_calls"]  # MB per million: bytes per call
    found.append(Row("8", f"events.jsonl after {trial['events_calls']:,.0f} stage calls of 3 "
                     "names", f"{trial['events_bytes'] / 1e6:.3f} MB", "the calls",
                     f"{per_million:.3f} MB per million calls",
                     f"< {TARGETS['events_mb_per_million']:.0f} MB per million",
                     per_million < TARGETS["events_mb_per_million"]))
    found.append(Row("9", "one event written to events.jsonl (JSON, write, flush)",
                     f"{trial['write_us']:.1f} µs", "its fsync, in the helper thread",
                     f"{trial['fsync_us']:.1f} µs (fastest write round "
                     f"{trial['write_min_us']:.1f} µs)", "information", None))
    for anchor, label, target in (
            ("bare_write", "write + flush of the same line", "ledger_vs_write"),
            ("sqlite_wal", "SQLite WAL, synchronous=NORMAL, a commit per record",
             "ledger_vs_sqlite")):
        ratio = trial[f"ledger_group_vs_{anchor}"]
        found.append(Row("10", "`OutputLedger.append`, group commit (256 floats; its syncs in "
                         f"the helper thread, the final close {trial['ledger_group_close_ms']:.1f}"
                         f" ms per {trial['ledger_records']:,.0f} records)",
                         f"{trial['ledger_group_us']:.1f} µs per record",
                         f"{label} {trial[f'{anchor}_us']:.1f} µs", f"ratio {ratio:.3f} (paired)",
                         f"{'<=' if target == 'ledger_vs_write' else '<'} "
                         f"{TARGETS[target]:.2f}",
                         ratio <= TARGETS[target] if target == "ledger_vs_write"
                         else ratio < TARGETS[target]))
    found.append(Row("10", "`OutputLedger.append`, durability=\"record\" (an fsync each)",
                     f"{trial['ledger_record_us']:.1f} µs per record",
                     f"write + flush + fsync {trial['fsync_write_us']:.1f} µs",
                     f"ratio {trial['ledger_record_vs_fsync_write']:.3f} (paired)",
                     "information", None))
    return found


def _s(seconds: float) -> str:
    return f"{seconds:.3f} s"


def render(facts: list[tuple[str, str]], settings: Settings, table: list[Row], *,
           found: Sequence[Command], hang: Command, imports: Imports) -> str:
    lines = [f"## Results ({settings.mode}: {settings.runs} alternated runs per command after "
             f"{settings.warmups} warm-up round(s); medians)", ""]
    lines += [f"- {name}: {value}" for name, value in facts]
    lines += ["", "| # | measurement | median | compared with | ratio / growth | target | |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {r.number} | {r.measurement} | {r.value} | {r.reference} | {r.result} | "
              f"{r.target} | {r.verdict} |" for r in table]
    lines += ["", "| command | median | min-max (s) | runs |", "|---|---|---|---|"]
    lines += [f"| `{c.label}` | {_s(c.median)} | {c.spread()} | {len(c.times)} |"
              for c in [*found, hang]]
    lines += ["", f"Front imports during `{TOOL} --device cpu` (top level, cumulative, as "
                  "`-X importtime` reports them; nested: modules each one pulled in):", "",
              "| module | cumulative | nested |", "|---|---|---|"]
    lines += [f"| `{c.name}` | {c.cumulative_ms:.1f} ms | {c.nested} |" for c in imports.costs]
    missed = [r for r in table if r.met is False]
    undecided = [r for r in table if not r.decided]
    lines += ["", "All targets met." if not missed and not undecided else
              "Targets missed: " + (", ".join(f"#{r.number} {r.measurement}" for r in missed)
                                    or "none")]
    if undecided:
        lines.append("Not decided by this run (the target lies within the interval, or too few "
                     "rounds for one): "
                     + ", ".join(f"#{r.number} {r.measurement}" for r in undecided))
    return "\n".join(lines) + "\n"


def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# -- main -----------------------------------------------------------------------------------------

def settings_from(args: argparse.Namespace) -> Settings:
    if args.smoke:
        return Settings(runs=1, warmups=0, hang_runs=1, memory_runs=1, importtime_runs=1,
                        collect_env=False, mode="smoke")
    if args.quick:
        return Settings(runs=args.runs or 2, warmups=1, hang_runs=1, memory_runs=1,
                        importtime_runs=1, collect_env=True, mode="quick")
    return Settings(runs=args.runs or 15, warmups=1, hang_runs=3, memory_runs=3,
                    importtime_runs=3, collect_env=True, mode="full")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=None,
                        help="measured runs per command (default 15; 2 with --quick)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="fewer runs: about a minute")
    group.add_argument("--smoke", action="store_true",
                       help="one run each, no collect_env: proves the script works, measures "
                            "nothing reliably")
    parser.add_argument("--source", type=Path, default=ROOT, metavar="DIR",
                        help="the project checkout to measure (default: this one), e.g. a copy "
                             "before a change, to compare before and after")
    parser.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                        help="another checkout (e.g. `git archive HEAD` unpacked) whose check is "
                             "alternated with this one's in the same rounds, for a before/after "
                             "table measured in one run")
    args = parser.parse_args(argv)
    settings = settings_from(args)
    if settings.runs < 1:
        parser.error("--runs must be at least 1")
    adopt_orphans()
    envs = load_envs()
    _log("torch environment: tests/envs.py torch-cpu (built on first use)")
    torch_env = Path(envs.torch_cpu())
    work = Path(tempfile.mkdtemp(prefix="bench-", dir=envs.cache_root()))
    try:
        _log("installing the tool into a hard-linked copy, building the zipapp")
        setup = prepare(work, torch_env, args.source.resolve())
        found = commands(setup, settings)
        setups = {"this": setup}
        if args.baseline is not None:
            _log("installing the --baseline checkout into another hard-linked copy")
            (work / "baseline").mkdir()
            setups["baseline"] = prepare(work / "baseline", torch_env, args.baseline.resolve())
            found[3:3] = baseline_commands(setups["baseline"])  # beside the check's trio
        alternate(found, settings)
        _log("timeout latency")
        hang = timeout_latency(setup, settings.hang_runs)
        _log("front memory")
        memory = front_memory(setup, settings.memory_runs)
        _log("import times")
        imports = import_times(setup, settings.importtime_runs)
        _log("trial toolkit overhead")
        trial = trial_overhead(setup, smoke=settings.mode == "smoke")
        _log("summarize on a fleet of reports")
        fleet = summarize_fleet(setups, settings, work)
        facts = machine(setup, args.source.resolve())
    except BenchmarkError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(work, ignore_errors=True)
    by_key = {command.key: command for command in found}
    print(render(facts, settings, rows(by_key, hang, memory, imports, trial) + fleet_rows(fleet),
                 found=[*found, *fleet.commands.values()], hang=hang, imports=imports), end="")
    if "baseline" in by_key:
        print(baseline_table(by_key), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
