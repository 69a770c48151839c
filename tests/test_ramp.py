"""``kernodeck-diagnostic ramp`` run as a user runs it (the zipapp), over real applications.

The main application is a real CPU torch program whose memory need grows with the batch and which
lowers its own address-space limit (``RLIMIT_AS``) so that PyTorch's allocator really refuses past
a threshold. Others are plain Python programs that really crash (SIGABRT), kill themselves
(SIGKILL), hang, or send Ctrl-C to the ramp during an attempt. Each application appends the value
it was started with to a log: what ran, and how often, is read from there, not from the tool.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import envs
from conftest import ROOT, Result, clean_env, run_tool
from kernodeck_diagnostic.package_data import read
from kernodeck_diagnostic.ramp.outcome import FAILURES, OUTCOMES, classify
from kernodeck_diagnostic.ramp.plan import explore
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.supervision.application import Ending

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and RLIMIT_AS")

# 32 MiB per unit of batch, under a limit of the address space after `import torch` plus 600 MiB:
# a real allocation failure somewhere near batch 18.
TORCH_APP = """
import os, resource, sys
import torch
batch = int(sys.argv[sys.argv.index("--batch") + 1])
with open(os.environ["APP_LOG"], "a") as log:
    log.write(f"{batch}\\n")
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
limit = size + 600 * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
x = torch.ones(batch, 8 * 2**20)
print(float(x.sum()))
"""

# A plain Python application: what it does at each value is chosen by APP_MODE from APP_FROM on.
PLAIN_APP = """
import os, signal, sys
value = int(os.environ["KERNODECK_AXIS_VALUE"])
assert sys.argv[1] == f"--n={value}", sys.argv
assert os.environ["KERNODECK_AXIS_NAME"] == "n"
assert os.path.isdir(os.environ["KERNODECK_RUN_DIR"])  # where a Trial would put its folder
with open(os.environ["APP_LOG"], "a") as log:
    log.write(f"{value}\\n")
mode = os.environ["APP_MODE"] if value >= int(os.environ["APP_FROM"]) else "pass"
if mode == "abort":
    os.abort()
elif mode == "sigkill":
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "hang":
    signal.pause()
elif mode == "exit3":
    sys.exit(3)
elif mode == "exit3_once" and value == int(os.environ["APP_FROM"]):
    sys.exit(3)  # this value only: the values above it pass
elif mode == "interrupt_once" and os.path.exists(os.environ["APP_MARKER"]):
    os.remove(os.environ["APP_MARKER"])
    os.kill(os.getppid(), signal.SIGINT)  # the user's Ctrl-C reaches the ramp mid-attempt
    signal.pause()  # still working when the ramp stops it
