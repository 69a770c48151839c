"""Environments people break around libraries and installs: each made for real, then checked.

- Shared-library overrides: a folder on ``LD_LIBRARY_PATH`` holding a libstdc++ too old for torch
  (a copy of the system's with its newest version definitions renamed away), an empty one (file
  too short), one that is not ELF at all (invalid ELF header), or a 32-bit ELF (wrong ELF class):
  the real dynamic loader rejects each while the real CPU torch is imported.
- A worker that dies saying why on stderr: a real ``import torch`` under an address-space limit
  throws ``std::bad_alloc`` and aborts; on a GPU (the fake torch), an uncaught ``c10::Error``.
- The tool run from its own isolated install: real venvs holding the installed package and not
  torch, at pipx's and uv's paths and elsewhere, run through their real console script.
"""

from __future__ import annotations

import base64
import hashlib
import json
import resource
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    ROOT,
    Result,
    assert_valid_report,
    clean_env,
    fake_gpu_env,
    run_tool,
)
from kernodeck_diagnostic.facts.environment import library_override
from kernodeck_diagnostic.report.build import Request, build
from kernodeck_diagnostic.report.findings import derive
from kernodeck_diagnostic.report.redact import Redactor
from kernodeck_diagnostic.supervision.captures import last_stderr_line
from kernodeck_diagnostic.supervision.events import WorkerState
from kernodeck_diagnostic.supervision.supervisor import WorkerRun

LIBSTDCXX = "libstdc++.so.6"


def _findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in report["findings"]}


def _check(python: Path, pyz: Path, tmp_path: Path, env: dict[str, str],
           *args: str) -> tuple[Result, dict[str, Any]]:
    out = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    result = run_tool(python, pyz, ["--device", "cpu", *args, "--output", str(out)], env=env)
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result, result.report


def _system_libstdcxx() -> Path:
    """The libstdc++ the loader uses when nothing overrides it (torch needs it: it is there)."""
    if not Path("/sbin/ldconfig").is_file():
        pytest.skip("no ldconfig to find the system's libstdc++")
    listed = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, timeout=30,
                            check=False).stdout
    for line in listed.splitlines():
        if line.strip().startswith(LIBSTDCXX + " (") and "=>" in line:
            path = Path(line.rsplit("=>", 1)[1].strip())
            if path.is_file() and path.read_bytes()[:5] == b"\x7fELF\x02":  # 64-bit
                return path
    pytest.skip("no 64-bit libstdc++.so.6 known to ldconfig")


def _old_libstdcxx(folder: Path) -> None:
    """A libstdc++ as old as GCC 4.8's (CentOS 7): the system's, with every GLIBCXX_3.4.2x
    version definition renamed so that the loader no longer finds them."""
    data = _system_libstdcxx().read_bytes()
    assert b"GLIBCXX_3.4.21\0" in data
    (folder / LIBSTDCXX).write_bytes(data.replace(b"GLIBCXX_3.4.2", b"GLIBCXX_3.4_2"))


def _empty(folder: Path, name: str = LIBSTDCXX) -> None:
    (folder / name).write_bytes(b"")


def _not_elf(folder: Path, name: str = LIBSTDCXX) -> None:
    (folder / name).write_bytes(b"<html>404 Not Found</html>\n" * 200)  # a failed download


def _elf32(folder: Path, name: str = LIBSTDCXX) -> None:
    """A 32-bit (ELFCLASS32) x86 shared object header: what a lib32 or i386 package holds."""
    header = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8)
    header += struct.pack("<HHIIIIIHHHHHH", 3, 3, 1, 0, 0, 0, 0, 52, 32, 0, 40, 0, 0)
    (folder / name).write_bytes(header + bytes(4096 - len(header)))


# -- item 4: shared-library overrides ------------------------------------------------------------

