"""Decoding JSON the front did not write: the worker's events, reports saved elsewhere, the
output of a GPU tool (amd-smi, rocm-smi).

Each comes from where the front does not trust (an interpreter that may be hostile, another
person's file, a tool of the machine under diagnosis), and JSON itself bounds nothing. An integer
of thousands of digits is valid JSON, and becomes an int no float can hold (``float()``,
``math.isfinite``, ``:.0f`` and ``/`` raise OverflowError wherever it goes); a document nested a
thousand levels deep is valid too, and every walk over it (a comparison, a renderer) would
recurse past Python's limit. Here both are refused like any other malformed JSON, with
ValueError, before a value reaches anything:

    >>> from kernodeck_diagnostic.untrusted_json import loads
    >>> loads('{"t_ms": 12.5, "sizes": [1, -2]}')
    {'t_ms': 12.5, 'sizes': [1, -2]}
    >>> loads('{"t_ms": ' + "9" * 400 + '}')
    Traceback (most recent call last):
      ...
    ValueError: an integer of more than 20 digits
"""

from __future__ import annotations

import json
from typing import Any

# 2**64 has 20 digits: every count, size, index and duration an event or a report holds fits.
MAX_INT_DIGITS = 20
# Nesting of lists and objects: an event of the protocol needs 4, a report 5.
MAX_DEPTH = 16


def loads(text: str) -> Any:
    """``text`` decoded as JSON; ValueError when it is not JSON, or holds an integer of more
    than MAX_INT_DIGITS digits, or lists and objects nested deeper than MAX_DEPTH."""
    try:
        value = json.loads(text, parse_int=_bounded_int)
    except RecursionError:  # deeper than the decoder itself can go
        raise ValueError("nested too deep") from None
    _within_depth(value)
    return value


def _bounded_int(digits: str) -> int:
    if len(digits) - digits.startswith("-") > MAX_INT_DIGITS:
        raise ValueError(f"an integer of more than {MAX_INT_DIGITS} digits")
    return int(digits)


def _within_depth(value: Any) -> None:
    """ValueError when a list or an object lies deeper than MAX_DEPTH (the top level is 0).

    A loop, not a recursion: the document may be as deep as the decoder allowed.
    """
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= MAX_DEPTH:
            raise ValueError("nested too deep")
        pending.extend((child, depth + 1) for child in children)
