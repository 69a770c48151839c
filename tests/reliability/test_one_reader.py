"""The one reader (``untrusted_json``): every file the tool reads from disk is a regular file
opened without waiting, read within a bound; an attempt's event log is streamed, only summaries
kept (``trial/log_reader.py``).

The attempt planted on is real: a program using ``Trial`` killed by SIGKILL in its second pass,
which leaves what a killed attempt leaves (``events.jsonl``, ``stage.bin``, no ``attempt.json``).
Then one file of it at a time is swapped for a FIFO with no writer (or a socket, a folder, a link
to ``/dev/zero``), and each consumer reads it: ``compare`` and ``summarize`` (the command, in a
child with a time limit) and ``open_attempt()``, ``summarize``'s rows and ramp's reading of an
attempt folder (in this process, under an alarm): a hang fails the test in seconds, never
blocks the suite. Before the fix a FIFO at ``stage.bin`` hung all three commands forever.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, clean_env
from kernodeck_diagnostic.ramp.rows import rows_of
from kernodeck_diagnostic.trial import log_reader, open_attempt
from kernodeck_diagnostic.trial.evidence import run_records
from kernodeck_diagnostic.trial.judge import PASSED, Process, judge
from kernodeck_diagnostic.trial.log_reader import (
    EXACT_PASSES,
    MAX_CONTRACTS,
    MAX_LOG_BYTES,
    MAX_STAGE_NAMES,
    MORE_CONTRACTS,
    LastStarted,
    PassTimes,
    from_events,
)
from kernodeck_diagnostic.trial.stages import first_and_later, last_started, read_beacon
from kernodeck_diagnostic.untrusted_json import (
    NotARegularFile,
    Tally,
    TooLarge,
    json_objects,
    read_regular,
    read_tail,
)
from trial_helpers import only_attempt, run_app

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, sockets, SIGALRM")
COMMAND_LIMIT_S = 60  # a command's child is killed past this: a hang fails, never blocks
CALL_LIMIT_S = 10  # an in-process read is interrupted past this

KILLED = """
    import os, signal
    from kernodeck_diagnostic import Trial

    with Trial("runs", params={"batch": 8}) as trial:
        with trial.stage("load_weights"):
            pass
        for step in trial.passes(3):
            with trial.stage("compute"):
                if step == 1:
                    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real attempt folder a SIGKILL left: events.jsonl and stage.bin, no attempt.json."""
    work = tmp_path_factory.mktemp("killed")
    run_app(sys.executable, work, KILLED)
    folder = only_attempt(work / "runs")
    assert sorted(path.name for path in folder.iterdir()) == ["events.jsonl", "stage.bin"]
    return folder


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in this thread after ``seconds`` (a blocked ``open()`` included)."""
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still reading after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", *args],
                          capture_output=True, text=True, timeout=COMMAND_LIMIT_S, check=False,
                          stdin=subprocess.DEVNULL,
                          env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}))


def _plant(folder: Path, name: str, kind: str) -> Path:
    """``name`` in ``folder`` replaced by a thing of ``kind`` that no reader may wait on."""
    path = folder / name
    if path.exists():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        here = os.getcwd()
        os.chdir(folder)  # bound by its name alone: a socket's path is short (108 bytes)
        try:
            server.bind(name)
        finally:
            os.chdir(here)
            server.close()  # the name stays: a socket file nobody listens on
    elif kind == "folder":
        path.mkdir()
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    return path


def _copy(killed: Path, tmp_path: Path) -> Path:
    attempt = tmp_path / "runs" / killed.name
    shutil.copytree(killed, attempt)
    return attempt


# -- each file kind swapped for a FIFO, each consumer --------------------------------------------

CONSUMERS = ("compare", "summarize", "open_attempt", "summarize_rows", "ramp")


def _consume(consumer: str, attempt: Path) -> Any:
    """What ``consumer`` makes of the attempt folder (the command's exit status and output)."""
    if consumer == "compare":
        done = _tool("compare", str(attempt), str(attempt))
        return done.returncode, done.stdout, done.stderr
    if consumer == "summarize":
        done = _tool("summarize", str(attempt), "--format", "json")
        return done.returncode, done.stdout, done.stderr
    with deadline(CALL_LIMIT_S):
        if consumer == "open_attempt":
            try:
                return open_attempt(attempt).document
            except ValueError as error:
                return str(error)
        if consumer == "summarize_rows":
            return rows_of(str(attempt / "events.jsonl"), "events.jsonl")
        return run_records(str(attempt.parent))  # the ramp's evidence, as the judge reads it


