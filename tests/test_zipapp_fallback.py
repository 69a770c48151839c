"""The zipapp still runs when its importer cannot work on a later Python (src/.../_zipapp.py).

The zipapp names each module's file with a subclass of ``zipimport.zipimporter`` (CPython
gh-141276). Each test below breaks, in a child interpreter and before the real archive runs, what
that subclass leans on, the way a later CPython might: the class can no longer be subclassed, its
constructor takes other arguments, or its ``archive`` and ``prefix`` attributes are renamed (a
copy of that Python's own ``zipimport.py`` with the names changed). The check must then run as
always, on zipimport's own importer, with every module's ``__file__`` what zipimport says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SUPPORTED_PYTHONS, clean_env, pyenv_python

# argv: ARCHIVE SCENARIO RESULT_FILE. Breaks zipimport as SCENARIO says, runs the archive as
# ``python ARCHIVE --device cpu --format json`` does, then writes what happened to RESULT_FILE.
PROBE = r"""
import json, os, re, runpy, sys, types, zipimport
archive, scenario, result_file = sys.argv[1:4]
plain = zipimport.zipimporter
if scenario == "not_subclassable":
    def refuse(cls, **kwargs):
        raise TypeError("type 'zipimport.zipimporter' is not an acceptable base type")
    plain.__init_subclass__ = classmethod(refuse)
elif scenario == "constructor_changed":
    init = plain.__init__
    def changed(self, *args, **kwargs):
        if type(self) is not plain:
            raise TypeError("zipimporter() takes a path and a mode")
        init(self, *args, **kwargs)
    plain.__init__ = changed
elif scenario == "attributes_renamed":
    with open(os.path.join(os.path.dirname(os.__file__), "zipimport.py")) as file:
        source = re.sub(r"\.(archive|prefix)\b", r"._later_\1", file.read())
    later = types.ModuleType("zipimport")
    exec(compile(source, "zipimport.py", "exec"), later.__dict__)
    sys.modules["zipimport"] = later
    sys.path_hooks[:] = [later.zipimporter if hook is plain else hook for hook in sys.path_hooks]
    sys.path_importer_cache.clear()
    plain = later.zipimporter
sys.argv = [archive, "--device", "cpu", "--format", "json"]
try:
    runpy.run_path(archive, run_name="__main__")
except SystemExit as exc:
    status = exc.code
from kernodeck_diagnostic import _zipapp, cli
folder = os.path.dirname(cli.__file__)
said = plain(folder).get_filename("kernodeck_diagnostic.cli")  # zipimport's own answer
result = {"status": status, "file": cli.__file__, "zipimport_says": said,
          "importer": type(sys.path_importer_cache[folder]).__name__,
          "hook_gives": type(_zipapp._hook(folder)).__name__}
if _zipapp._IMPORTER is not None and scenario != "constructor_changed":
    result["named_later"] = _zipapp._IMPORTER(folder).get_filename("kernodeck_diagnostic.cli")
with open(result_file, "w") as file:
    json.dump(result, file)
"""
TORCH_MISSING = 3  # the Pythons these tests run have no torch: the check runs to that verdict


def probe(python: Path | str, pyz: Path, scenario: str, tmp_path: Path) -> dict[str, object]:
    result_file = tmp_path / f"{scenario}.json"
    completed = subprocess.run([str(python), "-I", "-c", PROBE, str(pyz), scenario,
                                str(result_file)], capture_output=True, text=True, timeout=120,
                               env=clean_env(), cwd=tmp_path, check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout)
    assert report["code"] == "TORCH_MISSING", report["code"]
    result: dict[str, object] = json.loads(result_file.read_text())
    assert result["status"] == TORCH_MISSING
    assert result["file"] == result["zipimport_says"]
    return result


def test_unbroken_the_naming_importer_is_used(pyz: Path, tmp_path: Path) -> None:
    """The control: on this Python the subclass works, so the tests below can tell."""
    result = probe(sys.executable, pyz, "none", tmp_path)
    assert result["importer"] == result["hook_gives"] == "_NamingImporter"
    assert result["named_later"] == result["zipimport_says"]


@pytest.mark.parametrize("scenario", ["not_subclassable", "constructor_changed",
                                      "attributes_renamed"])
def test_a_broken_subclass_falls_back_to_zipimport(pyz: Path, tmp_path: Path,
                                                    scenario: str) -> None:
    result = probe(sys.executable, pyz, scenario, tmp_path)
    assert result["importer"] == "zipimporter"  # found wanting at install: never installed
    if scenario == "attributes_renamed":
        # Had it been installed, naming a module fails at first use: zipimport's answer then.
        assert result["named_later"] == result["zipimport_says"]
    else:
        # No subclass can be made: the path hook, had it been installed, gives zipimport's.
        assert result["hook_gives"] == "zipimporter"


@pytest.mark.slow
@pytest.mark.parametrize("minor", SUPPORTED_PYTHONS)
def test_each_python_falls_back_with_its_own_zipimport(pyz: Path, tmp_path: Path,
                                                       minor: str) -> None:
    python = pyenv_python(minor)
    if python is None:
        pytest.skip(f"no pyenv Python {minor} here")
    assert probe(python, pyz, "none", tmp_path)["importer"] == "_NamingImporter"
    result = probe(python, pyz, "attributes_renamed", tmp_path)
    assert result["importer"] == "zipimporter"
    assert result["named_later"] == result["zipimport_says"]
