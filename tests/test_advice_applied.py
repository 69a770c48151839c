"""Issue 23: advice that applies to the case, proven by applying it where this machine allows.

Each finding here is built for real where it can be (a mount namespace for a device node, a
pseudo-filesystem, taskset, a cgroup CPU quota), with the fake torch only for what needs a GPU;
docs/reliability.md's table says, for each, what was applied and the verdict after, or why it
cannot be applied here.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_valid_report, clean_env, fake_gpu_env, run_tool
from findings_helpers import unavailable
from kernodeck_diagnostic.report.findings import derive

ROCM = {"pytorch.backend": "rocm", "pytorch.cuda_build": None, "pytorch.hip_build": "6.4.43482",
        "pytorch.version": "2.8.0+rocm6.4"}
NO_NVIDIA_NODE = {"runtime.device_nodes.nvidiactl": False, "runtime.device_nodes.nvidia_uvm": False,
                  "runtime.device_nodes.proc_driver_nvidia": False}


def by_id(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {finding["id"]: finding for finding in derive(found)}


def check(python: Path | str, tool: Path | list[str], tmp_path: Path, env: dict[str, str],
          *args: str) -> dict[str, Any]:
    out = tmp_path / "report.json"
    out.unlink(missing_ok=True)
    result = run_tool(python, tool, [*args, "--output", str(out)], env=env)
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report


# -- ROCm on WSL 2: no /dev/kfd there, by design ------------------------------------------------

def test_rocm_on_wsl_is_not_told_to_load_amdgpu() -> None:
    found = by_id(unavailable("No HIP GPUs are available", **ROCM, **NO_NVIDIA_NODE, **{
        "runtime.device_nodes.kfd": "absent", "runtime.device_nodes.dxg": True}))
    finding = found["ROCM_KFD_ACCESS"]
    assert "modprobe" not in finding["next_action"]
    assert "--device=/dev/kfd" not in finding["next_action"].replace("not load amdgpu or pass", "")
    assert "usecase=wsl" in finding["next_action"]
    assert any("/dev/dxg exists" in line for line in finding["evidence"])
    plain = by_id(unavailable("No HIP GPUs are available", **ROCM, **NO_NVIDIA_NODE, **{
        "runtime.device_nodes.kfd": "absent"}))
    assert "modprobe amdgpu" in plain["ROCM_KFD_ACCESS"]["next_action"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux mount namespace")
def test_rocm_on_a_real_dev_dxg_gets_wsl_advice(pyz: Path, tmp_path: Path) -> None:
    """/dev/dxg made in a private mount namespace (WSL 2's node; the fake ROCm build finds no
    GPU): WSL's advice, not modprobe. Applying it needs WSL and an AMD GPU: not here."""
    from test_review_findings import in_namespace_with

    prefix = in_namespace_with({"dxg": "10 63"}, tmp_path)
    checked = check(prefix[0], [*prefix[1:], sys.executable, str(pyz)], tmp_path,
                    fake_gpu_env("rocm_without_amd_gpu"))
    assert checked["runtime"]["device_nodes"]["dxg"] is True
    finding = {f["id"]: f for f in checked["findings"]}["ROCM_KFD_ACCESS"]
    assert "modprobe" not in finding["next_action"]
    assert "usecase=wsl" in finding["next_action"]
    assert not Path("/dev/dxg").exists()  # the machine's own /dev is untouched


# -- CHECK_FAILED: silent data corruption -------------------------------------------------------

