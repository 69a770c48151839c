"""Privacy and verdicts found by a review: spaces in paths, summarize's names, the tool's own words.

Each case is made for real and the tool is run as a user runs it:

- a home folder and a working folder whose names hold a space (``Ann Zq...``, ``proj Zq...``),
  and a device extension installed in the home (an entry point of the group ``torch.backends``,
  which the real torch 2.13.0 CPU build loads at ``import torch``) whose warning names its
  kernels, its cache and its endpoint: before, a path was cut at the first space, and the rest
  (``Zq.../accel plugins/kernels/...``) reached the report and the terminal;
- ``summarize`` given a report in a planted home and others elsewhere: before, names were
  relative to the shared folder, ``/``, and said ``tmp/.../home/<the user>/reports/a.json``;
- the variables ``DEVICE=cuda:0``, ``KIND=system``, ``IMPL=CPython``, ``ORIGIN=site-packages``...
  beside a real check on the CPU build and a fake-GPU pass: before, every fact equal to one of
  them became ``<redacted>`` (``execution.device`` then failed the schema's own pattern).

Windows paths and other users' folders are checked in-process, by the rules themselves.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, Result, assert_valid_report, clean_env, fake_gpu_env, run_tool, schema
from kernodeck_diagnostic.report.redact import Redactor, is_exempt_value

FORMATS = ["text", "json", "markdown"]
SNAPSHOTS = ROOT / "tests" / "snapshots"
PLUGIN = '''\
"""A device extension: torch calls autoload() at import (entry point group torch.backends)."""
import os
import warnings


def autoload():
    here = os.path.dirname(os.path.abspath(__file__))
    warnings.warn(f"zqaccel: no accelerator found; its kernels in {here}/kernels/libzqaccel.so.1 "
                  f"were not loaded (cache: {os.getcwd()}/.zqaccel-cache; endpoint "
                  f"{os.environ.get('ZQACCEL_ENDPOINT', 'none')})")
'''
PLUGIN_WARNING = ("zqaccel: no accelerator found; its kernels in {kernels}/libzqaccel.so.1 were "
                  "not loaded (cache: {cache}/.zqaccel-cache; endpoint {endpoint})")


def install_plugin(folder: Path) -> Path:
    """The device extension ``zqaccel``, installed in ``folder`` as pip lays out a package."""
    folder.mkdir(parents=True)
    (folder / "zqaccel.py").write_text(PLUGIN, encoding="utf-8")
    metadata = folder / "zqaccel-0.1.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: zqaccel\nVersion: 0.1\n",
                                       encoding="utf-8")
    (metadata / "entry_points.txt").write_text("[torch.backends]\nzqaccel = zqaccel:autoload\n",
                                               encoding="utf-8")
    return folder


def leaks(text: str, private: dict[str, str]) -> list[str]:
    """The names of the private values found in ``text``, in any case."""
    return [name for name, value in private.items() if value.lower() in text.lower()]


def outputs(result: Result, written: Path | None = None) -> list[tuple[str, str]]:
    found = [("stdout", result.stdout), ("stderr", result.stderr)]
    if written is not None:
        found.append(("report file", written.read_text(encoding="utf-8")))
    return found


def plugin_warning(report: dict[str, Any]) -> dict[str, Any]:
    return next(warning for warning in report["warnings"]
                if str(warning["message"]).startswith("zqaccel:"))


# -- 1. paths with spaces ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("form", FORMATS)
def test_a_home_and_working_folder_with_spaces_leave_a_real_warning(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, form: str) -> None:
    """The user ``Ann Zq...`` (a name with a space) installed a device extension in her home,
    in a folder with a space too, and runs the check from a working folder with a space."""
    surname, project = "Zq" + secrets.token_hex(4), "Zq" + secrets.token_hex(4)
    home = tmp_path / "home" / f"Ann {surname}"
    work = tmp_path / f"proj {project}"
    work.mkdir()
    plugins = install_plugin(home / "accel plugins")
    env = clean_env({"HOME": str(home), "PYTHONPATH": str(plugins)})
    out = work / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--format", form,
                                              "--output", str(out)], env=env, cwd=work)
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report
    assert report is not None
    assert_valid_report(report)
    for where, text in outputs(result, out):
        assert leaks(text, {"surname": surname, "project": project,
                            "middle folder": "accel plugins"}) == [], (where, text)
    # The folders become their labels, and what helps (the library's name) survives.
    assert plugin_warning(report) == {
        "stage": "import", "category": "UserWarning",
        "message": PLUGIN_WARNING.format(kernels="<home>", cache="<cwd>", endpoint="none")}


@pytest.mark.parametrize(("raw", "redacted"), [
    # torch's own sentence on Windows, under another user's profile
    (r'Error loading "C:\Users\John Smith\AppData\Local\Programs\Python\Python311\Lib'
     r'\site-packages\torch\lib\c10.dll" or one of its dependencies.',
     r'Error loading "<path>\c10.dll" or one of its dependencies.'),
    (r"[WinError 126] C:\Users\John Smith\AppData\Local\Programs\Python\Python311\Lib"
     r"\site-packages\torch\lib\c10.dll: not found",
     r"[WinError 126] <path>\c10.dll: not found"),
    (r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4\bin\cudart64_12.dll: not found",
     r"<path>\cudart64_12.dll: not found"),
    (r"profile C:\Users\John Smith\Documents here", r"profile <path>\Documents here"),
    ("/home/John Smith/venv/lib/python3.11/site-packages/torch/lib/libcudnn.so.9: cannot open",
     "<path>/libcudnn.so.9: cannot open"),
    ("/Users/Ann Lee/miniconda3/lib/libomp.dylib: image not found",
     "<path>/libomp.dylib: image not found"),
    ("/mnt/c/Users/Jane Doe/venv/lib/x.so: cannot open", "<path>/x.so: cannot open"),
    # Python's OSError quotes the path: the folder of a user, by itself, spaces and all
    ("[Errno 13] Permission denied: '/home/Jane Doe'",
     "[Errno 13] Permission denied: '<path>/<user>'"),
    ("[Errno 2] No such file or directory: 'C:\\Users\\Jane Doe'",
     "[Errno 2] No such file or directory: '<path>\\<user>'"),
    # prose after a path is not a path: a POSIX name is cut at a space elsewhere
    ("/usr/lib and torch/lib", "<path>/lib and torch/lib"),
])
def test_anyones_folder_with_spaces_leaves_nothing_of_the_name(raw: str, redacted: str) -> None:
    """Reports carry other people's paths (a message from their machine): the rule does not
    need to know the name."""
    assert Redactor().text(raw) == redacted


def test_a_windows_home_with_a_space_is_a_prefix() -> None:
    redactor = Redactor.for_this_machine({"USERPROFILE": r"C:\Users\John Smith",
                                          "USERNAME": "jsmith"})
    assert redactor.text(r"C:\Users\John Smith\AppData\Local\Temp\torch\lib\c10.dll failed; "
                         r"cache in 'C:\Users\John Smith'") == (
        r"<home>\c10.dll failed; cache in '<home>'")


def test_a_value_that_is_a_path_in_the_home_is_still_hidden_whole() -> None:
    """A path value inside the home goes whole, before the home's label would keep its last
    component; the home itself keeps its label."""
    redactor = Redactor.for_this_machine({"HOME": "/home/ana", "WORKON_HOME": "/home/ana/acme-x",
                                          "PWD": "/home/ana"})
    assert redactor.text("in /home/ana/acme-x, /home/ana and /home/ana/acme-x/lib/y.so") == (
        "in <redacted>, <home> and <home>/y.so")


# -- 2. summarize's names ---------------------------------------------------------------------

def run_summarize(args: list[str], env: dict[str, str], cwd: Path, form: str) -> Result:
    done = subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", "summarize",
                           "--format", form, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120, stdin=subprocess.DEVNULL, check=False)
    return Result(done.returncode, done.stdout, done.stderr, 0.0)


@pytest.mark.parametrize("form", FORMATS)
def test_summarize_names_no_user_host_or_value(tmp_path: Path, form: str) -> None:
    """``summarize ~/reports/report.json ~/FLEET/ /srv/ <the repository>/tests/snapshots/...``:
    the arguments share no folder but the root (or one above the home). A folder is named only
    where it tells two files apart, and then without a user's or a variable's name."""
    user, other_user = "zqalice" + secrets.token_hex(3), "zqbob" + secrets.token_hex(3)
    fleet = "zqfleet-" + secrets.token_hex(4)
    home = tmp_path / "home" / user
    report = SNAPSHOTS / "gpu_pass.json"
    for target in (home / "reports" / "report.json", home / fleet / "report.json",
                   tmp_path / "srv" / other_user / "report.json",
                   tmp_path / "srv" / "other" / "report.json"):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report, target)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env({"PYTHONPATH": str(ROOT / "src"), "HOME": str(home), "USER": other_user,
                     "FLEET_FOLDER": fleet})
    args = [str(home / "reports" / "report.json"), str(home / fleet),
            str(tmp_path / "srv"), str(SNAPSHOTS / "gpu_unavailable.json")]
    result = run_summarize(args, env, elsewhere, form)
    assert result.returncode == 22, result.stdout + result.stderr
    for where, text in outputs(result):
        assert leaks(text, {"home's user": user, "user": other_user, "value": fleet,
                            "the machine's folders": str(tmp_path)}) == [], (where, text)
        assert "home/" not in text, (where, text)
        assert "tmp/" not in text, (where, text)
    shown = ["<home>/reports/report.json", "<home>/<redacted>/report.json", "other/report.json",
             "<user>/report.json", "gpu_unavailable.json"]
    if form == "json":
        assert [row["file"] for row in json.loads(result.stdout)["reports"]] == shown
    for name in shown:
        # markdown writes < and > as entities, to show them
        written = name.replace("<", "&lt;").replace(">", "&gt;") if form == "markdown" else name
        assert written in result.stdout, (name, result.stdout)


def test_summarize_in_the_folder_of_the_homes_names_no_other_user(tmp_path: Path) -> None:
    """``summarize /home/alice/a.json /home/carol/ /home/dave/``, as an administrator gathers
    reports: the shared folder holds the home, and the others' folders are named after them."""
    homes = tmp_path / "home"
    me, carol, dave = (homes / ("zq" + name + secrets.token_hex(3))
                       for name in ("alice", "carol", "dave"))
    for target in (me / "reports" / "a.json", carol / "report.json", dave / "report.json"):
        target.parent.mkdir(parents=True)
        shutil.copyfile(SNAPSHOTS / "gpu_pass.json", target)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env({"PYTHONPATH": str(ROOT / "src"), "HOME": str(me)})
    result = run_summarize([str(me / "reports" / "a.json"), str(carol), str(dave)], env,
                           elsewhere, "json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [row["file"] for row in json.loads(result.stdout)["reports"]] == [
        "<home>/a.json", "<user>/report.json", "<user>/report.json"]
    assert "zq" not in result.stdout


