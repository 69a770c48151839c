"""The front's critical path (docs/performance.md): the zipapp loads its modules from the
archive's bytecode, or compiles each module once, not twice; what reads the worker's result is
loaded, and the redaction's rules built, while it runs."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, SRC, clean_env, required_pyenv_python
from kernodeck_diagnostic import api
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.supervision import supervisor

# Runs the archive as ``python ARCHIVE ARGS...`` does, counting every compilation by file name,
# and records where zipimport alone would have put the modules (``__file__`` must not change) and
# the file the code of one of them names (tracebacks show it).
PROBE = """
import builtins, collections, json, runpy, sys, zipimport
archive = sys.argv[1]
counts = collections.Counter()
compile_ = builtins.compile
def counting(source, filename, *args, **kwargs):
    counts[str(filename)] += 1
    return compile_(source, filename, *args, **kwargs)
builtins.compile = counting
sys.argv = [archive, *sys.argv[2:]]
try:
    runpy.run_path(archive, run_name="__main__")
except SystemExit:
    pass
builtins.compile = compile_  # what follows asks plain zipimport, which compiles: not counted
from kernodeck_diagnostic import cli
from kernodeck_diagnostic.i18n import en
from kernodeck_diagnostic.commands import runner
plain = zipimport.zipimporter(archive + "/kernodeck_diagnostic")
files = {"cli": [cli.__file__, plain.get_filename("kernodeck_diagnostic.cli")],
         "en": [en.__file__, zipimport.zipimporter(archive + "/kernodeck_diagnostic/i18n")
                .get_filename("kernodeck_diagnostic.i18n.en")],
         "package": [sys.modules["kernodeck_diagnostic"].__file__,
                     zipimport.zipimporter(archive).get_filename("kernodeck_diagnostic")],
         "code": [cli.main.__code__.co_filename, cli.__file__]}
sys.stderr.write("KD-PROBE " + json.dumps({"counts": counts, "files": files,
                                           "stale": hasattr(runner, "KD_EDITED")}) + "\\n")
