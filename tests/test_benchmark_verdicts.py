"""How benchmarks/run.py judges rows 1f and 3f (issue 28): on the paired ratio's 95 % interval,
so that a run on a noisy machine says *undecided* instead of a pass or a miss it cannot show."""

from __future__ import annotations

import importlib.util
import math
import sys
from types import ModuleType

import pytest

from conftest import ROOT


def _run_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kd_bench_run", ROOT / "benchmarks" / "run.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


run = _run_module()


def _coverage(n: int, k: int) -> float:
    """The probability that [k-th smallest, k-th largest] of n values holds their median."""
    return 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2**n


@pytest.mark.parametrize("n", [6, 7, 10, 15, 20, 24, 40])
def test_the_interval_is_the_widest_rank_pair_that_reaches_95_percent(n: int) -> None:
    values = [float(i * 7919 % 1000) for i in range(n)]  # distinct, in no order
    low, high = run.median_interval(values)
    ordered = sorted(values)
    k = ordered.index(low) + 1
    assert ordered[n - k] == high  # symmetric ranks
    assert _coverage(n, k) >= 0.95 > _coverage(n, k + 1)


def test_twenty_rounds_give_the_sixth_smallest_and_the_sixth_largest() -> None:
    assert run.median_interval([float(v) for v in range(1, 21)]) == (6.0, 15.0)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_too_few_rounds_give_no_interval(n: int) -> None:
    assert run.median_interval([1.0] * n) is None


def _commands(tool: list[float], zipapp: list[float]) -> dict[str, object]:
    floor = [1.0] * len(tool)

    def command(key: str, times: list[float]) -> object:
        return run.Command(key, key, [], {}, times=[float(t) for t in times])

    return {"floor": command("floor", floor), "tool": command("tool", tool),
            "zipapp": command("zipapp", zipapp)}


def test_a_target_inside_the_interval_is_undecided_not_a_pass() -> None:
    # The median ratio is 1.02, within 1.03, but the interval reaches 1.04: not shown met.
    tool = [0.98, 0.99, 1.00, 1.00, 1.01, 1.01, 1.02, 1.02, 1.02, 1.02,
            1.02, 1.02, 1.03, 1.03, 1.04, 1.06, 1.08, 1.10, 1.12, 1.15]
    rows = {row.number: row for row in run.floor_rows(_commands(tool, [1.00] * 20))}
    assert (rows["1f"].met, rows["1f"].decided, rows["1f"].verdict) == (None, False,
                                                                         "**undecided**")
    assert "95 % interval 1.010-1.040" in rows["1f"].result
    assert (rows["3f"].met, rows["3f"].verdict) == (True, "met")


def test_an_interval_above_the_target_is_missed_and_one_within_is_met() -> None:
    rows = {row.number: row for row in run.floor_rows(_commands([1.10] * 20, [1.04] * 20))}
    assert (rows["1f"].met, rows["1f"].verdict) == (False, "**missed**")
    assert (rows["3f"].met, rows["3f"].verdict) == (True, "met")


def test_a_single_round_decides_nothing() -> None:
    rows = {row.number: row for row in run.floor_rows(_commands([1.00], [1.00]))}
    assert all(row.verdict == "**undecided**" for row in rows.values())
    assert "too few rounds for an interval" in rows["1f"].result


def test_the_target_itself_is_within_it() -> None:
    # Every round at the target: the interval is the target alone, which is met (<=).
    rows = {row.number: row for row in run.floor_rows(_commands([1.03] * 20, [1.05] * 20))}
    assert (rows["1f"].verdict, rows["3f"].verdict) == ("met", "met")


def test_an_interval_that_begins_at_the_target_is_undecided() -> None:
    tool = [1.03] * 10 + [1.05] * 10  # the 6th smallest 1.03, the 6th largest 1.05
    rows = {row.number: row for row in run.floor_rows(_commands(tool, [1.00] * 20))}
    assert "95 % interval 1.030-1.050" in rows["1f"].result
    assert rows["1f"].verdict == "**undecided**"
