"""Processes and interpreters people break: a front that dies, a --python that is not one, an
interpreter older than 3.9 running the single-file download.

Each case is made for real: the front is the single-file download (or ``python -m``) killed by a
real SIGKILL, hung up by a real SIGHUP or by a really closed pseudo-terminal; interpreters are
pyenv's real 2.7, 3.6, 3.7 and 3.8, real venvs (one with a real ``sitecustomize``, one whose base
Python was really deleted), real wrapper scripts that sleep before exec'ing Python. The fake torch
stands only for a GPU that hangs. Every run gets a private TMPDIR, so that a ``kernodeck-*``
folder left behind is seen, and a unique KD_RUN_TAG, so that a process left behind is found.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import kernodeck_diagnostic
from conftest import ROOT, SRC, clean_env, pids_gone, pyenv_python, required_pyenv_python, run_tool
from reliability.harness import recorded_pids, survivors, tagged_env, wait_for

GONE_WITHIN_S = 3.0  # the worker's tree, once its front is gone
OLD_PYTHONS = ("2.7", "3.6", "3.7", "3.8")


def leftovers(tmp: Path) -> list[str]:
    """The run's private folders still in its TMPDIR."""
    return sorted(path.name for path in tmp.glob("kernodeck-*"))


def private_tmp(tmp_path: Path) -> Path:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp



def group_of(leader: int) -> list[int]:
    """Every live process of the process group ``leader`` leads."""
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if os.getpgid(int(name)) == leader:
                    members.append(int(name))
    return members


def worker_leader(tmp: Path) -> int | None:
    """The worker of the run whose TMPDIR is ``tmp``: the group leader that is one of its
    workers (``in_private_folder``)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if in_private_folder(int(name), tmp) and os.getpgid(int(name)) == int(name):
                return int(name)
    return None


def in_private_folder(pid: int, tmp: Path) -> bool:
    """Whether ``pid`` is a worker of a run whose TMPDIR is ``tmp``, or a child of one: it runs
    the worker.py of a private folder there (a worker started as a new interpreter) or writes
    its output there (one forked from the front, and what either one forks)."""
    private = str(tmp) + os.sep + "kernodeck-"
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        held = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return False
    return (any(arg.startswith(private.encode()) and arg.endswith(b"/worker.py") for arg in argv)
            or any(path.startswith(private) for path in held))


def importing(tmp: Path) -> bool:
    """The worker of the run whose TMPDIR is ``tmp`` has started its import stage."""
    return any(started_import(events) for events in tmp.glob("kernodeck-*/events.jsonl"))


def started_import(events: Path) -> bool:
    """The worker writing ``events`` has started its import stage (read from its event log)."""
    with contextlib.suppress(OSError):
        for line in events.read_text().splitlines():
            if '"stage_started"' in line and '"stage": "import"' in line:
                return True
    return False


@contextlib.contextmanager
def front(command: list[str], env: dict[str, str],
          **popen: object) -> Iterator[subprocess.Popen[bytes]]:
    """A running front; killed, and whatever it started with it, if the test fails first."""
    process = subprocess.Popen(command, env=env, **popen)  # type: ignore[call-overload]
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def kill_what_is_left(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# -- item 8: the worker ends when its front is gone ----------------------------------------------

@pytest.mark.slow
def test_a_killed_front_takes_its_hung_worker_and_folder_with_it(pyz: Path,
                                                                 tmp_path: Path) -> None:
    """SIGKILL to the front while the GPU hangs (signals ignored, a forked child): within a few
    seconds the worker, its child and its private folder are gone (were: left for ever)."""
    tmp = private_tmp(tmp_path)
    pids_file = tmp_path / "pids"
    env, tag = tagged_env("hang_in_synchronize", KD_FAKE_TORCH_PIDS=str(pids_file),
                          TMPDIR=str(tmp))
    with front([sys.executable, str(pyz), "--timeout", "60"], env, stdin=subprocess.DEVNULL,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
        wait_for(lambda: len(recorded_pids(pids_file)) >= 2, 30, "the GPU to hang")
        pids = recorded_pids(pids_file)
        try:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
            assert pids_gone(pids, GONE_WITHIN_S) == []
            assert survivors(tag) == []
            assert leftovers(tmp) == []
        finally:
            kill_what_is_left(pids)


@pytest.mark.slow
def test_sighup_stops_the_check_like_sigint(pyz: Path, tmp_path: Path) -> None:
    """SIGHUP (a closed terminal, a dropped ssh session) is an interrupt: exit 129, one line,
    nothing left (was: the front died of the signal and left the worker running)."""
    tmp = private_tmp(tmp_path)
    pids_file = tmp_path / "pids"
    env, tag = tagged_env("hang_in_synchronize", KD_FAKE_TORCH_PIDS=str(pids_file),
                          TMPDIR=str(tmp))
    report = tmp_path / "report.json"
    with front([sys.executable, str(pyz), "--timeout", "60", "--output", str(report)], env,
               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
               stderr=subprocess.PIPE) as process:
        wait_for(lambda: len(recorded_pids(pids_file)) >= 2, 30, "the GPU to hang")
        pids = recorded_pids(pids_file)
        try:
            os.kill(process.pid, signal.SIGHUP)
            stdout, stderr = process.communicate(timeout=30)
            assert process.returncode == 129, stderr
            assert stdout == b""
            assert stderr.decode().splitlines() == [
                "kernodeck-diagnostic: interrupted by SIGHUP; the check was stopped and no "
                "report was written."]
            assert not report.exists()
            assert pids_gone(pids, GONE_WITHIN_S) == []
            assert survivors(tag) == []
            assert leftovers(tmp) == []
        finally:
            kill_what_is_left(pids)


def _take_the_terminal() -> None:
    """In the front, after setsid(): its stdin, the pseudo-terminal, becomes its controlling
    terminal, so that the kernel hangs it up when the terminal is closed."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.mark.slow