"""
# Compiled before the entry point can change anything: the bootstrap itself.
BOOTSTRAP = ("__main__.py", "kernodeck_diagnostic/__init__.py", "kernodeck_diagnostic/_zipapp.py",
             "kernodeck_diagnostic/package_data.py")
# Python 3.9's zipimport loads a module without asking the importer for its code: it compiles.
LOADS_BYTECODE = sys.version_info >= (3, 10)


def compiled(python: Path | str, pyz: Path, *args: str) -> tuple[dict[str, int], bool]:
    """What running the archive compiled, by file name in the archive (the bootstrap aside),
    and whether the edited source was the one loaded."""
    completed = subprocess.run([str(python), "-c", PROBE, str(pyz), *args], capture_output=True,
                               text=True, timeout=60, env=clean_env(), check=False)
    line = next(line for line in completed.stderr.splitlines() if line.startswith("KD-PROBE "))
    probe = json.loads(line.split(" ", 1)[1])
    for ours, zipimport_own in probe["files"].values():
        assert ours == zipimport_own
    counts = {name[len(str(pyz)) + 1:]: count for name, count in probe["counts"].items()
              if name.startswith(str(pyz))}
    assert all(counts.pop(name, 1) == 2 for name in BOOTSTRAP)  # zipimport's own: twice
    return counts, probe["stale"]


@pytest.mark.skipif(not LOADS_BYTECODE, reason="Python 3.9 compiles the archive's modules")
def test_the_front_loads_its_modules_from_the_archives_bytecode(pyz: Path) -> None:
    """Built with this Python's bytecode, the archive's front compiles nothing but its
    bootstrap (the four files loaded before its importer), through a whole check (this
    interpreter has no torch: the import fails)."""
    assert compiled(sys.executable, pyz, "--version") == ({}, False)
    assert compiled(sys.executable, pyz, "--device", "cpu", "--format", "json") == ({}, False)


def test_without_bytecode_for_its_python_each_module_is_compiled_once(pyz: Path) -> None:
    other = required_pyenv_python("3.12" if sys.version_info[:2] != (3, 12) else "3.11")
    counts, _ = compiled(other, pyz, "--version")
    assert "kernodeck_diagnostic/cli.py" in counts, counts
    assert set(counts.values()) == {1}, counts


@pytest.mark.skipif(not LOADS_BYTECODE, reason="Python 3.9 compiles the archive's modules")
def test_bytecode_that_is_not_its_sources_is_not_loaded(pyz: Path, tmp_path: Path) -> None:
    """An archive whose source was changed after its bytecode was made (by hand, by a tool that
    rewrites it): the source is what runs, compiled once, as Python does for stale bytecode."""
    edited = tmp_path / "edited.pyz"
    module = "kernodeck_diagnostic/commands/runner.py"
    with zipfile.ZipFile(pyz) as source, zipfile.ZipFile(edited, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            out.writestr(info, data + b"\nKD_EDITED = True\n" if info.filename == module else data)
    counts, stale = compiled(sys.executable, edited, "--version")
    assert (counts, stale) == ({module: 1}, True)


def test_a_release_loads_each_pythons_own_bytecode(tmp_path: Path) -> None:
    """Built for 3.9 and 3.12: 3.12 compiles nothing but the bootstrap; 3.9, whose zipimport
    never asks for a module's code (only the worker's bytecode is there for it), compiles each
    module once."""
    old, new = required_pyenv_python("3.9"), required_pyenv_python("3.12")
    release = tmp_path / "release.pyz"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "build_pyz.py"), "--output",
                    str(release), "--bytecode-for", str(old), str(new)],
                   check=True, timeout=120, capture_output=True)
    assert compiled(new, release, "--version") == ({}, False)
    counts, _ = compiled(old, release, "--version")
    assert "kernodeck_diagnostic/cli.py" in counts, counts
    assert set(counts.values()) == {1}, counts


@pytest.mark.parametrize("options", [[], ["-O"], ["-OO"]])
def test_the_bytecode_is_named_as_the_import_system_names_it(options: list[str]) -> None:
    # The front names it without loading importlib.util (package_data.bytecode_name): the same
    # name as cache_from_source, optimisation level included, or the bytecode is never found.
    probe = ("import importlib.util, os\n"
             "from kernodeck_diagnostic.package_data import bytecode_name\n"
             "for name in ('stages.py', '__init__.py'):\n"
             "    assert bytecode_name(name) == os.path.basename(\n"
             "        importlib.util.cache_from_source(name)), bytecode_name(name)\n"
             "print(bytecode_name('stages.py'))\n")
    completed = subprocess.run([sys.executable, *options, "-c", probe], capture_output=True,
                               text=True, timeout=60, env=clean_env({"PYTHONPATH": str(SRC)}),
                               check=False)
    assert completed.returncode == 0, completed.stderr
    level = {"-O": ".opt-1", "-OO": ".opt-2"}.get(options[0], "") if options else ""
    assert completed.stdout.strip() == f"stages.{sys.implementation.cache_tag}{level}.pyc"


# Runs the archive's check, recording in order the worker's start (its argv carries --watch-front)
# and the first import of the modules that read its result, its events and the machine's facts.
ORDER_PROBE = """
import runpy, sys
archive = sys.argv[1]
order = []
ended = []
def hook(event, args):
    if event in ("subprocess.Popen", "os.posix_spawn") and "--watch-front" in list(args[1] or ()):
        order.append("worker started")
    elif event == "shutil.rmtree" and "/kernodeck-" in str(args[0]) and not ended:
        ended.append("worker ended")  # read, its private folder removed
    elif event == "import" and ended and args[0] not in sys.modules and args[0] not in ended:
        ended.append(args[0])
    elif event == "import" and (args[0].startswith(("kernodeck_diagnostic.report.",
            "kernodeck_diagnostic.supervision.", "kernodeck_diagnostic.report_schema",
            "kernodeck_diagnostic.facts.", "kernodeck_diagnostic.commands.",
            "kernodeck_diagnostic.api", "kernodeck_diagnostic.children"))
            or args[0] in ("argparse", "dataclasses", "subprocess", "tempfile", "shutil",
                           "threading")) \
            and args[0] not in order and args[0] not in sys.modules:
        order.append(args[0])
