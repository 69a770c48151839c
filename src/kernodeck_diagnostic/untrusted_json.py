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


# Everything but brackets and quotes, deleted from the text to measure its nesting; then
# objects' braces read as lists' brackets (_nested_deeper_than).
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_BRACES_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
# Digits as "1", anything else as " ": a run of more "1" than an integer may have digits is the
# only way the text can hold an integer too long (_bounded_int).
_DIGIT_RUNS = bytes(ord("1") if byte in b"0123456789" else ord(" ") for byte in range(256))
_TOO_LONG = b"1" * (MAX_INT_DIGITS + 1)


def loads(text: str) -> Any:
    """``text`` decoded as JSON; ValueError when it is not JSON, or holds an integer of more
    than MAX_INT_DIGITS digits, or lists and objects nested deeper than MAX_DEPTH."""
    data = text.encode("utf-8", "surrogatepass")
    # Each integer goes through _bounded_int (a Python call each) only when some run of digits,
    # in a number or a string, is long enough to be a number too long: reports read fast.
    decoder = _CHECKING if _TOO_LONG in data.translate(_DIGIT_RUNS) else _PLAIN
    try:
        value = decoder.decode(text)
    except RecursionError:  # deeper than the decoder itself can go
        raise ValueError("nested too deep") from None
    if _nested_deeper_than(data, MAX_DEPTH):  # a list or an object at depth MAX_DEPTH (the
        raise ValueError("nested too deep")      # top level is 0) is one level too deep
    return value


def _bounded_int(digits: str) -> int:
    if len(digits) - digits.startswith("-") > MAX_INT_DIGITS:
        raise ValueError(f"an integer of more than {MAX_INT_DIGITS} digits")
    return int(digits)


# Built once: json.loads with an argument builds a new decoder at every call.
_CHECKING = json.JSONDecoder(parse_int=_bounded_int)
_PLAIN = json.JSONDecoder()


def _nested_deeper_than(data: bytes, levels: int) -> bool:
    """Whether lists and objects in ``data`` (valid JSON in UTF-8) nest more than ``levels``
    deep, the outermost being the first level.

    Read from the text rather than by walking the decoded value: a walk takes a step of Python
    for every value, and summarize reads thousands of reports. Escaped backslashes and escaped
    quotes go first (pairs, left to right, as JSON reads them); the quotes left then delimit the
    strings, so every other piece between them is outside any string, where brackets and braces
    nest. Most strings hold no bracket and are left as two quotes side by side: those pairs go
    first, in one pass (two adjacent quotes are either an empty string or the end of a string and
    the start of the next with no bracket between them: taking them away leaves every other quote
    where it was, opening or closing, and no bracket moves in or out of a string), so only the
    strings with brackets in them are split apart. Each pass of removing every empty pair ``[]``
    takes away exactly one level (a pair goes in the pass after the last of its children), so
    what is left after ``levels`` passes nests deeper. Every step is a bytes method, and UTF-8
    never puts these ASCII bytes inside another character.
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:
        structure = b"".join(structure.split(b'"')[::2])
    brackets = structure.translate(_BRACES_AS_BRACKETS)
    for _ in range(levels):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)