"""


def _ramp(front: Path | str, pyz: Path, out: Path, command: list[str], *options: str,
          env: dict[str, str] | None = None) -> Result:
    return run_tool(front, pyz, ["ramp", "--out", str(out), *options, "--", *command],
                    env=clean_env({"LC_ALL": "C.UTF-8", **(env or {})}))


def _calls(log: Path) -> list[int]:
    return [int(value) for value in log.read_text().split()] if log.exists() else []


def _record(out: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "ramp.json").read_text(encoding="utf-8"))
    return document


def _valid(document: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(read("ramp", "schema", "ramp-v1.json"))
    jsonschema.validate(document, schema)


def _bound(start: int, stop: int, gap: int) -> int:
    return math.ceil(math.log2(stop / start)) + math.ceil(math.log2(gap)) + 2  # one above


# -- the limit, found for real ---------------------------------------------------------------------

@pytest.mark.slow
@posix_only
def test_a_real_allocation_failure_is_found_bisected_and_recorded(
        pyz: Path, tmp_path: Path, cpu_torch_python: Path, notorch_python: Path) -> None:
    app, log, out = tmp_path / "app.py", tmp_path / "calls.log", tmp_path / "ramp-batch"
    app.write_text(TORCH_APP)
    start, stop = 4, 64
    # The front in a Python without matplotlib: the plot is really not possible there.
    result = _ramp(notorch_python, pyz, out,
                   [str(cpu_torch_python), str(app), "--batch", "{batch}"],
                   "--axis", "batch", "--start", str(start), "--stop", str(stop), "--bisect",
                   env={"APP_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    document = _record(out)
    _valid(document)
    attempts = document["attempts"]
    values = [item["value"] for item in attempts]
    assert values == _calls(log)  # each value ran once, in the order recorded
    assert len(set(values)) == len(values)
    first, last = document["first_failing"], document["last_passing_value"]
    assert first["outcome"] == "out_of_memory"
    assert first["value"] == last + 1  # bisected down to integer resolution
    failed = next(item for item in attempts if item["value"] == first["value"])
    assert failed["oom"]["source"] == "error_text"
    assert failed["oom"]["requested_bytes"] == first["value"] * 32 * 2**20
    assert "can't allocate memory" in failed["error"]
    passed = next(item for item in attempts if item["value"] == last)
    assert passed["peak_memory_bytes"] > last * 32 * 2**20  # the process's own peak
    # The attempt-count bound: growth to the first failure, then the bisection of the gap.
    growth_failure = next(index for index, item in enumerate(attempts)
                          if item["outcome"] != "passed")
    gap = attempts[growth_failure]["value"] - attempts[growth_failure - 1]["value"]
    assert len(attempts) <= _bound(start, stop, gap), values
    # One progress line per attempt, the table, the range, and the plot's absence said.
    progress = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == len(attempts)
    assert progress[0] == (f"[1] batch={start}: passed in {attempts[0]['duration_s']:.2f} s, "
                           f"peak memory {_mib(attempts[0]['peak_memory_bytes'])}")
    passed_values = ", ".join(str(item["value"]) for item in sorted(
        attempts, key=lambda item: item["value"]) if item["outcome"] == "passed")
    assert (f"batch: {passed_values} passed (values between were not tried); last pass {last}, "
            f"first failure {first['value']} (out_of_memory)") in result.stdout
    assert ("no plot: matplotlib is not installed in the Python that runs this command (install "
            "it there: python -m pip install matplotlib, with that Python)") in result.stderr
    assert not (out / "ramp.png").exists()
    table = (out / "ramp.md").read_text(encoding="utf-8")
    assert "| batch | outcome | duration | peak memory | detail |" in table
    assert f"| {first['value']} | out_of_memory |" in table
    assert str(tmp_path) not in json.dumps(document)  # no path of this machine

    # The same command, the same --out, from a Python with matplotlib: nothing reruns, the plot
    # is drawn.
    plot_python = envs.python_of(envs.plot())
    again = _ramp(plot_python, pyz, out,
                  [str(cpu_torch_python), str(app), "--batch", "{batch}"],
                  "--axis", "batch", "--start", str(start), "--stop", str(stop), "--bisect",
                  env={"APP_LOG": str(log)})
    assert again.returncode == 0, again.stderr
    assert _calls(log) == values
    assert f"resuming: {len(values)} attempt(s) already recorded" in again.stderr
    assert (out / "ramp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ramp.png" in again.stderr


def _mib(count: int) -> str:
    return f"{count / 2**20:.1f} MiB"


# -- stopped and resumed ---------------------------------------------------------------------------

@posix_only
def test_a_ramp_interrupted_after_three_attempts_resumes_without_repeating_any(
        pyz: Path, tmp_path: Path) -> None:
    app, log, out = tmp_path / "app.py", tmp_path / "calls.log", tmp_path / "ramp-n"
    marker = tmp_path / "interrupt-once"
    app.write_text(PLAIN_APP)
    marker.write_text("")
    command = [sys.executable, str(app), "--n={n}"]
    env = {"APP_LOG": str(log), "APP_MODE": "interrupt_once", "APP_FROM": "8",
           "APP_MARKER": str(marker)}
    options = ("--axis", "n", "--start", "1", "--stop", "32")
    first = _ramp(sys.executable, pyz, out, command, *options, env=env)
    assert first.returncode == 130, first.stderr
    assert first.stderr.splitlines()[-1] == (
        "kernodeck-diagnostic ramp: interrupted by SIGINT; the running attempt was stopped, "
        "ramp.json kept: run the same command again to resume.")
    stopped = _record(out)
    assert stopped["status"] == "interrupted"
    assert [item["value"] for item in stopped["attempts"]] == [1, 2, 4]
    assert _calls(log) == [1, 2, 4, 8]

    second = _ramp(sys.executable, pyz, out, command, *options, env=env)
    assert second.returncode == 0, second.stderr
    assert "resuming: 3 attempt(s) already recorded in ramp.json are not rerun" in second.stderr
    # 8 ran again (its attempt never ended); no completed attempt ran twice.
    assert _calls(log) == [1, 2, 4, 8, 8, 16, 32]
    done = _record(out)
    assert done["status"] == "complete"
    assert [item["value"] for item in done["attempts"]] == [1, 2, 4, 8, 16, 32]
    assert ("n: 1, 2, 4, 8, 16, 32 passed (values between were not tried); no failure up to 32 "
            "(no limit found)") in second.stdout
    # The stopped attempt's files are kept aside; it was stopped as Ctrl-C stops a program.
    stopped_err = (out / "n-8.interrupted-1" / "stderr.txt").read_text()
    assert "KeyboardInterrupt" in stopped_err, stopped_err
    _valid(done)


# -- how an attempt ended --------------------------------------------------------------------------

@posix_only
@pytest.mark.parametrize(("mode", "outcome", "signal_name"), [
    ("abort", "crashed", "SIGABRT"),
    # SIGKILL with no sign of the kernel's OOM killer: a crash, never guessed to be memory.
    ("sigkill", "crashed", "SIGKILL"),
    ("hang", "timeout", None),
    ("exit3", "failed", None),
])
def test_each_way_an_attempt_ends_is_classified(pyz: Path, tmp_path: Path, mode: str,
                                                outcome: str, signal_name: str | None) -> None:
    app, log, out = tmp_path / "app.py", tmp_path / "calls.log", tmp_path / "ramp-n"
    app.write_text(PLAIN_APP)
    result = _ramp(sys.executable, pyz, out, [sys.executable, str(app), "--n={n}"],
                   "--axis", "n", "--start", "1", "--stop", "8", "--attempt-timeout", "3",
                   env={"APP_LOG": str(log), "APP_MODE": mode, "APP_FROM": "2"})
    assert result.returncode == 0, result.stderr
    document = _record(out)
    _valid(document)
    # 2 failed; 4, the value above it, was tried once: it failed too, so 2 is the limit.
    assert [(item["value"], item["outcome"]) for item in document["attempts"]] == [
        (1, "passed"), (2, outcome), (4, outcome)]
    failed = document["attempts"][1]
    assert failed["signal"] == signal_name
    assert failed["oom"] is None
    assert failed["exit_code"] == (3 if mode == "exit3" else None)
    assert document["first_failing"] == {"value": 2, "outcome": outcome, "phase": None,
                                         "signal": signal_name}
    if mode == "hang":
        assert 3 <= failed["duration_s"] < 8
    # The table says how: the signal's name, or the exit status.
    said = {"abort": "SIGABRT", "sigkill": "SIGKILL", "exit3": "exit 3"}.get(mode)
    if said is not None:
        row = next(line for line in result.stdout.splitlines() if line.startswith("2 "))
        assert row.split()[1] == outcome
        assert row.endswith(said), row
    assert _calls(log) == [1, 2, 4]


# -- the kernel's OOM killer, for real -------------------------------------------------------------

def _memory_cgroup() -> Path | None:
    """Where this test may create a memory cgroup (cgroup v1 memory or v2), else None."""
    for parent, limit in ((Path("/sys/fs/cgroup/memory"), "memory.limit_in_bytes"),
                          (Path("/sys/fs/cgroup/unified"), "memory.max"),
                          (Path("/sys/fs/cgroup"), "memory.max")):
        if (parent / limit).exists() or (parent / "cgroup.controllers").exists():
            return parent
    return None


@contextlib.contextmanager
def memory_limited(mib: int) -> Iterator[Path]:
    """A new memory cgroup limited to ``mib`` MiB (swap included); skips without root."""
    parent = _memory_cgroup()
    if sys.platform != "linux" or parent is None or os.geteuid() != 0:
        pytest.skip("needs Linux, root and a memory cgroup to create")
    group = parent / f"kd-ramp-oom-{os.getpid()}"
    try:
        group.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot create a memory cgroup: {exc}")
    try:
        for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.max",
                     "memory.swap.max"):
            if (group / name).exists():
                (group / name).write_text(str(mib * 2**20) if "swap" not in name else "0")
        yield group
    finally:
        _remove_cgroup(group)


def _remove_cgroup(group: Path, wait_s: float = 10.0) -> None:
    """Remove the cgroup once its processes have all ended with the ramp. A process the OOM
    killer ended may still be exiting (its memory being freed) when the ramp returns: the
    kernel refuses the removal (EBUSY) until it is gone, a moment later."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            group.rmdir()
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
        time.sleep(0.05)