@posix_only
@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_fifo_at_stage_bin_is_not_waited_on_the_attempt_is_read_from_its_log(
        killed: Path, tmp_path: Path, consumer: str) -> None:
    attempt = _copy(killed, tmp_path)
    _plant(attempt, "stage.bin", "fifo")
    found = _consume(consumer, attempt)
    if consumer in ("compare", "summarize"):
        status, out, err = found
        # compare: the same; summarize: an attempt that never ended, no failure in its log, is
        # inconclusive (the judge: no evidence, no pass)
        assert status == (0 if consumer == "compare" else 33), err
        assert "internal error" not in err.lower()
        assert "compute" in out  # the stage it was in, from its log
    elif consumer == "open_attempt":
        assert isinstance(found, dict)
        assert (found["status"], found["last_started_stage"]) == ("unfinished", "compute")
        assert found["last_started_open"] is None  # the beacon was not read: open unknown
    elif consumer == "summarize_rows":
        assert isinstance(found, list)
        assert found[0]["last_started_stage"] == "compute"
    else:
        assert [(record.source, record.last_started_stage) for record in found] == [
            ("events.jsonl", "compute")]


@posix_only
@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_fifo_at_events_jsonl_is_not_waited_on(killed: Path, tmp_path: Path,
                                                 consumer: str) -> None:
    attempt = _copy(killed, tmp_path)
    _plant(attempt, "events.jsonl", "fifo")
    found = _consume(consumer, attempt)
    if consumer in ("compare", "summarize"):
        status, _, err = found
        assert status not in (0, 1), err  # no attempt to read: a usage error or nothing read
        assert "internal error" not in err.lower()
    elif consumer == "open_attempt":
        assert isinstance(found, str)  # ValueError: no attempt this tool can read
    elif consumer == "summarize_rows":
        assert found is None
    else:  # a Trial folder nothing of which can be read: said, never skipped (the judge's 14c)
        assert [(record.name, record.unreadable) for record in found] == [(attempt.name, True)]


@posix_only
@pytest.mark.parametrize("consumer", CONSUMERS)
def test_a_fifo_at_attempt_json_is_not_waited_on(killed: Path, tmp_path: Path,
                                                 consumer: str) -> None:
    """A FIFO where a finished attempt keeps ``attempt.json``: refused as not a regular file;
    ``summarize`` and ``ramp`` fall back on the log beside it."""
    attempt = _copy(killed, tmp_path)
    _plant(attempt, "attempt.json", "fifo")
    found = _consume(consumer, attempt)
    if consumer == "compare":
        status, _, err = found
        assert status == 2, err
        assert "not a regular file" in err
    elif consumer == "summarize":
        status, out, err = found
        assert status == 23, err  # nothing read (its log is read only without attempt.json)
        assert json.loads(out)["unreadable"][0]["reason"] == "not_a_file"
    elif consumer == "open_attempt":
        assert isinstance(found, str)
        assert "not a regular file" in found
    elif consumer == "summarize_rows":
        assert found is not None  # the log beside it, read as the killed attempt
    else:
        assert [record.source for record in found] == ["events.jsonl"]


@posix_only
@pytest.mark.parametrize("kind", ["socket", "folder", "dev_zero"])
def test_a_socket_a_folder_or_a_link_to_dev_zero_at_stage_bin_is_no_beacon(
        killed: Path, tmp_path: Path, kind: str) -> None:
    attempt = _copy(killed, tmp_path)
    beacon = _plant(attempt, "stage.bin", kind)
    with deadline(CALL_LIMIT_S):
        assert read_beacon(str(beacon)) is None
        document = open_attempt(attempt).document
    assert document["last_started_stage"] == "compute"
    assert document["last_started_open"] is None


@posix_only
def test_a_link_at_stage_bin_to_a_real_beacon_is_not_followed(killed: Path,
                                                             tmp_path: Path) -> None:
    """A Trial never makes a link in its folder: one there was planted, and is not read."""
    attempt = _copy(killed, tmp_path)
    real = tmp_path / "elsewhere.bin"
    shutil.copy(attempt / "stage.bin", real)
    assert read_beacon(str(real)) is not None
    (attempt / "stage.bin").unlink()
    (attempt / "stage.bin").symlink_to(real)
    assert read_beacon(str(attempt / "stage.bin")) is None