def test_closing_the_terminal_window_stops_the_check(pyz: Path, tmp_path: Path) -> None:
    """The front runs on a real pseudo-terminal, its controlling terminal, showing its live line;
    the terminal is closed (its master side, as a terminal emulator's window does): the kernel
    sends SIGHUP, and the writes to the dead terminal fail. Exit 129 all the same, nothing left."""
    tmp = private_tmp(tmp_path)
    pids_file = tmp_path / "pids"
    env, tag = tagged_env("hang_in_synchronize", KD_FAKE_TORCH_PIDS=str(pids_file),
                          TMPDIR=str(tmp))
    leader, follower = os.openpty()
    with front([sys.executable, str(pyz), "--timeout", "60"], env, stdin=follower,
               stdout=follower, stderr=follower, start_new_session=True,
               preexec_fn=_take_the_terminal) as process:
        os.close(follower)
        seen = bytearray()
        reader = threading.Thread(target=_drain, args=(leader, seen), daemon=True)
        reader.start()
        wait_for(lambda: len(recorded_pids(pids_file)) >= 2 and b"computing" in seen, 30,
                 "the GPU to hang, shown live")
        pids = recorded_pids(pids_file)
        try:
            os.close(leader)  # the window closes
            assert process.wait(30) == 129, bytes(seen)[-500:]
            assert pids_gone(pids, GONE_WITHIN_S) == []
            assert survivors(tag) == []
            assert leftovers(tmp) == []
        finally:
            kill_what_is_left(pids)


def _drain(leader: int, seen: bytearray) -> None:
    with contextlib.suppress(OSError):
        while chunk := os.read(leader, 65536):
            seen.extend(chunk)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGHUP], ids=lambda s: s.name)
def test_the_front_gone_while_real_torch_imports(cpu_torch_python: Path, pyz: Path,
                                                 tmp_path: Path, signum: signal.Signals) -> None:
    """Real CPU torch, the worker stopped (SIGSTOP) in the middle of its import: it cannot run
    any code of its own, as a worker stuck in a native call holding the GIL cannot. The front is
    killed or hung up: the worker's whole group and its folder are gone all the same."""
    tmp = private_tmp(tmp_path)
    env, tag = tagged_env(TMPDIR=str(tmp))
    with front([str(cpu_torch_python), str(pyz), "--device", "cpu", "--timeout", "60"], env,
               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
               stderr=subprocess.PIPE) as process:
        wait_for(lambda: importing(tmp), 60, "the worker to import torch")
        worker = worker_leader(tmp)
        assert worker is not None
        os.kill(worker, signal.SIGSTOP)
        group = group_of(worker)
        try:
            assert len(group) >= 2, group  # the worker and its watch
            os.kill(process.pid, signum)
            process.wait(30)
            assert process.returncode == (129 if signum == signal.SIGHUP else -signal.SIGKILL)
            assert pids_gone(group, GONE_WITHIN_S) == []
            assert survivors(tag) == []
            assert leftovers(tmp) == []
        finally:
            with contextlib.suppress(OSError):
                os.killpg(worker, signal.SIGKILL)


