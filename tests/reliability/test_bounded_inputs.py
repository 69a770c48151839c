"""Bounded on hostile input: a FIFO is never waited on, ``/dev/zero`` (through a link) never read
forever, a 1 GiB line never held, a line of 100,000 ``[`` no RecursionError. The ledger's reader
(``read_ledger``, ``OutputLedger``), resume-check's ``--expect-ids`` and its record counter, and
ramp's ``ramp.json`` all go through ``untrusted_json`` (``open_regular``, ``json_lines``,
``loads``).

Memory is bounded for real: the readers run in a child whose address space is limited
(``RLIMIT_AS``) far below what reading the input whole would take.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import SRC, clean_env, run_tool
from kernodeck_diagnostic.ledger import parse_ledger, read_ledger
from kernodeck_diagnostic.untrusted_json import NotARegularFile, json_lines, loads

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /dev/zero, RLIMIT_AS")
MEMORY_LIMIT = 600 * 2**20  # the child's address space: a 1 GiB line cannot fit


def _tool(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", *args],
                          capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL,
                          env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}))


def _limited(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``code`` in a child whose address space is MEMORY_LIMIT."""
    script = (f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, "
              f"{MEMORY_LIMIT}))\n" + textwrap.dedent(code))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout, check=False, env=clean_env({"PYTHONPATH": str(SRC)}))


@posix_only
def test_a_fifo_as_the_ledger_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "ledger.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile):
        read_ledger(str(fifo))
    done = _tool("resume-check", "--ledger", str(fifo), "--stop-after-records", "1", "--",
                 sys.executable, "-c", "pass")
    assert done.returncode == 2, done.stderr
    assert "not a regular file" in done.stderr


@posix_only
def test_dev_zero_through_a_link_as_the_ledger_or_the_expected_ids(tmp_path: Path) -> None:
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    with pytest.raises(NotARegularFile):
        read_ledger(str(link))
    done = _tool("resume-check", "--ledger", str(tmp_path / "out.jsonl"), "--expect-ids",
                 str(link), "--stop-after-records", "1", "--", sys.executable, "-c", "pass")
    assert done.returncode == 2, done.stderr
    assert "--expect-ids cannot be read: not a regular file" in done.stderr
    fifo = tmp_path / "ids"
    os.mkfifo(fifo)
    done = _tool("resume-check", "--ledger", str(tmp_path / "out.jsonl"), "--expect-ids",
                 str(fifo), "--stop-after-records", "1", "--", sys.executable, "-c", "pass")
    assert done.returncode == 2, done.stderr


@posix_only
def test_a_1_gib_ledger_line_is_a_half_record_read_in_bounded_memory(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    with ledger.open("wb") as file:
        file.write(b'{"format": "kernodeck-ledger", "version": 1, "expected_ids": null}\n')
        file.write(b'{"id": "a", "record": 1}\n')
        file.write(b'{"id": "b", "record": "')
        file.truncate(file.tell() + 2**30)  # sparse: a 1 GiB line of NUL bytes
        file.seek(0, os.SEEK_END)
        file.write(b'"}\n{"id": "c", "record": 2}\n')
    done = _limited(f"""
        from kernodeck_diagnostic.ledger import read_ledger
        found = read_ledger({str(ledger)!r})
        print(sorted(found.counts), found.half_records)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == "['a', 'c'] [3]"


def test_a_line_of_100000_brackets_is_named_not_a_recursion_error() -> None:
    header = b'{"format": "kernodeck-ledger", "version": 1, "expected_ids": ["x"]}\n'
    found = parse_ledger(header + b"[" * 100_000 + b"\n" + b'{"id": "x"}\n')
    assert found.counts == {"x": 1}
    # Not a cut record (it never started as one): text that is not JSON, named as such.
    assert (found.half_records, found.not_records) == ([], {2: "not_json"})
    with pytest.raises(ValueError, match="nested too deep"):
        loads("[" * 100_000 + "]" * 100_000, max_depth=None)


def test_a_ledgers_own_records_may_nest_and_hold_big_numbers() -> None:
    """The application's records are its own data: the ledger reads them with wider bounds than
    a report's (as deep as JSON goes, integers as long as Python's own bound)."""
    record = {"id": "deep", "record": {"n": 10**40, "v": [[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}}
    found = parse_ledger(json.dumps(record).encode() + b"\n")
    assert found.counts == {"deep": 1}


def test_json_lines_skips_a_long_line_without_holding_it() -> None:
    import io

    data = io.BytesIO(b"short\n" + b"x" * 100 + b"\nend")
    assert list(json_lines(data, max_line_bytes=10)) == [
        (b"short", 5, True), (None, 100, True), (b"end", 3, False)]


@posix_only
def test_a_fifo_or_a_link_to_dev_zero_as_ramp_json_is_refused(tmp_path: Path) -> None:
    for kind in ("fifo", "zero"):
        out = tmp_path / kind
        out.mkdir(mode=0o700)
        if kind == "fifo":
            os.mkfifo(out / "ramp.json")
        else:
            (out / "ramp.json").symlink_to("/dev/zero")
        done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                        ["ramp", "--axis", "b", "--start", "1", "--stop", "1", "--out", str(out),
                         "--", sys.executable, "-c", "pass"],
                        env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}), timeout=60)
        assert done.returncode == 2, (kind, done.stderr)
        assert "internal error" not in done.stderr.lower()


@posix_only
@pytest.mark.long
def test_the_record_counter_reads_a_growing_ledger_in_bounded_steps(tmp_path: Path) -> None:
    """resume-check's counter, on a ledger swapped for a FIFO or a link to /dev/zero: no wait,
    no endless read; on a huge line: bounded memory, the line not counted."""
    ledger = tmp_path / "ledger.jsonl"
    with ledger.open("wb") as file:
        file.write(b'{"id": "a"}\n{"id": "b", "x": "')
        file.truncate(file.tell() + 2**30)
        file.seek(0, os.SEEK_END)
        file.write(b'"}\n{"id": "c"}\n')
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    zero = tmp_path / "zero"
    zero.symlink_to("/dev/zero")
    done = _limited(f"""
        from kernodeck_diagnostic.resume.observe import RecordCounter
        for path in ({str(fifo)!r}, {str(zero)!r}):
            print(RecordCounter(path).count())
        counter = RecordCounter({str(ledger)!r})
        counts = [counter.count() for _ in range(80)]
        print(counts[-1])
    """, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "0", "2"]