@pytest.mark.parametrize(("scenario", "variant", "said"), [
    ("wrong_product", "wrong", "product: finite values other than the known answer"),
    ("nan_in_product", "non_finite", "product: NaN or infinity where the known answer is finite"),
])
def test_a_wrong_result_on_a_working_device_is_silent_data_corruption(
        pyz: Path, tmp_path: Path, scenario: str, variant: str, said: str) -> None:
    """The fake GPU computes a wrong (or NaN) product without an error. The advice (run again,
    the vendor's diagnostic, take the node out of service) needs a real faulty GPU; what can be
    applied here is the last step: the same check on a sound device (the fake's working GPU)
    passes."""
    checked = check(sys.executable, pyz, tmp_path, fake_gpu_env(scenario))
    assert checked["code"] == "CHECK_FAILED"
    assert checked["execution"]["wrong_values"]["product"] == variant
    finding = {f["id"]: f for f in checked["findings"]}["SILENT_DATA_CORRUPTION"]
    assert said in finding["evidence"]
    assert "silent data corruption" in finding["summary"]
    for step in ("Run the check again", "dcgmi diag", "take the node out of service"):
        assert step in finding["next_action"]
    sound = check(sys.executable, pyz, tmp_path, fake_gpu_env("cuda_pass"))
    assert sound["code"] == "GPU_CHECK_PASSED"
    assert "wrong_values" not in sound["execution"]
    assert "SILENT_DATA_CORRUPTION" not in {f["id"] for f in sound["findings"]}


# -- a visibility entry that matches no GPU -----------------------------------------------------

UUID_HERE = "GPU-8f6c2a51-3b7e-4c1d-9a0e-5d2b7c4e1f30"
UUID_ELSEWHERE = "GPU-11111111-2222-3333-4444-555555555555"


def driver_tree(tmp_path: Path) -> Path:
    """A root with the driver's folder for one GPU, as /proc/driver/nvidia/gpus shows it."""
    gpu = tmp_path / "root" / "proc/driver/nvidia/gpus/0000:01:00.0"
    gpu.mkdir(parents=True)
    (gpu / "information").write_text(
        "Model: \t\t NVIDIA H200\nIRQ:   \t\t 142\n"
        f"GPU UUID: \t {UUID_HERE}\nVideo BIOS: \t ??.??.??.??.??\nBus Type: \t PCIe\n",
        encoding="ascii")
    return tmp_path / "root"


@pytest.mark.parametrize(("value", "unmatched"), [
    (UUID_ELSEWHERE, {"CUDA_VISIBLE_DEVICES": 1}),
    (f"{UUID_HERE},{UUID_ELSEWHERE}", {"CUDA_VISIBLE_DEVICES": 1}),
    (UUID_HERE, {}),
    ("GPU-8f6c2a51", {}),  # a unique prefix is CUDA's too
    ("0", {}),
    ("MIG-0d4e0c14-6d0a-5f1c-9a7e-4c1d2b3e5f60", {}),
])
def test_a_uuid_no_gpu_has_is_counted(tmp_path: Path, value: str,
                                      unmatched: dict[str, int]) -> None:
    from kernodeck_diagnostic.facts import node

    block = node.collect({"CUDA_VISIBLE_DEVICES": value}, root=str(driver_tree(tmp_path)))
    assert block is not None
    assert block["visibility_unmatched"] == unmatched
    assert len(value) < 8 or value not in str(block)  # never the value


def test_without_the_driver_s_folder_nothing_is_claimed(tmp_path: Path) -> None:
    from kernodeck_diagnostic.facts import node

    (tmp_path / "root").mkdir()
    block = node.collect({"CUDA_VISIBLE_DEVICES": UUID_ELSEWHERE}, root=str(tmp_path / "root"))
    assert block is not None
    assert block["visibility_unmatched"] == {}


def test_a_uuid_no_gpu_has_is_a_finding_with_the_way_out() -> None:
    from node_fixtures import with_node

    broken = with_node(unavailable("no CUDA-capable device is detected"), **{
        "runtime.visibility.CUDA_VISIBLE_DEVICES": "lists 1",
        "node.visibility_unmatched": {"CUDA_VISIBLE_DEVICES": 1}})
    found = by_id(broken)
    assert "DEVICES_HIDDEN" not in found
    finding = found["VISIBLE_DEVICE_UNMATCHED"]
    assert finding["severity"] == "error"
    assert "nvidia-smi -L" in finding["next_action"]
    assert "CUDA_VISIBLE_DEVICES lists 1 GPU UUID(s) that no GPU here has (the driver has 1 " \
        "GPU(s): /proc/driver/nvidia/gpus)" in finding["evidence"]
    # The advice applied: CUDA_VISIBLE_DEVICES set to the UUID nvidia-smi -L lists.
    fixed = with_node(**{"runtime.visibility.CUDA_VISIBLE_DEVICES": "lists 1"})
    assert "VISIBLE_DEVICE_UNMATCHED" not in by_id(fixed)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the node block is Linux's")
