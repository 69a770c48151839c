"""What the tool itself needs is never blamed on the machine, and never crashes it (issue 44).

For real, each case builds the scarce thing the tool leans on and runs the tool as a user does:
- a byte that is not UTF-8 in a configuration variable the report shows (``NCCL_DEBUG``,
  ``PYTORCH_CUDA_ALLOC_CONF``, ``OMP_NUM_THREADS``): the text, ``--format json`` and ``--output``
  all still come, the byte shown as its escape;
- no temporary folder anywhere (``/tmp`` and ``/var/tmp`` read-only mounts in a private mount
  namespace, the working folder not writable): the check still runs, in ``/dev/shm``;
- a process limit (``prlimit --nproc``) as an unprivileged user (root is exempt from it): no
  thread to spare for the front's probes nor for the worker's watch, and the check still gives
  the real verdict.
Without a torch (the dev venv, the system's Python) the real verdict is ``TORCH_MISSING``; with the
real CPU build (slow) it is ``CPU_CHECK_PASSED``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, assert_valid_report, clean_env, run_tool

MODULE = ["-m", "kernodeck_diagnostic"]
NOT_UTF8 = "INFO\udca0"  # the byte 0xa0 as Python keeps it (surrogateescape); the child gets 0xa0
SHOWN = "INFO\\xa0"
SETPRIV = shutil.which("setpriv")
PRLIMIT = shutil.which("prlimit")
UNSHARE = shutil.which("unshare")
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")

root_only = pytest.mark.skipif(sys.platform == "win32" or os.geteuid() != 0,
                               reason="needs root: private mounts, or acting as a second user")


@pytest.mark.parametrize("variable", ["NCCL_DEBUG", "PYTORCH_CUDA_ALLOC_CONF", "OMP_NUM_THREADS"])
def test_a_configuration_byte_that_is_not_utf8_is_shown_escaped(variable: str,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    env = clean_env({variable: NOT_UTF8})
    result = run_tool(sys.executable, MODULE, ["--device", "cpu", "--format", "json",
                                               "--output", str(out)], env=env)
    assert result.returncode == 3, result.stderr  # TORCH_MISSING: no torch in the dev venv
    assert "internal error" not in result.stderr
    assert result.report is not None
    assert_valid_report(result.report)
    assert result.report["system"]["configuration"][variable] == SHOWN
    assert json.loads(result.stdout)["system"]["configuration"][variable] == SHOWN
    text = run_tool(sys.executable, MODULE, ["--device", "cpu"], env=env)
    assert f"{variable}={SHOWN}" in text.stdout


@pytest.mark.slow
def test_a_configuration_byte_that_is_not_utf8_with_a_real_torch(cpu_torch_python: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, MODULE, ["--python", str(cpu_torch_python), "--device",
                                               "cpu", "--output", str(out)],
                      env=clean_env({"NCCL_DEBUG": NOT_UTF8}))
    assert result.returncode == 0, result.stderr
    assert result.report is not None
    assert result.report["code"] == "CPU_CHECK_PASSED"
    assert result.report["system"]["configuration"]["NCCL_DEBUG"] == SHOWN


# -- no temporary folder anywhere ----------------------------------------------------------------

def _without_temporary_folders(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` in a private mount namespace where ``/tmp`` and ``/var/tmp`` are read-only
    and the working folder is ``/proc`` (no file can be made there, even by root)."""
    script = ("mount -t tmpfs -o ro,size=1m tmpfs /tmp && "
              "mount -t tmpfs -o ro,size=1m tmpfs /var/tmp && cd /proc && exec \"$@\"")
    env = clean_env({"PYTHONPATH": str(ROOT / "src")})
    for name in ("TMPDIR", "TEMP", "TMP"):
        env.pop(name, None)
    return subprocess.run([str(UNSHARE), "-m", "sh", "-c", script, "sh", *command],
                          capture_output=True, text=True, env=env, timeout=180,
                          stdin=subprocess.DEVNULL, check=False)


def _no_temporary_folder_possible() -> None:
    if UNSHARE is None:
        pytest.skip("unshare (util-linux) is missing")
    hidden = [folder for folder in ("/tmp", "/var/tmp")  # noqa: S108 - only compared
              if ROOT.resolve().is_relative_to(Path(folder).resolve())]
    if hidden:  # the tool's own sources would be hidden with them
        pytest.skip(f"this clone lies under {hidden[0]}, which the test hides")
    probe = _without_temporary_folders(["true"])
    if probe.returncode != 0:
        pytest.skip("no private mount namespace here: " + probe.stderr.strip()[:200])
    if not os.access("/dev/shm", os.W_OK):  # noqa: S108 - the tool's last place, only looked at
        pytest.skip("no writable /dev/shm here: no place is left to the tool")


