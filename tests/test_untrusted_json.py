"""untrusted_json's nesting bound, read from the text, agrees with a walk of the decoded value
on any JSON, strings full of brackets, quotes and backslashes included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernodeck_diagnostic.untrusted_json import (
    MAX_DEPTH,
    _nested_deeper_than,
    loads,
    loads_utf8,
)

TRICKY = st.text(alphabet='[]{}"\\\\ ab\u00e9\u4e2d', max_size=8)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-9, 9) | TRICKY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3),
    max_leaves=40)


def nesting(value: Any) -> int:
    if isinstance(value, (list, dict)):
        children = value.values() if isinstance(value, dict) else value
        return 1 + max((nesting(child) for child in children), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans(), st.integers(1, 8))
def test_the_bound_read_from_the_text_is_the_walks(value: Any, ascii_only: bool,
                                                   levels: int) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    assert _nested_deeper_than(text, levels) == (nesting(value) > levels)


@pytest.mark.parametrize(("value", "depth"), [
    ({"a": "[", "b": "]"}, 1),          # a string's bracket closed by the next string's
    (["", "[[", "", "]]", ""], 1),      # empty strings side by side with bracketed ones
    ([["\\"], "]\"[", [[]]], 3),       # escapes next to quotes and brackets
    ({"": {"": [""]}}, 3),
])
def test_brackets_inside_strings_never_count(value: Any, depth: int) -> None:
    for ascii_only in (True, False):
        text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
        assert nesting(value) == depth
        assert not _nested_deeper_than(text, depth)
        assert _nested_deeper_than(text, depth - 1)


@pytest.mark.parametrize("depth", [MAX_DEPTH, MAX_DEPTH + 1])
def test_a_document_one_level_too_deep_is_refused(depth: int) -> None:
    text = "[" * depth + "]" * depth
    if depth > MAX_DEPTH:
        with pytest.raises(ValueError, match="nested too deep"):
            loads(text)
    else:
        assert nesting(loads(text)) == depth


def _outcome(read: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "value", read(data)
    except ValueError:
        return "refused", None


@settings(max_examples=400, deadline=None)
@given(VALUES | st.just(10**21) | st.just([[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]), st.booleans(),
       st.booleans(), st.integers(0, 200), st.sampled_from(
           [b"", b"[", b"]", b'"', b"\\", b"\x0b", b"\xff", b"\xef\xbb\xbf", b"9" * 21]))
def test_bytes_are_read_as_the_utf_8_sig_text_is(value: Any, ascii_only: bool, bom: bool,
                                                 at: int, inserted: bytes) -> None:
    """``loads_utf8`` (summarize's reports, read once as bytes) gives what ``loads`` of the text
    the ``utf-8-sig`` codec decodes gives, or refuses what it refuses: broken, deep, not UTF-8,
    an integer too long, a second byte-order mark."""
    data = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    data = (b"\xef\xbb\xbf" if bom else b"") + data[:at] + inserted + data[at:]
    assert _outcome(loads_utf8, data) == _outcome(lambda raw: loads(raw.decode("utf-8-sig")),
                                                  data)
