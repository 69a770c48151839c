"""Markdown that shows data as text: the one escaping used by every markdown the tool writes.

    >>> from kernodeck_diagnostic.report.markup import escape
    >>> escape("<path>/libcudnn.so.9 | a*b")
    '&lt;path&gt;/libcudnn.so.9 \\\\| a\\\\*b'

Reports carry text from the machine and from other people (device names, versions, error
messages, redaction placeholders such as ``<path>``). Pasted in a GitHub issue or shown by a
notebook, raw markdown would make ``<path>`` vanish as an unknown HTML tag, run ``<script>`` as
HTML, or let a ``|`` split a table cell. Whatever a value holds, it is rendered as the text it is.

Renderers add syntax of their own to text: GitHub, JupyterLab and VS Code turn ``https://...``,
``www.`` and ``name@host.org`` into links (an attacker's URL in an error message, clickable),
and notebooks (MathJax, KaTeX) and GitHub turn ``$...$`` into LaTeX. Their ``:`` of ``://``, the
``.`` of ``www.`` and the ``@`` are escaped, which no link rule reads through; a ``$`` is shown
as inline code (`` `$` ``), which every one of them keeps from math (a backslash is not enough:
Jupyter needs two, VS Code one).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..terminal import one_line

# HTML is the danger: entities, understood by every renderer, whatever it does with backslashes.
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# Markdown's inline syntax: code, emphasis, links and images, table cells, strikethrough.
_PUNCTUATION = frozenset("\\`*_[]|~")
# What would make a heading, a list, a rule or a setext underline of a value that starts a line
# or a list item's text: its last character is escaped (``1\.``, ``\#``).
_BLOCK_START = re.compile(r"[#+=-]|\d+[.)]")
# Where a renderer would start a link: the ``:`` of ``scheme://``, the ``.`` of ``www.``, an
# address's ``@`` (each escaped).
_LINK_START = re.compile(
    r"(?<=[a-z0-9])(:)//|(?<![a-z0-9.])www(\.)|(?<=[a-z0-9._+-])(@)(?=[a-z0-9])", re.IGNORECASE)
# Inline code shows its content literally; these would end it or split a table cell.
_NOT_IN_CODE = frozenset("`|<>&")


def escape(value: object, line_start: bool = False) -> str:
    """``value`` as one line of markdown text that renders as exactly that text.

    ``line_start``: the value begins a line or a list item, where ``# x`` or ``1. x`` is syntax.
    """
    text = one_line(str(value))
    linked = {match.start(match.lastindex or 0) for match in _LINK_START.finditer(text)}
    out: list[str] = []
    for index, char in enumerate(text):
        if index in linked:
            out.append("\\" + char)
        elif char == "$":  # a run of them, one code span (```$``$``` would be one, wrongly)
            dollars = index > 0 and text[index - 1] == "$"
            out[-1:] = [out[-1][:-1] + "$`"] if dollars else [*out[-1:], "`$`"]
        elif char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char == "_" and _inside_word(text, index):
            out.append(char)  # snake_case cannot start emphasis: keep names readable
        elif char in _PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    escaped = "".join(out)
    start = _BLOCK_START.match(escaped) if line_start else None
    if start:
        cut = start.end() - 1
        escaped = escaped[:cut] + "\\" + escaped[cut:]
    return escaped


def code(value: object) -> str:
    """``value`` as inline code when it can be shown so safely, else as escaped text."""
    text = one_line(str(value))
    if not text.strip() or any(char in _NOT_IN_CODE for char in text):
        return escape(text)
    return f"`{text}`"


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows (the first one the header), each cell already escaped, as a markdown table."""
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return lines + ["| " + " | ".join(row) + " |" for row in rows[1:]]


def _inside_word(text: str, index: int) -> bool:
    return 0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()