sys.addaudithook(hook)
sys.argv = [archive, "--device", "cpu", *sys.argv[2:]]
try:
    runpy.run_path(archive, run_name="__main__")
except SystemExit:
    pass
sys.stderr.write("KD-ORDER " + ",".join(order) + "\\n")
sys.stderr.write("KD-ENDED " + ",".join(ended) + "\\n")
"""


def test_the_modules_that_read_the_result_load_while_the_worker_runs(pyz: Path) -> None:
    """Loading (compiling, where there is no bytecode) the findings, the report's builder and
    its redaction before the worker starts would delay the whole check by as much: they load
    once it runs."""
    completed = subprocess.run([sys.executable, "-c", ORDER_PROBE, str(pyz), "--format", "json"],
                               capture_output=True, text=True, timeout=60, env=clean_env(),
                               check=False)
    line = next(line for line in completed.stderr.splitlines() if line.startswith("KD-ORDER "))
    order = line.split(" ", 1)[1].split(",")
    started = order.index("worker started")
    # The worker is started first of all (supervision/start.py): before the command line is
    # read (argparse, the check's command, the API, dataclasses for the options), only what
    # starts it is loaded: not even subprocess (posix_spawn starts it), tempfile or shutil.
    # (This probe's runpy.run_path loads typing itself: see test_worker_start.py for it.)
    assert order[:started] == ["kernodeck_diagnostic.supervision.start"], order
    for module in ("argparse", "dataclasses", "kernodeck_diagnostic.commands.runner",
                   "kernodeck_diagnostic.api", "kernodeck_diagnostic.children",
                   "subprocess", "threading"):
        assert module in order[started:], order
    for module in ("report.findings", "report.redact", "report.libraries", "report.devices",
                   # what reads the worker's events and output (issue 28), the machine's facts
                   "supervision.events", "supervision.captures", "report_schema",
                   "facts.system"):
        assert f"kernodeck_diagnostic.{module}" in order[started:], ",".join(order)


def test_nothing_is_loaded_between_the_worker_s_end_and_the_verdict(pyz: Path) -> None:
    """Once the worker has ended, the verdict is on the critical path: a module first loaded then
    (compiled, where there is no bytecode), or hashlib's OpenSSL for the next line's key, delays
    it."""
    for output in ([], ["--format", "json"], ["--format", "markdown"]):  # the terminal's first
        completed = subprocess.run([sys.executable, "-c", ORDER_PROBE, str(pyz), *output],
                                   capture_output=True, text=True, timeout=60, env=clean_env(),
                                   check=False)
        line = next(line for line in completed.stderr.splitlines()
                    if line.startswith("KD-ENDED "))
        ended = line.split(" ", 1)[1].split(",")
        assert ended[0] == "worker ended", (output, ended)
        late = [name for name in ended[1:]
                if name.startswith("kernodeck_diagnostic") or name.lstrip("_") == "hashlib"]
        assert late == [], (output, ended)


def test_the_redaction_rules_are_built_while_the_worker_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Compiling them (the machine's names, folders and environment values) takes milliseconds
    # that the verdict would wait for once the worker has ended.
    worker_running = []
    built_while = []
    run_worker, for_this_machine = supervisor.run_worker, Redactor.for_this_machine

    def running_worker(*args: Any, **kwargs: Any) -> Any:
        worker_running.append(True)
        try:
            return run_worker(*args, **kwargs)
        finally:
            worker_running.append(False)

    def rules(*args: Any, **kwargs: Any) -> Redactor:
        built_while.append(worker_running[-1] if worker_running else None)
        return for_this_machine(*args, **kwargs)

    monkeypatch.setattr(supervisor, "run_worker", running_worker)
    monkeypatch.setattr(Redactor, "for_this_machine", rules)
    report = api.check(device="cpu")  # this interpreter has no torch: the import fails at once
    assert report.code == "TORCH_MISSING"
    assert built_while == [True]
