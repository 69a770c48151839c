"""Where a worker the time limit ended was hanging (supervision/hang.py), from its own stack.

The dumps here are faulthandler's, as the worker writes them (worker/runtime.dump_stacks: its
standard library's folder first, then every thread, innermost frame first), over real files: the
package a frame belongs to is read from the folders' ``__init__.py`` files, a device plugin's
distribution from its metadata. One case per rule of ``locate``. Then the real thing: the fake
torch stuck in a native call, the tool's own worker asked for its stack at the time limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import assert_valid_report, fake_gpu_env, run_tool
from kernodeck_diagnostic.supervision.hang import locate

STDLIB = "/usr/lib/python3.11"


def dump(*threads: list[tuple[Path | str, int, str]], stdlib: str = STDLIB) -> str:
    """A dump as the worker writes it: the last thread is the current one (the main thread)."""
    lines = [stdlib]
    for number, frames in enumerate(threads):
        current = number == len(threads) - 1
        lines.append(f"{'Current thread' if current else 'Thread'} 0x00007f00000{number:05x} "
                     "(most recent call first):")
        lines += [f'  File "{file}", line {line} in {function}' for file, line, function in frames]
        lines.append("")
    return "\n".join(lines) + "\n"


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site-packages with torch, a device plugin (declared by kd-hang-plugin's metadata) and
    a plain library, each a package; the tool's private folder beside it."""
    packages = tmp_path / "home" / "alice" / "venv" / "lib" / "python3.11" / "site-packages"
    for folder in ("torch", "kd_hang_plugin/sub", "kd_lib"):
        (packages / folder).mkdir(parents=True)
    for init in ("torch", "kd_hang_plugin", "kd_hang_plugin/sub", "kd_lib"):
        (packages / init / "__init__.py").write_text("", encoding="utf-8")
    info = packages / "kd_hang_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kd-hang-plugin\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[torch.backends]\nkd_hang = kd_hang_plugin:autoload\n",
                                           encoding="utf-8")
    (tmp_path / "kernodeck-0123456789ab").mkdir()
    return packages


def worker_frames(tmp_path: Path) -> list[tuple[Path | str, int, str]]:
    """The tool's own frames under the stage that imports torch, outermost last."""
    private = tmp_path / "kernodeck-0123456789ab"
    return [("<frozen importlib._bootstrap>", 1176, "_find_and_load"),
            (private / "stages.py", 293, "stage_import"),
            (private / "stages.py", 222, "_run_stage"),
            (private / "worker.py", 56, "<module>")]


def importing_torch(site: Path) -> list[tuple[Path | str, int, str]]:
    return [(site / "torch" / "__init__.py", 3032, "_import_device_backends"),
            (site / "torch" / "__init__.py", 3077, "<module>"),
            ("<frozen importlib._bootstrap>", 241, "_call_with_frames_removed")]


def test_a_plugin_torch_loads_is_named_with_its_distribution_and_no_path(
        site: Path, tmp_path: Path) -> None:
    text = dump([(site / "kd_hang_plugin" / "sub" / "wait.py", 6, "forever"),
                 (site / "kd_hang_plugin" / "__init__.py", 3, "autoload"),
                 *importing_torch(site), *worker_frames(tmp_path)])
    found = locate(text)
    assert found == {"package": "kd_hang_plugin", "file": "kd_hang_plugin/sub/wait.py",
                     "line": 6, "torch_backend": True, "distribution": "kd-hang-plugin"}
    assert "alice" not in str(found)


def test_the_standard_librarys_frames_are_passed_over(site: Path, tmp_path: Path) -> None:
    """A plugin waiting on an Event: threading.py's frames are not where it hung."""
    text = dump([(f"{STDLIB}/threading.py", 327, "wait"), (f"{STDLIB}/threading.py", 629, "wait"),
                 (site / "kd_hang_plugin" / "__init__.py", 3, "autoload"),
                 *importing_torch(site), *worker_frames(tmp_path)])
    found = locate(text)
    assert found is not None
    assert (found["package"], found["line"]) == ("kd_hang_plugin", 3)


