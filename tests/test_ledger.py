"""``OutputLedger``: records written durably, done ids read back, a record cut by a kill never
counted, and the library importable as a user imports it."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import SRC, clean_env
from kernodeck_diagnostic.ledger import OutputLedger, read_ledger


def test_records_are_appended_and_their_ids_read_back(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    ledger = OutputLedger(path, expected_ids=["a", "b", "c"])
    assert ledger.done_ids() == set()
    ledger.append("a", {"dim": 3})
    ledger.append("b", [1.5, 2.5])
    assert ledger.done_ids() == {"a", "b"}
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"format": "kernodeck-ledger", "version": 1, "expected_ids": ["a", "b", "c"]},
                     {"id": "a", "record": {"dim": 3}}, {"id": "b", "record": [1.5, 2.5]}]
    ledger.close()
    # A second run opens the same file: the header, expected ids and records stay.
    with OutputLedger(path) as again:
        assert again.expected_ids == ["a", "b", "c"]
        assert again.done_ids() == {"a", "b"}
    with pytest.raises(ValueError, match="other expected ids"):
        OutputLedger(path, expected_ids=["x"])


def test_each_record_is_synced_before_append_returns_in_record_mode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = OutputLedger(tmp_path / "results.jsonl", durability="record")
    synced: list[bytes] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(Path(f"/proc/self/fd/{fd}").read_bytes() if Path("/proc").is_dir()
                      else b"")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    ledger.append("a", 1)
    assert len(synced) == 1
    if synced[0]:  # on Linux: the record is in the file when it is synced
        assert synced[0].endswith(b'{"id":"a","record":1}\n')


def test_group_commit_syncs_within_its_window_and_on_close(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default durability: records reach the kernel at once (a SIGKILL loses none), the
    disk in batches: at the latest when ``sync_records`` wait, ``sync_interval_s`` after the
    first of them, and on ``sync()``/``close()``."""
    path = tmp_path / "results.jsonl"
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(read_ledger(str(path)).counts.__len__())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    ledger = OutputLedger(path, sync_interval_s=3600, sync_records=3)
    synced.clear()  # the header's own
    ledger.append("a", 1)
    ledger.append("b", 2)
    assert (synced, ledger.unsynced_records) == ([], 2)
    assert read_ledger(str(path)).counts == {"a": 1, "b": 1}  # in the file already
    ledger.append("c", 3)  # the third waiting record: synced before append returns
    assert (synced, ledger.unsynced_records) == ([3], 0)
    ledger.append_many([("d", 4), ("e", 5)])
    ledger.sync()
    assert (synced, ledger.unsynced_records) == ([3, 5], 0)
    ledger.append("f", 6)
    ledger.close()
    assert synced == [3, 5, 6]
    ledger.close()  # again: nothing more
    assert synced == [3, 5, 6]
    # close() ended the helper's hour-long window at once: no thread outlives the ledger.
    assert [thread.name for thread in threading.enumerate()
            if thread.name == "kernodeck-ledger-sync"] == []

    quick = OutputLedger(tmp_path / "quick.jsonl", sync_interval_s=0.01, sync_records=1000)
    quick.append("a", 1)
    deadline = time.monotonic() + 30
    while quick.unsynced_records and time.monotonic() < deadline:
        time.sleep(0.01)
    assert quick.unsynced_records == 0  # the helper thread synced it, nobody asked
    quick.close()


