"""A stage's CPU peak when its later calls skip the reset (``CpuMemory.reset_peak(known)``): what
a name keeps is never below a call's own peak, and is that peak exactly unless code outside any
stage set a new peak right before the call.

The kernel's side is a model here (``KernelModel``: the resident size, its peak since the last
reset, what ``/proc/self/status``, ``statm`` and ``getrusage`` say of them), so that each call's
own peak is known exactly and hypothesis can script any program; the real kernel's behaviour is
held by test_trial_stages.py's peak tests (real programs touching hundreds of MiB).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernodeck_diagnostic import Trial
from kernodeck_diagnostic.trial import memory, stages
from trial_helpers import attempt_of, only_attempt

MIB = 2**20
BASE = 64 * MIB


class KernelModel:
    """The ``os`` functions memory.py calls, on a process whose memory the test scripts: the
    resident size (``rss``), its peak since the last write of ``5`` to ``clear_refs``
    (``high``), the ``status`` and ``statm`` files that say them; every other name is ``os``'s.
    """

    def __init__(self) -> None:
        self.rss = BASE
        self.high = BASE
        self.resets = 0
        self._paths: dict[int, str] = {}

    def touch(self, size: int) -> None:
        """``size`` bytes allocated and freed: the peak rises, the resident size does not."""
        self.high = max(self.high, self.rss + size)

    def keep(self, size: int) -> None:
        """``size`` bytes kept (freed when negative)."""
        self.rss = max(MIB, self.rss + size)
        self.high = max(self.high, self.rss)

    def open(self, path: str, flags: int) -> int:
        fd = os.open(os.devnull, flags)
        self._paths[fd] = path
        return fd

    def write(self, fd: int, data: bytes) -> int:
        assert self._paths[fd] == "/proc/self/clear_refs"
        assert data == b"5"
        self.high = self.rss
        self.resets += 1
        return len(data)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        if self._paths[fd] == "/proc/self/statm":
            return f"1 {self.rss // 4096} 0 0 0 0 0\n".encode()
        return f"VmPeak:\t1 kB\nVmHWM:\t{self.high // 1024} kB\nVmRSS:\t{self.rss // 1024} kB\n" \
            .encode()

    def close(self, fd: int) -> None:
        self._paths.pop(fd, None)
        os.close(fd)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> KernelModel:
    if memory._getrusage is None:
        pytest.skip("no getrusage: the peak is not reset on this system")
    model = KernelModel()
    monkeypatch.setattr(memory, "os", model)
    monkeypatch.setattr(memory, "_process_peak", lambda: model.high)
    monkeypatch.setattr(memory, "_PAGE", 4096)
    return model


def _kept_peaks(root: Path) -> dict[str, int]:
    return {item["stage"]: item["rss_peak_bytes"]
            for item in attempt_of(only_attempt(root))["stage_summary"]}


# One program: a list of (what runs before the call, the call's stage, what runs in it, whether
# it fails). Before it: bytes kept (the program's data growing or shrinking) and a transient peak
# outside any stage (a batch collated and freed); in it, the same two.
_SIZES = st.integers(min_value=0, max_value=16).map(lambda mib: mib * MIB)
_CALL = st.tuples(st.integers(-4, 4).map(lambda mib: mib * MIB), _SIZES,
                  st.sampled_from(["a", "b", "step"]),
                  st.integers(-4, 4).map(lambda mib: mib * MIB), _SIZES,
                  st.integers(0, 9).map(lambda draw: draw == 0))
_ROOTS = itertools.count()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=st.lists(_CALL, min_size=1, max_size=60), gaps=st.booleans())
def test_a_calls_reading_is_its_own_peak_or_a_level_its_name_held(
        tmp_path: Path, kernel: KernelModel, program: list[tuple[Any, ...]], gaps: bool) -> None:
    # ``gaps``: whether code outside the stages may set a transient peak. Each name's largest is
    # never below a call's own, and each call written in full (its first ones, its failures, its
    # slowest) reads at least its own peak; without gaps, the largest is exactly theirs, and a
    # call reads at most the larger of its own and a level two calls of its name before it held:
    # never another stage's peak, nor a spike of its own name's just before it.
    kernel.rss = kernel.high = BASE
    own: dict[str, list[int]] = {}
    root = tmp_path / str(next(_ROOTS))
    with Trial(root) as trial:
        step = trial._step("step")
        for kept_before, peak_before, name, kept_in, peak_in, fails in program:
            kernel.keep(kept_before)
            if gaps:
                kernel.touch(peak_before)
            start = kernel.rss
            if name == "step":
                step.begin()
            stage = trial.stage(name).__enter__() if name != "step" else None
            kernel.keep(kept_in)
            kernel.touch(peak_in)
            own.setdefault(name, []).append(max(start, kernel.rss + peak_in))
            error = ValueError("a failed call") if fails else None
            (stage or step).__exit__(type(error) if error else None, error, None)
    document = attempt_of(only_attempt(root))
    kept = {item["stage"]: item["rss_peak_bytes"] for item in document["stage_summary"]}
    for name, peaks in own.items():
        assert kept[name] >= max(peaks), (name, kept, own)
        if not gaps:
            assert kept[name] == max(peaks), (name, kept, own)
    for record in document["stages"]:
        peaks = own[record["name"]]
        call = peaks[record["occurrence"] - 1]
        read = record["memory"]["rss_peak_bytes"]
        assert read >= call, (record, peaks)
        if not gaps:
            before = peaks[:record["occurrence"] - 1]
            held = [min(pair) for pair in zip(before, before[1:])]
            assert read <= max([call, *held]), (record, peaks)


@pytest.mark.parametrize("loop", ["stage", "step"])
def test_a_flat_loop_resets_the_peak_at_its_first_calls_only(tmp_path: Path,
                                                            kernel: KernelModel,
                                                            loop: str) -> None:
    # 1,000 calls of one name whose memory stays flat: the reset is skipped once the name keeps
    # a peak the last reading is not above; a call that grows is read exact all the same.
    with Trial(tmp_path / "runs") as trial:
        step = trial._step("batch")
        resets_at_start = kernel.resets
        for index in range(1000):
            if loop == "step":
                step.begin()
            else:
                stage = trial.stage("batch").__enter__()
            kernel.touch(2 * MIB if index != 700 else 40 * MIB)
            if loop == "step":
                step.__exit__(None, None, None)
            else:
                stage.__exit__(None, None, None)
        resets = kernel.resets - resets_at_start
    assert resets <= stages.FIRST_KEPT + 2, resets
    assert _kept_peaks(tmp_path / "runs")["batch"] == BASE + 40 * MIB


@pytest.mark.parametrize("above", [300 * MIB, 4096])
def test_a_stage_after_a_larger_one_starts_from_a_reset(tmp_path: Path, kernel: KernelModel,
                                                        above: int) -> None:
    # "small" follows "big" at every pass: the peak read at big's end is above small's largest
    # (by 300 MiB, or by one page), so small's calls reset it, every one, and keep their own.
    with Trial(tmp_path / "runs") as trial:
        resets = kernel.resets
        for _ in trial.passes(50):
            with trial.stage("big"):
                kernel.touch(MIB + above)
            with trial.stage("small"):
                kernel.touch(MIB)
        resets = kernel.resets - resets
    kept = _kept_peaks(tmp_path / "runs")
    assert kept == {"big": BASE + MIB + above, "small": BASE + MIB}
    assert resets >= 50


def test_a_failed_call_reads_its_own_peak_not_another_stages(tmp_path: Path,
                                                              kernel: KernelModel) -> None:
    # Each pass: "big" touches 1,000 MiB, then "small", which touched 1,200 MiB in pass 0 and
    # 10 MiB since, fails in pass 6. Big's peak, below small's largest, is not small's: the
    # failed call's record and every later one of small read its own 10 MiB.
    with Trial(tmp_path / "runs") as trial:
        for index in trial.passes(12):
            with trial.stage("big"):
                kernel.touch(1000 * MIB)
            with contextlib.suppress(ValueError), trial.stage("small"):
                kernel.touch((1200 if index == 0 else 10) * MIB)
                if index == 6:
                    raise ValueError("a failed call")
    document = attempt_of(only_attempt(tmp_path / "runs"))
    small = [record for record in document["stages"] if record["name"] == "small"]
    assert any(record["status"] == "failed" for record in small)
    for record in small:
        expected = (1200 if record["pass_index"] == 0 else 10) * MIB + BASE
        assert record["memory"]["rss_peak_bytes"] == expected, record
    last = next(item for item in document["stage_summary"] if item["stage"] == "small")
    assert last["rss_peak_bytes"] == BASE + 1200 * MIB
    assert last["last_memory"]["rss_peak_bytes"] == BASE + 10 * MIB


def test_a_call_after_a_spike_of_its_own_name_reads_its_own_peak(tmp_path: Path,
                                                                   kernel: KernelModel) -> None:
    # 20 calls of 10 MiB but the 10th, of 500 MiB; the 11th and 12th fail: their records read
    # their own 10 MiB (the call after a rise resets), the name's largest is the spike's.
    with Trial(tmp_path / "runs") as trial:
        for index in range(20):
            with contextlib.suppress(ValueError), trial.stage("step"):
                kernel.touch((500 if index == 9 else 10) * MIB)
                if index in (10, 11):
                    raise ValueError("a failed call")
    document = attempt_of(only_attempt(tmp_path / "runs"))
    failed = [record for record in document["stages"] if record["status"] == "failed"]
    assert [record["occurrence"] for record in failed] == [11, 12]
    assert [record["memory"]["rss_peak_bytes"] for record in failed] == [BASE + 10 * MIB] * 2
    assert document["stage_summary"][0]["rss_peak_bytes"] == BASE + 500 * MIB


def test_a_forked_childs_memory_starts_from_a_reset(kernel: KernelModel) -> None:
    cpu = memory.CpuMemory()
    cpu.open()
    try:
        cpu.reset_peak()
        assert cpu.peak() == BASE
        cpu.reopen()  # the files of the child's own process: what was read is the parent's
        resets = kernel.resets
        cpu.reset_peak(bound=BASE)
        assert kernel.resets == resets + 1
    finally:
        cpu.close()
