"""Concurrency and hygiene: parallel checks do not mix, and the front leaves nothing open.

Eight checks at once, each asking for another device of another machine shape and writing its
own file, must each get exactly their own report, from their own private temporary folder
(mode 0700), all removed afterwards. The front, run under ``python -X dev -W
error::ResourceWarning``, must not emit a single warning (no unclosed file, no process left
unwaited) whatever the run: a pass, a crash, a timeout, a flood, a helper process, a hung host
tool, a refused output, a usage error, an interrupt. And a reader of stdout that goes away
(`| head -1` before the report is written) does not turn the check into an internal error.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from reliability.harness import (
    FRONT_MEMORY_LIMIT_MB,
    front_command,
    run_front,
    survivors,
    tagged_env,
    wait_for,
)

PARALLEL = 8
DEV_MODE = ["-X", "dev", "-W", "error::ResourceWarning"]


@pytest.mark.slow
def test_eight_checks_in_parallel_do_not_mix(pyz: Path, tmp_path: Path) -> None:
    """Check i asks for device i of a machine with i + 1 GPUs: every report says exactly that,
    every worker ran in its own 0700 folder, and every folder is gone afterwards."""
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    where = tmp_path / "where"

    def one(index: int) -> tuple[int, dict[str, object], str]:
        env, tag = tagged_env("cuda_pass", TMPDIR=str(shared_tmp),
                              KD_FAKE_DEVICES=str(index + 1), KD_FAKE_TORCH_WHERE=str(where))
        out = tmp_path / f"report-{index}.json"
        result = run_front(pyz, ["--device-index", str(index), "--output", str(out)], env=env,
                           rss_file=tmp_path / f"rss-{index}", output=out)
        assert result.report is not None, result.describe()
        assert result.max_rss_mb is not None
        assert result.max_rss_mb < FRONT_MEMORY_LIMIT_MB
        return result.returncode, result.report, tag

    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        results = list(pool.map(one, range(PARALLEL)))
    for index, (code, report, tag) in enumerate(results):
        assert code == 0
        assert report["request"]["device_index"] == index  # type: ignore[index]
        pytorch = report["pytorch"]
        assert pytorch["visible_device_count"] == index + 1  # type: ignore[index]
        assert len(pytorch["devices"]) == index + 1  # type: ignore[index]
        assert report["execution"]["device"] == f"cuda:{index}"  # type: ignore[index]
        assert survivors(tag) == []
    folders = [line.split() for line in where.read_text().splitlines()]
    assert len(folders) == PARALLEL
    assert len({folder for folder, _ in folders}) == PARALLEL
    assert {mode for _, mode in folders} == {"700"}
    assert all(Path(folder).parent == shared_tmp for folder, _ in folders)
    assert list(shared_tmp.iterdir()) == []


def fake_nvidia_smi(tmp_path: Path, body: str) -> str:
    tools = tmp_path / "bin"
    tools.mkdir(exist_ok=True)
    smi = tools / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + body)
    smi.chmod(0o755)
    return f"{tools}{os.pathsep}{os.environ['PATH']}"


DEV_MODE_RUNS = {
    "pass": ("cuda_pass", [], 0, {}),
    "crash": ("segfault_in_compute", [], 11, {}),
    "timeout": ("hang_in_native_driver_call", ["--timeout", "5"], 10, {}),
    "flood": ("flooding_library", [], 0, {"KD_FAKE_FLOOD_MB": "20"}),
    "helper_process": ("helper_process_outlives_worker", [], 0, {}),
    "corrupt_event_log": ("corrupt_event_log", [], 0, {}),
    "host_tool": ("cuda_pass", ["--host-check"], 0,
                  {"PATH": "SMI:echo 'NVIDIA GeForce RTX 5070, 570.86.15, 12227'\n"}),
    "hung_host_tool": ("cuda_pass", ["--host-check"], 0, {"PATH": "SMI:exec sleep 30\n"}),
    "usage_error": ("cuda_pass", ["--timeout", "1"], 2, {}),
    "output_exists": ("cuda_pass", ["--output", "EXISTING"], 12, {}),
    "json_and_markdown": ("cuda_pass", ["--format", "markdown"], 0, {}),
}


@pytest.mark.slow
@pytest.mark.parametrize("run", list(DEV_MODE_RUNS))
def test_the_front_emits_no_warning_in_development_mode(pyz: Path, tmp_path: Path,
                                                        run: str) -> None:
    """`python -X dev -W error::ResourceWarning`: no warning, no 'Exception ignored'."""
    scenario, args, code, extra = DEV_MODE_RUNS[run]
    if "PATH" in extra:
        extra = {**extra, "PATH": fake_nvidia_smi(tmp_path, extra["PATH"][len("SMI:"):])}
    existing = tmp_path / "existing.json"
    existing.write_text("{}\n")
    args = [str(existing) if arg == "EXISTING" else arg for arg in args]
    env, tag = tagged_env(scenario, **extra)
    result = run_front(pyz, args, env=env, rss_file=tmp_path / "rss", python_flags=DEV_MODE)
    assert result.returncode == code, result.describe()
    assert "Warning" not in result.stderr, result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert survivors(tag) == []


@pytest.mark.slow
def test_no_warning_in_development_mode_when_interrupted(pyz: Path, tmp_path: Path) -> None:
    """An interrupt in development mode: exit 143, one line, and no warning."""
    pids = tmp_path / "pids"
    env, tag = tagged_env("hang_in_native_driver_call", KD_FAKE_TORCH_PIDS=str(pids))
    command = front_command(pyz, ["--timeout", "60"], tmp_path / "rss", DEV_MODE)
    with subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as front:
        wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 2, 30,
                 "the worker to hang")
        os.kill(front.pid, signal.SIGTERM)
        _, stderr = front.communicate(timeout=30)
    assert front.returncode == 143
    assert len(stderr.splitlines()) == 1, stderr
    assert "Warning" not in stderr
    assert survivors(tag) == []


def test_a_reader_that_leaves_does_not_break_the_check(pyz: Path, tmp_path: Path) -> None:
    """stdout is a pipe whose reader is already gone (`| head -1`, a closed pager): the check
    still ends with its own code, saves its report, and says nothing about a broken pipe."""
    out = tmp_path / "report.json"
    env, tag = tagged_env("cuda_pass")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        completed = subprocess.run([sys.executable, str(pyz), "--output", str(out)], env=env,
                                   stdout=write_end, stderr=subprocess.PIPE, text=True,
                                   stdin=subprocess.DEVNULL, timeout=60, check=False)
    finally:
        os.close(write_end)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert json.loads(out.read_text())["code"] == "GPU_CHECK_PASSED"
    assert survivors(tag) == []
