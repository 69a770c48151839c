"""A SIGKILL of the tool ends the program it was running (``ramp``, ``resume-check``): the guard.

Real processes: the front is killed with SIGKILL (no handler of its own can run) while the user's
program and a child of that program run; both are gone moments later, not re-parented to init.
A normal end kills nothing: the program's own long-lived child, started in a session of its own
(a daemon), is left to the subreaper's rules, and the guard is gone with the front.

And the program's peak memory is its own: never the tool's, which Linux reports for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import clean_env
from trial_helpers import SRC, write_app

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX sessions and signals")

# The user's program: a child of its own, both pids written once both run, then it waits.
APP = """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    with open("pids.txt", "w") as pids:
        pids.write(f"{child.pid} {__import__('os').getpid()}\\n")
    time.sleep(300)
"""

COMMANDS = {
    "resume-check": ["resume-check", "--ledger", "ledger.jsonl", "--stop-after", "250", "--",
                     sys.executable, "app.py"],
    "ramp": ["ramp", "--axis", "batch", "--start", "1", "--stop", "2", "--out", "ramp", "--",
             sys.executable, "app.py", "{batch}"],
}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")  # a zombie has ended: only its parent's wait is left
    except FileNotFoundError:
        return False
    except OSError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 0)
            return True
        return False


def _pids(path: Path, deadline: float) -> list[int]:
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError, ValueError):
            text = path.read_text(encoding="utf-8")
            if text.endswith("\n"):
                return [int(word) for word in text.split()]
        time.sleep(0.05)
    raise AssertionError("the program never started")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_sigkill_of_the_tool_ends_the_program_and_its_children(tmp_path: Path,
                                                                  command: str) -> None:
    write_app(tmp_path, APP)
    private = tmp_path / "tmp"  # the front's private folders: none left after its SIGKILL
    private.mkdir()
    env = clean_env({"PYTHONPATH": str(SRC), "TMPDIR": str(private)})
    front = subprocess.Popen([sys.executable, "-m", "kernodeck_diagnostic", *COMMANDS[command]],
                             cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    pids: list[int] = []
    try:
        pids = _pids(tmp_path / "pids.txt", time.monotonic() + 60)
        assert all(_alive(pid) for pid in pids)
        front.kill()
        front.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in pids if _alive(pid)], "left running after the tool's SIGKILL"
        while list(private.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not list(private.iterdir()), "the tool's private folder left behind"
    finally:
        with contextlib.suppress(OSError):
            os.killpg(front.pid, signal.SIGKILL)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        front.wait(10)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="read from /proc")
def test_a_normal_end_leaves_no_guard_behind(tmp_path: Path) -> None:
    write_app(tmp_path, "import sys; sys.exit(3)\n")
    private = tmp_path / "tmp"
    private.mkdir()
    env = clean_env({"PYTHONPATH": str(SRC), "KD_GUARD_TEST_TAG": str(tmp_path),
                     "TMPDIR": str(private)})
    for command in ("ramp", "resume-check"):
        done = subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", *COMMANDS[command]],
                              cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=120, check=False)
        assert done.returncode != 0, command  # every run failed: not a pass, and it ended
    assert not list(private.iterdir())
    time.sleep(0.2)
    tagged = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                environ = Path(f"/proc/{name}/environ").read_bytes()
                if f"KD_GUARD_TEST_TAG={tmp_path}".encode() in environ.split(b"\0"):
                    tagged.append(name)
    assert not tagged, "a process of the run outlived the tool"


# The launcher of the program holds 600 MiB: wait4's ru_maxrss of a program of a few MiB then says
# 600 MiB (Linux keeps the launcher's peak across exec). The peak is unknown, never the tool's.
BIG_FRONT = """
    import sys
    from kernodeck_diagnostic.safe_files import Folder
    from kernodeck_diagnostic.supervision.application import run_application
    held = bytearray(600 * 2**20)
    for offset in range(0, len(held), 4096):
        held[offset] = 1
    captures = Folder.open("captures", create=True)
    small = run_application([sys.executable, "-c", "pass"], env={}, captures=captures,
                            stdout_name="small.out", stderr_name="small.err", timeout_s=60)
    big = run_application([sys.executable, "-c", "b = bytearray(900 * 2**20)\\n"
                           "for i in range(0, len(b), 4096): b[i] = 1"], env={},
                          captures=captures, stdout_name="big.out", stderr_name="big.err",
                          timeout_s=60)
    print(small.returncode, small.peak_rss_bytes, big.returncode, big.peak_rss_bytes)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's ru_maxrss at exec")
def test_a_programs_peak_is_never_the_tools_own(tmp_path: Path) -> None:
    script = write_app(tmp_path, BIG_FRONT, "front.py")
    done = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True,
                          text=True, env=clean_env({"PYTHONPATH": str(SRC)}), timeout=120,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    small_code, small_peak, big_code, big_peak = done.stdout.split()
    assert (small_code, small_peak, big_code) == ("0", "None", "0")  # not 600 MiB: unknown
    assert int(big_peak) > 900 * 2**20  # above the tool's: the program's own, kept