def test_an_id_already_held_is_refused_not_written_twice(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    with OutputLedger(path) as ledger:
        ledger.append("a", 1)
        with pytest.raises(ValueError, match="already holds the id 'a'"):
            ledger.append("a", 2)
        with pytest.raises(ValueError, match="nothing of the batch was written"):
            ledger.append_many([("b", 1), ("b", 2)])
        with pytest.raises(ValueError, match="already holds the id 'a'"):
            ledger.append_many([("c", 1), ("a", 2)])
        ledger.append_many([("b", 1), ("c", 2)])
        ledger.append_many([])
    # A resumed run knows what the file holds.
    with OutputLedger(path) as again, pytest.raises(ValueError, match="already holds the id"):
        again.append("c", 3)
    assert read_ledger(str(path)).counts == {"a": 1, "b": 1, "c": 1}
    with pytest.raises(ValueError, match="durability"):
        OutputLedger(tmp_path / "other.jsonl", durability="never")  # type: ignore[arg-type]


def test_a_record_cut_by_a_kill_never_counts_and_is_cut_off_on_reopening(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    OutputLedger(path).append("a", {"ok": True})
    with open(path, "ab") as file:
        file.write(b'{"id": "b", "rec')  # what a write cut by SIGKILL leaves
    contents = read_ledger(str(path))
    assert contents.counts == {"a": 1}
    assert contents.half_records == [3]
    assert OutputLedger(path).done_ids() == {"a"}  # reopening cuts the half record off
    ledger = OutputLedger(path)
    ledger.append("b", {"ok": True})
    contents = read_ledger(str(path))
    assert (contents.counts, contents.half_records) == ({"a": 1, "b": 1}, [])


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_writer_killed_mid_run_leaves_only_whole_records_and_at_most_one_half(
        tmp_path: Path) -> None:
    """A real process appending as fast as it can, killed by SIGKILL: every line but maybe the
    last is a whole record, the ids run without a gap, and the next run repairs the tail."""
    path = tmp_path / "results.jsonl"
    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nfrom kernodeck_diagnostic import OutputLedger\n"
         "ledger = OutputLedger(sys.argv[1])\n"
         "for i in range(10**6):\n"
         "    ledger.append(str(i), {'payload': 'x' * 3000})\n", str(path)],
        env=clean_env({"PYTHONPATH": str(SRC)}), stdin=subprocess.DEVNULL)
    try:
        while not path.exists() or path.stat().st_size < 200_000:
            assert writer.poll() is None
        writer.send_signal(signal.SIGKILL)
        writer.wait(30)
    finally:
        writer.kill()
    contents = read_ledger(str(path))
    assert len(contents.half_records) <= 1
    count = len(contents.counts)
    assert count > 10
    assert contents.counts == {str(i): 1 for i in range(count)}
    OutputLedger(path).append(str(count), None)
    assert read_ledger(str(path)).half_records == []


def test_the_package_exports_it_lazily() -> None:
    probe = ("import sys, kernodeck_diagnostic\n"
             "assert 'kernodeck_diagnostic.ledger' not in sys.modules\n"
             "from kernodeck_diagnostic import OutputLedger\n"
             "print(OutputLedger.__module__)\n")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                               env=clean_env({"PYTHONPATH": str(SRC)}), timeout=60,
                               check=False)
    assert (completed.returncode, completed.stdout) == (0, "kernodeck_diagnostic.ledger\n"), (
        completed.stderr)


def test_a_missing_folder_is_said_in_one_line_or_created_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.jsonl"
    with pytest.raises(FileNotFoundError) as refused:
        OutputLedger(path, expected_ids=["a"])
    said = str(refused.value)
    assert "\n" not in said
    assert refused.value.errno == errno.ENOENT
    assert said == (f"[Errno 2] the ledger's folder does not exist: {tmp_path / 'out'} "
                    "(create it, or pass create_folder=True)")
    ledger = OutputLedger(path, expected_ids=["a"], create_folder=True)
    ledger.append("a", 1)
    assert read_ledger(str(path)).counts == {"a": 1}