def test_summarize_below_the_shared_folder_is_unchanged(tmp_path: Path) -> None:
    """A guard: where the shared folder names nothing of the machine, names stay relative."""
    for name in ("node-1", "node-2"):
        (tmp_path / "fleet" / name).mkdir(parents=True)
        shutil.copyfile(SNAPSHOTS / "gpu_pass.json", tmp_path / "fleet" / name / "report.json")
    env = clean_env({"PYTHONPATH": str(ROOT / "src")})
    result = run_summarize([str(tmp_path / "fleet")], env, tmp_path, "json")
    assert [row["file"] for row in json.loads(result.stdout)["reports"]] == [
        "node-1/report.json", "node-2/report.json"]


# -- 3. the tool's own words ------------------------------------------------------------------

# Variables whose values are words of the report: what a shell profile or a job script sets.
OWN_WORDS = {"DEVICE": "cuda:0", "KIND": "system", "IMPL": "CPython", "ENVKIND": "venv",
             "ORIGIN": "site-packages", "MODKIND": "installed", "WHERE": "working-folder",
             "STAGE": "import", "CATEGORY": "UserWarning", "KFD": "absent", "OS": "linux"}


@pytest.mark.slow
def test_facts_equal_to_variables_survive_a_real_check(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """The real CPU build, with the device extension quoting a private endpoint."""
    endpoint = f"accel-{secrets.token_hex(4)}.corp.internal"
    plugins = install_plugin(tmp_path / "plugins")
    env = clean_env({**OWN_WORDS, "ZQACCEL_ENDPOINT": endpoint, "PYTHONPATH": str(plugins)})
    out = tmp_path / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output", str(out)], env=env,
                      cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert (report["runtime"]["python_implementation"], report["runtime"]["environment_kind"],
            report["pytorch"]["origin"], report["pytorch"]["module_kind"],
            report["execution"]["device"], report["runtime"]["device_nodes"]["kfd"]) == (
        "CPython", "venv", "site-packages", "installed", "cpu", "absent")
    if sys.platform.startswith("linux"):
        assert report["runtime"]["os_family"] == "linux"
    warning = plugin_warning(report)
    assert (warning["stage"], warning["category"]) == ("import", "UserWarning")
    # The private value still goes, and nothing else was hidden.
    assert warning["message"].endswith("endpoint <redacted>)")
    for where, text in outputs(result, out):
        assert leaks(text, {"endpoint": endpoint}) == [], (where, text)
    report["warnings"].remove(warning)
    assert "<redacted>" not in json.dumps(report)


def test_a_device_equal_to_a_variable_survives_a_gpu_pass(pyz: Path, tmp_path: Path) -> None:
    """``DEVICE=cuda:0`` beside a pass on one (fake) GPU: ``execution.device`` stays ``cuda:0``,
    as the schema's pattern requires."""
    out = tmp_path / "report.json"
    env = fake_gpu_env("cuda_pass", **{**OWN_WORDS, "ORIGIN": "pythonpath",
                                       "BACKEND": "cuda"})
    result = run_tool(sys.executable, pyz, ["--output", str(out)], env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert report["execution"]["device"] == "cuda:0"
    assert (report["pytorch"]["origin"], report["pytorch"]["module_kind"],
            report["pytorch"]["backend"]) == ("pythonpath", "installed", "cuda")
    assert "<redacted>" not in out.read_text(encoding="utf-8")


def named_values(part: Any) -> set[str]:
    """Every string the schema names (``enum``, ``const``), read here without the tool."""
    found: set[str] = set()
    if isinstance(part, dict):
        found.update(v for v in part.get("enum", []) if isinstance(v, str))
        if isinstance(part.get("const"), str):
            found.add(part["const"])
        for value in part.values():
            found |= named_values(value)
    elif isinstance(part, list):
        for value in part:
            found |= named_values(value)
    return found


def test_every_word_the_schema_names_is_exempt() -> None:
    words = named_values(schema())
    assert {"site-packages", "working-folder", "system", "GPU_CHECK_PASSED"} <= words
    assert [word for word in sorted(words) if not is_exempt_value("SOME_VARIABLE", word)] == []
    for value in ("cuda:0", "cuda:12", "cpu", "CPython", "UserWarning", "ModuleNotFoundError"):
        assert is_exempt_value("SOME_VARIABLE", value), value
    # not the tool's: still hidden
    for value in ("cuda:0x", "some-private-value-123", "system-acme", "acme_fraud_model"):
        assert not is_exempt_value("SOME_VARIABLE", value), value


# The worker's closed sets the schema leaves open: what platform.python_implementation()
# answers and the worker's os_family. Each its own row: a host or a variable of that name leaves
# the fact whole.
WORKER_WORDS = ["CPython", "PyPy", "IronPython", "Jython", "GraalVM", "linux", "windows", "macos"]


@pytest.mark.parametrize("word", WORKER_WORDS)
def test_each_of_the_workers_own_words_is_kept_whole(word: str) -> None:
    assert is_exempt_value("SOME_VARIABLE", word)
    redactor = Redactor(names={word: "<host>"})
    assert redactor.value({"os_family": word}) == {"os_family": word}
    assert redactor.text(f"ssh {word} failed") == "ssh <host> failed"  # in a sentence: a name


def test_a_fact_in_the_tools_words_is_kept_whole_a_message_is_not() -> None:
    """A host called ``linux`` leaves the fact ``linux``; in a sentence, the name still goes."""
    redactor = Redactor(names={"linux": "<host>"}, values=["working-folder-acme"])
    assert redactor.value({"os_family": "linux", "origin": "working-folder"}) == {
        "os_family": "linux", "origin": "working-folder"}
    assert redactor.text("ssh linux failed in working-folder-acme") == (
        "ssh <host> failed in <redacted>")