def test_the_streamed_last_stage_is_the_listed_one(killed: Path) -> None:
    """``LastStarted``, fed one event at a time, gives what ``stages.last_started`` gives of the
    whole list (the beacon's stage named by the log)."""
    path = str(killed / "events.jsonl")
    events = list(log_reader.events(path))
    streamed = LastStarted(path)
    for event in events:
        streamed.add(event)
    assert streamed.result() == last_started(events, path) == ("compute", 1, True)


# -- the reader's bounds -------------------------------------------------------------------------

@posix_only
def test_read_regular_refuses_what_is_no_regular_file_or_too_large(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with deadline(CALL_LIMIT_S):
        with pytest.raises(NotARegularFile):
            read_regular(str(fifo), 100)
        with pytest.raises(NotARegularFile):  # refused by the caller's mode, before the open
            read_regular(str(fifo), 100, mode=os.stat(fifo).st_mode)
        with pytest.raises(NotARegularFile):
            read_regular(str(tmp_path), 100)
        with pytest.raises(NotARegularFile):
            read_tail(str(fifo), 100)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 1000)
    with pytest.raises(TooLarge):
        read_regular(str(big), 999)
    assert read_regular(str(big), 1000) == b"x" * 1000
    assert read_regular(str(big), 10, cut=True) == b"x" * 10
    assert read_tail(str(big), 10) == (b"x" * 10, 1000)
    link = tmp_path / "link"
    link.symlink_to(big)
    assert read_regular(str(link), 1000) == b"x" * 1000  # a file the user names: followed
    with pytest.raises(NotARegularFile):
        read_regular(str(link), 1000, follow_links=False)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_a_proc_file_whose_size_says_zero_is_read_to_its_end() -> None:
    assert os.stat("/proc/self/status").st_size == 0
    text = read_regular("/proc/self/status", 64 * 1024, cut=True)
    assert b"Threads:" in text