@pytest.mark.slow
def test_a_host_tool_does_not_hold_the_workers_lifeline(pyz: Path, tmp_path: Path) -> None:
    """With --host-check and a hung nvidia-smi started by the front: the tool does not inherit
    the pipe that keeps the worker alive, so killing the front still ends the worker."""
    tools = tmp_path / "bin"
    tools.mkdir()
    smi = tools / "nvidia-smi"
    smi.write_text('#!/bin/sh\necho $$ >> "$KD_FAKE_TORCH_PIDS"\nexec sleep 60\n')
    smi.chmod(0o755)
    tmp = private_tmp(tmp_path)
    pids_file = tmp_path / "pids"
    env, _ = tagged_env("hang_in_native_driver_call", KD_FAKE_TORCH_PIDS=str(pids_file),
                        TMPDIR=str(tmp), PATH=f"{tools}{os.pathsep}{os.environ['PATH']}")
    with front([sys.executable, str(pyz), "--timeout", "60", "--host-check"], env,
               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL) as process:
        def workers(pids: list[int]) -> list[int]:
            return [pid for pid in pids if in_private_folder(pid, tmp)]

        # The worker and its child, and the probe's three nvidia-smi runs (query, listing,
        # processes), all hanging: counting 4 pids alone could miss the worker's child.
        wait_for(lambda: (len(workers(recorded_pids(pids_file))) == 2
                          and len(recorded_pids(pids_file)) >= 5), 30,
                 "the GPU and the tool to hang")
        pids = recorded_pids(pids_file)
        hung = workers(pids)
        try:
            assert len(pids) == 5, pids
            assert len(hung) == 2, pids
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
            assert pids_gone(hung, GONE_WITHIN_S) == []
            assert leftovers(tmp) == []
        finally:
            kill_what_is_left(pids)


def test_the_thread_watch_ends_the_worker_alone(tmp_path: Path) -> None:
    """Where there is no fork (Windows), a thread watches the pipe: its end-of-file ends the
    process, here while the main thread is busy, and removes the private folder."""
    folder = tmp_path / "kernodeck-thread"
    folder.mkdir()
    copy_worker(folder)
    worker = folder / "stages.py"  # the worker module, whose functions this runs
    (folder / "events.jsonl").touch()
    code = ("import os, runpy, sys, threading, time\n"
            "w = runpy.run_path(sys.argv[1])\n"
            "folder = w['_private_folder'](sys.argv[2])\n"
            "threading.Thread(target=w['_watch_in_thread'], args=(folder, os.getpid()),"
            " daemon=True).start()\n"
            "time.sleep(60)\n")
    with subprocess.Popen([sys.executable, "-c", code, str(worker), str(folder / "events.jsonl")],
                          stdin=subprocess.PIPE) as process:
        time.sleep(0.5)
        assert process.stdin is not None
        process.stdin.close()  # the front is gone
        assert process.wait(10) == 129
    assert not folder.exists()


def copy_worker(folder: Path) -> Path:
    """The worker and its companions in ``folder``, as the supervisor copies them."""
    from kernodeck_diagnostic.supervision.start import worker_files

    for name, source in worker_files().items():
        (folder / name).write_bytes(source)
    return folder / "worker.py"


@pytest.mark.parametrize("name", ["kernodeck-abc123", "my-project"])
def test_the_watch_removes_only_a_private_folder(tmp_path: Path, name: str) -> None:
    """The worker run with --watch-front ends when stdin closes; it removes the folder of its
    events file only when that is a ``kernodeck-`` folder holding the worker itself."""
    folder = tmp_path / name
    folder.mkdir()
    worker = copy_worker(folder)
    (folder / "keep.txt").write_text("the user's")
    env = clean_env({"PYTHONPATH": str(ROOT / "tests" / "fakes"), "KD_FAKE_TORCH": "cuda_pass",
                     "KD_FAKE_TORCH_IMPORT_DELAY": "60"})
    with subprocess.Popen([sys.executable, str(worker), "--events", str(folder / "events.jsonl"),
                           "--device", "gpu", "--watch-front"], stdin=subprocess.PIPE, env=env,
                          start_new_session=True) as process:
        wait_for(lambda: started_import(folder / "events.jsonl"), 30, "the worker to start")
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(10) == -signal.SIGKILL
    assert folder.exists() == (name == "my-project")


