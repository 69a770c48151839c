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

import json
import os
import shutil
import subprocess
import sys
import tempfile
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
