"""Distributed: what a job of many processes needs from the node and the GPUs between them
(``--distributed``: the node's facts and the ranks' devices, the ``distributed`` block;
``--all-devices``: the copies between GPUs): the store's port, a GPU per rank, the network
interfaces NCCL is told to use, locked memory for RDMA, peer-to-peer copies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..codes import Verdict
from ..shapes import EMPTY, Distributed
from .core import Finding, Layer, Report, mib

layer = Layer("distributed")


def _distributed(report: Report) -> Distributed | Mapping[str, Any]:
    block = report.get("distributed")
    return block if isinstance(block, dict) else EMPTY


@layer.rule(580, "MASTER_PORT_IN_USE")
def master_port_in_use(report: Report) -> Finding | None:
    """Rank 0 serves the job's store and its port was taken: "Address already in use"."""
    if _distributed(report).get("port_in_use") is not True:
        return None
    return Finding("MASTER_PORT_IN_USE", "error", (
        "distributed.port_in_use: the store's port was taken on rank 0's node when the "
        "check started",))


@layer.rule(590, "DUPLICATE_GPU_PER_RANK")
def duplicate_gpu_per_rank(report: Report) -> Finding | None:
    """Two ranks on one GPU of one node: NCCL's "Duplicate GPU detected"."""
    groups = [group for group in _distributed(report).get("shared_devices") or [] if group]
    if not groups:
        return None
    ranks = {entry.get("rank"): entry for entry in _distributed(report).get("ranks") or []}
    evidence = []
    for group in groups[:5]:
        first = ranks.get(group[0]) or {}
        evidence.append(f"ranks {', '.join(map(str, group))} on node {first.get('node')} all "
                        f"use {first.get('device')}, no visibility variable set")
    return Finding("DUPLICATE_GPU_PER_RANK", "error", tuple(evidence))


@layer.rule(600, "NCCL_SOCKET_IFNAME_MISSING")
def nccl_socket_ifname_missing(report: Report) -> Finding | None:
    """NCCL_SOCKET_IFNAME (or GLOO_SOCKET_IFNAME) names no interface of this node."""
    states = _distributed(report).get("socket_interfaces") or {}
    missing = sorted(name for name, state in states.items() if state == "missing")
    if not missing:
        return None
    # The cause of a collective that failed; otherwise a trap for the next job (this one may
    # have used the other backend).
    passed = (_distributed(report).get("collective") or {}).get("status") == "passed"
    return Finding("NCCL_SOCKET_IFNAME_MISSING", "warning" if passed else "error", tuple(
        f"{name} is set and names no network interface of this node" for name in missing),
        {"variables": ", ".join(missing)})


@layer.rule(610, "MEMLOCK_LOW")
def memlock_low(report: Report) -> Finding | None:
    """RDMA devices under a locked-memory limit: NCCL cannot register its buffers."""
    block = _distributed(report)
    devices, limit = block.get("rdma_devices"), block.get("memlock_limit_bytes")
    if not (isinstance(devices, int) and devices > 0 and isinstance(limit, int)):
        return None
    shown = f"{limit // 1024} KiB" if limit < 2**20 else f"{mib(limit)} MiB"
    return Finding("MEMLOCK_LOW", "warning", (
        f"{devices} RDMA device(s) in /sys/class/infiniband",
        f"locked-memory limit (ulimit -l) {shown}, not unlimited"))


@layer.rule(620, "NCCL_P2P_BROKEN")
def nccl_p2p_broken(report: Report) -> Finding | None:
    """--all-devices: a direct (peer-to-peer) copy between two GPUs that each computed right
    arrived wrong or never ended, the way PCIe ACS or an IOMMU in the path breaks P2P, which NCCL
    uses between such GPUs. A failed copy between GPUs without peer access went through host
    memory: another fault, not this one."""
    pytorch = report["pytorch"]
    passed = {device.get("index") for device in pytorch.get("devices") or []
              if (device.get("check") or EMPTY).get("code") == Verdict.GPU_CHECK_PASSED}
    broken = [peer for peer in pytorch.get("peers") or []
              if peer.get("access") is True
              and peer.get("code") in (Verdict.CHECK_FAILED, Verdict.TIMEOUT)
              and {peer.get("source"), peer.get("target")} <= passed]
    if not broken:
        return None
    backend = str(pytorch.get("backend") or "cuda")
    prefix = "cuda" if backend in ("cuda", "rocm") else backend
    return Finding("NCCL_P2P_BROKEN", "error", tuple(
        f"{prefix}:{peer['source']} -> {prefix}:{peer['target']}: peer access reported, copy "
        + ("wrong" if peer["code"] == Verdict.CHECK_FAILED else "never ended")
        for peer in broken[:6]))