@root_only
def test_no_temporary_folder_anywhere_is_not_the_machines_fault() -> None:
    _no_temporary_folder_possible()
    completed = _without_temporary_folders([sys.executable, *MODULE, "--device", "cpu"])
    assert completed.returncode == 3, completed.stdout + completed.stderr
    assert completed.stdout.startswith("FAILED TORCH_MISSING")


@root_only
@pytest.mark.slow
def test_no_temporary_folder_anywhere_with_python(cpu_torch_python: Path) -> None:
    """``--python`` asks the interpreter for its version in a nameless file: in memory when no
    folder takes one (it was an internal error)."""
    _no_temporary_folder_possible()
    completed = _without_temporary_folders([sys.executable, *MODULE, "--python",
                                            str(cpu_torch_python), "--device", "cpu"])
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.startswith("PASSED CPU_CHECK_PASSED")


def test_the_scratch_file_falls_back_to_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(os, "memfd_create"):
        pytest.skip("memfd_create is Linux's")
    import tempfile as real_tempfile

    from kernodeck_diagnostic import interpreter_probe

    class NoFolder:
        @staticmethod
        def TemporaryFile() -> None:  # noqa: N802 - tempfile's own name
            raise FileNotFoundError(2, "No usable temporary directory found")

    with interpreter_probe._scratch_file(NoFolder) as scratch:
        scratch.write(b"Python 3.11")
        scratch.seek(0)
        assert scratch.read() == b"Python 3.11"
    with interpreter_probe._scratch_file(real_tempfile) as scratch:
        assert scratch.fileno() >= 0


# -- a process limit ------------------------------------------------------------------------------

@pytest.fixture
def readable_sources() -> Iterator[Path]:
    """A copy of the sources the second user (nobody) can read: pytest's folders are root's."""
    folder = Path(tempfile.mkdtemp(prefix="kd-needs-"))
    try:
        folder.chmod(0o755)
        shutil.copytree(ROOT / "src", folder / "src",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for place, folders, files in os.walk(folder):
            for name in folders:
                os.chmod(os.path.join(place, name), 0o755)  # noqa: S103 - nobody reads them
            for name in files:
                os.chmod(os.path.join(place, name), 0o644)
        yield folder / "src"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@root_only
@pytest.mark.parametrize("processes", [3, 4])
def test_a_process_limit_leaves_the_real_verdict(processes: int,
                                                 readable_sources: Path) -> None:
    """3 processes: the front and the worker, no thread nor watch to spare; 4: no thread for
    the probes. Each ran into "can't start new thread", an internal error."""
    if SETPRIV is None or PRLIMIT is None or SYSTEM_PYTHON is None:
        pytest.skip("needs setpriv and prlimit (util-linux) and a system python3")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8",
           "PYTHONPATH": str(readable_sources)}
    completed = subprocess.run(
        [SETPRIV, "--reuid=nobody", "--regid=nogroup", "--clear-groups", PRLIMIT,
         f"--nproc={processes}", SYSTEM_PYTHON, *MODULE, "--device", "cpu", "--host-check"],
        capture_output=True, text=True, env=env, cwd="/", timeout=120,
        stdin=subprocess.DEVNULL, check=False)
    assert "internal error" not in completed.stderr
    assert completed.returncode == 3, completed.stdout + completed.stderr
    assert completed.stdout.startswith("FAILED TORCH_MISSING")


# -- what the tool needs from the process's limits: TOOL_RESOURCES, and the advice applied -------
# Each case puts the real limit on a real check, reads the advice the tool printed, applies it as
# printed, and sees the check give its real verdict: never WORKER_FAILED, "treat as a failure".

TOOL_RESOURCES = 16