def ramp_in(group: Path, pyz: Path, out: Path, command: list[str], *options: str,
            env: dict[str, str]) -> Result:
    """The ramp started inside ``group``: it joins the cgroup, then becomes the ramp, so the
    front and every attempt share the limit (as in a container with a memory limit)."""
    launcher = (f"import os, sys; open({str(group / 'cgroup.procs')!r}, 'w')"
                f".write(str(os.getpid())); os.execv(sys.executable, sys.argv)")
    return run_tool(sys.executable, ["-c", launcher, str(pyz)],
                    ["ramp", "--out", str(out), *options, "--", *command],
                    env=clean_env({"LC_ALL": "C.UTF-8", **env}))


def test_an_attempt_killed_by_the_oom_killer_is_out_of_memory(pyz: Path, tmp_path: Path) -> None:
    """The ramp and its application run in a cgroup limited to 200 MiB; the application fills
    memory until the kernel's OOM killer kills it (SIGKILL)."""
    app, log, out = tmp_path / "app.py", tmp_path / "calls.log", tmp_path / "ramp-mib"
    app.write_text(
        "import os, sys\n"
        "value = int(os.environ['KERNODECK_AXIS_VALUE'])\n"
        "open(os.environ['APP_LOG'], 'a').write(f'{value}\\n')\n"
        "block = bytearray(value * 2**20)  # zero-filled: every page really touched\n")
    with memory_limited(200) as group:
        result = ramp_in(group, pyz, out, [sys.executable, str(app)], "--axis", "mib",
                         "--start", "64", "--stop", "1024", "--value-from-env",
                         env={"APP_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    document = _record(out)
    _valid(document)
    first = document["first_failing"]
    failed = next(item for item in document["attempts"] if item["value"] == first["value"])
    assert first["outcome"] == "out_of_memory", failed
    assert failed["signal"] == "SIGKILL"
    assert failed["oom"]["oom_killer"] is True
    assert failed["oom"]["source"] == "kernel"
    assert "cgroup_oom_kill" in failed["oom"]["evidence"]
    assert "OOM killer" in (out / "ramp.md").read_text(encoding="utf-8")
    assert _calls(log) == [item["value"] for item in document["attempts"]]


# -- usage -----------------------------------------------------------------------------------------

def test_without_a_command_or_with_another_ramps_folder_it_is_a_usage_error(
        pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "ramp-n"
    missing = run_tool(sys.executable, pyz, ["ramp", "--axis", "n", "--start", "1", "--stop", "2"],
                       env=clean_env({"LC_ALL": "C.UTF-8"}))
    assert (missing.returncode, missing.stderr) == (
        2, "kernodeck-diagnostic ramp: error: give the application's command after -- "
           "(e.g. -- python app.py) (see --help)\n")
    app, log = tmp_path / "app.py", tmp_path / "calls.log"
    app.write_text(PLAIN_APP)
    env = {"APP_LOG": str(log), "APP_MODE": "pass", "APP_FROM": "1"}
    command = [sys.executable, str(app), "--n={n}"]
    assert _ramp(sys.executable, pyz, out, command, "--axis", "n", "--start", "1", "--stop", "2",
                 env=env).returncode == 0
    other = _ramp(sys.executable, pyz, out, command, "--axis", "n", "--start", "1", "--stop", "4",
                  env=env)
    assert other.returncode == 2
    assert "--out holds a ramp with other settings (stop)" in other.stderr
    assert _calls(log) == [1, 2]


# -- the plan, over every small case ---------------------------------------------------------------

@pytest.mark.parametrize("start", [1, 3, 8])
def test_the_bisection_bound_holds_and_no_value_is_tried_twice(start: int) -> None:
    """Every threshold between start and stop: at most ceil(log2(stop/start)) + 1 attempts of
    growth, one above the first failure and ceil(log2(gap)) of bisection, the limit found to the
    integer, no value twice."""
    stop = start * 64 + 5
    for threshold in range(start - 1, stop + 1):  # the largest value that passes
        tried: list[int] = []

        def passes(value: int, limit: int = threshold, seen: list[int] = tried) -> bool:
            seen.append(value)
            return value <= limit

        explore(start, stop, 2.0, True, passes)
        assert len(set(tried)) == len(tried), tried
        failures = [value for value in tried if value > threshold]
        if threshold < start:
            assert tried == [start, start * 2]  # and the value above the failure
            continue
        if not failures:
            assert tried[-1] == stop
            continue
        assert min(failures) == threshold + 1  # found to the integer
        growth_fail = next(index for index, value in enumerate(tried) if value > threshold)
        gap = tried[growth_fail] - tried[growth_fail - 1]
        assert len(tried) <= _bound(start, stop, gap), (threshold, tried)


def test_ramp_json_schema_ships_with_the_package() -> None:
    schema = json.loads(read("ramp", "schema", "ramp-v1.json"))
    assert schema["properties"]["format"] == {"const": "kernodeck-ramp"}


def test_the_schema_and_the_docs_name_the_outcomes_the_code_defines() -> None:
    # outcome.OUTCOMES is the one list: an attempt's outcome, the first failure's (any but
    # PASSED) and the docs' table of outcomes hold to it.
    schema = json.loads(read("ramp", "schema", "ramp-v1.json"))
    attempt = schema["$defs"]["attempt"]["properties"]
    assert tuple(attempt["outcome"]["enum"]) == OUTCOMES
    assert tuple(schema["$defs"]["failure"]["enum"]) == FAILURES
    doc = (ROOT / "docs" / "operating-range.md").read_text(encoding="utf-8")
    table = doc.split("| outcome | when |", 1)[1].split("\n\n", 1)[0]
    assert set(re.findall(r"^\| `([a-z_]+)`", table, re.MULTILINE)) == set(OUTCOMES)


# -- evidence: a placeholder never substituted, a program that never started -----------------------

def test_a_command_without_the_placeholder_is_refused_unless_the_value_comes_from_the_environment(
        pyz: Path, tmp_path: Path) -> None:
    """Before: every value ran with the literal text '{bach}', "no limit found", exit 0."""
    app, log, out = tmp_path / "app.py", tmp_path / "calls.log", tmp_path / "ramp-batch"
    app.write_text("import os, sys\n"
                   "open(os.environ['APP_LOG'], 'a').write(os.environ['KERNODECK_AXIS_VALUE']"
                   " + '\\n')\n")
    env = {"APP_LOG": str(log)}
    typo = _ramp(sys.executable, pyz, out, [sys.executable, str(app), "{bach}"],
                 "--axis", "batch", "--start", "1", "--stop", "4", env=env)
    assert (typo.returncode, typo.stdout) == (2, "")
    assert typo.stderr == (
        "kernodeck-diagnostic ramp: error: the command never says {batch}, so every attempt "
        "would run the same command (it has {bach}); put {batch} where the value goes, or "
        "give --value-from-env if the program reads KERNODECK_AXIS_VALUE (see --help)\n")
    assert _calls(log) == []
    assert not out.exists()
    from_env = _ramp(sys.executable, pyz, out, [sys.executable, str(app)], "--axis", "batch",
                     "--start", "1", "--stop", "4", "--value-from-env", env=env)
    assert from_env.returncode == 0, from_env.stderr
    assert _calls(log) == [1, 2, 4]


@posix_only
def test_nothing_passed_and_a_program_that_never_started_have_their_own_statuses(
        pyz: Path, tmp_path: Path) -> None:
    """Before: both exited 1, the status of the tool's own failure."""
    app, log = tmp_path / "app.py", tmp_path / "calls.log"
    app.write_text(PLAIN_APP)
    failed = _ramp(sys.executable, pyz, tmp_path / "failed", [sys.executable, str(app),
                                                              "--n={n}"],
                   "--axis", "n", "--start", "1", "--stop", "8",
                   env={"APP_LOG": str(log), "APP_MODE": "exit3", "APP_FROM": "1"})
    assert failed.returncode == 24, failed.stderr  # RAMP_NOTHING_PASSED
    never = _ramp(sys.executable, pyz, tmp_path / "never",
                  [str(tmp_path / "no-such-program"), "--n={n}"],
                  "--axis", "n", "--start", "1", "--stop", "8")
    assert never.returncode == 25, never.stderr  # RAMP_INCONCLUSIVE
    assert "n: the program never started (no such file or directory): nothing was measured" in \
        never.stdout
    assert _calls(log) == [1, 2]  # 1 failed, and 2, the value above it


# A real model whose training step fails at one value of the axis only: BatchNorm refuses a
# batch of one sample in training mode ("Expected more than 1 value per channel"), and every
# larger batch works. Before, the ramp stopped at its first failure and called 1 the limit
# ("nothing passed"); RAMP_NO_SINGLE_LIMIT was reachable in a table test only.
BATCHNORM_APP = """
import os, sys
import torch
batch = int(sys.argv[sys.argv.index("--batch") + 1])
with open(os.environ["APP_LOG"], "a") as log:
    log.write(f"{batch}\\n")
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 1))
loss = model(torch.randn(batch, 4)).square().mean()
loss.backward()
print(float(loss))
"""


@pytest.mark.slow
@posix_only
def test_a_failure_below_a_value_that_passes_is_no_single_limit(
        pyz: Path, tmp_path: Path, cpu_torch_python: Path) -> None:
    app, log, out = tmp_path / "app.py", tmp_path / "calls.log", tmp_path / "ramp-batch"
    app.write_text(BATCHNORM_APP)
    result = _ramp(sys.executable, pyz, out,
                   [str(cpu_torch_python), str(app), "--batch", "{batch}"],
                   "--axis", "batch", "--start", "1", "--stop", "64", "--bisect",
                   env={"APP_LOG": str(log)})
    assert result.returncode == 31, result.stderr  # RAMP_NO_SINGLE_LIMIT
    document = _record(out)
    _valid(document)
    # 1 failed; the value above it, 2, passed: the ramp stops there (nothing to bisect).
    assert [(item["value"], item["outcome"]) for item in document["attempts"]] == [
        (1, "failed"), (2, "passed")]
    assert _calls(log) == [1, 2]
    assert "Expected more than 1 value per channel" in document["attempts"][0]["error"]
    verdict = document["verdict"]
    assert (verdict["kind"], verdict["code"]) == ("no_single_limit", "RAMP_NO_SINGLE_LIMIT")
    assert (verdict["failed"], verdict["passed"]) == ([1], [2])
    assert "batch: no single limit: 1 failed below a value that passed (2 passed)" in \
        result.stdout


@posix_only
def test_a_value_that_fails_between_passes_is_no_single_limit(pyz: Path, tmp_path: Path) -> None:
    """A plain program that fails at 8 only (a shape its kernel refuses): the growth meets it,
    16 passes above it: no single limit, the failing value named, exit 31."""
    app, log, out = tmp_path / "app.py", tmp_path / "calls.log", tmp_path / "ramp-n"
    app.write_text(PLAIN_APP)
    result = _ramp(sys.executable, pyz, out, [sys.executable, str(app), "--n={n}"],
                   "--axis", "n", "--start", "1", "--stop", "64",
                   env={"APP_LOG": str(log), "APP_MODE": "exit3_once", "APP_FROM": "8"})
    assert result.returncode == 31, result.stderr
    assert _calls(log) == [1, 2, 4, 8, 16]
    document = _record(out)
    assert document["verdict"]["failed"] == [8]
    assert ("n: no single limit: 8 failed below a value that passed (1, 2, 4, 16 passed) (values "
            "between were not tried)") in result.stdout, result.stdout


# One attempt's outcome from what it left (ramp/outcome.classify), each row ONE redactor: the one
# given hides what it knows; none given, the machine's own (its working folder) does.
PLANTED = "acme-ramp-token-4411"  # planted, to be hidden
CLASSIFY_ROWS = [
    ("the redactor given", Redactor(secrets=[PLANTED]), f"RuntimeError: bad token {PLANTED}",
     "RuntimeError: bad token <redacted>"),
    ("none given: the machine's", None, "FileNotFoundError: {cwd}/train.csv",
     "FileNotFoundError: <cwd>/train.csv"),
]


@pytest.mark.parametrize(("redactor", "last_words", "error"), [row[1:] for row in CLASSIFY_ROWS],
                         ids=[row[0] for row in CLASSIFY_ROWS])
def test_an_attempts_last_words_are_redacted_by_the_redactor_given_or_the_machines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redactor: Redactor | None,
        last_words: str, error: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    stderr = tmp_path / "stderr.txt"
    stderr.write_text(last_words.format(cwd=tmp_path) + "\n", encoding="utf-8")
    result = classify(Ending(returncode=1, duration_s=0.1), str(tmp_path / "run"), str(stderr),
                      redactor)
    assert (result.outcome, result.error) == ("failed", error)

