"""The facts the worker's stages read, as functions that say them and decide nothing: where
torch was found and what is known once it is imported, the build's facts, the devices it sees.
The stages emit them and judge them; ``environment`` reads them the same way for a program that
imported torch already (a Trial, ``trial/facts.py``), with no stage and no event.

A companion of the worker (see ``stages``): the standard library only, Python 3.9+.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import protocol, stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    protocol = sys.modules["_kernodeck_worker_protocol"]
    stages = sys.modules["_kernodeck_worker_stages"]


def located_facts(located: tuple[str, str | None], path0: str | None) -> dict[str, Any]:
    """Where torch is found (origin.locate's kind and folder), as its place category; for a
    module that hides the installed torch, how many torch distributions the path holds."""
    kind, folder = located
    origin = stages.companion("origin")
    return {"origin": origin.place_of(folder, path0) if folder else "elsewhere",
            "module_kind": kind,
            **({"distributions_on_path": count_distributions("torch")}
               if kind in origin.SHADOW_KINDS else {})}


def failure_facts(exc: BaseException, spec: Any) -> dict[str, Any]:
    """What a failed ``import torch`` adds: for a torch found, the Python its compiled part was
    built for and this one's (``extension_tags``); for none found, the setting that hid the one
    installed (``runtime.setting_hiding_torch``)."""
    origin = stages.companion("origin")
    if spec is not None:  # a torch.backends plugin that failed it; a noexec mount (integrity)
        plugin = stages.companion("plugins").backend_plugin(exc)
        integrity = stages.companion("integrity")
        noexec = integrity.on_noexec_mount(str(spec.origin or ""))
        unreadable = integrity.unreadable_file(exc, str(spec.origin or ""))
        return {**(origin.extension_tags(spec) or {}),
                **({"backend_plugin": plugin} if plugin else {}),
                **({"noexec_mount": True} if noexec else {}),
                **({"unreadable_file": unreadable} if unreadable else {}),
                **({"path_not_utf8": True} if integrity.path_not_utf8(str(spec.origin or ""))
                   else {})}
    if isinstance(exc, ModuleNotFoundError) and exc.name == "torch":
        return {"hidden_by": stages.companion("runtime").setting_hiding_torch()}
    return {}


def imported_facts(torch: Any, located: tuple[str, str | None] | None,
                   path0: str | None) -> dict[str, Any]:
    """What is known once torch is imported: where it came from when it was not located before
    (``located`` None), how many torch distributions the path holds, NumPy beside it."""
    origin = stages.companion("origin")
    values: dict[str, Any] = {}
    if located is None:
        folder = origin.module_folder(getattr(torch, "__spec__", None))
        values["origin"] = origin.place_of(folder, path0) if folder else "elsewhere"
    return {**values, "imported": True,
            "distributions_on_path": count_distributions("torch"),
            "numpy_present": module_present("numpy"),
            "numpy_version": distribution_version("numpy")}


def module_present(name: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def distribution_version(name: str) -> str | None:
    """``importlib.metadata.version(name)``, read as origin reads torch's before its import (its
    long description never parsed: 0.5-1.5 ms for torch's, once torch is imported)."""
    try:
        from importlib import metadata
        return stages.companion("origin").distribution_version(  # type: ignore[no-any-return]
            metadata.distribution(name))
    except Exception:  # absent metadata is a fact (None), not a failure
        return None


def backend_facts(torch: Any, *, gpu: bool,
                  installs: list[Any] | None = None) -> Iterator[dict[str, Any]]:
    """The build's facts, in the order they are read (the first holds ``backend``, what the
    build declares): a fact that cannot be read ends the reading, the ones before it stay.
    ``installs``: the torch installs the import was judged against (origin.environment_installs),
    whose first is the installed distribution; None to read it from the metadata now."""
    accelerators = stages.companion("accelerators")
    installed = (distribution_version("torch") if installs is None
                 else installs[0].version if installs else None)
    yield {"version": str(getattr(torch, "__version__", "")) or None,
           "distribution_version": installed,
           **accelerators.build_backend(torch)}
    # What surrounds the build, from installed metadata (worker/inventory.py), in both modes.
    yield stages.companion("inventory").inventory(torch)
    if gpu:
        # What the build was made with needs no driver: known even when no GPU is usable,
        # which is when an architecture or library mismatch matters most.
        values, raised = accelerators.build_facts(torch)
        yield {"build_fact_errors": raised, **values}


def seen_devices(accelerator: Any) -> tuple[bool, int]:
    """Whether the backend is usable, and how many devices it sees (MPS counts its one device
    only when usable; CUDA and XPU count what they see)."""
    available = accelerator.is_available()
    return available, (accelerator.device_count() if available or accelerator.kind != "mps"
                       else 0)


def availability_facts(accelerator: Any, available: bool, count: int) -> dict[str, Any]:
    values: dict[str, Any] = {"gpu_available": available, "visible_device_count": count}
    if accelerator.kind == "mps":
        values["mps"] = stages.companion("accelerators").apple_facts(available)
    return values


def described_devices(accelerator: Any, count: int, index: int | None) -> list[dict[str, Any]]:
    """Each visible device's facts, and the free memory of ``index``'s (the one computed on)."""
    devices = [accelerator.describe(number) for number in range(count)]
    if index is not None and 0 <= index < count:
        devices[index].update(accelerator.free_memory(index))
    return devices


def environment(torch: Any, index: int | None) -> dict[protocol.FactBlock, dict[str, Any]]:
    """The ``runtime`` and ``pytorch`` facts of the process this runs in, read by the same
    functions as the worker's stages, for a program that imported ``torch`` already (None: it
    has not, and nothing here imports it).

    ``index`` is the device the program computes on, already initialised by it: its facts are
    read (count, names, memory); None, no device is asked anything. A fact that cannot be read
    ends its own reading only: the facts read before it stay, and the next reading still runs.
    The values are raw, as the worker's events carry them.
    """
    runtime = stages.companion("runtime")
    blocks: dict[protocol.FactBlock, dict[str, Any]] = {"runtime": {}, "pytorch": {}}

    def read(block: protocol.FactBlock, reading: Callable[[], Iterable[dict[str, Any]]]) -> None:
        with contextlib.suppress(Exception):  # a fact that could not be read
            for values in reading():
                blocks[block].update(values)

    read("runtime", lambda: ({"warnings_as_errors": runtime.warnings_as_errors()},
                             runtime.interpreter()))
    if torch is None:
        return blocks
    origin = stages.companion("origin")
    judged: list[list[Any] | None] = [None]  # the installs import_facts judged torch against

    def import_facts() -> Iterator[dict[str, Any]]:
        # Where the imported torch came from, read as the import stage reads it; no folder of
        # the program's is the first import path (None): the program's own files are its own.
        installs = judged[0] = origin.environment_installs(origin.torch_installs(sys.path), None)
        spec = getattr(torch, "__spec__", None)
        located = (origin.locate(spec, installs) if spec is not None and installs is not None
                   else None)
        if located is not None:
            yield located_facts(located, None)
        yield imported_facts(torch, located, None)

    read("pytorch", import_facts)
    # The program's own folder is its own business: none is searched for modules that hide one
    # it needs (no first import path), as the import stage does for path0 None.
    read("runtime", lambda: [{"local_modules": origin.local_modules(None, [])}])
    backend = stages.companion("accelerators").build_backend(torch)["backend"]
    read("pytorch", lambda: backend_facts(torch, gpu=backend != "cpu", installs=judged[0]))
    if backend != "cpu" and index is not None:
        accelerator = stages.companion("accelerators").Accelerator(torch, backend)

        def device_facts() -> Iterator[dict[str, Any]]:
            available, count = seen_devices(accelerator)
            yield availability_facts(accelerator, available, count)
            if available and count:
                yield {"devices": described_devices(accelerator, count, index)}
            else:  # why not, in the backend's words, as the device stage says it
                yield {"init_error": accelerator.initialisation_error()}

        read("pytorch", device_facts)
    return blocks


def count_distributions(name: str) -> int:
    """How many installed distributions of ``name`` are visible on sys.path (dist- and egg-info)."""
    seen = set()
    prefix = name.lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in names:
            lowered = item.lower()
            if lowered.startswith(prefix) and lowered.endswith((".dist-info", ".egg-info")):
                seen.add(os.path.realpath(os.path.join(entry or ".", item)))
    return len(seen)
