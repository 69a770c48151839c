"""--host-check's health fields: nvidia-smi's query asks persistence, compute mode, ECC and pending
retirements in the same call, counts each GPU's compute processes, and counts lost GPUs; a field a
driver has no value for is absent, a driver that refuses a field still gives the driver version."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conftest import assert_valid_report, fake_gpu_env, run_tool
from findings_helpers import tools_on_path
from kernodeck_diagnostic.facts.host import (
    NVIDIA_SMI_APPS,
    NVIDIA_SMI_BASIC_QUERY,
    NVIDIA_SMI_QUERY,
    ToolOutput,
    count_processes,
    parse_nvidia_smi_csv,
    probe_host,
)

# Rows as nvidia-smi prints them for the query the tool makes (csv, noheader, nounits): two H100s,
# the second in exclusive-process mode with a pending row remap and two uncorrectable errors.
HEALTH_ROWS = (
    "NVIDIA H100 80GB HBM3, 570.86.15, 81559, 00000000:3B:00.0, Enabled, Default, 0, No, No\n"
    "NVIDIA H100 80GB HBM3, 570.86.15, 81559, 00000000:86:00.0, Disabled, Exclusive_Process, 2, "
    "No, Yes\n")
# A consumer card: no ECC, no page retirement, no row remapping.
CONSUMER_ROW = ("NVIDIA GeForce RTX 4090, 570.86.15, 24564, 00000000:01:00.0, [N/A], Default, "
                "[N/A], [N/A], [Not Supported]\n")
APPS = "00000000:86:00.0\n00000000:86:00.0\n0000:3B:00.0\n"
HEALTH_FINDINGS = {"ECC_UNCORRECTABLE", "GPU_NEEDS_RESET", "GPU_BUSY", "GPU_LOST",
                   "PERSISTENCE_MODE_OFF", "GPU_MEMORY_HELD"}
LOST = "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n"


def test_health_fields_parsed_and_unknown_ones_absent() -> None:
    gpus, drivers = parse_nvidia_smi_csv(HEALTH_ROWS + CONSUMER_ROW)
    assert drivers == ["570.86.15"]
    assert gpus == [
        {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "bus_id": "00000000:3b:00.0",
         "persistence_mode": True, "compute_mode": "Default", "ecc_uncorrected_volatile": 0,
         "retired_pages_pending": False, "remapped_rows_pending": False},
        {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "bus_id": "00000000:86:00.0",
         "persistence_mode": False, "compute_mode": "Exclusive_Process",
         "ecc_uncorrected_volatile": 2, "retired_pages_pending": False,
         "remapped_rows_pending": True},
        {"name": "NVIDIA GeForce RTX 4090", "memory_total_mib": 24564,
         "bus_id": "00000000:01:00.0", "compute_mode": "Default"}]


def test_names_with_commas_and_lost_gpu_lines() -> None:
    row = "Tesla, Inc. GPU, 535.54.03, 16384, 00000000:04:00.0, Enabled, Default, 0, No, No\n"
    gpus, _ = parse_nvidia_smi_csv(LOST + row + "[GPU is lost], [GPU is lost], [GPU is lost], "
                                   "[GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], "
                                   "[GPU is lost], [GPU is lost]\n")
    assert [gpu["name"] for gpu in gpus] == ["Tesla, Inc. GPU"]
    # The three fields of older queries (and recorded outputs) still read as before.
    assert parse_nvidia_smi_csv("NVIDIA H200, 570.124.06, 143771\n")[0] == [
        {"name": "NVIDIA H200", "memory_total_mib": 143771}]


def test_processes_counted_per_gpu_whatever_the_bus_id_form() -> None:
    gpus, _ = parse_nvidia_smi_csv(HEALTH_ROWS)
    count_processes(gpus, APPS + "not a bus id\n")
    assert [gpu["compute_processes"] for gpu in gpus] == [1, 2]
    quiet, _ = parse_nvidia_smi_csv(HEALTH_ROWS)
    count_processes(quiet, "")
    assert [gpu["compute_processes"] for gpu in quiet] == [0, 0]


class Recorded:
    """nvidia-smi as a function of its arguments (the probe's own runner interface)."""

    def __init__(self, answers: dict[tuple[str, ...], ToolOutput]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str], timeout: float) -> ToolOutput:
        self.asked.append(tuple(argv[1:]))
        return self.answers.get(tuple(argv[1:]), ToolOutput("failed", "Invalid combination"))


def test_the_probe_joins_processes_and_drops_bus_ids() -> None:
    runner = Recorded({NVIDIA_SMI_QUERY: ToolOutput("ok", HEALTH_ROWS),
                       NVIDIA_SMI_APPS: ToolOutput("ok", APPS),
                       ("-L",): ToolOutput("ok", "GPU 0: NVIDIA H100 (UUID: GPU-x)\n")})
    block = probe_host(lambda tool: "/usr/bin/nvidia-smi" if tool == "nvidia-smi" else None,
                       runner)
    assert block["status"] == "ok"
    assert block["lost_gpus"] == 0
    assert block["mig_devices"] == 0
    assert [gpu["compute_processes"] for gpu in block["gpus"]] == [1, 2]
    assert all("bus_id" not in gpu for gpu in block["gpus"])  # a join key, never a fact
    assert NVIDIA_SMI_BASIC_QUERY not in runner.asked  # one query call


def test_a_driver_refusing_a_field_still_gives_its_version() -> None:
    refused = 'Field "remapped_rows.pending" is not a valid field to query.\n'
    runner = Recorded({NVIDIA_SMI_QUERY: ToolOutput("failed", refused),
                       NVIDIA_SMI_BASIC_QUERY: ToolOutput("ok", "Tesla V100, 418.87.01, 16160\n")})
    block = probe_host(lambda tool: "nvidia-smi" if tool == "nvidia-smi" else None, runner)
    assert block["status"] == "ok"
    assert block["driver_version"] == "418.87.01"
    assert block["gpus"] == [{"name": "Tesla V100", "memory_total_mib": 16160}]