def test_a_library_torch_imports_is_no_plugin(site: Path, tmp_path: Path) -> None:
    text = dump([(site / "kd_lib" / "__init__.py", 9, "<module>"),
                 (site / "torch" / "__init__.py", 40, "<module>"), *worker_frames(tmp_path)])
    assert locate(text) == {"package": "kd_lib", "file": "kd_lib/__init__.py", "line": 9,
                            "torch_backend": False, "distribution": None}


def test_a_module_of_its_own_folder_is_named_by_its_file(tmp_path: Path) -> None:
    """The user's typing_extensions.py in the working folder (no __init__.py there)."""
    work = tmp_path / "home" / "alice" / "work"
    work.mkdir(parents=True)
    (tmp_path / "kernodeck-0123456789ab").mkdir()
    text = dump([(work / "typing_extensions.py", 2, "<module>"), *worker_frames(tmp_path)])
    assert locate(text) == {"package": "typing_extensions", "file": "typing_extensions.py",
                            "line": 2, "torch_backend": False, "distribution": None}


def test_the_thread_that_runs_the_check_is_the_one_read(site: Path, tmp_path: Path) -> None:
    """A library's own thread, waiting in its code, is not where the check hung."""
    text = dump([(site / "kd_lib" / "__init__.py", 9, "poll")],
                [(site / "kd_hang_plugin" / "__init__.py", 3, "autoload"),
                 *importing_torch(site), *worker_frames(tmp_path)])
    found = locate(text)
    assert found is not None
    assert found["package"] == "kd_hang_plugin"


def test_site_packages_inside_the_standard_librarys_folder_is_not_the_standard_library(
        tmp_path: Path) -> None:
    """A conda environment's site-packages lives in its lib/python3.X."""
    stdlib = tmp_path / "conda" / "lib" / "python3.11"
    plugin = stdlib / "site-packages" / "kd_lib"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "kernodeck-0123456789ab").mkdir()
    text = dump([(stdlib / "threading.py", 327, "wait"), (plugin / "__init__.py", 4, "<module>"),
                 *worker_frames(tmp_path)], stdlib=str(stdlib))
    found = locate(text)
    assert found is not None
    assert (found["package"], found["file"]) == ("kd_lib", "kd_lib/__init__.py")


@pytest.mark.parametrize("text", [
    "",  # nothing was written
    f"{STDLIB}\n",  # armed, the dump never came
    dump([(f"{STDLIB}/socket.py", 294, "accept"), ("<frozen importlib._bootstrap>", 1, "x")]),
], ids=["empty", "no-dump", "only-the-standard-library"])
def test_nothing_to_name_is_none(text: str) -> None:
    assert locate(text) is None


def test_a_native_hang_in_torch_is_located_at_the_limit(pyz: Path, tmp_path: Path) -> None:
    """The fake torch stuck in a native call (pause(), SIGTERM ignored, the interpreter's lock
    released): the worker's stack, asked for at the limit, names torch's own file and line,
    not a path; HUNG_IN stays for code that is not torch's."""
    out = tmp_path / "hang.json"
    result = run_tool(sys.executable, pyz, ["--timeout", "5", "--output", str(out)],
                      env=fake_gpu_env("hang_in_native_driver_call"))
    report = result.report
    assert report is not None, result.stdout + result.stderr
    assert_valid_report(report)
    assert (result.returncode, report["code"]) == (10, "TIMEOUT")
    hung = report["error"]["hung_in"]
    assert (hung["package"], hung["torch_backend"]) == ("torch", False)
    assert hung["file"].startswith("torch/")  # relative to its import folder: no path
    assert f"hung in torch ({hung['file']}:{hung['line']})" in result.stdout
    assert report["error"]["message_key"] == "error.timeout_hung_in"
    assert "HUNG_IN" not in {finding["id"] for finding in report["findings"]}
    assert str(tmp_path) not in out.read_text(encoding="utf-8")