OVERRIDES = {
    "too_old": (_old_libstdcxx, "version `GLIBCXX_3.4.21' not found (required by "),
    "empty": (_empty, "libstdc++.so.6: file too short"),
    "not_elf": (_not_elf, "libstdc++.so.6: invalid ELF header"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(OVERRIDES))
def test_a_library_on_ld_library_path_that_torch_cannot_load_is_named_with_the_variable(
        case: str, cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    make, loader_says = OVERRIDES[case]
    folder = tmp_path / f"override-{case}-zqlib"
    folder.mkdir()
    make(folder)
    env = clean_env({"LD_LIBRARY_PATH": f"{tmp_path / 'elsewhere'}:{folder}"})
    result, report = _check(cpu_torch_python, pyz, tmp_path, env)
    assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
    assert loader_says in report["error"]["message"]  # the real loader's own words
    assert report["runtime"]["library_override"] == {
        "variable": "LD_LIBRARY_PATH", "library": LIBSTDCXX, "conda_env_lib": False}
    found = _findings(report)
    finding = found["LIBRARY_PATH_OVERRIDE"]
    assert finding["severity"] == "error"
    assert "LD_LIBRARY_PATH" in finding["summary"]
    assert LIBSTDCXX in finding["summary"]
    assert "env -u LD_LIBRARY_PATH python app.py" in finding["next_action"]
    assert finding["evidence"][0] == f"a folder on LD_LIBRARY_PATH holds {LIBSTDCXX}"
    # No other rule sends the user elsewhere (reinstalling torch would not help).
    assert set(found) <= {"LIBRARY_PATH_OVERRIDE", "NUMPY_MISSING"}
    # Never the folder: not in the report, not on the terminal.
    for text in (json.dumps(report), result.stdout, result.stderr):
        assert "zqlib" not in text
        assert str(tmp_path) not in text
    assert "LIBRARY_PATH_OVERRIDE" in result.stdout


@pytest.mark.slow
def test_the_advice_works_without_the_variable_the_check_passes(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    folder = tmp_path / "override"
    folder.mkdir()
    _old_libstdcxx(folder)
    env = clean_env({"LD_LIBRARY_PATH": str(folder)})
    assert _check(cpu_torch_python, pyz, tmp_path, env)[1]["code"] == "TORCH_IMPORT_FAILED"
    del env["LD_LIBRARY_PATH"]  # env -u LD_LIBRARY_PATH
    _, report = _check(cpu_torch_python, pyz, tmp_path, env)
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["runtime"]["library_override"] is None
    assert "LIBRARY_PATH_OVERRIDE" not in _findings(report)


@pytest.mark.slow
def test_a_wrong_elf_class_library_on_ld_library_path_is_named(
        broken_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # The loader skips a 32-bit file while another candidate exists; torch's own copy of
    # libtorch_cpu.so is gone here, so the 32-bit one on LD_LIBRARY_PATH is all there is.
    folder = tmp_path / "lib32"
    folder.mkdir()
    _elf32(folder, "libtorch_cpu.so")
    env = clean_env({"LD_LIBRARY_PATH": str(folder)})
    _, report = _check(broken_torch_python, pyz, tmp_path, env)
    assert report["code"] == "TORCH_IMPORT_FAILED"
    assert report["error"]["message"] == "libtorch_cpu.so: wrong ELF class: ELFCLASS32"
    assert report["runtime"]["library_override"] == {
        "variable": "LD_LIBRARY_PATH", "library": "libtorch_cpu.so", "conda_env_lib": False}
    found = _findings(report)
    assert "libtorch_cpu.so" in found["LIBRARY_PATH_OVERRIDE"]["summary"]
    # The loader did not say the library is missing: that advice would be wrong here.
    assert "SHARED_LIBRARY_MISSING" not in found


@pytest.mark.slow
def test_a_wrong_elf_class_library_the_loader_skips_is_no_finding(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    folder = tmp_path / "lib32"
    folder.mkdir()
    _elf32(folder)
    _, report = _check(cpu_torch_python, pyz, tmp_path,
                       clean_env({"LD_LIBRARY_PATH": str(folder)}))
    assert report["code"] == "CPU_CHECK_PASSED"  # the system's libstdc++ was used instead
    assert report["runtime"]["library_override"] is None
    assert "LIBRARY_PATH_OVERRIDE" not in _findings(report)


@pytest.mark.slow
def test_a_missing_library_with_ld_library_path_set_is_not_an_override(
        broken_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    folder = tmp_path / "unrelated"
    folder.mkdir()
    _empty(folder, "libunrelated.so.1")
    _, report = _check(broken_torch_python, pyz, tmp_path,
                       clean_env({"LD_LIBRARY_PATH": str(folder)}))
    assert report["runtime"]["library_override"] is None
    found = _findings(report)
    assert "SHARED_LIBRARY_MISSING" in found
    assert "LIBRARY_PATH_OVERRIDE" not in found


@pytest.mark.slow
def test_a_conda_environments_lib_on_ld_library_path_is_said_to_be_one(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "miniconda3" / "envs" / "old-gcc"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "conda-meta").mkdir()
    _old_libstdcxx(prefix / "lib")
    # What `export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH` in an activation gives.
    env = clean_env({"CONDA_PREFIX": str(prefix), "LD_LIBRARY_PATH": f"{prefix}/lib:"})
    _, report = _check(cpu_torch_python, pyz, tmp_path, env)
    assert report["runtime"]["library_override"] == {
        "variable": "LD_LIBRARY_PATH", "library": LIBSTDCXX, "conda_env_lib": True}
    finding = _findings(report)["LIBRARY_PATH_OVERRIDE"]
    assert finding["evidence"][0] == \
        f"a folder on LD_LIBRARY_PATH (a conda environment's lib) holds {LIBSTDCXX}"
    assert "old-gcc" not in json.dumps(report)


def test_the_conda_environments_own_lib_without_a_variable(tmp_path: Path) -> None:
    # A conda Python finds its environment's lib through its run path, with no variable set.
    # There is no conda here: the rule is given the loader's message as such a Python gets it.
    lib = tmp_path / "envs" / "ml" / "lib"
    lib.mkdir(parents=True)
    _empty(lib)
    message = (f"{lib}/libstdc++.so.6: version `GLIBCXX_3.4.30' not found (required by "
               f"{tmp_path}/site-packages/torch/lib/libtorch_python.so)")
    environ = {"CONDA_PREFIX": str(lib.parent)}
    override = library_override([message], environ, "linux")
    assert override == {"variable": None, "library": LIBSTDCXX, "conda_env_lib": True}
    # A damaged file in torch's own folder, not in any override folder: not an override.
    assert library_override([f"{tmp_path}/torch/lib/libc10.so: file too short"], environ,
                            "linux") is None
    # macOS: DYLD_LIBRARY_PATH, and dyld's own words.
    dyld = (f"dlopen({tmp_path}/_C.so, 0x0002): Library not loaded: @rpath/libc++.1.dylib "
            f"Reason: tried: '{lib}/libc++.1.dylib' (mach-o file, but is an incompatible "
            f"architecture (have 'x86_64', need 'arm64'))")
    assert library_override([dyld], {"DYLD_LIBRARY_PATH": str(lib)}, "darwin") == {
        "variable": "DYLD_LIBRARY_PATH", "library": "libc++.1.dylib", "conda_env_lib": False}


# -- item 5: the worker's last words -------------------------------------------------------------

def _with_memory_limit(megabytes: int, limit: int = resource.RLIMIT_AS) -> Any:
    def set_limit() -> None:
        resource.setrlimit(limit, (megabytes * 2**20, megabytes * 2**20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return set_limit


def _check_under_limit(python: Path, pyz: Path, out: Path, megabytes: int,
                       limit: int = resource.RLIMIT_AS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), str(pyz), "--device", "cpu", "--output", str(out)],
        capture_output=True, text=True, timeout=180, env=clean_env(), check=False,
        stdin=subprocess.DEVNULL, preexec_fn=_with_memory_limit(megabytes, limit))


def _names_the_limit(report: dict[str, Any], command: str, megabytes: int) -> dict[str, Any]:
    """HOST_MEMORY_EXHAUSTED, naming the limit in its evidence, summary and advice."""
    assert report["node"]["memory_limits"] == {
        "address_space_bytes": megabytes * 2**20 if command == "ulimit -v" else None,
        "data_bytes": megabytes * 2**20 if command == "ulimit -d" else None}
    finding = _findings(report)["HOST_MEMORY_EXHAUSTED"]
    assert finding["evidence"][1:] == [
        f"{command}: {megabytes} MiB for this process and the worker"]
    assert f"({command}: {megabytes} MiB)" in finding["summary"]
    assert f"{command} unlimited" in finding["next_action"]
    return finding


@pytest.mark.slow
def test_a_real_import_that_dies_of_an_address_space_limit_names_the_limit(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # Under an address-space limit (ulimit -v), a real `import torch` fails to map a library,
    # raises MemoryError, or dies: a static initialiser throws std::bad_alloc and aborts, or the
    # dynamic loader cannot allocate a new thread's TLS and exits 127. Which one depends on the
    # limit and the machine: the limits around the ones that die here are tried.
    seen = {}
    for megabytes in (400, 390, 410, 420, 380, 440, 460, 370, 480, 500):
        out = tmp_path / f"limit-{megabytes}.json"
        completed = _check_under_limit(cpu_torch_python, pyz, out, megabytes)
        if not out.is_file():
            seen[megabytes] = completed.stderr.strip()[-200:]
            continue
        report = json.loads(out.read_text())
        seen[megabytes] = report["code"]
        if report["code"] == "WORKER_FAILED":
            break
    else:
        pytest.skip(f"no limit made the real import die on this machine: {seen}")
    assert_valid_report(report)
    assert completed.returncode == 11
    error = report["error"]
    assert error["stage"] == "import"
    if error["message_key"] == "error.worker_ended.signal_stderr":
        assert error["message_values"]["signal"] == "SIGABRT"
        # libstdc++ names the type demangled, or mangled (St9bad_alloc) when demangling, which
        # allocates, fails too: both seen for real here (2026-12-03).
        last_words = next(f"terminate called after throwing an instance of '{name}' what(): "
                          "std::bad_alloc" for name in ("std::bad_alloc", "St9bad_alloc")
                          if f"'{name}'" in error["message"])
        assert error["message"] == (
            "the worker was killed by signal SIGABRT during import, without a final result; its "
            f"last line on stderr: {last_words}")
    else:
        assert error["message_key"] == "error.worker_ended.exit_stderr"
        assert error["message_values"]["code"] == "127"
        last_words = "cannot allocate memory for thread-local data: ABORT"
        assert error["message"] == (
            "the worker exited with code 127 during import, without a final result; its last "
            f"line on stderr: {last_words}")
    finding = _names_the_limit(report, "ulimit -v", megabytes)
    assert last_words in finding["evidence"][0]
    assert last_words in completed.stdout  # on the terminal too
    assert "ulimit -v: " in completed.stdout


@pytest.mark.slow
def test_a_real_import_that_cannot_map_torchs_library_under_a_limit_is_host_memory(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # Far below what torch needs, the loader cannot even map libtorch_cpu.so: an ImportError that
    # reads like a damaged install, and reinstalling torch would change nothing.
    out = tmp_path / "report.json"
    completed = _check_under_limit(cpu_torch_python, pyz, out, 200)
    report = json.loads(out.read_text())
    assert (completed.returncode, report["code"]) == (4, "TORCH_IMPORT_FAILED")
    assert "failed to map segment from shared object" in report["error"]["message"]
    finding = _names_the_limit(report, "ulimit -v", 200)
    assert finding["evidence"][0].startswith("ImportError: ")
    assert "failed to map segment" in finding["evidence"][0]


def test_the_loaders_words_alone_are_not_host_memory() -> None:
    # Without a limit, "failed to map segment" is as likely a noexec mount or a damaged file; the
    # static TLS block is a fixed area (LD_PRELOAD=libgomp is the usual cure), not memory.
    for message in ("<path>/libtorch_cpu.so: failed to map segment from shared object",
                    "libgomp-a34b3233.so.1.0.0: cannot allocate memory in static TLS block"):
        report = build(Request("cpu", 0, 30, False), WorkerRun(WorkerState(), "finished", 0, 0.5),
                       None, Redactor()).report
        report.update(code="TORCH_IMPORT_FAILED", node={"memory_limits": {
            "address_space_bytes": None, "data_bytes": None}}, error={
            "stage": "import", "kind": "import_failed", "type": "ImportError",
            "message": message})
        assert "HOST_MEMORY_EXHAUSTED" not in {f["id"] for f in derive(report)}, message
        if "static TLS" in message:  # not even under a limit
            report["node"]["memory_limits"]["address_space_bytes"] = 2**30
            assert "HOST_MEMORY_EXHAUSTED" not in {f["id"] for f in derive(report)}


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_an_uncaught_cuda_error_on_a_gpu_names_it_not_only_sigabrt(
        pyz: Path, tmp_path: Path, lang: str) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--output", str(out), "--lang", lang],
                      env=fake_gpu_env("cuda_error_terminate_in_synchronize"))
    assert result.report is not None, result.stderr
    report = result.report
    assert_valid_report(report)
    assert (report["code"], report["stage"], report["error"]["step"]) == \
        ("WORKER_FAILED", "compute", "synchronize")
    assert report["error"]["message"] == (
        "the worker was killed by signal SIGABRT during compute (synchronize), without a final "
        "result; its last line on stderr: terminate called after throwing an instance of "
        "'c10::Error' what(): CUDA error: an illegal memory access was encountered")
    # Neither the C++ frames nor their paths, nor CUDA's boilerplate advice.
    assert "frame #" not in json.dumps(report)
    assert "/opt/venv" not in json.dumps(report)
    error_line = next(line for line in result.stdout.splitlines() if "SIGABRT" in line)
    said = {"en": "its last line on stderr: terminate called",
            "fr": "sa dernière ligne sur stderr : terminate called"}
    assert said[lang] in error_line


def test_a_crash_that_wrote_nothing_keeps_the_plain_sentence(pyz: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("abort_in_device_query"))
    assert result.report is not None
    assert result.report["error"]["message_key"] == "error.worker_ended.signal"
    assert result.report["error"]["message"] == (
        "the worker was killed by signal SIGABRT during device, without a final result")


STDERR_TAILS = {
    "python traceback": (
        "Traceback (most recent call last):\n  File \"/x/worker.py\", line 9, in <module>\n"
        "    import torch\n    ^^^^^^^^^^^^\nImportError: libcudnn.so.9: cannot open shared "
        "object file\n\n",
        "ImportError: libcudnn.so.9: cannot open shared object file"),
    "faulthandler": (
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f12 (most recent call "
        "first):\n  File \"/x/torch/cuda/__init__.py\", line 3 in init\n\nExtension modules: "
        "torch._C (total: 1)\n",
        None),
    "mkl": (
        "INTEL MKL ERROR: /opt/conda/lib/libmkl_avx2.so.2: undefined symbol: "
        "mkl_sparse_optimize_bsr_trsm_i8.\nIntel oneMKL FATAL ERROR: Cannot load "
        "libmkl_avx2.so.2 or libmkl_def.so.2.\n",
        "Intel oneMKL FATAL ERROR: Cannot load libmkl_avx2.so.2 or libmkl_def.so.2."),
    "what alone": ("  what():  std::bad_alloc\n", "what(): std::bad_alloc"),
    "blank": ("\n\n   \n", None),
    "not utf-8": ("libcaf\udce9.so: file too short\n", "libcaf\ufffd.so: file too short"),
}


@pytest.mark.parametrize("case", sorted(STDERR_TAILS))
def test_the_last_meaningful_stderr_line(case: str, tmp_path: Path) -> None:
    text, expected = STDERR_TAILS[case]
    path = tmp_path / "stderr"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert last_stderr_line(str(path)) == expected


def test_the_stderr_line_is_bounded_and_read_from_the_tail_only(tmp_path: Path) -> None:
    path = tmp_path / "stderr"
    path.write_bytes(b"k" * 2**20 + b"\nRuntimeError: " + b"x" * 10_000 + b"\n")
    line = last_stderr_line(str(path))
    assert line is not None
    assert len(line) == 500
    assert line.endswith("\u2026")
    assert last_stderr_line(str(tmp_path / "absent")) is None


def test_the_stderr_line_is_redacted_and_gives_findings(tmp_path: Path) -> None:
    home = tmp_path / "home" / "zqperson"
    run = WorkerRun(WorkerState(), "crashed", 1, 0.5,
                    stderr_line=f"Intel oneMKL FATAL ERROR: Cannot load {home}/libtorch_cpu.so.")
    run.state.stage = "import"
    report = build(Request("cpu", 0, 30, False), run, None, Redactor()).report
    assert report["error"]["message"] == (
        "the worker exited with code 1 during import, without a final result; its last line on "
        "stderr: Intel oneMKL FATAL ERROR: Cannot load <path>/libtorch_cpu.so.")
    assert "zqperson" not in json.dumps(report)
    finding = {f["id"]: f for f in derive(report)}["SHARED_LIBRARY_MISSING"]
    assert "libtorch_cpu.so" in finding["summary"]


@pytest.mark.slow
def test_a_real_import_that_raises_memory_error_is_host_memory_too(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # A little above the limits that kill it, the import gets further and raises MemoryError.
    seen = {}
    for megabytes in (450, 440, 460, 430, 470, 500, 520):
        out = tmp_path / f"limit-{megabytes}.json"
        _check_under_limit(cpu_torch_python, pyz, out, megabytes)
        report = json.loads(out.read_text()) if out.is_file() else None
        seen[megabytes] = report and (report["code"], (report["error"] or {}).get("type"))
        if report and (report["error"] or {}).get("type") == "MemoryError":
            break
    else:
        pytest.skip(f"no limit gave a MemoryError on this machine: {seen}")
    assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
    finding = _names_the_limit(report, "ulimit -v", megabytes)
    assert finding["evidence"][0] == "MemoryError at the import stage"


@pytest.mark.slow
def test_a_data_limit_is_named_as_such(cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # ulimit -d (RLIMIT_DATA) bounds the heap and, since Linux 4.7, every private mapping.
    out = tmp_path / "report.json"
    _check_under_limit(cpu_torch_python, pyz, out, 100, resource.RLIMIT_DATA)
    report = json.loads(out.read_text())
    # MemoryError, a SystemError that lost it, or a worker that dies of it, as with ulimit -v,
    # depending on the machine and the run.
    assert report["code"] in ("TORCH_IMPORT_FAILED", "WORKER_FAILED")
    assert report["stage"] == "import"
    _names_the_limit(report, "ulimit -d", 100)


def _import_failed(code: str, kind: str, type_: str | None, message: str,
                   data_limit: int | None = None) -> dict[str, Any]:
    """The findings of a check whose import stage failed so, under ``ulimit -d`` if given."""
    report = build(Request("cpu", 0, 30, False), WorkerRun(WorkerState(), "finished", 0, 0.5),
                   None, Redactor()).report
    report.update(code=code, node={"memory_limits": {
        "address_space_bytes": None, "data_bytes": data_limit}}, error={
        "stage": "import", "kind": kind, "type": type_, "message": message})
    return {f["id"]: f for f in derive(report)}


def test_a_memory_error_the_worker_could_not_report_is_host_memory_too() -> None:
    # Under ulimit -d 100 MB the MemoryError sometimes escapes before the worker can say it: it
    # exits 1 and its last line on stderr is the exception's name (seen for real, 2026-12-02).
    def exited(last_line: str) -> dict[str, Any]:
        return _import_failed("WORKER_FAILED", "worker_failed", None,
                              "the worker exited with code 1 during import, without a final "
                              f"result; its last line on stderr: {last_line}")

    found = exited("MemoryError")
    assert found["HOST_MEMORY_EXHAUSTED"]["evidence"][0].endswith("stderr: MemoryError")
    assert "HOST_MEMORY_EXHAUSTED" not in exited("MemoryErrors")
    assert "HOST_MEMORY_EXHAUSTED" not in _import_failed(
        "WORKER_FAILED", "worker_failed", None, "an answer mentioning MemoryError")


def test_bad_alloc_is_host_memory_whether_its_name_is_demangled_or_not() -> None:
    # libstdc++'s terminate handler demangles the exception's type, which allocates: out of
    # memory it prints the mangled name, St9bad_alloc (seen for real under ulimit -v, 2026-12-03),
    # and a worker killed before its what() line leaves that name alone.
    for last_line in ("terminate called after throwing an instance of 'St9bad_alloc'",
                      "terminate called after throwing an instance of 'std::bad_alloc'"):
        found = _import_failed("WORKER_FAILED", "worker_failed", None,
                               "the worker was killed by signal SIGABRT during import, without a "
                               f"final result; its last line on stderr: {last_line}")
        assert found["HOST_MEMORY_EXHAUSTED"]["evidence"][0].endswith(last_line)
    from kernodeck_diagnostic.ramp.outcome import OOM_TEXT

    assert OOM_TEXT.search("terminate called after throwing an instance of 'St9bad_alloc'")


def test_cpythons_fatal_errors_short_of_memory_are_host_memory() -> None:
    # Under ulimit -d 100 MB, a third of real checks here: the worker aborts with CPython 3.11's
    # "Cannot recover from stack overflow" while its stack holds 30 frames (a MemoryError in the
    # import machinery), or "Cannot recover from MemoryErrors while normalizing exceptions".
    def aborted(last_line: str, limit: int | None) -> dict[str, Any]:
        return _import_failed("WORKER_FAILED", "worker_failed", None,
                              "the worker was killed by signal SIGABRT during import, without a "
                              f"final result; its last line on stderr: {last_line}", limit)

    overflow = "Fatal Python error: _Py_CheckRecursiveCall: Cannot recover from stack overflow."
    normalizing = ("Fatal Python error: _PyErr_NormalizeException: Cannot recover from "
                   "MemoryErrors while normalizing exceptions.")
    found = aborted(overflow, 100 * 2**20)["HOST_MEMORY_EXHAUSTED"]
    assert found["evidence"] == [
        f"the worker was killed by signal SIGABRT during import, without a final result; its "
        f"last line on stderr: {overflow}",
        "ulimit -d: 100 MiB for this process and the worker"]
    assert "HOST_MEMORY_EXHAUSTED" not in aborted(overflow, None)  # a deep recursion, as likely
    for limit in (None, 100 * 2**20):
        assert "HOST_MEMORY_EXHAUSTED" in aborted(normalizing, limit)


def test_a_system_error_without_an_exception_under_a_limit_is_host_memory() -> None:
    # Under ulimit -d 100 MB, a third of real imports of torch here (2026-12-03) fail with a
    # SystemError: an allocation failed while an exception was being raised, and the C function
    # returned an error with no exception set. Without a limit, a faulty extension says the same.
    def failed(message: str, limit: int | None) -> dict[str, Any]:
        return _import_failed("TORCH_IMPORT_FAILED", "import_failed", "SystemError", message,
                              limit)

    for message in ("error return without exception set",
                    "<function _find_and_load at 0x7f367536fce0> returned NULL without setting "
                    "an exception"):
        found = failed(message, 100 * 2**20)["HOST_MEMORY_EXHAUSTED"]
        assert found["evidence"] == [f"SystemError: {message}",
                                     "ulimit -d: 100 MiB for this process and the worker"]
        assert "HOST_MEMORY_EXHAUSTED" not in failed(message, None)
    assert "HOST_MEMORY_EXHAUSTED" not in failed("a bad argument", 100 * 2**20)


def test_a_memory_error_at_import_is_host_memory_too() -> None:
    assert "HOST_MEMORY_EXHAUSTED" in _import_failed("TORCH_IMPORT_FAILED", "import_failed",
                                                     "MemoryError", "")



# CUDA under ulimit -v: the driver reserves host address space for the GPU's memory and says "out
# of memory" when the limit refuses it. The limit is real; the GPU is the fake's (it refuses like
# CUDA only when the process's real RLIMIT_AS is below twice its 12 GiB).
@pytest.mark.parametrize(("scenario", "code", "status"), [
    ("driver_init_under_address_space_limit", "GPU_UNAVAILABLE", 6),
    ("context_under_address_space_limit", "OUT_OF_MEMORY", 9)])
def test_cuda_refused_its_address_space_is_the_limit_not_a_full_gpu(
        pyz: Path, tmp_path: Path, scenario: str, code: str, status: int) -> None:
    out = tmp_path / "report.json"
    completed = subprocess.run(
        [sys.executable, str(pyz), "--output", str(out)], capture_output=True, text=True,
        timeout=120, env=fake_gpu_env(scenario), check=False, stdin=subprocess.DEVNULL,
        preexec_fn=_with_memory_limit(4096))
    report = json.loads(out.read_text())
    assert_valid_report(report)
    assert (completed.returncode, report["code"], report["stage"]) == (
        status, code, "device" if code == "GPU_UNAVAILABLE" else "compute")
    found = _findings(report)
    finding = found["HOST_MEMORY_EXHAUSTED"]
    assert "out of memory" in finding["evidence"][0]
    assert finding["evidence"][1:] == [
        "ulimit -v: 4096 MiB for this process and the worker",
        "the device's free memory could not be read: CUDA had no context on it yet"]
    assert "CUDA could not start under the address-space limit" in finding["summary"]
    assert "(ulimit -v: 4096 MiB)" in finding["summary"]
    assert "The GPU's own memory did not run out." in finding["summary"]
    assert "ulimit -v unlimited" in finding["next_action"]
    assert "GPU_MEMORY_HELD" not in found
    # No NVIDIA device node here, but error 2 comes from a loaded driver: not a missing one.
    assert "NVIDIA_DRIVER_MISSING" not in found
    assert "CUDA could not start under the address-space limit" in completed.stdout
    if code == "OUT_OF_MEMORY":  # the code's own advice defers to the finding
        assert "next: Read the flagged stage and the findings; with none that names a cause" \
            in completed.stdout
    # The same GPU without the limit passes: the limit was the cause.
    free = tmp_path / "unlimited.json"
    result = run_tool(sys.executable, pyz, ["--output", str(free)], env=fake_gpu_env(scenario))
    assert result.returncode == 0, result.stdout
    assert "HOST_MEMORY_EXHAUSTED" not in _findings(json.loads(free.read_text()))


def _cuda_out_of_memory(message: str, *, free: int | None, backend: str = "cuda",
                        address_space: int | None = 4 * 2**30) -> dict[str, Any]:
    report = build(Request("gpu", 0, 30, False), WorkerRun(WorkerState(), "finished", 0, 0.5),
                   None, Redactor()).report
    device = {"index": 0, "name": "NVIDIA H200", "capability": "9.0",
              "total_memory_bytes": 141 * 2**30,
              **({"free_memory_bytes": free} if free is not None else {})}
    report["pytorch"].update(imported=True, backend=backend, gpu_available=True,
                             visible_device_count=1, devices=[device])
    report.update(code="OUT_OF_MEMORY", stage="compute",
                  node={"memory_limits": {"address_space_bytes": address_space,
                                          "data_bytes": None}},
                  error={"stage": "compute", "kind": "out_of_memory", "type": "RuntimeError",
                         "message": message})
    return report


def test_cuda_out_of_memory_is_the_limit_only_before_a_context() -> None:
    raw = "CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported"
    assert "HOST_MEMORY_EXHAUSTED" in {f["id"] for f in derive(_cuda_out_of_memory(raw, free=None))}
    for report, why in (
            (_cuda_out_of_memory(raw, free=10 * 2**30), "a context was made: the GPU's own"),
            (_cuda_out_of_memory(raw, free=None, address_space=None), "no limit"),
            (_cuda_out_of_memory(raw, free=None, backend="rocm"), "not CUDA"),
            (_cuda_out_of_memory("CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a "
                                 "total capacity of 139.8 GiB of which 0 bytes is free.",
                                 free=None), "the caching allocator: a full GPU"),
            (_cuda_out_of_memory("Error 12: out of memory", free=None), "another error")):
        assert "HOST_MEMORY_EXHAUSTED" not in {f["id"] for f in derive(report)}, why
    passed = _cuda_out_of_memory(raw, free=None)
    passed.update(code="GPU_CHECK_PASSED", error=None,
                  warnings=[{"stage": "compute", "category": "UserWarning", "message": raw}])
    assert "HOST_MEMORY_EXHAUSTED" not in {f["id"] for f in derive(passed)}


# -- item 6: the tool's own isolated install -----------------------------------------------------

@pytest.fixture(scope="session")
def tool_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of the current sources, as setuptools makes it (package files, METADATA, WHEEL,
    entry_points.txt from pyproject.toml, RECORD). Written here: the test machine has no `wheel`
    package to build one offline, and pip installs a wheel without it."""
    import tomllib

    from kernodeck_diagnostic import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dist = f"kernodeck_diagnostic-{__version__}.dist-info"
    files = {path.relative_to(ROOT / "src").as_posix(): path.read_bytes()
             for path in sorted((ROOT / "src" / "kernodeck_diagnostic").rglob("*"))
             if path.is_file() and "__pycache__" not in path.parts}
    files[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {__version__}\n"
        f"Requires-Python: {project['requires-python']}\n").encode()
    files[f"{dist}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n")
    files[f"{dist}/entry_points.txt"] = ("[console_scripts]\n" + "".join(
        f"{name} = {target}\n" for name, target in project["scripts"].items())).encode()
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    wheel = tmp_path_factory.mktemp("wheels") / \
        f"kernodeck_diagnostic-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _tool_venv(where: Path, wheel: Path) -> Path:
    """A real venv from the base Python with the tool installed in it, and no torch."""
    base = Path(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(where)], check=True,
                   timeout=120, capture_output=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"),
                    "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
                   check=True, timeout=300, capture_output=True)
    return where


def _run_command(command: list[str], tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    completed = subprocess.run([*command, "--device", "cpu", *args, "--output", str(out)],
                               capture_output=True, text=True, timeout=180, env=clean_env(),
                               cwd=tmp_path, stdin=subprocess.DEVNULL, check=False)
    assert out.is_file(), completed.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    assert_valid_report(report)
    assert report["exit_code"] == completed.returncode
    return report


ISOLATED = {
    "pipx": (Path("home/.local/share/pipx/venvs/kernodeck-diagnostic"), "warning",
             "the tool's own pipx environment"),
    "uv_tool": (Path("home/.local/share/uv/tools/kernodeck-diagnostic"), "warning",
                "the tool's own uv tool environment"),
    "venv": (Path("tools/diag-venv"), "info", "the virtual environment that holds the "
                                              "kernodeck-diagnostic command"),
}


@pytest.mark.parametrize("kind", sorted(ISOLATED))
def test_the_tools_own_install_without_torch_says_to_check_the_projects_python(
        kind: str, tool_wheel: Path, tmp_path: Path) -> None:
    where, severity, said = ISOLATED[kind]
    venv = _tool_venv(tmp_path / where, tool_wheel)
    report = _run_command([str(venv / "bin" / "kernodeck-diagnostic")], tmp_path)
    assert report["code"] == "TORCH_MISSING"  # true of this interpreter
    assert report["runtime"]["tool_environment"] == kind
    finding = _findings(report)["TOOL_ISOLATED_INSTALL"]
    assert finding["severity"] == severity
    assert said in finding["summary"]
    assert "--python /path/to/project/bin/python" in finding["next_action"]
    assert "kernodeck-diagnostic-v1.pyz" in finding["next_action"] or \
        "single-file download" in finding["next_action"]
    assert str(tmp_path) not in json.dumps(report)


@pytest.mark.slow
def test_the_same_install_checking_the_projects_python_is_not_the_case(
        tool_wheel: Path, cpu_torch_python: Path, tmp_path: Path) -> None:
    venv = _tool_venv(tmp_path / "pipx" / "venvs" / "kernodeck-diagnostic", tool_wheel)
    report = _run_command([str(venv / "bin" / "kernodeck-diagnostic"), "--python",
                           str(cpu_torch_python)], tmp_path)
    assert report["code"] == "CPU_CHECK_PASSED"
    assert report["runtime"]["tool_environment"] is None


@pytest.mark.slow
def test_python_dash_m_and_the_zipapp_in_a_python_without_torch_are_not_the_case(
        tool_wheel: Path, notorch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # The user chose that interpreter: TORCH_MISSING is the useful answer there.
    venv = _tool_venv(tmp_path / "project-venv", tool_wheel)
    report = _run_command([str(venv / "bin" / "python"), "-m", "kernodeck_diagnostic"], tmp_path)
    assert report["code"] == "TORCH_MISSING"
    assert report["runtime"]["tool_environment"] is None
    assert "TOOL_ISOLATED_INSTALL" not in _findings(report)
    report = _run_command([str(notorch_python), str(pyz)], tmp_path)
    assert report["code"] == "TORCH_MISSING"
    assert report["runtime"]["tool_environment"] is None
    assert "TOOL_ISOLATED_INSTALL" not in _findings(report)


def test_no_finding_when_the_tools_install_has_torch(tmp_path: Path) -> None:
    report = build(Request("cpu", 0, 30, False), WorkerRun(WorkerState(), "finished", 0, 0.5),
                   None, Redactor(), {"tool_environment": "pipx"}).report
    report.update(code="CPU_CHECK_PASSED", error=None)
    assert "TOOL_ISOLATED_INSTALL" not in {f["id"] for f in derive(report)}