def test_the_header_carries_the_vectors_dimension(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    OutputLedger(path, expected_ids=["a"], vector_dim=4, vector_field="embedding")
    header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert header["vectors"] == {"dim": 4, "field": "embedding"}
    contents = read_ledger(str(path))
    assert (contents.vector_dim, contents.vector_field) == (4, "embedding")
    assert OutputLedger(path).vector_dim == 4  # a second run reads it back
    with pytest.raises(ValueError, match="other vectors"):
        OutputLedger(path, vector_dim=8)
    with pytest.raises(ValueError, match="vector_dim"):
        OutputLedger(tmp_path / "other.jsonl", vector_dim=0)


def test_what_is_not_a_record_is_named_as_what_it_is() -> None:
    from kernodeck_diagnostic.ledger import parse_ledger

    header = b'{"format": "kernodeck-ledger", "version": 1, "expected_ids": null}\n'
    record = b'{"id": "a", "record": 1}\n'
    contents = parse_ledger(record + header + b"\xff\xfe\x00\n" + b"hello\n" + b"[1, 2]\n"
                            + b'{"id": "b", "re' + record + b'{"id": "c"')
    assert contents.not_records == {2: "misplaced_header", 3: "binary", 4: "not_json",
                                    5: "no_id"}
    assert contents.half_records == [6, 7]
    assert not contents.has_header
    assert contents.counts == {"a": 1}


# -- what a failing disk cannot make the ledger say ----------------------------------------------

def test_a_failed_sync_in_the_helper_is_raised_and_never_forgotten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Linux reports a write-back error once per open file: after the helper's failed fsync, a
    later one would succeed and call lost records durable. The writer stays broken instead: the
    program's next append, sync and close say it."""
    from kernodeck_diagnostic import group_commit

    ledger = OutputLedger(tmp_path / "out.jsonl", sync_interval_s=0.01)
    failed = []

    def fsync(fd: int) -> None:
        failed.append(fd)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(group_commit.os, "fsync", fsync)
    ledger.append("a", 1)
    deadline = time.monotonic() + 10
    while not failed and time.monotonic() < deadline:  # the helper's sync, in its window
        time.sleep(0.01)
    monkeypatch.undo()  # the disk answers again: the loss must still be said
    assert failed
    for call in (lambda: ledger.append("b", 2), ledger.sync, ledger.close):
        with pytest.raises(group_commit.NotDurable, match="may be lost"):
            call()
    assert read_ledger(str(tmp_path / "out.jsonl")).counts == {"a": 1}  # written whole, once


def test_a_write_cut_short_leaves_no_torn_line_and_the_retry_is_held_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk in the middle of a record: what was written of it is taken back, so the
    retry starts a clean line, and the id is held once."""
    from kernodeck_diagnostic import group_commit

    path = tmp_path / "out.jsonl"
    ledger = OutputLedger(path)
    ledger.append("first", 0)
    real_write = os.write
    calls = []

    def write(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))  # half, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(group_commit.os, "write", write)
    with pytest.raises(OSError, match="No space"):
        ledger.append("x", "y" * 100)
    monkeypatch.undo()
    assert path.read_bytes().endswith(b"\n")  # no half line left
    ledger.append("x", "y" * 100)  # the retry: accepted, the failed write never held it
    ledger.close()
    contents = read_ledger(str(path))
    assert (contents.counts, contents.half_records) == ({"first": 1, "x": 1}, [])
    assert all(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())


def test_settings_refused_before_any_file_is_touched(tmp_path: Path) -> None:
    fds = len(os.listdir("/proc/self/fd"))
    for settings in ({"durability": "fast"}, {"sync_interval_s": 0}, {"sync_records": 0}):
        with pytest.raises(ValueError, match=r"durability|sync window"):
            OutputLedger(tmp_path / "never.jsonl", **settings)  # type: ignore[arg-type]
    assert not (tmp_path / "never.jsonl").exists()
    assert len(os.listdir("/proc/self/fd")) == fds


def test_a_second_writer_is_refused_and_a_torn_tail_is_cut_only_under_the_lock(
        tmp_path: Path) -> None:
    """Before: opening a ledger cut a "torn tail" seen in an unlocked read, which can be a live
    writer's line in progress: an acknowledged record was cut."""
    from kernodeck_diagnostic.ledger import LedgerInUse

    path = tmp_path / "results.jsonl"
    writer = OutputLedger(path, expected_ids=["a", "b"])
    writer.append("a", 1)
    with open(path, "ab") as file:
        file.write(b'{"id":"b","rec')  # as a line in progress looks to a reader
    before = path.read_bytes()
    with pytest.raises(LedgerInUse) as refused:
        OutputLedger(path)
    assert refused.value.errno == errno.EBUSY
    assert path.read_bytes() == before  # nothing cut
    other = subprocess.run(  # another process: refused the same way
        [sys.executable, "-c", "import sys\nfrom kernodeck_diagnostic import OutputLedger\n"
         "try:\n    OutputLedger(sys.argv[1])\nexcept OSError as exc:\n"
         "    sys.exit(type(exc).__name__)\n", str(path)],
        env=clean_env({"PYTHONPATH": str(SRC)}), capture_output=True, text=True, timeout=60,
        check=False)
    assert (other.returncode, other.stderr) == (1, "LedgerInUse\n")
    assert path.read_bytes() == before
    writer.close()
    with OutputLedger(path) as again:  # the one writer now: the torn tail is cut
        assert again.done_ids() == {"a"}
        again.append("b", 2)
    assert read_ledger(str(path)).counts == {"a": 1, "b": 1}


@pytest.mark.parametrize("cut", [1, 5, 28, 40])
def test_a_header_cut_short_is_written_again(tmp_path: Path, cut: int) -> None:
    """Before: once a full disk had cut the header, every restart failed with "the file exists
    and is not an output ledger"."""
    path = tmp_path / "results.jsonl"
    with OutputLedger(tmp_path / "whole.jsonl", expected_ids=["a"]):
        pass
    header = (tmp_path / "whole.jsonl").read_bytes()
    path.write_bytes(header[:cut])
    with OutputLedger(path, expected_ids=["a"]) as ledger:
        ledger.append("a", 1)
    contents = read_ledger(str(path))
    assert (contents.has_header, contents.counts, contents.half_records) == (True, {"a": 1}, [])
    assert path.read_bytes().startswith(header)


def test_a_header_write_cut_by_a_full_disk_is_taken_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernodeck_diagnostic import ledger as ledger_module

    path = tmp_path / "results.jsonl"
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[:10]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ledger_module.os, "write", full)
    with pytest.raises(OSError, match="No space"):
        OutputLedger(path, expected_ids=["a"])
    monkeypatch.undo()
    assert path.read_bytes() == b""  # no cut header left
    with OutputLedger(path, expected_ids=["a"]) as ledger:  # space freed: it starts
        ledger.append("a", 1)
    assert read_ledger(str(path)).counts == {"a": 1}


