"""Which values of the axis a ramp tries: geometric growth to the first failure, one value above
it, then bisection.

    >>> tried = []
    >>> explore(1, 64, 2.0, True, lambda value: tried.append(value) or value <= 20)
    >>> tried
    [1, 2, 4, 8, 16, 32, 64, 24, 20, 22, 21]

Growth runs ``start``, ``start * factor``, ... (rounded down, at least one more each time) and
ends with ``stop`` itself, until the first value not passed. A failure there (not an
inconclusive attempt), below ``stop``, is then held to the value the growth would have tried
next, once: when that value passes, the failure was no limit (a value failed below one that
passed: the ramp has no single limit, and it stops there); when it fails too, the limit
stands and, with bisection, the values between the last pass and the first failure are halved
down to integer resolution. No value is tried twice. With
``factor`` 2 the number of attempts is at most ``ceil(log2(stop / start)) + 1`` for the growth,
one above the first failure, and ``ceil(log2(gap))`` for the bisection, where ``gap`` is the
first failure minus the last pass.
"""

from __future__ import annotations

from collections.abc import Callable


def next_value(value: int, factor: float, stop: int) -> int:
    """The value after ``value`` in the growth: at least one more, never past ``stop``."""
    return min(stop, max(value + 1, int(value * factor)))


def explore(start: int, stop: int, factor: float, bisect: bool,
            passes: Callable[[int], bool | None]) -> None:
    """Try values in the ramp's order; ``passes(value)`` runs (or recalls) one attempt: True
    when it passed, False when it failed, None when it was inconclusive (not passed, and no
    failure either: nothing above it is tried, its verdict cannot become a failure's)."""
    last_pass: int | None = None
    value = start
    while True:
        found = passes(value)
        if not found:
            first_fail = value
            break
        last_pass = value
        if value >= stop:
            return
        value = next_value(value, factor, stop)
    if found is False and first_fail < stop and passes(next_value(first_fail, factor, stop)):
        return  # a pass above a failure: no single limit, nothing to bisect towards
    if not bisect or last_pass is None:
        return
    low, high = last_pass, first_fail
    while high - low > 1:
        middle = (low + high) // 2
        if passes(middle):
            low = middle
        else:
            high = middle
