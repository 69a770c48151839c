"""What a distributed job needs from this node, read by the front for ``--distributed``.

Cheap, without root and without the network: whether the store's port is free where rank 0
serves it, whether the interfaces NCCL or gloo are told to use exist, and whether RDMA devices
meet a locked-memory limit. Facts only, each a boolean, a count or a category: never an address,
a port, an interface's name or a variable's value.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import sys
from collections.abc import Mapping
from typing import Any, Literal

# The variables that name the interfaces a backend may use (NCCL's syntax, gloo's plain list).
SOCKET_VARIABLES = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")
InterfaceState = Literal["found", "missing", "excluding"]
RDMA_FOLDER = "/sys/class/infiniband"


def collect(environ: Mapping[str, str], *, serves_port: int | None) -> dict[str, Any]:
    """The node's facts for the ``distributed`` block. ``serves_port``: the store's port when
    this rank serves the store itself (rank 0 under Slurm), else None (not tested)."""
    return {"port_in_use": port_in_use(serves_port) if serves_port is not None else None,
            "socket_interfaces": socket_interfaces(environ, interfaces()),
            "rdma_devices": rdma_devices(), "memlock_limit_bytes": memlock_limit_bytes()}


def port_in_use(port: int) -> bool | None:
    """Whether another process listens on ``port`` (any address): binding it, as the store will,
    fails with EADDRINUSE. The socket is closed at once; None when the test itself fails."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            # As the store binds: a port left in TIME_WAIT by an earlier job is not "in use".
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("", port))
    except OSError as exc:
        return True if exc.errno == errno.EADDRINUSE else None
    return False


def interfaces() -> list[str] | None:
    """This node's network interfaces by name, or None when they cannot be listed."""
    try:
        return [name for _, name in socket.if_nameindex()]
    except (OSError, AttributeError):
        return None


def socket_interfaces(environ: Mapping[str, str],
                      present: list[str] | None) -> dict[str, InterfaceState]:
    """For each of SOCKET_VARIABLES that is set: ``found`` when one of the interfaces it names
    exists, ``missing`` when none does, ``excluding`` for NCCL's ``^`` form (it names what not to
    use: nothing to find). NCCL's syntax: prefixes separated by commas, ``=`` for an exact name.
    Nothing when the interfaces cannot be listed."""
    if present is None:
        return {}
    states: dict[str, InterfaceState] = {}
    for name in SOCKET_VARIABLES:
        value = environ.get(name, "").strip()
        if not value:
            continue
        if value.startswith("^"):
            states[name] = "excluding"
            continue
        exact = value.startswith("=")
        wanted = [entry.strip() for entry in value.lstrip("=").split(",") if entry.strip()]
        found = any(interface == entry if exact else interface.startswith(entry)
                    for entry in wanted for interface in present)
        states[name] = "found" if found else "missing"
    return states


def rdma_devices(folder: str = RDMA_FOLDER) -> int | None:
    """How many RDMA devices (InfiniBand, RoCE, EFA) the kernel shows; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError):
        return len(os.listdir(folder))
    return 0  # no such folder: no RDMA stack loaded


def memlock_limit_bytes() -> int | None:
    """The soft RLIMIT_MEMLOCK (how much memory this process may lock, what RDMA registers);
    None when unlimited or not known (Windows)."""
    if sys.platform == "win32":
        return None  # no resource module there
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    return None if soft == resource.RLIM_INFINITY else int(soft)
