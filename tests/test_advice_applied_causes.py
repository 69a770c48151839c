"""Issue 44: causes named where the report had them and said less, proven by applying the advice.

Each broken environment is built for real with the cached CPU build (a module of the user's in
the working folder that torch imports in place of its own...), the tool run in it as a user of
the single-file download would, the advice applied exactly as printed and the verdict seen to
change. docs/reliability.md's table "Advice applied" lists them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, clean_env, required_pyenv_python, run_tool
from test_advice_applied_import_path import SECOND_USER
from test_verdicts_advice_applied import checked, findings, scratch_env, site_packages

pytestmark = pytest.mark.slow


def check(python: Path, pyz: Path, work: Path, name: str, env: dict[str, str] | None = None,
          *args: str) -> dict[str, object]:
    output = work.parent / name
    output.unlink(missing_ok=True)
    return checked(run_tool(python, pyz, ["--device", "cpu", *args, "--output", str(output)],
                            env=clean_env() if env is None else env, cwd=work))


def test_a_module_of_the_users_that_breaks_the_import_is_its_cause_not_a_warning(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """A typing_extensions.py of the user's in the working folder: torch imports it and fails
    ("cannot import name ... from 'typing_extensions'"). Was TORCH_IMPORT_FAILED with
    LOCAL_MODULE_SHADOWS a warning beside the generic "check the interpreter"."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "typing_extensions.py").write_text("# the user's own helpers\n", encoding="utf-8")
    before = check(cpu_torch_python, pyz, work, "before.json")
    assert before["code"] == "TORCH_IMPORT_FAILED"
    shadow = findings(before)["LOCAL_MODULE_SHADOWS"]
    assert shadow["severity"] == "error"
    assert shadow["summary"].startswith("import torch failed in typing_extensions")
    renamed = re.search(r"Rename (\S+) ", shadow["next_action"])
    assert renamed is not None, shadow["next_action"]
    (work / renamed.group(1)).rename(work / ("my_" + renamed.group(1)))
    after = check(cpu_torch_python, pyz, work, "after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "LOCAL_MODULE_SHADOWS" not in findings(after)


@pytest.mark.parametrize("name", ["json", "enum", "threading"])
def test_a_module_the_worker_had_loaded_itself_still_breaks_the_import_as_it_does(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, name: str) -> None:
    """A json.py of the user's in the working folder that raises: ``python -c "import torch"``
    there fails, since torch imports json. The worker had its own json loaded before the user's
    import path was in place, and torch took that one: CPU_CHECK_PASSED, exit 0, the shadow a
    mere warning (a false pass). Renamed as advised, the import is whole again."""
    work = tmp_path / "work"
    work.mkdir()
    (work / f"{name}.py").write_text("raise ImportError('my own module')\n", encoding="utf-8")
    plain = subprocess.run([str(cpu_torch_python), "-c", "import torch"], cwd=work,
                           env=clean_env(), capture_output=True, text=True, timeout=120,
                           check=False)
    assert plain.returncode != 0  # the real thing fails
    assert "my own module" in plain.stderr
    before = check(cpu_torch_python, pyz, work, "before.json")
    assert before["code"] == "TORCH_IMPORT_FAILED"
    assert before["error"]["message"] == "my own module"
    shadow = findings(before)["LOCAL_MODULE_SHADOWS"]
    assert shadow["severity"] == "error"
    assert shadow["summary"].startswith(f"import torch failed in {name}: your own {name}.py")
    renamed = re.search(r"Rename (\S+) ", shadow["next_action"])
    assert renamed is not None, shadow["next_action"]
    (work / renamed.group(1)).rename(work / ("my_" + renamed.group(1)))
    after = check(cpu_torch_python, pyz, work, "after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "LOCAL_MODULE_SHADOWS" not in findings(after)


def test_a_module_of_the_users_that_does_not_break_the_import_stays_a_warning(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "sympy.py").write_text("# the user's own helpers\n", encoding="utf-8")
    report = check(cpu_torch_python, pyz, work, "report.json")
    assert report["code"] == "CPU_CHECK_PASSED", report["error"]
    assert findings(report)["LOCAL_MODULE_SHADOWS"]["severity"] == "warning"


# -- /dev/shm absent ------------------------------------------------------------------------------

def without_dev_shm(tmp_path: Path, then: str = "") -> list[str]:
    """A command prefix running the rest in a private mount namespace whose /dev (an overlay on
    the machine's, left as it is) has no shm folder; ``then``, a shell command, run there before
    it. Needs root (CAP_SYS_ADMIN)."""
    upper, work = tmp_path / "dev-upper", tmp_path / "dev-work"
    for folder in (upper, work):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    layers = f"lowerdir=/dev,upperdir={upper},workdir={work}"
    hidden = f"set -e; mount -t overlay overlay -o {shlex.quote(layers)} /dev; rmdir /dev/shm; "
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c"]
    probe = subprocess.run([*prefix, hidden + 'exec "$@"', "sh", "test", "!", "-e",
                            "/dev/shm"],  # noqa: S108
                           capture_output=True,
                           text=True, timeout=30, check=False)
    if probe.returncode != 0:
        pytest.skip("no private mount namespace without /dev/shm here: " + probe.stderr.strip())
    for folder in (upper, work):  # the probe's whiteout gone: the run removes it anew
        shutil.rmtree(folder)
        folder.mkdir()
    return [*prefix, f"{hidden}{then}{'; ' if then else ''}exec \"$@\"", "sh"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux mount namespace")
def test_an_absent_dev_shm_is_said_and_mounting_one_as_printed_ends_it(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was nothing at all: node.shm null, as for a folder that cannot be read. The check itself
    passes (one process shares no memory); DataLoader workers would not."""
    work = tmp_path / "work"
    work.mkdir()
    prefix = without_dev_shm(tmp_path)
    before = checked(run_tool(prefix[0], [*prefix[1:], str(cpu_torch_python), str(pyz)],
                              ["--device", "cpu", "--output", str(tmp_path / "before.json")],
                              env=clean_env(), cwd=work))
    assert before["code"] == "CPU_CHECK_PASSED", before["error"]
    assert before["node"]["shm"] == {"absent": True}
    absent = findings(before)["SHM_TOO_SMALL"]
    assert absent["severity"] == "warning"
    assert "no shared-memory folder /dev/shm" in absent["summary"]
    mount = re.search(r"mkdir -p /dev/shm && mount [^()]*?/dev/shm", absent["next_action"])
    assert mount is not None, absent["next_action"]
    prefix = without_dev_shm(tmp_path, then=mount.group(0))  # as root, as printed
    after = checked(run_tool(prefix[0], [*prefix[1:], str(cpu_torch_python), str(pyz)],
                             ["--device", "cpu", "--output", str(tmp_path / "after.json")],
                             env=clean_env(), cwd=work))
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert after["node"]["shm"]["writable"] is True
    assert after["node"]["shm"]["size_bytes"] == 8 * 2**30
    assert "SHM_TOO_SMALL" not in findings(after)
    assert Path("/dev/shm").is_dir()  # noqa: S108 - the machine's own /dev is untouched


# -- a conda environment's lib, its Python run by path or with --python -------------------------

def test_the_checked_pythons_own_conda_lib_is_named_though_no_environment_is_active(
        tmp_path: Path) -> None:
    """A conda Python run by its path (or given to --python) finds its environment's lib through
    its run path, and no CONDA_PREFIX is set: the loader's message names PREFIX/bin/../lib. Was
    nothing at all (the conda lib was CONDA_PREFIX's only). No conda here: the message is the
    one such a Python gets, the prefix a real folder with conda-meta."""
    from kernodeck_diagnostic.facts.environment import library_override

    prefix = tmp_path / "miniconda3" / "envs" / "ml"
    for folder in ("bin", "lib", "conda-meta"):
        (prefix / folder).mkdir(parents=True)
    (prefix / "lib" / "libstdc++.so.6").write_bytes(b"")
    (prefix / "bin" / "python3.11").write_bytes(b"")
    message = (f"{prefix}/bin/../lib/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
               f"(required by {prefix}/lib/python3.11/site-packages/torch/lib/libtorch_python.so)")
    by_path = library_override([message], {}, "linux",
                               interpreter=str(prefix / "bin" / "python3.11"))
    assert by_path == {"variable": None, "library": "libstdc++.so.6", "conda_env_lib": True}
    assert library_override([message], {}, "linux") is None  # the front's own Python: not it
    # Another environment active (the base), the checked Python's still counts.
    assert library_override([message], {"CONDA_PREFIX": str(tmp_path / "miniconda3")}, "linux",
                            interpreter=str(prefix / "bin" / "python3.11")) == by_path
    # A venv (no conda-meta) is no conda environment.
    (prefix / "conda-meta").rmdir()
    assert library_override([message], {}, "linux",
                            interpreter=str(prefix / "bin" / "python3.11")) is None


# -- a torch.backends device plugin whose own error was dropped ---------------------------------

def installed_plugin(packages: Path, module: str, distribution: str, entry: str) -> None:
    """``module`` (its __init__.py written) installed as pip would: a distribution declaring the
    entry point ``torch.backends: entry = module:autoload``, its files in its RECORD."""
    info = packages / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[torch.backends]\n{entry} = {module}:autoload\n",
                                           encoding="utf-8")
    (info / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (info / "RECORD").write_text("".join(f"{name},,\n" for name in (
        f"{module}/__init__.py", f"{info.name}/METADATA", f"{info.name}/entry_points.txt",
        f"{info.name}/INSTALLER", f"{info.name}/RECORD")), encoding="utf-8")


def with_plugin(python: Path) -> None:
    """A device plugin (entry point group torch.backends) installed beside torch, as a vendor's
    torch_npu is, that needs its device's runtime library, absent here."""
    packages = site_packages(python)
    (packages / "kd_vendor_plugin").mkdir()
    (packages / "kd_vendor_plugin" / "__init__.py").write_text(
        "import ctypes\n\n\ndef autoload():\n    ctypes.CDLL('libkd_vendor_runtime.so.3')\n",
        encoding="utf-8")
    installed_plugin(packages, "kd_vendor_plugin", "kd-vendor-plugin", "kd_vendor")


def test_a_failing_device_plugin_is_named_with_its_own_error_and_removing_it_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_IMPORT_FAILED "Failed to load the backend extension: kd_vendor" and no finding:
    the plugin's OSError (its missing library), torch's exception's cause, was dropped."""
    python = scratch_env(cpu_torch_python, tmp_path)
    with_plugin(python)
    work = tmp_path / "work"
    work.mkdir()
    before = check(python, pyz, work, "before.json")
    assert before["code"] == "TORCH_IMPORT_FAILED"
    assert before["pytorch"]["backend_plugin"] == {
        "name": "kd_vendor", "distribution": "kd-vendor-plugin",
        "cause": "OSError: libkd_vendor_runtime.so.3: cannot open shared object file: "
                 "No such file or directory"}
    found = findings(before)["TORCH_BACKEND_PLUGIN_FAILED"]
    assert "libkd_vendor_runtime.so.3" in found["summary"]
    # The check without the plugin, as the advice says it confirms; then the plugin removed.
    plugin_advice_applied(python, pyz, work, found["next_action"], "TORCH_BACKEND_PLUGIN_FAILED")


def plugin_advice_applied(python: Path, pyz: Path, work: Path, advice: str,
                          finding: str) -> None:
    """A plugin finding's two remedies, each exactly as printed: torch run without its plugins
    (TORCH_DEVICE_BACKEND_AUTOLOAD=0), then the plugin uninstalled (pip asks to confirm: the
    user says yes). Each gives a pass, the second without ``finding``."""
    variable = re.search(r"(TORCH_DEVICE_BACKEND_AUTOLOAD)=(0) python", advice)
    assert variable is not None, advice
    without = check(python, pyz, work, "without.json",
                    clean_env({variable.group(1): variable.group(2)}))
    assert without["code"] == "CPU_CHECK_PASSED", without["error"]
    command = re.search(r"python -m pip uninstall ([\w.-]+)", advice)
    assert command is not None, advice
    removed = subprocess.run([str(python), "-m", "pip", "uninstall", "-y", command.group(1)],
                             capture_output=True, text=True, timeout=300, check=False)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    after = check(python, pyz, work, "after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert finding not in findings(after)


# -- a torch.backends device plugin that never returns, and a module of the user's that hangs ---

# The real import takes a few seconds here: the hang, not a slow import, is what the limit ends.
HANG_LIMIT_S = "20"


def with_hanging_plugin(python: Path) -> None:
    """A device plugin (entry point group torch.backends) whose autoload() waits for its device
    forever, as a vendor's plugin does when its driver never answers; with KD_HANG_PLUGIN_WORK_S
    set, it works that many seconds of CPU time first (a long start, then the wait)."""
    packages = site_packages(python)
    (packages / "kd_hang_plugin").mkdir()
    (packages / "kd_hang_plugin" / "__init__.py").write_text(
        "import threading\n\n\ndef autoload():\n"
        "    threading.Event().wait(_work_first())  # None: forever\n\n\n"
        "def _work_first():\n    import os, time\n"
        "    start, seconds = time.process_time(), float(os.environ.get("
        "'KD_HANG_PLUGIN_WORK_S', '0'))\n"
        "    while time.process_time() - start < seconds:\n        pass\n",
        encoding="utf-8")
    installed_plugin(packages, "kd_hang_plugin", "kd-hang-plugin", "kd_hang")


def timed_out(python: Path, pyz: Path, work: Path, name: str, *, limit: str = HANG_LIMIT_S,
              env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    """The check ended by its limit: its report, and the whole of what it showed and saved."""
    output = work.parent / name
    result = run_tool(python, pyz, ["--device", "cpu", "--timeout", limit,
                                    "--output", str(output)], env=clean_env(env), cwd=work)
    report = checked(result)
    assert (result.returncode, report["code"], report["status"]) == (10, "TIMEOUT", "failed")
    shown = result.stdout + result.stderr + output.read_text(encoding="utf-8")
    for private in (str(work.parent), str(python.parent.parent), str(Path.home()) + os.sep):
        assert private not in shown
    return report, shown


def test_a_hanging_device_plugin_is_named_where_it_hangs_and_the_printed_switch_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TIMEOUT "the worker was stopped during import" and nothing more: which of the
    packages torch loads as it is imported never returned was anyone's guess."""
    python = scratch_env(cpu_torch_python, tmp_path)
    with_hanging_plugin(python)
    work = tmp_path / "work"
    work.mkdir()
    before, shown = timed_out(python, pyz, work, "before.json")
    assert before["stage"] == "import"
    assert before["error"]["hung_in"] == {
        "package": "kd_hang_plugin", "file": "kd_hang_plugin/__init__.py", "line": 5,
        "torch_backend": True, "distribution": "kd-hang-plugin"}
    assert "hung in kd_hang_plugin (kd_hang_plugin/__init__.py:5)" in shown
    found = findings(before)["HUNG_IN"]
    assert "device plugin kd_hang_plugin (kd_hang_plugin/__init__.py:5)" in found["summary"]
    # A long start (torch's import, 5 s of the plugin's own work), then the wait: much of the
    # CPU time in all, none of its last seconds. Was TIME_LIMIT_REACHED beside it ("slow, not
    # stuck": a longer --timeout, which changes nothing for a plugin that never returns).
    busy, _ = timed_out(python, pyz, work, "busy.json", limit="16",
                        env={"KD_HANG_PLUGIN_WORK_S": "5"})
    timings = busy["timings_ms"]
    assert timings["worker_cpu"] > 0.3 * timings["worker_total"], timings  # the old evidence
    assert timings["worker_cpu_last"] < 0.3 * timings["worker_last"], timings
    assert "HUNG_IN" in findings(busy)
    assert "TIME_LIMIT_REACHED" not in findings(busy), timings
    # torch without its plugins, as printed; then the plugin removed as printed.
    plugin_advice_applied(python, pyz, work, found["next_action"], "HUNG_IN")


def test_a_module_of_the_users_that_hangs_the_import_is_named_where_it_hangs(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """A typing_extensions.py of the user's in the working folder that waits forever: torch
    imports it. The location names the user's file; running from another folder, as
    LOCAL_MODULE_SHADOWS advises, ends it."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "typing_extensions.py").write_text(
        "import time\nwhile True:\n    time.sleep(0.1)\n", encoding="utf-8")
    before, shown = timed_out(cpu_torch_python, pyz, work, "before.json")
    assert before["error"]["hung_in"] == {
        "package": "typing_extensions", "file": "typing_extensions.py", "line": 3,
        "torch_backend": False, "distribution": None}
    assert "hung in typing_extensions (typing_extensions.py:3)" in shown
    hung = findings(before)["HUNG_IN"]
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD" not in hung["next_action"]
    assert "typing_extensions.py:3" in hung["next_action"]
    shadows = findings(before)["LOCAL_MODULE_SHADOWS"]
    assert "run your program from another folder" in shadows["next_action"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    after = check(cpu_torch_python, pyz, elsewhere, "after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]


# -- TORCH_LOGS with a name torch does not know --------------------------------------------------

def test_a_torch_logs_typo_names_the_variable_and_unsetting_it_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """Was TORCH_IMPORT_FAILED "Invalid log settings: <redacted>" (the value redacted, as every
    variable's) and no finding: nothing said which setting it was."""
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env({"TORCH_LOGS": "+dinamo,graph_breaks"})
    before = check(cpu_torch_python, pyz, work, "before.json", env)
    assert before["code"] == "TORCH_IMPORT_FAILED"
    found = findings(before)["TORCH_LOGS_INVALID"]
    assert found["summary"].startswith("TORCH_LOGS holds a name torch does not know")
    assert "dinamo" not in str(before)  # a value, never shown
    unset = re.search(r"env -u (\w+) python", found["next_action"])
    assert unset is not None, found["next_action"]
    env.pop(unset.group(1))
    after = check(cpu_torch_python, pyz, work, "after.json", env)
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "TORCH_LOGS_INVALID" not in findings(after)
    # Corrected as the advice says instead: a name torch takes.
    fixed = check(cpu_torch_python, pyz, work, "fixed.json",
                  clean_env({"TORCH_LOGS": "+dynamo,graph_breaks"}))
    assert fixed["code"] == "CPU_CHECK_PASSED", fixed["error"]


# -- torch on a noexec mount ----------------------------------------------------------------------

def test_torch_on_a_noexec_mount_is_named_and_remounting_it_as_printed_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """The environment's folder bind-mounted noexec in a private mount namespace (as a noexec
    /tmp or scratch file system is): the loader cannot map torch's libraries. Was
    TORCH_IMPORT_FAILED "failed to map segment from shared object" and no finding (a reinstall
    in the same place changes nothing)."""
    python = scratch_env(cpu_torch_python, tmp_path)
    folder = shlex.quote(str(python.parent.parent))
    noexec = f"set -e; mount --bind {folder} {folder}; mount -o remount,bind,noexec {folder}; "

    def run(name: str, then: str = "") -> dict[str, object]:
        prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                  f"{noexec}{then}exec \"$@\"", "sh"]
        return checked(run_tool(prefix[0], [*prefix[1:], str(python), str(pyz)],
                                ["--device", "cpu", "--output", str(tmp_path / name)],
                                env=clean_env(), cwd=work))

    work = tmp_path / "work"
    work.mkdir()
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            noexec + "findmnt -no OPTIONS -T " + folder],
                           capture_output=True, text=True, timeout=60, check=False)
    if probe.returncode != 0 or "noexec" not in probe.stdout:
        pytest.skip("no private mount namespace with a noexec bind mount here: " + probe.stderr)
    before = run("before.json")
    assert before["code"] == "TORCH_IMPORT_FAILED"
    assert before["pytorch"]["noexec_mount"] is True
    found = findings(before)["TORCH_ON_NOEXEC_MOUNT"]
    remount = re.search(r"mount -o remount,exec", found["next_action"])
    assert remount is not None, found["next_action"]
    # As root, on that mount point (findmnt -T names it: the bind mount here).
    after = run("after.json", then=f"{remount.group(0)} {folder}; ")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert after["pytorch"]["noexec_mount"] is None
    assert "TORCH_ON_NOEXEC_MOUNT" not in findings(after)


# -- a file of torch another user cannot read -----------------------------------------------------

@pytest.mark.skipif(SECOND_USER is not None, reason=SECOND_USER or "")
def test_a_file_of_torch_this_user_cannot_read_is_named_and_opening_it_as_printed_works(
        cpu_torch_python: Path) -> None:
    """root's install with torch/functional.py closed (mode 000), checked by nobody (root reads
    it anyway): was TORCH_IMPORT_FAILED "Permission denied: '<path>/functional.py'" and no
    finding. The advice applied by the owner, with the environment's python first on PATH."""
    system_python = "/usr/bin/python3"
    if not os.path.isfile(system_python):
        pytest.skip("no system python3 the second user could run")
    as_nobody = [str(shutil.which("setpriv")), "--reuid=nobody", "--regid=nogroup",
                 "--clear-groups"]
    place = Path(tempfile.mkdtemp(prefix="kd-unreadable-"))
    try:
        place.chmod(0o755)
        made = subprocess.run([system_python, "-m", "venv", "--without-pip", str(place / "v")],
                              capture_output=True, timeout=120, check=False)
        python = place / "v" / "bin" / "python"
        own = subprocess.run([system_python, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60, check=False)
        theirs = subprocess.run([str(cpu_torch_python), "-c",
                                 "import sys; print(sys.version_info[:2])"],
                                capture_output=True, text=True, timeout=60, check=False)
        if made.returncode != 0 or own.stdout != theirs.stdout:
            pytest.skip("the system's python3 cannot take the torch environment's packages")
        packages = site_packages(python)
        shutil.rmtree(packages)
        shutil.copytree(site_packages(cpu_torch_python), packages, copy_function=os.link,
                        symlinks=True)
        closed = packages / "torch" / "functional.py"
        data = closed.read_bytes()
        closed.unlink()  # a file of its own, never the cache's inode
        closed.write_bytes(data)
        closed.chmod(0)
        pyz = place / "kd.pyz"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "build_pyz.py"), "--output",
                        str(pyz)], check=True, timeout=120, capture_output=True)
        pyz.chmod(0o644)
        work = place / "work"
        work.mkdir()
        work.chmod(0o755)
        env = clean_env({"HOME": str(work)})

        def run() -> dict[str, object]:
            ran = subprocess.run([*as_nobody, system_python, str(pyz), "--device", "cpu",
                                  "--python", str(python), "--format", "json"],
                                 capture_output=True, text=True, timeout=300, check=False,
                                 env=env, cwd=work)
            report: dict[str, object] = json.loads(ran.stdout)
            assert report["code"] != "INTERNAL_ERROR", ran.stderr
            return report

        before = run()
        assert before["code"] == "TORCH_IMPORT_FAILED"
        found = findings(before)["TORCH_FILES_UNREADABLE"]
        assert "torch/functional.py" in found["summary"]
        assert str(place) not in json.dumps(before)
        command = re.search(r"chmod -R a\+rX \"\$\(.*\)\"", found["next_action"])
        assert command is not None, found["next_action"]
        opened = subprocess.run(["bash", "-c", command.group(0)], capture_output=True,
                                text=True, timeout=120, check=False,
                                env={**env, "PATH": f"{python.parent}{os.pathsep}{env['PATH']}"})
        assert opened.returncode == 0, opened.stderr
        after = run()
        assert after["code"] == "CPU_CHECK_PASSED", after["error"]
        assert "TORCH_FILES_UNREADABLE" not in findings(after)
    finally:
        shutil.rmtree(place, ignore_errors=True)


# -- torch installed under a path that is not UTF-8 -----------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="byte paths")
def test_a_path_that_is_not_utf8_is_named_and_renaming_the_folder_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """The CPU build's venv (hard links) in a folder named with a Latin-1 byte: torch's own
    import fails ("surrogates not allowed", torch/__init__.py encodes its path). Was
    TORCH_IMPORT_FAILED and no finding."""
    folder = os.fsencode(tmp_path) + b"/caf\xe9-env"
    shutil.copytree(cpu_torch_python.parent.parent, os.fsdecode(folder), copy_function=os.link,
                    symlinks=True)
    work = tmp_path / "work"
    work.mkdir()
    python = Path(os.fsdecode(folder)) / "bin" / cpu_torch_python.name
    before = check(python, pyz, work, "before.json")
    assert before["code"] == "TORCH_IMPORT_FAILED"
    assert before["pytorch"]["path_not_utf8"] is True
    found = findings(before)["TORCH_PATH_NOT_UTF8"]
    assert "Rename that folder with a UTF-8 name" in found["next_action"]
    renamed = tmp_path / "café-env"
    os.rename(folder, os.fsencode(renamed))
    after = check(renamed / "bin" / cpu_torch_python.name, pyz, work, "after.json")
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert "TORCH_PATH_NOT_UTF8" not in findings(after)


# -- PYTHONHOME set for another Python ------------------------------------------------------------

def test_pythonhome_set_for_another_python_is_named_and_unsetting_it_works(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    """PYTHONHOME left pointing at one Python's home (an embedding's, a module file's): the
    front (that Python) starts, the venv's Python checked (3.11) finds no standard library of
    its own there. Was WORKER_FAILED "examine the environment" with no finding."""
    front = required_pyenv_python("3.12")
    home = subprocess.run([str(front), "-c", "import sys; print(sys.base_prefix)"],
                          capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env({"PYTHONHOME": home})
    before = check(front, pyz, work, "before.json", env, "--python", str(cpu_torch_python))
    assert (before["code"], before["stage"]) == ("WORKER_FAILED", "interpreter")
    assert before["runtime"]["python_home_set"] is True
    found = findings(before)["PYTHONHOME_SET"]
    assert found["severity"] == "error"
    assert "No module named 'encodings'" in " ".join(found["evidence"])
    assert home not in json.dumps(before)  # a path: never in the report
    unset = re.search(r"env -u (\w+) python", found["next_action"])
    assert unset is not None, found["next_action"]
    env.pop(unset.group(1))
    after = check(front, pyz, work, "after.json", env, "--python", str(cpu_torch_python))
    assert after["code"] == "CPU_CHECK_PASSED", after["error"]
    assert after["runtime"]["python_home_set"] is False
    assert "PYTHONHOME_SET" not in findings(after)