def _log(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def test_json_objects_reads_the_head_and_the_tail_of_a_log_too_large(tmp_path: Path) -> None:
    """A window of ``max_bytes``: the first lines and the last ones; each line a cut touches is
    skipped, the gap counted as unread, never guessed at."""
    path = tmp_path / "log.jsonl"
    lines = [json.dumps({"n": n, "pad": "x" * 30}).encode() for n in range(100)]
    _log(path, lines)
    tally = Tally()
    read = list(json_objects(str(path), tally=tally, max_bytes=1000, tail_bytes=400))
    numbers = [item["n"] for item in read]
    assert (numbers[0], numbers[-1]) == (0, 99)
    assert numbers == sorted(numbers)
    assert 10 < len(numbers) < 30
    assert not tally.whole
    assert tally.unread_bytes == path.stat().st_size - 1000
    assert tally.skipped == 2  # the line cut at the head's end, the one cut at the tail's start
    whole = Tally()
    assert len(list(json_objects(str(path), tally=whole))) == 100
    assert whole.whole


def test_json_objects_skips_long_lines_garbage_and_non_objects(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _log(path, [b'{"a": 1}', b"x" * 5000, b"not json", b"[1, 2]", b"", b'{"b": ' + b"9" * 30
                + b"}", b"[" * 100 + b"]" * 100, b'{"c": 3}'])
    tally = Tally()
    read = list(json_objects(str(path), tally=tally, max_line_bytes=1000))
    assert read == [{"a": 1}, {"c": 3}]
    assert (tally.objects, tally.skipped) == (2, 5)  # the empty line is no line skipped


def test_pass_times_are_exact_then_within_one_percent() -> None:
    durations = {index: 1.0 + (index * 7919 % 997) / 10 for index in range(3000)}
    few = PassTimes()
    for index in range(50):
        few.add(index, durations[index])
    assert few.summary() == first_and_later({index: durations[index] for index in range(50)})
    many = PassTimes()
    for index, ms in durations.items():
        many.add(index, ms)
    exact = first_and_later(durations)
    found = many.summary()
    assert found["first_pass_ms"] == exact["first_pass_ms"]
    later, want = found["later_passes"], exact["later_passes"]
    assert len(durations) - 1 > EXACT_PASSES
    for key in ("count", "min_ms", "max_ms", "slowest_pass"):
        assert later[key] == want[key], key
    assert math.isclose(later["median_ms"], statistics.median(sorted(durations.values())[1:]),
                        rel_tol=0.01)
    assert math.isclose(later["p95_ms"], want["p95_ms"], rel_tol=0.01)


def test_past_the_contract_bound_a_failure_is_still_a_failure(tmp_path: Path) -> None:
    """A log that checks more contracts than are kept one by one: a name that failed once
    fails, a new name that fails past the bound fails in the entry that stands for them."""
    path = tmp_path / "events.jsonl"
    lines = [{"event": "attempt_started", "attempt_id": "x"}]
    lines += [{"event": "contract_checked", "name": f"c{n}", "passed": True}
              for n in range(MAX_CONTRACTS)]
    lines += [{"event": "contract_checked", "name": "c3", "passed": False, "detail": "late"},
              {"event": "contract_checked", "name": "new", "passed": False, "detail": "past"}]
    _log(path, [json.dumps(line).encode() for line in lines])
    document = from_events(str(path))
    assert document is not None
    contracts = {item["name"]: item for item in document["contracts"]}
    assert len(document["contracts"]) == MAX_CONTRACTS + 1
    assert contracts["c3"]["passed"] is False
    assert contracts["c3"]["detail"] == "late"
    assert contracts[MORE_CONTRACTS]["passed"] is False
    assert document["log_read"]["whole"] is True  # folded, nothing lost


def test_past_the_stage_name_bound_names_are_dropped_and_said(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = [{"event": "attempt_started", "attempt_id": "x"}]
    lines += [{"event": "stage_completed", "stage": f"s{n}", "pass_index": None,
               "duration_ms": 1.0} for n in range(MAX_STAGE_NAMES + 10)]
    _log(path, [json.dumps(line).encode() for line in lines])
    document = from_events(str(path))
    assert document is not None
    assert len({item["name"] for item in document["stages"]}) == MAX_STAGE_NAMES
    assert document["last_completed_stage"] == f"s{MAX_STAGE_NAMES + 9}"  # every event counted
    assert document["log_read"] == {"whole": False, "skipped_lines": 0, "unread_bytes": 0,
                                    "names_dropped": 10}


def test_a_log_not_read_whole_is_never_a_pass(tmp_path: Path) -> None:
    """A line the reader skipped (here one longer than an event's bound) may have been the
    failure: the log says so (``log_read``), and an attempt told by its log alone never ended,
    so the judge never passes it, even when its process exited 0."""
    attempt = tmp_path / "run" / "20261206T000000Z-aaaaaa"
    attempt.mkdir(parents=True)
    _log(attempt / "events.jsonl", [
        json.dumps({"event": "attempt_started", "attempt_id": "x"}).encode(),
        b'{"event": "stage_failed", "stage": "compute", "error": {"type": "E", "message": "'
        + b"m" * (log_reader.MAX_EVENT_LINE_BYTES + 1) + b'"}}'])
    document = from_events(str(attempt / "events.jsonl"))
    assert document is not None
    assert document["log_read"]["skipped_lines"] == 1
    records = run_records(str(tmp_path / "run"))
    assert [(record.source, record.ended) for record in records] == [("events.jsonl", False)]
    assert judge(records, Process(exit_code=0)).outcome != PASSED


# -- a log of any size, in bounded memory ----------------------------------------------------------

MEASURE = textwrap.dedent("""
    import json, resource, sys, tracemalloc
    from kernodeck_diagnostic.trial.log_reader import from_events
    tracemalloc.start()
    document = from_events(sys.argv[1])
    peak = tracemalloc.get_traced_memory()[1]
    print(json.dumps({"peak": peak, "passes": document["passes"],
                      "log_read": document["log_read"],
                      "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")


def _write_long_log(path: Path, megabytes: float, stages: int = 40) -> int:
    """A Trial's log of ``megabytes`` MB: per pass its start, the calls of ``stages`` stages
    and its end with each stage's time; returns the passes."""
    memory = {"rss_bytes": 10**9, "rss_peak_bytes": 2 * 10**9, "device": None,
              "allocated_bytes": None, "reserved_bytes": None, "peak_allocated_bytes": None}
    names = [f"stage_{n}" for n in range(stages)]
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps({"event": "attempt_started", "attempt_id": "x", "params": {}})
                   + "\n")
        index = 0
        while file.tell() < megabytes * 2**20:
            file.write(json.dumps({"event": "pass_started", "pass_index": index}) + "\n")
            for name in names:
                file.write(json.dumps({"event": "stage_completed", "stage": name,
                                       "pass_index": index, "status": "completed",
                                       "duration_ms": 1.0 + index % 7, "memory": memory}) + "\n")
            file.write(json.dumps({"event": "pass_completed", "pass_index": index,
                                   "duration_ms": 50.0 + index % 13, "memory": memory,
                                   "stage_ms": {name: 1.0 + index % 7 for name in names}})
                       + "\n")
            index += 1
    return index


@pytest.mark.long
def test_a_log_larger_than_the_bound_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """A 48 MiB log (over MAX_LOG_BYTES) of 40 stages: the reader's peak of Python memory stays
    a small fraction of what it reads (the log was held whole, and each of its events, before:
    hundreds of MB); the head and the tail are read, the gap said."""
    path = tmp_path / "events.jsonl"
    passes = _write_long_log(path, 48)
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True,
                          text=True, timeout=600, check=False,
                          env=clean_env({"PYTHONPATH": str(SRC)}))
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["peak"] < 16 * 2**20, found  # the log read holds 32 MiB of it
    assert found["log_read"]["whole"] is False
    assert found["log_read"]["unread_bytes"] == path.stat().st_size - MAX_LOG_BYTES
    assert 0 < found["passes"]["completed"] < passes
    assert found["passes"]["later_passes"]["count"] > EXACT_PASSES


def test_a_log_of_more_passes_than_kept_exactly_is_read_in_bounded_memory(
        tmp_path: Path) -> None:
    """Under the byte bound, a 2 MiB log with more passes than are kept one by one: the peak of
    Python memory stays under 6 MiB (64 MiB before: the log read whole, then all its events
    held)."""
    path = tmp_path / "events.jsonl"
    passes = _write_long_log(path, 2, stages=4)
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True,
                          text=True, timeout=300, check=False,
                          env=clean_env({"PYTHONPATH": str(SRC)}))
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["log_read"]["whole"] is True
    assert found["passes"]["completed"] == passes > EXACT_PASSES
    assert found["peak"] < 6 * 2**20, found


@posix_only
def test_a_link_at_an_attempt_folders_attempt_json_is_not_followed(tmp_path: Path) -> None:
    """``attempt.json`` looked up in a folder given is read only as a file of its own; the same
    file named by the user is read through a link, as any reader does."""
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps({"format": "kernodeck-attempt", "version": 1,
                                "status": "completed"}), encoding="utf-8")
    attempt = tmp_path / "20261206T000000Z-aaaaaa"
    attempt.mkdir()
    (attempt / "attempt.json").symlink_to(real)
    with pytest.raises(ValueError, match="not a regular file"):
        open_attempt(attempt)
    assert open_attempt(attempt / "attempt.json").status == "completed"
    assert open_attempt(real).status == "completed"


@pytest.mark.long
def test_summarize_reads_an_event_log_larger_than_a_report_as_an_attempt(tmp_path: Path) -> None:
    """An ``events.jsonl`` over a report's 8 MiB is an attempt's log, read within its own
    bounds (it was one unreadable file, "too large")."""
    from kernodeck_diagnostic.ramp.rows import read_too
    from kernodeck_diagnostic.report.load import MAX_REPORT_BYTES
    from kernodeck_diagnostic.report.summary import Summary, collect
    from kernodeck_diagnostic.report.summary_render import keep

    attempt = tmp_path / "20261206T000000Z-aaaaaa"
    attempt.mkdir()
    passes = _write_long_log(attempt / "events.jsonl", 9, stages=1)
    assert (attempt / "events.jsonl").stat().st_size > MAX_REPORT_BYTES
    summary = Summary(keep("json"), rows_of).read(collect([str(tmp_path)], also=read_too))
    assert summary.unreadable == []
    # read as the attempt it is (never ended: the judge's inconclusive), not an unreadable file
    assert [row["status"] for row in summary.attempts] == ["inconclusive (unfinished)"]
    assert passes > EXACT_PASSES