def test_a_file_that_is_no_ledger_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"id,score\n1,0.5\n")
    with pytest.raises(ValueError, match=r"is not an output ledger .*; use a new file"):
        OutputLedger(path)
    assert path.read_bytes() == b"id,score\n1,0.5\n"


@pytest.mark.parametrize("durability", ["group", "record"])
def test_a_file_swapped_under_the_ledger_is_refused_by_the_next_sync(
        tmp_path: Path, durability: str) -> None:
    """The name is checked before each sync, off the path of each append (issue 42); the
    records of the window go to the file the ledger holds (moved), none to the new one. In
    "record" mode each append syncs, so the very next one is refused."""
    path, moved = tmp_path / "results.jsonl", tmp_path / "moved.jsonl"
    ledger = OutputLedger(path, durability=durability)  # type: ignore[arg-type]
    ledger.append("a", 1)
    path.rename(moved)
    path.write_bytes(b"")  # another file at the name
    if durability == "group":
        ledger.append("b", 2)  # in the window: held by the moved file
        with pytest.raises(FileNotFoundError, match="moved or replaced"):
            ledger.sync()
    with pytest.raises(FileNotFoundError, match="moved or replaced"):
        ledger.append("c", 3)
    ledger.close()
    assert path.read_bytes() == b""
    assert set(read_ledger(str(moved)).counts) == ({"a", "b"} if durability == "group"
                                                   else {"a"})


def test_the_helper_finds_a_swap_within_its_window(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    ledger = OutputLedger(path, sync_interval_s=0.01)
    ledger.append("a", 1)
    path.rename(tmp_path / "moved.jsonl")
    ledger.append("b", 2)  # opens a window: the helper syncs, and checks, within 0.01 s
    deadline = time.monotonic() + 30
    while True:
        try:
            ledger.append(f"c{time.monotonic()}", 3)
        except FileNotFoundError:
            break
        assert time.monotonic() < deadline
        time.sleep(0.005)
    ledger.close()


@pytest.mark.skipif(sys.platform == "win32", reason="umask")
def test_a_folder_made_under_umask_000_is_private(tmp_path: Path) -> None:
    """Before: umask 000 made the folder 0777, which the ledger then refused."""
    made = subprocess.run(
        [sys.executable, "-c", "import os, sys\nfrom kernodeck_diagnostic import OutputLedger\n"
         "os.umask(0)\nOutputLedger(sys.argv[1], create_folder=True).append('a', 1)\n",
         str(tmp_path / "out" / "deep" / "results.jsonl")],
        env=clean_env({"PYTHONPATH": str(SRC)}), capture_output=True, text=True, timeout=60,
        check=False)
    assert made.returncode == 0, made.stderr
    for folder in (tmp_path / "out", tmp_path / "out" / "deep"):
        assert folder.stat().st_mode & 0o777 == 0o700
    assert read_ledger(str(tmp_path / "out" / "deep" / "results.jsonl")).counts == {"a": 1}


def test_a_refused_ledger_dropped_without_close_leaves_no_thread(tmp_path: Path) -> None:
    """A refusal kept as an exception held, through its traceback, the program's frames and so
    the ledger: dropped, it lived on with its helper thread until the cyclic collector ran
    (another test's fork-only path then saw a second thread)."""
    path = tmp_path / "results.jsonl"
    threads = threading.active_count()

    def refused_then_dropped() -> None:
        ledger = OutputLedger(path)
        ledger.append("a", 1)
        path.rename(tmp_path / "moved.jsonl")
        with pytest.raises(FileNotFoundError):
            ledger.sync()
        with pytest.raises(FileNotFoundError, match="moved or replaced"):
            ledger.append("b", 2)

    refused_then_dropped()
    assert threading.active_count() == threads