def test_the_check_reports_the_unmatched_uuid(pyz: Path, tmp_path: Path) -> None:
    """The fake GPU with the real front: this machine has no NVIDIA driver, so the driver's
    folder cannot be read and nothing is claimed (no false finding without evidence)."""
    env = fake_gpu_env("cuda_pass", CUDA_VISIBLE_DEVICES=UUID_ELSEWHERE)
    checked = check(sys.executable, pyz, tmp_path, env)
    if not Path("/proc/driver/nvidia/gpus").is_dir():
        assert checked["node"]["visibility_unmatched"] == {}
        assert "VISIBLE_DEVICE_UNMATCHED" not in {f["id"] for f in checked["findings"]}


# -- TIMEOUT: the limit, and the CPU this process may really use --------------------------------

def test_the_cgroup_quota_is_read_from_v1_and_v2_trees(tmp_path: Path) -> None:
    from kernodeck_diagnostic.facts.system import cpu_quota

    v2 = tmp_path / "v2"
    (v2 / "job" / "step").mkdir(parents=True)
    (v2 / "job" / "cpu.max").write_text("50000 100000\n")
    (v2 / "job" / "step" / "cpu.max").write_text("max 100000\n")
    own = tmp_path / "own-v2"
    own.write_text("0::/job/step\n")
    assert cpu_quota(str(v2), str(own)) == 0.5  # the parent's quota binds its children
    v1 = tmp_path / "v1"
    (v1 / "cpu,cpuacct" / "docker" / "abc").mkdir(parents=True)
    (v1 / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us").write_text("5000\n")
    (v1 / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_period_us").write_text("100000\n")
    own.write_text("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    assert cpu_quota(str(v1), str(own)) == 0.05
    (v1 / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us").write_text("-1\n")
    assert cpu_quota(str(v1), str(own)) is None


def _quota_cgroup(tmp_path: Path, share: float) -> tuple[list[str], Path] | None:
    """A command prefix that runs the rest in a new cgroup allowed ``share`` of one CPU (v1's
    cpu controller or v2's cpu.max), and the cgroup's folder; None without root or a cgroup
    file system that takes one."""
    name = f"kd-advice-{os.getpid()}-{tmp_path.name}"
    period = 100_000
    for mount, files in ((Path("/sys/fs/cgroup/cpu"), {
            "cpu.cfs_period_us": str(period), "cpu.cfs_quota_us": str(int(period * share))}),
            (Path("/sys/fs/cgroup"), {"cpu.max": f"{int(period * share)} {period}"})):
        folder = mount / name
        if not mount.is_dir() or not all((mount / f).exists() or f == "cpu.max"
                                         for f in files):
            continue
        try:
            folder.mkdir()
            for file, value in files.items():
                (folder / file).write_text(value)
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            continue
        script = f'echo $$ > {folder}/cgroup.procs && exec "$@"'
        return ["sh", "-c", script, "sh"], folder
    return None


@pytest.fixture
def quota_5_percent(tmp_path: Path) -> Iterator[list[str]]:
    made = _quota_cgroup(tmp_path, 0.05) if sys.platform.startswith("linux") else None
    if made is None:
        pytest.skip("no cgroup with a CPU quota can be made here (needs root and a cgroup fs)")
    prefix, folder = made
    yield prefix
    for _ in range(50):  # the processes in it are gone once the check returned
        try:
            folder.rmdir()
            break
        except OSError:
            time.sleep(0.1)


@pytest.mark.long
def test_a_working_worker_ended_by_the_limit_under_a_cpu_quota(
        pyz: Path, tmp_path: Path, quota_5_percent: list[str]) -> None:
    """A worker allowed 5% of one CPU whose import needs 0.3 s of CPU: 6 s of wall clock, past
    the 5 s limit. Each finding's advice applied, exactly as printed, turns it into a pass."""
    env = fake_gpu_env("cuda_pass", KD_FAKE_TORCH_IMPORT_CPU="0.3")
    prefix = quota_5_percent
    checked = check(prefix[0], [*prefix[1:], sys.executable, str(pyz)], tmp_path, env,
                    "--timeout", "5")
    assert checked["code"] == "TIMEOUT"
    assert checked["system"]["cpu_quota"] == pytest.approx(0.05)
    found = {f["id"]: f for f in checked["findings"]}
    limit = found["TIME_LIMIT_REACHED"]
    assert "--timeout 120" in limit["next_action"]
    assert any("it was working, not waiting" in line for line in limit["evidence"])
    quota = found["CPU_LIMITED"]
    assert quota["severity"] == "error"
    assert "0.05 CPU(s) of time" in quota["summary"]
    # TIME_LIMIT_REACHED's advice: --timeout 120, in the same cgroup.
    longer = check(prefix[0], [*prefix[1:], sys.executable, str(pyz)], tmp_path, env,
                   "--timeout", "120")
    assert longer["code"] == "GPU_CHECK_PASSED"
    # CPU_LIMITED's advice: no quota (the same check outside the cgroup), the default limit.
    free = check(sys.executable, pyz, tmp_path, env, "--timeout", "5")
    assert free["code"] == "GPU_CHECK_PASSED"
    assert "CPU_LIMITED" not in {f["id"] for f in free["findings"]}


def test_a_worker_that_waits_is_not_told_to_raise_the_limit(pyz: Path, tmp_path: Path) -> None:
    checked = check(sys.executable, pyz, tmp_path, fake_gpu_env("hang_in_native_driver_call"),
                    "--timeout", "5")
    assert checked["code"] == "TIMEOUT"
    assert checked["timings_ms"]["worker_cpu"] < 1000
    assert "TIME_LIMIT_REACHED" not in {f["id"] for f in checked["findings"]}


@pytest.mark.skipif(shutil.which("taskset") is None or (os.cpu_count() or 1) < 2,
                    reason="taskset and two CPUs")
def test_an_affinity_far_below_the_machine_is_said_and_goes_without_taskset(
        pyz: Path, tmp_path: Path) -> None:
    env = fake_gpu_env("cuda_pass")
    pinned = check("taskset", ["-c", "0", sys.executable, str(pyz)], tmp_path, env)
    assert pinned["system"]["usable_cpus"] == 1
    finding = {f["id"]: f for f in pinned["findings"]}["CPU_LIMITED"]
    assert "taskset" in finding["next_action"]
    assert f"1 of the machine's {os.cpu_count()} logical CPUs" in finding["summary"]
    free = check(sys.executable, pyz, tmp_path, env)  # the advice: without taskset
    assert "CPU_LIMITED" not in {f["id"] for f in free["findings"]}


# -- --kernels: a limit that suits a cold torch.compile, its sub-step shown, its cache removed ---

def test_kernels_get_a_limit_that_suits_a_cold_compile() -> None:
    from kernodeck_diagnostic.api import KERNELS_TIMEOUT_DEFAULT_S, TIMEOUT_DEFAULT_S
    from kernodeck_diagnostic.commands.check import _options, parser
    from kernodeck_diagnostic.i18n import ENGLISH

    def limit(*argv: str) -> float:
        return _options(parser(ENGLISH).parse_args(list(argv)), ENGLISH).timeout_s

    assert limit("--kernels") == KERNELS_TIMEOUT_DEFAULT_S == 120
    assert limit() == TIMEOUT_DEFAULT_S
    assert limit("--kernels", "--timeout", "40") == 40  # the user's limit stands


def test_the_progress_line_names_the_kernel_it_is_in() -> None:
    import io

    from kernodeck_diagnostic.commands.check import _LiveLine
    from kernodeck_diagnostic.supervision.events import WorkerState
    from kernodeck_diagnostic.supervision.supervisor import _where

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    state = WorkerState()
    state.stage, state.step = "kernels", "compile"
    assert _where(state) == "kernels:compile"
    state.stage, state.step = "compute", "product"
    assert _where(state) == "compute"
    shown = Terminal()
    _LiveLine(shown, 120.0).update("kernels:compile", 23.4)
    assert "running kernels (compile)... 23.4 s / 120 s" in shown.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("user_cache", [False, True])
def test_the_compiler_cache_is_the_run_s_unless_the_user_chose_one(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, user_cache: bool) -> None:
    """A real torch.compile (the CPU build: generated C++): before, 150 MB named
    torchinductor_<user> stayed in $TMPDIR; now nothing is left there, and a cache the user set
    (TORCHINDUCTOR_CACHE_DIR) is the one used."""
    from conftest import clean_env

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    chosen = tmp_path / "my-inductor-cache"
    env = clean_env({"TMPDIR": str(tmpdir)})
    if user_cache:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(chosen)
    checked = check(cpu_torch_python, pyz, tmp_path, env, "--device", "cpu", "--kernels")
    compiled = next(k for k in checked["libraries"]["kernels"] if k["name"] == "compile")
    assert compiled["status"] == "passed", compiled
    if user_cache:  # the user's choice, used as it is (Inductor's headers stay torch's own)
        assert any(chosen.iterdir())
    else:
        assert sorted(p.name for p in tmpdir.iterdir()) == []
        assert not chosen.exists()


def test_the_cpus_shown_are_those_this_process_may_use() -> None:
    from kernodeck_diagnostic.i18n import ENGLISH
    from kernodeck_diagnostic.report.render import _cpus

    assert _cpus({"logical_cpus": 2, "usable_cpus": 2, "cpu_quota": 0.05}, ENGLISH) == \
        "2 logical CPUs, 0.05 usable by this process"
    assert _cpus({"logical_cpus": 8, "usable_cpus": 3, "cpu_quota": None}, ENGLISH) == \
        "8 logical CPUs, 3 usable by this process"
    assert _cpus({"logical_cpus": 2, "usable_cpus": 2, "cpu_quota": None}, ENGLISH) == \
        "2 logical CPUs"


# -- a limit on memory: raised where it is set, as the advice says ------------------------------

@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux",
                    reason="ulimit -d bounds every private mapping on Linux")
def test_a_memory_limit_raised_as_advised_lets_the_check_pass(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path) -> None:
    # The shell that starts the check has a soft data limit of 100 MiB (`ulimit -S -d`, what a
    # login's soft limits give); the real import fails under it (MemoryError, a SystemError that
    # lost it, or a worker that dies of it). A hard limit only an administrator raises is the
    # advice's other half (the setting of the job, container or login node that imposes it).
    limited = 'ulimit -S -d 102400 && exec "$0" "$@"'
    failed = check("bash", ["-c", limited, str(cpu_torch_python), str(pyz)], tmp_path,
                   clean_env(), "--device", "cpu")
    assert failed["code"] in ("TORCH_IMPORT_FAILED", "WORKER_FAILED"), failed["code"]
    finding = {f["id"]: f for f in failed["findings"]}["HOST_MEMORY_EXHAUSTED"]
    assert "(ulimit -d: 100 MiB)" in finding["summary"]
    # The advice as printed: "(ulimit -d unlimited in the shell that starts it)".
    advised = re.search(r"\((ulimit -d unlimited) in the shell that starts it\)",
                        finding["next_action"])
    assert advised is not None, finding["next_action"]
    raised = f'ulimit -S -d 102400 && {advised.group(1)} && exec "$0" "$@"'
    passed = check("bash", ["-c", raised, str(cpu_torch_python), str(pyz)], tmp_path,
                   clean_env(), "--device", "cpu")
    assert passed["code"] == "CPU_CHECK_PASSED"
    assert passed["node"]["memory_limits"] == {"address_space_bytes": None, "data_bytes": None}
    assert "HOST_MEMORY_EXHAUSTED" not in {f["id"] for f in passed["findings"]}
