"""Fact fixtures for the --distributed findings: a healthy ``distributed`` block of a two-rank
job on one node, two GPUs, changed in one place per case (the ground is findings_helpers')."""

from __future__ import annotations

import copy
from typing import Any

from findings_helpers import report

# Two ranks on one node, each on its own GPU, nothing odd: no finding.
HEALTHY: dict[str, Any] = {
    "launcher": "torchrun", "job": "0123456789ab", "rank": 0, "world_size": 2, "backend": "nccl",
    "collective": {"status": "passed", "expected": 3, "observed": 3, "duration_ms": 40.0},
    "ranks": [{"rank": 0, "local_rank": 0, "node": 0, "code": "GPU_CHECK_PASSED",
               "stage": "collective", "device": "cuda:0"},
              {"rank": 1, "local_rank": 1, "node": 0, "code": "GPU_CHECK_PASSED",
               "stage": "collective", "device": "cuda:1"}],
    "missing_ranks": [], "shared_devices": [], "port_in_use": None, "socket_interfaces": {},
    "rdma_devices": 0, "memlock_limit_bytes": 8 * 2**20}


def distributed(**changes: Any) -> dict[str, Any]:
    """A passing --distributed report whose block is HEALTHY changed by ``changes``."""
    block = copy.deepcopy(HEALTHY)
    block.update(changes)
    return report(**{"stage": "collective", "distributed": block,
                     "request.distributed": True})


DISTRIBUTED_FIRES = {
    "MASTER_PORT_IN_USE": distributed(launcher="slurm", port_in_use=True),
    "DUPLICATE_GPU_PER_RANK": distributed(
        ranks=[{**HEALTHY["ranks"][0]}, {**HEALTHY["ranks"][1], "device": "cuda:0"}],
        shared_devices=[[0, 1]]),
    "NCCL_SOCKET_IFNAME_MISSING": distributed(socket_interfaces={"NCCL_SOCKET_IFNAME": "missing"}),
    "MEMLOCK_LOW": distributed(rdma_devices=2, memlock_limit_bytes=8 * 2**20),
}
# Cases each rule must leave alone: the healthy block; a port free or not tested; interfaces
# found or excluded; RDMA under an unlimited limit; a limit without RDMA.
DISTRIBUTED_QUIET = [
    distributed(), distributed(port_in_use=False),
    distributed(socket_interfaces={"NCCL_SOCKET_IFNAME": "found",
                                   "GLOO_SOCKET_IFNAME": "excluding"}),
    distributed(rdma_devices=4, memlock_limit_bytes=None),
    distributed(rdma_devices=None, memlock_limit_bytes=65536),
]
