"""A child's stdout and stderr, kept in files: bounded while it runs, their tails read after.

The worker's (``supervisor``) and the user's application's (``application``) output go to files,
not pipes: a flood cannot fill a pipe and block the child, and a grandchild holding them cannot
keep the front waiting. Whatever reads what a child wrote reads it here, from the file's tail:
the worker's last line on stderr, a ramp attempt's stderr and JSON lines (``ramp/outcome.py``),
resume-check's second run (``commands/resume_check.py``), the interpreter probe (``api``).
"""

from __future__ import annotations

import os
import re
from typing import IO

from .. import untrusted_json
from .events import SURROGATES

# Past this size a child's output file is emptied (``bound_capture``).
CAPTURE_LIMIT_BYTES = 8 * 1024 * 1024
STDERR_TAIL_BYTES = 16 * 1024
MAX_STDERR_LINE_CHARS = 500
# Lines that say nothing about the cause: tracebacks' frames and headers (Python's, faulthandler's,
# c10's C++ frames), the shell's and faulthandler's names for a signal, CUDA's boilerplate advice.
_NOT_A_CAUSE = re.compile(
    r"Traceback \(most recent call last\):|File \".*\", line \d+.*|\^+|~*\^[~^]*|"
    r"frame #\d+:.*|Exception raised from .*\(most recent call first\):|"
    r"(?:Current thread|Thread) 0x[0-9a-fA-F]+.*|Stack \(most recent call first\):|"
    r"<no Python frame>|Extension modules:.*|Python runtime state:.*|"
    r"(?:Fatal Python error: )?(?:Aborted|Segmentation fault|Killed|Bus error|Illegal instruction"
    r"|Floating point exception|Trace/breakpoint trap)(?: \(core dumped\))?|"
    r"CUDA kernel errors might be asynchronously reported.*|"
    r"For debugging consider passing CUDA_LAUNCH_BLOCKING=1.?|"
    r"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.?")
_TERMINATE = re.compile(r"terminate called after throwing an instance of .*")


def last_stderr_line(path: str) -> str | None:
    """The last line of the worker's stderr that can say why it ended, from the file's tail.

    Blank lines, traceback frames and the generic names of a signal are skipped; indented lines
    are a traceback's source lines, except C++'s ``what():`` line, which is joined to the
    ``terminate called after throwing...`` line before it. One line, at most
    MAX_STDERR_LINE_CHARS characters; None when there is none (or the file cannot be read).
    """
    found = read_tail(path, STDERR_TAIL_BYTES)
    if found is None:
        return None
    tail, size = found
    lines = tail.decode("utf-8", "replace").splitlines()
    if len(tail) == STDERR_TAIL_BYTES and size > STDERR_TAIL_BYTES:
        lines = lines[1:]  # the first line may be cut anywhere: not a line of its own
    for index in range(len(lines) - 1, -1, -1):
        raw = lines[index]
        line = " ".join(raw.split())
        if not line or _NOT_A_CAUSE.fullmatch(line):
            continue
        if line.startswith("what():"):
            before = " ".join(lines[index - 1].split()) if index else ""
            if _TERMINATE.fullmatch(before):
                line = f"{before} {line}"
        elif raw[:1].isspace():
            continue  # a source line of a Python traceback
        line = SURROGATES.sub("\ufffd", line)
        if len(line) > MAX_STDERR_LINE_CHARS:
            line = line[:MAX_STDERR_LINE_CHARS - 1] + "\u2026"
        return line
    return None


def read_tail(path: str, limit: int) -> tuple[bytes, int] | None:
    """The last ``limit`` bytes of a file and its size; None when it cannot be read or is no
    regular file (the one reader, ``untrusted_json.read_tail``: a FIFO is never waited on)."""
    try:
        return untrusted_json.read_tail(path, limit)
    except OSError:
        return None


def tail_of(file: IO[bytes], limit: int) -> tuple[bytes, int]:
    """The last ``limit`` bytes of an open file and its size (``OSError`` when unreadable)."""
    size = os.fstat(file.fileno()).st_size
    file.seek(max(0, size - limit))
    return file.read(limit), size


def bound_capture(file: IO[bytes]) -> None:
    """Empty a child's output file once it holds more than CAPTURE_LIMIT_BYTES."""
    try:
        if os.fstat(file.fileno()).st_size > CAPTURE_LIMIT_BYTES:
            os.ftruncate(file.fileno(), 0)  # opened for append: the writer goes on at the new end
    except OSError:
        pass
