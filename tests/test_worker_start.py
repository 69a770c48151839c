"""The worker started before the command line is read (supervision/start.py): used by the check
it was started for, discarded by anything else, and never left behind, whatever ends the front.
Real processes throughout: the worker waits for its request on a real pipe."""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FAKES, SRC, clean_env, fake_gpu_env, pids_gone
from kernodeck_diagnostic.cli import may_be_a_check
from kernodeck_diagnostic.supervision import start

# Records, in the front only, every worker it starts: the spawn audit event of a command line
# that waits for its request (that command line), or the front's fork (``[interpreter, "fork"]``:
# the early worker, supervision/start.py's fork_early).
RECORDER = """
import json, os, sys
if "--events" not in sys.argv and os.environ.get("KD_TEST_STARTS"):
    _front = os.getpid()
    def _hook(event, args):
        started = None
        if (event in ("subprocess.Popen", "os.posix_spawn")
                and "--request-on-stdin" in list(args[1] or ())):
            started = list(args[1])
        elif event == "os.fork" and os.getpid() == _front:
            started = [sys.executable, "fork"]
        if started is not None and os.getpid() == _front:
            with open(os.environ["KD_TEST_STARTS"], "a") as file:
                file.write(json.dumps(started) + "\\n")
    sys.addaudithook(_hook)
"""
# Started as the front's parent would start it by a start-up hook that runs a thread (a
# profiler's, say): the early worker cannot be the front forked, it is a new interpreter.
A_THREAD = """
import threading, time
threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
"""


