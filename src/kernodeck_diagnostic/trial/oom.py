"""Out-of-memory failures: recognised whatever raised them, sized, and classified by phase.

The phase says where to look (docs/trial.md, "When the program runs out of memory"):

- ``loading``: before the first pass; the model as loaded does not fit (weights, optimiser
  state, a copy kept on the host);
- ``first_pass``: in pass 0; the weights fit, one pass's activations, attention or generation
  cache, or workspace do not;
- ``later_pass``: in a later pass (or after the passes, ``pass_index`` null); the advice says
  what the growth per pass measured: memory that grew from pass to pass points to retained
  tensors (outputs kept with their graph, a history of losses kept as tensors); flat growth to a
  one-off spike (one larger batch, a step that runs only sometimes); after the passes, to what
  the program does after them.

Sizes are read from the message as PyTorch writes them ("Tried to allocate 2.00 GiB", "GPU 0 has
a total capacity of 79.19 GiB of which 1.05 GiB is free", the CPU allocator's "you tried to
allocate 3221225472 bytes"); PyTorch prints KB/MB/GB in powers of 1024, as KiB/MiB/GiB.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from ..worker.protocol import is_out_of_memory

# The phases, in the order a program meets them: defined here once (the attempt's schema, a ramp's
# reading of an attempt and its schema hold to PHASES).
Phase = Literal["loading", "first_pass", "later_pass"]
PHASES: tuple[Phase, ...] = get_args(Phase)

# The CPU allocator's refusal (c10's DefaultCPUAllocator): a RuntimeError without "out of memory".
CPU_ALLOCATOR_REFUSED = "DefaultCPUAllocator: can't allocate memory"
_UNITS = {"B": 1, "BYTES": 1, "KB": 2**10, "KIB": 2**10, "MB": 2**20, "MIB": 2**20,
          "GB": 2**30, "GIB": 2**30, "TB": 2**40, "TIB": 2**40}
_SIZE = r"(\d+(?:\.\d+)?) ?([KMGT]i?B|B|bytes)\b"
_SIZES = {
    "requested_bytes": re.compile(r"tried to allocate " + _SIZE, re.IGNORECASE),
    "total_bytes": re.compile(r"total capacity of " + _SIZE + r"|max allowed: " + _SIZE,
                              re.IGNORECASE),
    "free_bytes": re.compile(r"of which " + _SIZE + r" is free", re.IGNORECASE),
}
_GPU_INDEX = re.compile(r"\bGPU (\d+)\b")
_BACKENDS = (("HIP", "cuda"), ("CUDA", "cuda"), ("XPU", "xpu"), ("MPS", "mps"))

ADVICE: dict[Phase, str] = {
    "loading": (
        "Out of memory before the first pass: the model as loaded does not fit (weights, "
        "optimiser state, buffers). The batch size does not matter yet: load the weights in a "
        "smaller dtype, shard or offload them, or use a device with more memory."),
    "first_pass": (
        "Out of memory in the first pass: the weights fit, but one pass's activations, "
        "attention or generation cache, or workspace do not. Reduce the batch size or the input "
        "length, one at a time, to find the factor; for inference, run under "
        "torch.inference_mode()."),
    "later_pass": (
        "Out of memory after earlier passes succeeded: memory that grows from pass to pass points "
        "to retained tensors (outputs kept with their computation graph, a list of losses kept as "
        "tensors instead of loss.item(), a growing cache). torch.cuda.empty_cache() does not "
        "free tensors that are still referenced."),
}


# Per-pass growth within this many bytes, either way, is flat (an allocator's rounding). Growth
# is flat when at most half the passes grew more (an allocator that keeps the first pass's freed
# block, as glibc does once its mmap threshold rises, is one step, not a leak).
FLAT_GROWTH_BYTES = 2**20
SPIKE_ADVICE = (
    "The memory kept after each pass was flat (growth of at most {flat} in most passes): "
    "nothing accumulated from pass to pass, so a one-off spike is likelier than a leak: one "
    "batch larger than the others (a longer input, more items), or a step that runs only "
    "sometimes (an evaluation, a checkpoint). Find the pass's input and its size.")
AFTER_PASSES = (
    "Out of memory after the passes completed, in what the program does after them (writing "
    "the output, an evaluation, saving a checkpoint): {growth} Look at that stage's own "
    "allocations.")
GROWTH_SEEN = "memory kept grew by about {grown} per pass during the passes."
FLAT_SEEN = "memory kept was flat from pass to pass."
NO_GROWTH_MEASURED = "no growth between passes was measured."


def advice(phase: Phase, pass_index: int | None, growth_bytes: list[int | None]) -> str:
    """What to look at, from the phase and what the growth per pass measured: retained tensors
    only when memory did grow from pass to pass."""
    if phase != "later_pass":
        return ADVICE[phase]
    known = [grown for grown in growth_bytes if grown is not None]
    grew = [grown for grown in known if abs(grown) > FLAT_GROWTH_BYTES]
    flat = bool(known) and len(grew) * 2 <= len(known)
    if pass_index is None:
        seen = (NO_GROWTH_MEASURED if not known else FLAT_SEEN if flat
                else GROWTH_SEEN.format(grown=_mib(sum(known) / len(known))))
        return AFTER_PASSES.format(growth=seen)
    if flat:
        return SPIKE_ADVICE.format(flat=_mib(FLAT_GROWTH_BYTES))
    return ADVICE[phase]


def _mib(count: float) -> str:
    return f"{count / 2**20:.1f} MiB"


def is_oom(exc: BaseException, torch: Any) -> bool:
    """Whether ``exc`` is an allocation failure: PyTorch's OutOfMemoryError (CUDA, HIP, XPU,
    MPS), the CPU allocator's refusal, or Python's MemoryError."""
    if isinstance(exc, MemoryError):
        return True
    if not isinstance(exc, Exception):
        return False
    top = getattr(torch, "OutOfMemoryError", None) if torch is not None else None
    if isinstance(top, type) and isinstance(exc, top):
        return True
    if CPU_ALLOCATOR_REFUSED in str(exc):
        return True
    return torch is not None and is_out_of_memory(torch, exc)


def sizes(message: str) -> dict[str, int | None]:
    """The requested, total and free sizes a message states, in bytes (None when it does not)."""
    found: dict[str, int | None] = {}
    for name, pattern in _SIZES.items():
        match = pattern.search(message)
        found[name] = None
        if match is not None:
            number, unit = next((n, u) for n, u in zip(match.groups()[::2], match.groups()[1::2])
                                if n is not None)
            found[name] = int(float(number) * _UNITS[unit.upper()])
    return found


def device_of(message: str) -> str | None:
    """The device a message names: ``cpu`` for the CPU allocator, ``cuda:N`` for "GPU N"..."""
    if CPU_ALLOCATOR_REFUSED in message:
        return "cpu"
    for word, device in _BACKENDS:
        if word + " out of memory" in message or word + " backend out of memory" in message:
            index = _GPU_INDEX.search(message)
            return f"{device}:{index.group(1)}" if index and device != "mps" else device
    return None


def phase_of(pass_index: int | None, passes_started: bool) -> Phase:
    """The phase of a failure: before any pass, in pass 0, or later (after the passes too)."""
    if not passes_started:
        return "loading"
    return "first_pass" if pass_index == 0 else "later_pass"


def growth(memory_after_pass: list[int | None]) -> list[int | None]:
    """How much memory each pass kept beyond the one before it (pass i minus pass i-1)."""
    return [None if a is None or b is None else b - a
            for a, b in zip(memory_after_pass, memory_after_pass[1:])]


DATA_LOADING_ADVICE = (
    "Out of memory while fetching pass {index}'s item from the iterable given to "
    "trial.passes (the data loader: reading, decoding, a transform, collating the batch, "
    "pinned memory, the batches its workers prefetch): not the model's computation. Look at "
    "that batch's size and the loader's settings (batch_size, num_workers, prefetch_factor, "
    "pin_memory).")


def describe(exc: BaseException, phase: Phase, pass_index: int | None,
             memory_after_pass: list[int | None], growth_per_pass: list[int | None], *,
             indexes: list[int] | None = None, data_loading: bool = False) -> dict[str, Any]:
    """The attempt's ``oom`` block for ``exc``: phase, pass, sizes, device, the newest readings
    of the memory kept after a pass (``indexes``: their passes) and the growth per pass between
    them, advice. ``data_loading``: raised while fetching the pass's item."""
    message = str(exc)
    block: dict[str, Any] = {"phase": phase, "pass_index": pass_index, **sizes(message),
                             "device": device_of(message), "data_loading": data_loading}
    block["memory_after_pass_bytes"] = list(memory_after_pass)
    block["memory_after_pass_indexes"] = list(indexes or [])
    block["growth_per_pass_bytes"] = list(growth_per_pass)
    block["advice"] = (DATA_LOADING_ADVICE.format(index=pass_index) if data_loading
                       else advice(phase, pass_index, block["growth_per_pass_bytes"]))
    return block