# -- item 10: --python within the time limit, each wrong path told apart -------------------------

def _deleted_base_venv(tmp_path: Path) -> Path:
    """A real venv whose base Python was removed: made from a hard-linked copy of a pyenv
    Python (no disk used, the original untouched), then the copy deleted."""
    base = required_pyenv_python("3.9").parent.parent
    copy = tmp_path / "python-3.9-copy"
    shutil.copytree(base, copy, symlinks=True, copy_function=os.link)
    venv = tmp_path / "venv"
    subprocess.run([str(copy / "bin" / "python3.9"), "-m", "venv", "--without-pip", str(venv)],
                   check=True, timeout=120, capture_output=True)
    shutil.rmtree(copy)
    return venv / "bin" / "python"


@pytest.mark.parametrize(("case", "said"), [
    ("missing", "no such file;"),
    ("folder", "that is a folder; give the interpreter inside it"),
    ("not_executable", "that file is not executable;"),
    ("deleted_base", "that is a link to an interpreter that no longer exists"),
])
def test_a_wrong_python_path_is_told_at_once(pyz: Path, tmp_path: Path, case: str,
                                             said: str) -> None:
    """What can be told without running anything is a usage error at once, each its own
    message (was: one message for all, after running the path)."""
    if case == "missing":
        target = tmp_path / "venv" / "bin" / "python"
    elif case == "folder":
        target = tmp_path
    elif case == "not_executable":
        target = tmp_path / "python"
        target.write_text("#!/bin/sh\nexec python3 \"$@\"\n")
    else:
        target = _deleted_base_venv(tmp_path)
        assert target.is_symlink()
        assert not target.exists()
    result = run_tool(sys.executable, pyz, ["--python", str(target), "--device", "cpu"])
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"kernodeck-diagnostic: error: --python: {said}")
    assert lines[0].endswith("(see --help)")
    assert str(tmp_path) not in result.stderr
    assert result.elapsed_s < 5


@pytest.mark.parametrize("program", ["true", "garbage"])
def test_a_program_that_is_not_a_python(pyz: Path, tmp_path: Path, program: str) -> None:
    """/bin/true, or a script that prints garbage: a usage error saying it is not a Python."""
    if program == "true":
        target = Path(shutil.which("true") or "/bin/true")
    else:
        target = tmp_path / "python"
        target.write_text("#!/bin/sh\necho 'Python 3.11.7'\necho '3.11'\nexit 0\n")
        target.chmod(0o755)
    result = run_tool(sys.executable, pyz, ["--python", str(target), "--device", "cpu"])
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "kernodeck-diagnostic: error: --python: that program is not a Python interpreter: it "
        "ran, but did not answer as one (see --help)"]


def test_python_3_7_is_named_too_old(pyz: Path) -> None:
    """3.7 can run the worker's code: it must not (2.7, 3.6, 3.8: test_interfaces.py)."""
    result = run_tool(sys.executable, pyz, ["--python", str(required_pyenv_python("3.7"))])
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "kernodeck-diagnostic: error: --python: that interpreter is Python 3.7; the minimum is "
        "3.9 (see --help)"]


def test_the_api_refuses_a_program_that_is_not_a_python() -> None:
    with pytest.raises(ValueError, match=r"^check\(python=\.\.\.\): .*not a Python interpreter"):
        kernodeck_diagnostic.check(device="cpu", python=shutil.which("true") or "/bin/true")


@pytest.mark.slow
def test_an_interpreter_that_prints_a_banner_is_still_a_python(pyz: Path, tmp_path: Path) -> None:
    """A real venv whose sitecustomize prints a banner to stdout at every start (a company's
    managed Python): it is checked (was: "not a runnable Python interpreter")."""
    base = pyenv_python("3.11") or Path(sys.executable)
    venv = tmp_path / "banner-venv"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120, capture_output=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "sitecustomize.py").write_text(
        'print("Welcome to ACME Python (managed). Support: it@acme.example")\n')
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--python", str(venv / "bin" / "python"),
                                            "--device", "cpu", "--output", str(out)])
    assert result.returncode == 3, result.stderr
    assert result.report is not None
    assert result.report["code"] == "TORCH_MISSING"


