"""Values from reports shown in the commands' tables: aligned text, or escaped markdown."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..terminal import cell
from .markup import code, escape


def md(value: Any) -> str:
    """A value for markdown: a short cell, shown as the text it is (``markup.escape``)."""
    return escape(cell(value))


def md_code(value: Any) -> str:
    """A value as inline code in markdown when it can be, else as escaped text."""
    return code(cell(value))


def table(rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    """Rows (the first one the header) aligned in columns two spaces apart."""
    return list(table_lines(rows, indent))


def table_lines(rows: Sequence[Sequence[str]], indent: str = "") -> Iterator[str]:
    """``table``, one line at a time (a long table is never held twice)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        yield indent + "  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip()