def _front(tmp_path: Path, args: list[str], **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                                   list[list[str]], Path]:
    """``python -m kernodeck_diagnostic ARGS`` with its own temporary folder; what it printed,
    the workers it started, and that folder."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(RECORDER, encoding="utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    starts = tmp_path / "starts.jsonl"
    paths = [str(site), str(SRC), *env.pop("PYTHONPATH", "").split(os.pathsep)]
    completed = subprocess.run(
        [sys.executable, "-m", "kernodeck_diagnostic", *args], capture_output=True, text=True,
        timeout=120, stdin=subprocess.DEVNULL, check=False,
        env=clean_env({**env, "TMPDIR": str(temp), "KD_TEST_STARTS": str(starts),
                       "PYTHONPATH": os.pathsep.join(path for path in paths if path)}))
    started = ([json.loads(line) for line in starts.read_text(encoding="utf-8").splitlines()]
               if starts.exists() else [])
    return completed, started, temp


def _worker_processes(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` (the workers started there) or that
    hold a file of it open (a worker forked from the front, whose output goes there)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes()
                held = [os.readlink(f"/proc/{entry}/fd/{fd}")
                        for fd in os.listdir(f"/proc/{entry}/fd")]
            except OSError:
                continue
            if str(folder).encode() in command or any(
                    path.startswith(str(folder) + os.sep) for path in held):
                found.append(int(entry))
    return found


def test_the_check_uses_the_worker_started_before_its_command_line_was_read(
        tmp_path: Path) -> None:
    """One worker for one check: the one started first thing, which received its request."""
    completed, started, temp = _front(tmp_path, ["--device", "cpu", "--format", "json"],
                                      **fake_gpu_env("cuda_pass", PYTHONPATH=str(FAKES)))
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["code"] == "CPU_CHECK_PASSED"
    assert len(started) == 1, started
    assert list(temp.iterdir()) == []  # its private folder removed


@pytest.mark.parametrize("args", [["--device", "cpux"], ["--timeout", "500"],
                                  ["--device", "cpu", "--output", "-"]])
def test_a_usage_error_leaves_no_worker_and_no_folder(tmp_path: Path, args: list[str]) -> None:
    """The worker started for what looked like a check is discarded when the command line is
    refused: the usage error as before, no process left, no private folder."""
    completed, started, temp = _front(tmp_path, args)
    assert completed.returncode == 2, completed.stderr
    assert "error" in completed.stderr
    assert len(started) == 1, "no worker was started early: this test proves nothing"
    assert pids_gone(_worker_processes(temp)) == []
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["summarize", "--help"],
                                  ["--python", sys.executable, "--help"]])
def test_no_worker_is_started_for_what_is_no_check_of_this_interpreter(
        tmp_path: Path, args: list[str]) -> None:
    completed, started, temp = _front(tmp_path, args)
    assert completed.returncode == 0, completed.stderr
    assert started == []
    assert list(temp.iterdir()) == []


@pytest.mark.slow
def test_another_interpreter_gets_a_worker_of_its_own(tmp_path: Path,
                                                      notorch_python: Path) -> None:
    """--python: the check runs in that interpreter, never in the one started early."""
    completed, started, temp = _front(tmp_path, ["--python", str(notorch_python),
                                                 "--format", "json"])
    assert completed.returncode != 2, completed.stderr
    report = json.loads(completed.stdout)
    assert report["code"] == "TORCH_MISSING", report["code"]
    assert [argv[0] for argv in started] == [str(notorch_python)]
    assert list(temp.iterdir()) == []


def test_a_waiting_worker_ends_with_the_front_and_removes_its_folder() -> None:
    """The front gone before it sent the request (its pipe's end, whatever ended it): the
    worker imports nothing, removes its private folder and exits, or, on Linux, where its watch
    runs already (stages.WATCHES_FIRST), is killed by the watch that saw the same end first."""
    started = start.start(sys.executable)
    try:
        assert started.process.stdin is not None
        started.process.stdin.close()  # as the front's death closes it
        ended = started.process.wait(30)
        assert ended == 0 or (sys.platform.startswith("linux") and ended == -signal.SIGKILL)
        assert not os.path.exists(started.folder)
        assert started.events.read() == b""  # not one event: it never began the check
    finally:
        started.close()


# A front that starts its early worker, says which, and waits for its end: the test kills it
# before it sends a request. Forked, as the console script's front is (can_fork_early's answer
# for the command itself), or a new interpreter.
_FRONT_THAT_NEVER_ASKS = """
import json, sys, time
from kernodeck_diagnostic.supervision import start
if sys.argv[1] == "forked":
    start.can_fork_early = lambda python: True
start.start_early()
(waiting,) = start._EARLY
print(json.dumps([waiting.process.pid, waiting.folder]), flush=True)
time.sleep(300)
"""


def _group(leader: int) -> list[int]:
    """The live processes of the process group ``leader`` leads."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[2] == str(leader) and fields[0] not in ("Z", "X"):
            found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: the watch starts first")
@pytest.mark.parametrize("how", ["forked", "new interpreter"])
def test_a_front_killed_before_its_request_leaves_no_worker_watch_or_folder(
        tmp_path: Path, how: str) -> None:
    """The worker's watch is forked before the worker loads anything or reads its request
    (stages.WATCHES_FIRST): a front killed by SIGKILL while its worker waits (a closed terminal,
    a launcher's kill) leaves no process of the worker's group and no private folder."""
    front = subprocess.Popen(
        [sys.executable, "-c", _FRONT_THAT_NEVER_ASKS, how], stdout=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL, env=clean_env({"PYTHONPATH": str(SRC), "TMPDIR": str(tmp_path)}))
    try:
        assert front.stdout is not None
        worker, folder = json.loads(front.stdout.readline())
        deadline = time.monotonic() + 30
        while len(_group(worker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        group = _group(worker)
        assert len(group) == 2, "the worker and its watch, before any request"
        assert os.path.isdir(folder)
        front.kill()
        front.wait(30)
        assert pids_gone(group, within_s=10) == []
        assert not os.path.exists(folder)
    finally:
        front.kill()
        front.wait(30)
        if front.stdout is not None:
            front.stdout.close()


@pytest.mark.slow
def test_the_early_worker_is_taken_only_by_its_own_interpreter(notorch_python: Path) -> None:
    start.start_early()
    early = start.take(str(notorch_python))
    assert early is None
    assert start._EARLY == []
    start.start_early()
    (waiting,) = start._EARLY
    assert start.take(sys.executable) is waiting
    waiting.close()
    assert pids_gone([waiting.process.pid]) == []
    assert not os.path.exists(waiting.folder)


def test_an_early_worker_no_check_took_is_discarded() -> None:
    start.start_early()
    (waiting,) = start._EARLY
    start.discard_early()
    assert start._EARLY == []
    assert pids_gone([waiting.process.pid]) == []
    assert not os.path.exists(waiting.folder)


@pytest.mark.parametrize(("argv", "expected"), [
    ([], True), (["--device", "cpu"], True), (["--output", "r.json", "--host-check"], True),
    (["--device", "cpux"], True),  # refused later: the worker started is discarded
    (["summarize", "reports/"], False), (["compare", "a", "b"], False),
    (["--help"], False), (["--device", "cpu", "-h"], False),
    (["--python", "/usr/bin/python3"], False), (["--pyth", "/usr/bin/python3"], False),
    (["--python=/usr/bin/python3"], False),
])
def test_what_looks_like_a_check_of_this_interpreter(argv: list[str], expected: bool) -> None:
    assert may_be_a_check(argv) is expected


def test_the_front_still_ends_as_a_python_program_does(tmp_path: Path) -> None:
    """The console script freezes its objects out of the collector before it exits (a shorter
    teardown), never ``os._exit``: the atexit handlers of the user's start-up (a coverage tool,
    a profiler) still run, and what was printed is flushed."""
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "atexit-ran"
    (site / "sitecustomize.py").write_text(
        "import atexit, gc, os\n"
        "if '--events' not in __import__('sys').argv:\n"
        "    atexit.register(lambda: open(os.environ['KD_TEST_MARKER'], 'w').write("
        "str(gc.get_freeze_count() > 0)))\n", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "kernodeck_diagnostic", "--device", "cpu", "--format", "json"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
        env=clean_env({**fake_gpu_env("cuda_pass"), "KD_TEST_MARKER": str(marker),
                       "PYTHONPATH": os.pathsep.join([str(site), str(SRC), str(FAKES)])}))
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["code"] == "CPU_CHECK_PASSED"
    assert marker.read_text(encoding="utf-8") == "True"  # ran, after the freeze


# In the worker only (a process whose arguments are the worker's by then: a forked one's are set
# as it becomes the worker): each of the worker's files it compiles (the "compile" audit event),
# by name and size on disk; a module loaded from its bytecode is not compiled.
COMPILES = """
import os, sys
if os.environ.get("KD_TEST_COMPILED"):
    def _hook(event, args):
        if (event == "compile" and "--events" in sys.argv
                and ("kernodeck-" in str(args[1]) or os.sep + "worker" + os.sep in str(args[1]))):
            size = os.path.getsize(args[1]) if os.path.isfile(args[1]) else -1
            with open(os.environ["KD_TEST_COMPILED"], "a") as file:
                file.write(f"{os.path.basename(args[1])} {size}\\n")
    sys.addaudithook(_hook)
"""


@pytest.mark.parametrize("how", ["installed", "zipapp"])
@pytest.mark.parametrize("started", ["forked", "new interpreter"])
def test_the_worker_compiles_nothing_but_its_short_script(tmp_path: Path, pyz: Path,
                                                          how: str, started: str) -> None:
    """With the package's bytecode (an install has it: pip compiles every module; the zipapp
    holds it for the Python that built it, scripts/build_pyz.py), the worker runs its module and
    its companions from that bytecode: a new interpreter compiles only its script, the launcher
    of a few lines, on every check (issue 28); the front forked compiles nothing. Everything is
    loaded before ``import torch``, which fails here (no torch in this interpreter): a real
    run."""
    worker = SRC / "kernodeck_diagnostic" / "worker"
    for path in worker.glob("*.py"):
        py_compile.compile(str(path), cfile=importlib.util.cache_from_source(str(path)),
                           doraise=True)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        COMPILES + (A_THREAD if started == "new interpreter" else ""), encoding="utf-8")
    compiled = tmp_path / "compiled.txt"
    command = ["-m", "kernodeck_diagnostic"] if how == "installed" else [str(pyz)]
    completed = subprocess.run(
        [sys.executable, *command, "--device", "cpu", "--format", "json"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
        env=clean_env({"KD_TEST_COMPILED": str(compiled),
                       "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}))
    report = json.loads(completed.stdout)
    assert report["stage"] == "import", report["code"]  # every companion was loaded before it
    launcher = (worker / "launcher.py").stat().st_size
    expected = ["worker.py", str(launcher)] if started == "new interpreter" else []
    seen = compiled.read_text(encoding="utf-8").split() if compiled.exists() else []
    assert seen == expected


STUB_STAGES = """
import json, sys
def main():
    module = sys.modules["_kernodeck_worker_stages"]
    json.dump({"name": __name__, "startup": sorted(STARTUP_MODULES),
               "same": module is sys.modules[__name__]}, sys.stdout)
    return 7
"""
PLAIN_SCRIPT = """from __future__ import annotations
import sys
import time
loaded = sorted(sys.modules)
import json
json.dump(loaded, sys.stdout)
"""


def test_the_worker_script_hands_the_worker_module_what_was_loaded_before_it(
        tmp_path: Path) -> None:
    """The worker module, run by the launcher, reads as loaded before the user's script exactly
    what a script's first line sees (``STARTUP_MODULES``, which the shadowing checks read): not
    the launcher's own imports, nor json's. Its status is the process's."""
    (tmp_path / "worker.py").write_bytes(start.worker_files()["worker.py"])
    (tmp_path / "stages.py").write_text(STUB_STAGES, encoding="utf-8")
    (tmp_path / "plain.py").write_text(PLAIN_SCRIPT, encoding="utf-8")
    env = clean_env()
    ran = subprocess.run([sys.executable, str(tmp_path / "worker.py")], capture_output=True,
                         text=True, timeout=60, env=env, check=False)
    plain = subprocess.run([sys.executable, str(tmp_path / "plain.py")], capture_output=True,
                           text=True, timeout=60, env=env, check=True)
    assert ran.returncode == 7, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen["name"] == "_kernodeck_worker_stages"
    assert seen["same"]
    assert seen["startup"] == json.loads(plain.stdout)
    assert "json" not in seen["startup"]


# In the front only: each module first imported after the interpreter's start-up and before the
# worker's start (the spawn or fork audit event), in order.
BEFORE_THE_WORKER = """
import json, os, sys
if "--events" not in sys.argv and os.environ.get("KD_TEST_BEFORE"):
    _loaded = []
    def _hook(event, args):
        if event == "import" and args[0] not in sys.modules and args[0] not in _loaded:
            _loaded.append(args[0])
        elif (event in ("subprocess.Popen", "os.posix_spawn", "os.fork")
              and _loaded[:1] != [None]):
            with open(os.environ["KD_TEST_BEFORE"], "w") as file:
                json.dump(_loaded, file)
            _loaded[:] = [None]  # the worker's start: nothing more to record
    sys.addaudithook(_hook)
"""
# What reading the command line needs, or the supervision once the worker runs: loaded after it.
# (typing and subprocess with threading, selectors and locale: about 7 and 10 ms here.)
NOT_BEFORE_THE_WORKER = {"typing", "subprocess", "threading", "selectors", "tempfile", "shutil",
                         "argparse", "dataclasses", "json", "kernodeck_diagnostic.worker.protocol",
                         "kernodeck_diagnostic.children"}


# What pip writes as the console script (pip's own template: it imports re first).
CONSOLE_SCRIPT = """import re
import sys
import time
from kernodeck_diagnostic.cli import entry
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(entry())
"""
# What runpy loads itself (for python -m and for an archive); the console script does not.
NOT_BEFORE_THE_WORKER_OF_THE_SCRIPT = {"importlib.util", "warnings"}


@pytest.mark.parametrize("how", ["console script", "python -m", "zipapp"])
def test_the_front_loads_nothing_before_the_worker_that_can_wait(
        tmp_path: Path, pyz: Path, how: str) -> None:
    """The worker's start is the check's critical path: before it, the front loads the
    package, ``cli`` and ``supervision.start`` and their few standard modules, nothing else."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BEFORE_THE_WORKER, encoding="utf-8")
    before = tmp_path / "before.json"
    script = tmp_path / "kernodeck-diagnostic"
    script.write_text(CONSOLE_SCRIPT, encoding="utf-8")
    command = {"console script": [str(script)], "python -m": ["-m", "kernodeck_diagnostic"],
               "zipapp": [str(pyz)]}[how]
    completed = subprocess.run(
        [sys.executable, *command, "--device", "cpu", "--format", "json"], capture_output=True,
        text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
        env=clean_env({"KD_TEST_BEFORE": str(before),
                       "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}))
    assert json.loads(completed.stdout)["stage"] == "import"  # no torch in this interpreter
    loaded = json.loads(before.read_text(encoding="utf-8"))
    assert "kernodeck_diagnostic.supervision.start" in loaded
    assert NOT_BEFORE_THE_WORKER.isdisjoint(loaded), loaded
    if how == "console script":
        assert NOT_BEFORE_THE_WORKER_OF_THE_SCRIPT.isdisjoint(loaded), loaded


def _shell_front(tmp_path: Path, redirections: str) -> tuple[subprocess.CompletedProcess[str],
                                                              list[list[str]], Path]:
    """``python -m kernodeck_diagnostic --device cpu --format json`` started by a shell with
    ``redirections`` (a descriptor closed, one left open), the fake torch of a passing CPU
    check; what it printed, the workers it started and its temporary folder."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(RECORDER + FDS, encoding="utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    starts = tmp_path / "starts.jsonl"
    script = (f'exec "$0" -m kernodeck_diagnostic --device cpu --format json {redirections}')
    completed = subprocess.run(
        ["bash", "-c", script, sys.executable], capture_output=True, text=True, timeout=120,
        check=False,
        env=fake_gpu_env("cuda_pass", TMPDIR=str(temp), KD_TEST_STARTS=str(starts),
                         KD_TEST_FDS=str(tmp_path / "fds"),
                         PYTHONPATH=os.pathsep.join([str(site), str(SRC), str(FAKES)])))
    started = ([json.loads(line) for line in starts.read_text(encoding="utf-8").splitlines()]
               if starts.exists() else [])
    return completed, started, temp


# The descriptors each process holds: the front's as it starts, the worker's as it imports torch
# (a forked worker has none of its own before): "front" or "worker", then each one's number and
# what it is open on (a number alone may be the worker's own file, opened where one was closed).
FDS = """
def _target(fd):
    try:
        return os.readlink("/proc/self/fd/" + fd)
    except OSError:
        return None
def _held(who):
    with open(os.environ["KD_TEST_FDS"], "a") as _file:
        _file.write(json.dumps([who, sorted([int(fd), _target(fd)]
                                            for fd in os.listdir("/proc/self/fd")
                                            if fd != str(_file.fileno()))]) + "\\n")
if os.environ.get("KD_TEST_FDS"):
    if "--events" not in sys.argv:
        _held("front")
    def _at_torch(event, args):
        if event == "import" and args[0] == "torch" and "--events" in sys.argv:
            _held("worker")
    sys.addaudithook(_at_torch)
"""


def test_a_descriptor_the_front_inherited_is_not_passed_on_to_the_worker(tmp_path: Path) -> None:
    """A descriptor the front's parent left open and inheritable (the shell's ``5>``) is not the
    worker's: it is closed as Popen's ``close_fds`` would (the worker is started without
    subprocess, with posix_spawn)."""
    completed, started, temp = _shell_front(tmp_path, "5>/dev/null")
    assert json.loads(completed.stdout)["code"] == "CPU_CHECK_PASSED", completed.stderr
    assert len(started) == 1
    held = {who: dict(fds) for who, fds in (json.loads(line) for line in
                                             (tmp_path / "fds").read_text().splitlines())}
    assert held["front"].get(5) == os.devnull
    assert os.devnull not in [target for fd, target in held["worker"].items() if fd > 2]
    assert list(temp.iterdir()) == []


def test_a_front_whose_stdin_is_closed_still_runs_its_check(tmp_path: Path) -> None:
    """With its stdin closed (``<&-``), the pipe the worker reads its request on would take
    descriptor 0: the early start gives up before starting anything, and the check starts its
    worker with subprocess, which handles that case. (This machine's glibc, 2.29 or later,
    would also clear close-on-exec in posix_spawn's dup2 of 0 onto 0; glibc 2.26 to 2.28,
    Ubuntu 18.04's, would not, and the worker would start without a stdin.)"""
    completed, started, temp = _shell_front(tmp_path, "<&-")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["code"] == "CPU_CHECK_PASSED"
    assert len(started) == 1
    assert list(temp.iterdir()) == []


# A torch that says what the program importing it sees, then fails to import.
SEEING_TORCH = """
import json, os, sys
main = sys.modules["__main__"]
json.dump({"path": sys.path, "argv": [os.path.basename(word) for word in sys.argv[1:]],
           "main": "entry" in vars(main) or main.__spec__ is not None,
           "launcher": "load" in vars(main),  # worker/launcher.py runs as __main__
           "stdout_line_buffered": sys.stdout.line_buffering,
           "flags": [sys.flags.isolated, sys.flags.no_user_site, sys.flags.optimize],
           "warnoptions": sys.warnoptions,
           "session_leader": os.getsid(0) == os.getpid()},
          open(os.environ["KD_TEST_SEEN"], "w"))
raise ImportError("the torch of the test only looks")
"""


@pytest.mark.parametrize("options", [[], ["-s", "-O", "-W", "error::ResourceWarning"]])
def test_the_forked_worker_imports_torch_as_a_new_interpreter_would(tmp_path: Path,
                                                                    options: list[str]) -> None:
    """The front forked as the worker and the worker started as a new interpreter (the front's
    start-up runs a thread) see the same when torch imports: the import path, the arguments, a
    ``__main__`` of their own (never the front's, which multiprocessing's spawn would run
    again), stdout buffered as a file is, the interpreter's options, their own session."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\nif os.environ.get('KD_TEST_THREAD'):\n" + "".join(
            "    " + line + "\n" for line in A_THREAD.strip().splitlines()), encoding="utf-8")
    installed = tmp_path / "installed"
    (installed / "torch").mkdir(parents=True)
    (installed / "torch" / "__init__.py").write_text(SEEING_TORCH, encoding="utf-8")
    shutil.copytree(FAKES / "torch-2.7.0.dist-info", installed / "torch-2.7.0.dist-info")
    work = tmp_path / "work"
    work.mkdir()
    seen = {}
    for started in ("forked", "new interpreter"):
        record = tmp_path / f"{started}.json"
        completed = subprocess.run(
            [sys.executable, *options, "-m", "kernodeck_diagnostic", "--device", "cpu",
             "--format", "json"], capture_output=True, text=True, timeout=120, cwd=work,
            stdin=subprocess.DEVNULL, check=False,
            env=clean_env({"KD_TEST_SEEN": str(record),
                           "KD_TEST_THREAD": "1" if started == "new interpreter" else "",
                           "PYTHONPATH": os.pathsep.join(map(str, (site, SRC, installed)))}))
        assert json.loads(completed.stdout)["code"] == "TORCH_IMPORT_FAILED", completed.stderr
        seen[started] = json.loads(record.read_text(encoding="utf-8"))
    forked, new = seen["forked"], seen["new interpreter"]
    assert (forked.pop("launcher"), new.pop("launcher")) == (False, True)  # two ways indeed
    assert forked["path"][0] == new["path"][0] == str(work)
    assert forked == new
    assert forked["argv"] == ["--events", "events.jsonl", "--watch-front", "--request-on-stdin"]
    assert not forked["main"]  # not the front's: neither the package's __main__ nor the script's
    assert not forked["stdout_line_buffered"]
    assert forked["session_leader"]


# A worker as fork_early leaves it once it is done: its final event written, a line on the pipe
# that says so, then an exit that takes long (a GPU context torn down, torch's memory given back).
DONE_THEN_A_LONG_EXIT = """
import json, os, sys, time
with open(sys.argv[1], "a") as events:
    events.write(json.dumps({"event": "final", "t_ms": 1.0}) + "\\n")
os.write(int(sys.argv[2]), b"\\n")
time.sleep(600)
"""


def test_a_worker_that_said_it_is_done_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script's check reads the result and goes on as soon as its forked worker says
    it is done, without waiting for its exit (nor for the grace an exit gets after the final
    event: a minute here); the worker is killed all the same, and reaped by the system once the
    front has ended (here, by the test)."""
    from kernodeck_diagnostic.supervision import supervisor

    monkeypatch.setattr(supervisor, "FINAL_GRACE_S", 60.0)
    folder = start.private_folder()
    events = os.path.join(folder, "events.jsonl")
    open(events, "wb").close()
    done, says_done = os.pipe()
    out = open(os.path.join(folder, "stdout"), "ab")  # noqa: SIM115 - Started.close closes it
    err = open(os.path.join(folder, "stderr"), "ab")  # noqa: SIM115
    process = subprocess.Popen([sys.executable, "-c", DONE_THEN_A_LONG_EXIT, events,
                                str(says_done)], pass_fds=(says_done,), stdin=subprocess.PIPE,
                               stdout=out, stderr=err, start_new_session=True)
    os.close(says_done)
    started = start.Started(sys.executable, [], [sys.executable], folder, process=process,
                            captures=(out, err), events=open(events, "rb"),  # noqa: SIM115
                            early=True, done=done)
    try:
        began = time.monotonic()
        run = supervisor._supervise(started, ["--device", "cpu"], timeout_s=300,
                                    on_progress=None)
        assert time.monotonic() - began < 30
        assert run.outcome == "finished"
        assert run.returncode is None  # not waited for
        assert pids_gone([process.pid]) == []  # killed all the same
    finally:
        started.close()
        process.wait(30)
    assert not os.path.exists(folder)


# A start-up hook of the user's: an atexit handler and, with KD_TEST_THREAD, a thread that is no
# daemon, which the interpreter waits for before it ends. Each writes a line to KD_TEST_ENDING.
ENDING_HOOK = """
import atexit, os, sys, threading, time
if "--events" not in sys.argv and os.environ.get("KD_TEST_ENDING"):
    def _say(what):
        with open(os.environ["KD_TEST_ENDING"], "a") as file:
            file.write(what + "\\n")
    atexit.register(_say, "atexit")
    if os.environ.get("KD_TEST_THREAD"):
        threading.Thread(target=lambda: (time.sleep(1), _say("thread"))).start()
"""


@pytest.mark.parametrize("thread", [False, True], ids=["alone", "with a thread"])
def test_the_command_ends_as_a_program_would(tmp_path: Path, thread: bool) -> None:
    """Ended without the interpreter's teardown (``cli.end``), the command still runs the atexit
    handlers of the user's start-up and flushes its whole output; a thread of that start-up that
    is no daemon is waited for, by the interpreter's own ending."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(ENDING_HOOK, encoding="utf-8")
    ending = tmp_path / "ending"
    completed = subprocess.run(
        [sys.executable, "-m", "kernodeck_diagnostic", "--device", "cpu", "--format", "json"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
        env=clean_env({**fake_gpu_env("cuda_pass"), "KD_TEST_ENDING": str(ending),
                       "KD_TEST_THREAD": "1" if thread else "",
                       "PYTHONPATH": os.pathsep.join([str(site), str(SRC), str(FAKES)])}))
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["code"] == "CPU_CHECK_PASSED"  # flushed, whole
    said = ending.read_text(encoding="utf-8").split()
    assert said == (["thread", "atexit"] if thread else ["atexit"])


def test_the_command_itself_ends_with_os_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cli.end`` as the command itself: the atexit handlers, the streams flushed, then
    ``os._exit`` with the status; run by another program: ``SystemExit``, the interpreter's."""
    import atexit

    from kernodeck_diagnostic import cli, interpreter

    ran: list[str] = []

    class Ended(BaseException):
        pass

    def exit_now(status: int) -> None:
        ran.append(f"os._exit({status})")
        raise Ended

    # This process's own handlers (pytest's) are not run: what cli.end runs them with is.
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: ran.append("atexit"))
    monkeypatch.setattr(interpreter, "started_as_a_program", lambda: True)
    monkeypatch.setattr(os, "_exit", exit_now)
    with pytest.raises(Ended):
        cli.end(3)
    assert ran == ["atexit", "os._exit(3)"]
    monkeypatch.setattr(interpreter, "started_as_a_program", lambda: False)
    with pytest.raises(SystemExit) as ended:
        cli.end(4)
    assert ended.value.code == 4
    assert ran == ["atexit", "os._exit(3)"]


def test_a_program_that_runs_the_command_in_its_process_goes_on(tmp_path: Path) -> None:
    """Run by another program (runpy, as a harness does), the command ends with SystemExit as
    before: that program goes on, with its own ending."""
    code = ("import runpy, sys\n"
            "sys.argv = ['kernodeck_diagnostic', '--device', 'cpu', '--format', 'json']\n"
            "try:\n"
            "    runpy.run_module('kernodeck_diagnostic', run_name='__main__', alter_sys=True)\n"
            "except SystemExit as exc:\n"
            "    print('went on after', exc.code, file=sys.stderr)\n")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=120, stdin=subprocess.DEVNULL, check=False,
                               env=clean_env({**fake_gpu_env("cuda_pass"), "PYTHONPATH":
                                              os.pathsep.join([str(SRC), str(FAKES)])}))
    assert completed.returncode == 0, completed.stderr
    assert "went on after 0" in completed.stderr