def _wrapper(tmp_path: Path, python: Path, sleep_s: int) -> Path:
    """A real wrapper script that takes ``sleep_s`` seconds before exec'ing Python (a module
    system's shim, a network file system...)."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nsleep {sleep_s}\nexec "{python}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


@pytest.mark.slow
@pytest.mark.parametrize("sleep_s", [8, 600], ids=["slow_start_8s", "hang_at_start"])
def test_an_interpreter_that_hangs_at_start_is_a_timeout(pyz: Path, tmp_path: Path,
                                                         notorch_python: Path,
                                                         sleep_s: int) -> None:
    """Under --timeout 5: TIMEOUT (exit 10) at stage interpreter, a report, within the limit,
    the wrapper and its sleep killed (were: USAGE_ERROR after 20 s; 13 s for the 8 s start)."""
    env, tag = tagged_env()
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz,
                      ["--python", str(_wrapper(tmp_path, notorch_python, sleep_s)),
                       "--device", "cpu", "--timeout", "5", "--output", str(out)], env=env)
    assert result.returncode == 10, result.stderr
    assert result.elapsed_s < 7.0
    assert result.report is not None
    assert (result.report["code"], result.report["stage"]) == ("TIMEOUT", "interpreter")
    assert result.report["error"]["message_key"] == "error.timeout_at_start"
    assert survivors(tag) == []


@pytest.mark.slow
def test_a_slow_start_is_paid_once(pyz: Path, tmp_path: Path, notorch_python: Path) -> None:
    """An interpreter that takes 3 s to start is started once, inside the limit: not once to
    ask its version and again for the check."""
    result = run_tool(sys.executable, pyz,
                      ["--python", str(_wrapper(tmp_path, notorch_python, 3)), "--device", "cpu",
                       "--output", str(tmp_path / "report.json")])
    assert result.returncode == 3, result.stderr
    assert 3.0 < result.elapsed_s < 5.5


# -- item 11: Python 3.8 or older says so in one line --------------------------------------------

@pytest.mark.parametrize("minor", OLD_PYTHONS)
def test_the_zipapp_on_an_old_python_says_so_in_one_line(pyz: Path, minor: str) -> None:
    """Was a traceback: SyntaxError (2.7, 3.6), cannot import name 'cache' (3.7, 3.8)."""
    result = run_tool(required_pyenv_python(minor), pyz, ["--device", "cpu"])
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"kernodeck-diagnostic: Python 3.9 or newer is needed; this is Python {minor}"]


@pytest.mark.parametrize("minor", ["3.7", "3.8"])
def test_python_m_on_an_old_python_says_so_in_one_line(minor: str) -> None:
    """``python -m`` on 3.7 and 3.8. (2.7 and 3.6 cannot parse the package's own first line,
    ``from __future__ import annotations``: see docs/reliability.md.)"""
    result = run_tool(required_pyenv_python(minor), ["-m", "kernodeck_diagnostic"],
                      ["--device", "cpu"], env=clean_env({"PYTHONPATH": str(SRC)}))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"kernodeck-diagnostic: Python 3.9 or newer is needed; this is Python {minor}"]


@pytest.mark.slow
def test_a_file_size_limit_is_named_not_the_temporary_folder(pyz: Path, tmp_path: Path,
                                                             notorch_python: Path) -> None:
    """`ulimit -f 4` (4 KiB, below the worker's own source): writing the worker's files fails
    with EFBIG. The folder is writable; the limit is what to change (was: "the temporary folder
    is not writable (file too large)")."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    completed = subprocess.run(
        [str(notorch_python), str(pyz), "--device", "cpu", "--format", "json"],
        capture_output=True, text=True, timeout=60, env=clean_env(), check=False,
        stdin=subprocess.DEVNULL, preexec_fn=limited, cwd=tmp_path)
    report = json.loads(completed.stdout)
    assert (completed.returncode, report["code"], report["stage"]) == (11, "WORKER_FAILED",
                                                                       "interpreter")
    assert report["error"]["message_key"] == "error.not_started.file_size_limit"
    assert report["error"]["message"] == (
        "the worker could not be started: a file-size limit on this process (ulimit -f) refused "
        "its files in the temporary folder (file too large); raise or remove the limit")
    # The same interpreter without the limit gets to its own verdict.
    result = run_tool(str(notorch_python), pyz, ["--device", "cpu"])
    assert result.returncode == 3, result.stdout