def _in_shell(setup: str, command: list[str],
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``command`` run by ``sh`` after the ``setup`` lines (a limit, then the advice)."""
    return subprocess.run(["sh", "-c", f"{setup}\nexec \"$@\"", "sh", *command],
                          capture_output=True, text=True, env=clean_env(env), timeout=180,
                          stdin=subprocess.DEVNULL, check=False)


def _advice(pattern: str, said: str) -> str:
    found = re.search(pattern, said)
    assert found is not None, said
    return found.group(1)


def _open_files_case(python: list[str]) -> str:
    """The check under a soft limit of 8 open files (``ulimit -Sn 8``: torch itself computes
    with 6), then with the advice it printed applied after that limit, as a user would."""
    if sys.platform == "win32":
        pytest.skip("POSIX limits")
    limited = _in_shell("ulimit -Sn 8", python)
    said = limited.stdout + limited.stderr
    assert limited.returncode == TOOL_RESOURCES, said
    assert "WORKER_FAILED" not in said
    assert "internal error" not in said
    assert "may open 8 (ulimit -n)" in said
    advice = _advice(r"`(ulimit -n \d+)`", said)
    assert advice == "ulimit -n 64"
    return _in_shell(f"ulimit -Sn 8\n{advice}", python).stdout


def test_too_few_open_files_is_the_tools_need_and_the_advice_works() -> None:
    applied = _open_files_case([sys.executable, *MODULE, "--device", "cpu"])
    assert applied.startswith("FAILED TORCH_MISSING"), applied  # the dev venv's real verdict


@pytest.mark.slow
def test_too_few_open_files_with_a_real_torch(cpu_torch_python: Path) -> None:
    applied = _open_files_case([sys.executable, *MODULE, "--python", str(cpu_torch_python),
                                "--device", "cpu"])
    assert applied.startswith("PASSED CPU_CHECK_PASSED"), applied


@pytest.mark.slow
@pytest.mark.parametrize("front", ["same", "python"])
def test_ten_open_files_are_enough(front: str, cpu_torch_python: Path) -> None:
    """``ulimit -n 10``: the early worker (which holds descriptors of its own while the front
    starts, and its fork the front's) is not started, the check starts its own: the real
    verdict, with torch's own interpreter as the front or through ``--python`` (both were
    WORKER_FAILED, or an internal error)."""
    if sys.platform == "win32":
        pytest.skip("POSIX limits")
    command = ([str(cpu_torch_python), *MODULE] if front == "same"
               else [sys.executable, *MODULE, "--python", str(cpu_torch_python)])
    env = clean_env({"PYTHONPATH": str(ROOT / "src")})
    completed = subprocess.run(["sh", "-c", 'ulimit -Sn 10\nexec "$@"', "sh", *command,
                                "--device", "cpu"], capture_output=True, text=True, env=env,
                               timeout=180, stdin=subprocess.DEVNULL, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.startswith("PASSED CPU_CHECK_PASSED")


def test_the_front_out_of_open_files_says_so(tmp_path: Path) -> None:
    """Out of descriptors in the front itself, before any report: one line, the tool's need,
    exit 16 (it was an internal error). Its private folder goes too (shutil.rmtree, which holds
    two descriptors a level, left its __pycache__ in $TMPDIR)."""
    if sys.platform == "win32":
        pytest.skip("POSIX limits")
    limited = _in_shell("ulimit -Sn 5", [sys.executable, *MODULE, "--device", "cpu"],
                        env={"TMPDIR": str(tmp_path)})
    assert limited.returncode == TOOL_RESOURCES, limited.stdout + limited.stderr
    assert "internal error" not in limited.stderr
    assert "`ulimit -n 64`" in limited.stdout + limited.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == []


@contextlib.contextmanager
def _own_cgroup(controller: str, limits: dict[str, str]) -> Iterator[Path]:
    """A new child of this process's ``controller`` cgroup (v1, or v2 where the controller is
    enabled for children), with ``limits`` written into it (the first file that exists of each
    pair ``v2|v1``); removed afterwards. Skips where none can be made (not root, read-only)."""
    from kernodeck_diagnostic.supervision.oom_killer import CGROUP_ROOT

    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("needs root on Linux: a cgroup of its own")
    places = []
    for entry in Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines():
        _, controllers, path = entry.split(":", 2)
        if controller in controllers.split(","):
            places.append(Path(CGROUP_ROOT, controller, path.lstrip("/")))
        elif controllers == "":
            unified = Path(CGROUP_ROOT, path.lstrip("/"))
            enabled = unified / "cgroup.subtree_control"
            if enabled.is_file() and controller in enabled.read_text(encoding="utf-8").split():
                places.append(unified)
    folder = None
    for place in places:
        candidate = place / f"kd-needs-{os.getpid()}"
        with contextlib.suppress(OSError):
            candidate.mkdir()
            folder = candidate
            break
    if folder is None:
        pytest.skip(f"no {controller} cgroup can be made here")
    try:
        for names, value in limits.items():
            target = next((folder / name for name in names.split("|")
                           if (folder / name).exists()), None)
            if target is None:
                pytest.skip(f"no {names} in the {controller} cgroup")
            target.write_text(value, encoding="ascii")
        yield folder
    finally:
        # A worker whose check is done is not waited for: it may still be ending in there.
        deadline = time.monotonic() + 30
        while (folder / "cgroup.procs").read_text(encoding="ascii").strip() \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        folder.rmdir()


def _in_cgroup(folder: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    return _in_shell(f"echo $$ > {shlex.quote(str(folder / 'cgroup.procs'))}", command)


def test_too_few_processes_is_the_tools_need_and_the_advice_works() -> None:
    """A cgroup's ``pids.max`` of 1: the front runs, the worker's process is refused (torch
    itself computes under it). The advice (``pids.max``, so many more) applied: the real
    verdict."""
    command = [sys.executable, *MODULE, "--device", "cpu"]
    with _own_cgroup("pids", {"pids.max": "1"}) as folder:
        limited = _in_cgroup(folder, command)
        said = limited.stdout + limited.stderr
        assert limited.returncode == TOOL_RESOURCES, said
        assert "WORKER_FAILED" not in said
        more = int(_advice(r"allow at least (\d+) more", said))
        (folder / "pids.max").write_text(str(1 + more), encoding="ascii")
        applied = _in_cgroup(folder, command)
    assert applied.stdout.startswith("FAILED TORCH_MISSING"), applied.stdout + applied.stderr


@pytest.mark.slow
def test_a_memory_cgroup_kill_is_named_and_the_advice_works(cpu_torch_python: Path,
                                                             tmp_path: Path) -> None:
    """A memory cgroup of 150 MB shared by the front and the worker: torch alone computes in
    it, the two together are killed by the OOM killer. Named with the limit (it was a SIGKILL,
    WORKER_FAILED); the limit raised as printed: the real verdict."""
    out = tmp_path / "report.json"
    command = [sys.executable, *MODULE, "--python", str(cpu_torch_python), "--device", "cpu"]
    limit = {"memory.max|memory.limit_in_bytes": str(150 * 1024 * 1024)}
    with _own_cgroup("memory", limit) as folder:
        limited = _in_cgroup(folder, [*command, "--output", str(out)])
        said = limited.stdout + limited.stderr
        if limited.returncode == 0:
            pytest.skip("torch and the tool fit in 150 MB here")
        assert limited.returncode == TOOL_RESOURCES, said
        assert "allows 150 MB" in said, said
        report = json.loads(out.read_text(encoding="utf-8"))
        assert_valid_report(report)
        assert report["code"] == "TOOL_RESOURCES"
        assert report["error"]["message_key"] == "error.tool_needs.memory"
        megabytes = int(_advice(r"at least (\d+) MB", said))
        limit_file = next(folder / name for name in ("memory.max", "memory.limit_in_bytes")
                          if (folder / name).exists())
        limit_file.write_text(str(megabytes * 1024 * 1024), encoding="ascii")
        applied = _in_cgroup(folder, command)
    assert applied.stdout.startswith("PASSED CPU_CHECK_PASSED"), applied.stdout + applied.stderr


@pytest.mark.parametrize(("key", "fault"), [("error.tool_needs.open_files", "inconclusive"),
                                            ("error.tool_needs.processes", "inconclusive"),
                                            ("error.tool_needs.memory", "environment")])
def test_the_tools_needs_never_drain_a_node(key: str, fault: str) -> None:
    """A health check that could not run for the tool's needs drains no node under any
    profile: the open files or processes it lacked say nothing of the node (inconclusive); a
    memory cgroup's OOM kill is the job's limit (environment)."""
    from kernodeck_diagnostic.report.health import PROFILES, exit_status, judge_health

    report = {"code": "TOOL_RESOURCES", "stage": "interpreter",
              "request": {"device_index": 0, "all_devices": False},
              "findings": [], "error": {"message_key": key, "message": "the tool ran out"}}
    health = judge_health(report)
    assert health.fault == fault
    assert not health.drains
    assert exit_status(health, "prolog") == 0
    assert {exit_status(health, profile) for profile in PROFILES} != {0}  # still said


def test_only_evidence_of_the_tools_need_is_taken_for_it(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """Too many open files under a roomy limit is a leak of what ran (WORKER_FAILED stays); a
    SIGKILL with no OOM kill counted is no memory limit; the system's full table is named as
    the system's."""
    from kernodeck_diagnostic.supervision import tool_needs
    from kernodeck_diagnostic.supervision.oom_killer import OomWatch

    line = "OSError: [Errno 24] Too many open files: '<path>/fd'"
    monkeypatch.setattr(tool_needs, "_soft_limit", lambda name: 1024)
    assert tool_needs.after_run(True, 1, line, None) is None
    monkeypatch.setattr(tool_needs, "_soft_limit", lambda name: 9)
    assert tool_needs.after_run(True, 1, line, None) == (
        "error.tool_needs.open_files", {"limit": "9", "suggested": "64"})
    assert tool_needs.after_run(False, 1, line, None) is None  # the worker said its error
    system = "OSError: [Errno 23] Too many open files in system"
    assert tool_needs.after_run(True, 1, system, None) == ("error.tool_needs.open_files_system",
                                                           {})
    assert tool_needs.after_run(True, -9, None, OomWatch()) is None  # no kill counted
    assert tool_needs.memory([str(tmp_path)]) == ("error.tool_needs.memory_unknown",
                                                  {"suggested": "1024"})
