#!/usr/bin/env python3
"""What scripts/gpu-smoke.sh asks of each report: its content, not only the exit status.

    gpu-smoke-judge.py count REPORT              the GPUs the check saw (CUDA_VISIBLE_DEVICES
                                                 honored: torch's own count)
    gpu-smoke-judge.py single REPORT             GPU_CHECK_PASSED on a named device with its
                                                 capability, nvidia-smi's facts read
    gpu-smoke-judge.py every REPORT              --all-devices: every device passed, named, with
                                                 its capability; every copy verified
    gpu-smoke-judge.py job WORLD REPORT...       a --distributed job on NCCL: rank 0's report
                                                 (the first) and each rank's own
    gpu-smoke-judge.py duplicate REPORT...       two ranks on one GPU: NCCL refused the group,
                                                 and the check named DUPLICATE_GPU_PER_RANK

Each line it prints says one thing checked, ``ok:`` or ``wrong:``; it exits 0 when every line
is ``ok:``, 1 otherwise, 2 on a usage error. The standard library only, any Python 3.9+: the
reports are read as JSON, the package is not imported.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

Checks = Iterator[tuple[bool, str]]  # (whether it holds, what was checked)


def main(argv: Sequence[str]) -> int:
    if len(argv) < 2 or argv[0] not in (*JUDGES, "count", "job") or (
            argv[0] == "job" and (len(argv) < 3 or not argv[1].isdigit())):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        if argv[0] == "count":  # 0 when the report cannot say
            count = (_read(argv[1]).get("pytorch") or {}).get("visible_device_count")
            print(count if isinstance(count, int) else 0)
            return 0
        if argv[0] == "job":
            checks = list(job(int(argv[1]), [_read(path) for path in argv[2:]]))
        else:
            checks = list(JUDGES[argv[0]]([_read(path) for path in argv[1:]]))
    except (OSError, ValueError) as exc:  # no report, or not JSON: nothing to judge
        if argv[0] == "count":
            print(0)
            return 0
        checks = [(False, f"report not readable: {type(exc).__name__}: {exc}")]
    for holds, what in checks:
        print(f"  {'ok' if holds else 'wrong'}: {what}")
    return 0 if all(holds for holds, _ in checks) else 1


def single(reports: list[dict[str, Any]]) -> Checks:
    """The default check with --host-check, on the first visible GPU."""
    report = reports[0]
    yield from _passed_on_gpu(report)
    host = report.get("host") or {}
    yield (host.get("status") == "ok",
           f"nvidia-smi read (--host-check): status {host.get('status')}, driver "
           f"{host.get('driver_version')}")


def every(reports: list[dict[str, Any]]) -> Checks:
    """--all-devices: each device its own pass; each copy between two of them verified."""
    report = reports[0]
    pytorch = report.get("pytorch") or {}
    devices = pytorch.get("devices") or []
    yield (report.get("code") == "GPU_CHECK_PASSED", f"code {report.get('code')}")
    yield (bool(devices) and len(devices) == pytorch.get("visible_device_count"),
           f"{len(devices)} device(s) checked of {pytorch.get('visible_device_count')} visible")
    for device in devices:
        check = device.get("check") or {}
        yield (check.get("code") == "GPU_CHECK_PASSED" and _named(device),
               f"cuda:{device.get('index')} {device.get('name')!r} capability "
               f"{device.get('capability')}: {check.get('code')}")
    peers = pytorch.get("peers")
    if len(devices) > 1:
        expected = len(devices) * (len(devices) - 1)
        verified = sum(bool(peer.get("copy_verified")) for peer in peers or [])
        yield (verified == expected, f"copies between devices: {verified} of {expected} verified")
    else:
        yield (peers is None, "one device: no copy between devices to try")


def job(world: int, reports: list[dict[str, Any]]) -> Checks:
    """A healthy NCCL job of ``world`` ranks: rank 0's report first, then every rank's own."""
    block = reports[0].get("distributed") or {}
    collective = block.get("collective") or {}
    expected = world * (world + 1) // 2
    yield from _passed_on_gpu(reports[0], stage="collective")
    yield (block.get("backend") == "nccl", f"backend {block.get('backend')}")
    yield (block.get("world_size") == world and block.get("rank") == 0,
           f"rank {block.get('rank')} of {block.get('world_size')} (expected 0 of {world})")
    yield (collective.get("status") == "passed" and collective.get("observed") == expected
           and isinstance(collective.get("duration_ms"), (int, float)),
           f"all-reduce {collective.get('status')}: sum {collective.get('observed')} "
           f"(expected {expected}) in {collective.get('duration_ms')} ms")
    ranks = block.get("ranks") or []
    devices = [entry.get("device") for entry in ranks]
    yield ([entry.get("rank") for entry in ranks] == list(range(world))
           and all(entry.get("code") == "GPU_CHECK_PASSED" for entry in ranks),
           "every rank's account: " + ", ".join(
               f"{entry.get('rank')} {entry.get('code')} on {entry.get('device')}"
               for entry in ranks))
    yield (len(set(devices)) == len(devices), "each rank on a GPU of its own")
    yield (block.get("missing_ranks") == [], f"missing ranks {block.get('missing_ranks')}")
    if world > 1:  # every rank's account reached rank 0 through the job's store
        yield (len(ranks) == world and collective.get("observed") == expected,
               f"the all-reduce ran between {len(ranks)} processes (expected {world})")
    else:  # one GPU: the duplicate step runs two processes on it
        yield (collective.get("observed") == 1 and len(ranks) == 1,
               "one rank: NCCL formed its group and reduced, in one process")
    own = sorted(rank for rank in ((report.get("distributed") or {}).get("rank")
                                   for report in reports) if isinstance(rank, int))
    yield (own == list(range(world)), f"each rank wrote its own report: ranks {own}")
    for report in reports[1:]:
        rank = (report.get("distributed") or {}).get("rank")
        yield (report.get("code") == "GPU_CHECK_PASSED" and _named(_device_used(report)),
               f"rank {rank}'s own report: {report.get('code')} on "
               f"{(report.get('execution') or {}).get('device')}")


def duplicate(reports: list[dict[str, Any]]) -> Checks:
    """Two ranks on one GPU: NCCL refuses the group (its "Duplicate GPU detected"), and rank 0's
    report names DUPLICATE_GPU_PER_RANK. With a visibility variable set, cuda:0 may be a
    different card on each rank: the finding is not expected, the failure still is."""
    report = reports[0]
    block = report.get("distributed") or {}
    collective = block.get("collective") or {}
    yield (report.get("code") == "COLLECTIVE_FAILED", f"code {report.get('code')}")
    yield (block.get("backend") == "nccl", f"backend {block.get('backend')}")
    yield (collective.get("status") == "failed",
           f"collective {collective.get('status')} (NCCL raised, not a wait that ran out)")
    yield ([entry.get("device") for entry in block.get("ranks") or []] == ["cuda:0", "cuda:0"],
           "both ranks computed on cuda:0 first: " + ", ".join(
               f"{entry.get('rank')} {entry.get('code')}" for entry in block.get("ranks") or []))
    found = {finding.get("id") for finding in report.get("findings") or []}
    if os.environ.get("CUDA_VISIBLE_DEVICES") is None:
        yield (block.get("shared_devices") == [[0, 1]] and "DUPLICATE_GPU_PER_RANK" in found,
               f"shared devices {block.get('shared_devices')}, DUPLICATE_GPU_PER_RANK "
               f"{'named' if 'DUPLICATE_GPU_PER_RANK' in found else 'not named'}")
    else:
        yield (True, "CUDA_VISIBLE_DEVICES is set: the check cannot tell that the ranks share "
                     "a card, DUPLICATE_GPU_PER_RANK not expected")


def _passed_on_gpu(report: dict[str, Any], stage: str = "compute") -> Checks:
    device = _device_used(report)
    yield (report.get("code") == "GPU_CHECK_PASSED" and report.get("stage") == stage,
           f"code {report.get('code')} at {report.get('stage')}")
    yield (_named(device), f"on {(report.get('execution') or {}).get('device')}: "
                           f"{device.get('name')!r}, capability {device.get('capability')}")


def _device_used(report: dict[str, Any]) -> dict[str, Any]:
    """The ``pytorch.devices`` entry of the device the computation ran on."""
    used = str((report.get("execution") or {}).get("device") or "")
    index = int(used.split(":")[1]) if used.startswith("cuda:") and used[5:].isdigit() else None
    return next((device for device in (report.get("pytorch") or {}).get("devices") or []
                 if device.get("index") == index), {})


def _named(device: dict[str, Any]) -> bool:
    """A device with its name and compute capability (``9.0``), as the report says them."""
    capability = str(device.get("capability") or "")
    return bool(device.get("name")) and capability.replace(".", "", 1).isdigit()


def _read(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as file:
        data = json.load(file)
    if not isinstance(data, dict):
        raise ValueError("not a report")
    return data


JUDGES = {"single": single, "every": every, "duplicate": duplicate}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