def test_a_lost_gpu_is_counted_and_the_others_kept() -> None:
    runner = Recorded({NVIDIA_SMI_QUERY: ToolOutput("failed", LOST + HEALTH_ROWS.splitlines()[1])})
    block = probe_host(lambda tool: "nvidia-smi" if tool == "nvidia-smi" else None, runner)
    assert block["lost_gpus"] == 1
    assert block["status"] == "ok"
    assert len(block["gpus"]) == 1
    assert NVIDIA_SMI_BASIC_QUERY not in runner.asked  # rows came: nothing to ask again


# -- end to end, with a stand-in nvidia-smi answering by its arguments --------------------------

def stand_in(query: str, apps: str = "", query_exit: int = 0, listing: str = "") -> str:
    """A shell nvidia-smi: the health query, the compute processes and -L, each by argument."""
    return (f'case "$1" in\n'
            f'  {NVIDIA_SMI_QUERY[0]}) printf "%s" "{query}"; exit {query_exit};;\n'
            f'  {NVIDIA_SMI_BASIC_QUERY[0]}) echo "NVIDIA H100 80GB HBM3, 570.86.15, 81559";;\n'
            f'  {NVIDIA_SMI_APPS[0]}) printf "%s" "{apps}";;\n'
            f'  -L) printf "%s" "{listing}";;\n'
            f'  *) exit 2;;\n'
            f'esac\n')


def host_check(pyz: Path, tmp_path: Path, script: str,
               scenario: str = "cuda_pass") -> tuple[dict[str, Any], str]:
    out = tmp_path / "report.json"
    path = tools_on_path(tmp_path / "bin", **{"nvidia-smi": script})
    result = run_tool(sys.executable, pyz, ["--host-check", "--output", str(out)],
                      env=fake_gpu_env(scenario, PATH=path))
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report, result.stdout


def ids(report: dict[str, Any]) -> set[str]:
    return {finding["id"] for finding in report["findings"]}


def test_health_fields_in_the_report(pyz: Path, tmp_path: Path) -> None:
    report, _ = host_check(pyz, tmp_path, stand_in(HEALTH_ROWS, APPS))
    host = report["host"]
    assert host["lost_gpus"] == 0
    assert host["gpus"][1] == {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559,
                               "persistence_mode": False, "compute_mode": "Exclusive_Process",
                               "ecc_uncorrected_volatile": 2, "retired_pages_pending": False,
                               "remapped_rows_pending": True, "compute_processes": 2}
    assert "00000000:86:00.0" not in json.dumps(report)  # the bus id only joined the counts
    # The check passed (the fake GPU answers), so an exclusive mode is no cause, a pending remap
    # is a warning, and uncorrectable errors are always a hardware fault.
    assert {"ECC_UNCORRECTABLE", "GPU_NEEDS_RESET"} <= ids(report)
    assert "GPU_BUSY" not in ids(report)
    assert "PERSISTENCE_MODE_OFF" not in ids(report)  # fast: persistence cost nothing here


def test_exclusive_mode_explains_a_busy_gpu(pyz: Path, tmp_path: Path) -> None:
    report, stdout = host_check(pyz, tmp_path, stand_in(HEALTH_ROWS, APPS),
                                scenario="gpu_exclusive_process_busy")
    busy = {finding["id"]: finding for finding in report["findings"]}["GPU_BUSY"]
    assert "nvidia-smi GPU 1: compute mode Exclusive_Process" in busy["evidence"]
    assert "GPU_BUSY" in stdout


def test_consumer_card_fields_absent_not_errors(pyz: Path, tmp_path: Path) -> None:
    report, _ = host_check(pyz, tmp_path, stand_in(CONSUMER_ROW))
    assert report["host"]["status"] == "ok"
    assert report["host"]["gpus"] == [{"name": "NVIDIA GeForce RTX 4090",
                                       "memory_total_mib": 24564, "compute_mode": "Default",
                                       "compute_processes": 0}]
    # Nothing about the GPU's health: unknown fields are no evidence.
    assert not ids(report) & HEALTH_FINDINGS


def test_lost_gpu_end_to_end(pyz: Path, tmp_path: Path) -> None:
    report, _ = host_check(pyz, tmp_path, stand_in(LOST + HEALTH_ROWS.splitlines()[1] + "\n",
                                                   query_exit=15))
    assert report["host"]["lost_gpus"] == 1
    assert len(report["host"]["gpus"]) == 1
    assert "GPU_LOST" in ids(report)


def test_old_driver_answers_within_the_same_three_seconds(pyz: Path, tmp_path: Path) -> None:
    stamps = tmp_path / "stamps"  # each call's start and end, from the tool itself
    script = (f"date +%s.%N >> {stamps}; trap 'date +%s.%N >> {stamps}' EXIT\n"
              f'[ "$1" = "{NVIDIA_SMI_QUERY[0]}" ] && {{ sleep 1; echo \'Field "remapped_rows.'
              f'pending" is not a valid field to query.\'; exit 2; }}\n' + stand_in(""))
    report, _ = host_check(pyz, tmp_path, script)
    times = [float(line) for line in stamps.read_text().split()]
    assert len(times) >= 4, times  # the full query refused, the basic one answered
    assert max(times) - min(times) < 3, times
    assert report["host"]["status"] == "ok"
    assert report["host"]["driver_version"] == "570.86.15"
    assert report["host"]["gpus"] == [{"name": "NVIDIA H100 80GB HBM3",
                                       "memory_total_mib": 81559}]
