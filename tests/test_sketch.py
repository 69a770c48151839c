"""``passes.Sketch``: a stream of numbers summarised in a bounded size. Its exact figures (count,
total, extremes, the key of the largest) and its percentiles, exact up to ``EXACT_VALUES`` values
and within 1 percent of the exact nearest rank past them, whatever the stream."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kernodeck_diagnostic.trial.passes import EXACT_VALUES, Sketch, bucket_of

durations = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)


def _nearest_rank(values: list[float], fraction: float) -> float:
    return sorted(values)[max(1, math.ceil(fraction * len(values))) - 1]


@settings(max_examples=40, deadline=None)
@given(values=st.lists(durations, min_size=1, max_size=3 * EXACT_VALUES),
       scale=st.sampled_from([1.0, 1000.0, 1.0 / 1024]))
def test_a_sketch_keeps_the_exact_figures_and_percentiles_within_a_percent(
        values: list[float], scale: float) -> None:
    sketch = Sketch(scale)
    for index, value in enumerate(values):
        sketch.add(value, index)
    assert sketch.count == len(values)
    assert math.isclose(sketch.total, math.fsum(values), rel_tol=1e-9, abs_tol=1e-9)
    assert (sketch.min, sketch.max) == (min(values), max(values))
    assert values[sketch.max_key] == max(values)
    assert values.index(max(values)) == sketch.max_key  # the first of equal largest values
    for fraction in (0.5, 0.95):
        exact = _nearest_rank(values, fraction)
        found = sketch.percentile(fraction)
        assert found is not None
        if len(values) <= EXACT_VALUES:
            assert found == exact
        else:  # a bucket's middle, within 1 percent (plus a bucket's width at the unit's floor)
            assert abs(found - exact) <= 0.01 * exact + 0.01 / scale, (fraction, found, exact)
    assert (sketch.exact is None) == (len(values) > EXACT_VALUES)


def test_an_empty_sketch_has_no_figures() -> None:
    sketch = Sketch(1000.0)
    assert sketch.percentile(0.5) is None
    assert sketch.later_passes() is None
    assert sketch.figures() is None


def test_past_the_exact_values_each_value_lands_in_its_bucket() -> None:
    """The histogram a stream makes, value by value past ``EXACT_VALUES`` (``add``'s inline
    bucketing) and in one go (``bucket_of``), is the same; its percentiles within 1 percent."""
    rng = random.Random(41)  # noqa: S311 - a reproducible stream, not a secret
    values = [rng.lognormvariate(0.0, 2.0) for _ in range(5 * EXACT_VALUES)] + [0.0, 1e-9]
    for scale in (1000.0, 1.0 / 1024):
        sketch = Sketch(scale)
        for value in values:
            sketch.add(value)
        expected: dict[int, int] = {}
        for value in values:
            expected[bucket_of(value, scale)] = expected.get(bucket_of(value, scale), 0) + 1
        assert sketch.histogram == expected
        for fraction in (0.5, 0.95):
            exact = _nearest_rank(values, fraction)
            assert abs((sketch.percentile(fraction) or 0) - exact) <= 0.01 * exact + 0.01 / scale
