"""``kernodeck-diagnostic resume-check`` run as a user runs it (the zipapp), over real CPU torch
applications that compute one small result per id (real matrix products, no sleeps) and write it:

- through ``OutputLedger``, skipping the ids already done: intact;
- through its own writer of the ledger's format, never asking which ids are done (an
  ``OutputLedger`` refuses an id it holds): the duplicated ids, named;
- through a buffered file it never flushes, ignoring Ctrl-C, with its own "done" checkpoint:
  stopped by SIGTERM after the grace period, the records still in its buffer are lost, and named.

Then plain Python applications (real hashing work, real signals, no torch: the fast tier) for each
verdict of its own exit status: a first run that finished its work while being stopped
(inconclusive), records of the wrong dimension or failing the user's own check (a bad record), a
second run that fails, each stop signal, a ledger verified without running anything, garbage and a
misplaced header named as what they are, and a ledger whose folder does not exist.

Last, the false passes of issue 42, each a real program run twice (slow): a program that starts
over (truncating its output, or renaming a temporary file over it), records buffered while
"done" is durable (lost to the default hard stop), an output file written after ``append``
(found by ``--record-check`` and examples/resume_record_check.py), a second run that hangs, a
duplicate the ledger refuses, a first run that crashed by itself. Every branch of the verdict is
also pinned without running anything, in tests/test_resume_verdict.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import envs
from conftest import ROOT, SRC, Result, clean_env, run_tool

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")]

COUNT = 100
# The work of one id: real matrix products on the CPU, on one thread.
WORK = """
import os, signal, sys
import torch
torch.set_num_threads(1)
ids = [f"doc-{i}" for i in range(int(os.environ["APP_COUNT"]))]
weights = torch.randn(256, 256, generator=torch.Generator().manual_seed(0)) / 16
def compute(item):
    x = torch.full((64, 256), float(len(item)))
    for _ in range(400):  # some 25 ms of one core's work
        x = torch.tanh(x @ weights)
    return {"dim": 256, "norm": float(x.norm()), "head": [float(v) for v in x[0, :12]]}
"""
USES_LEDGER = WORK + """
from kernodeck_diagnostic import OutputLedger
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item in done:
        continue
    ledger.append(item, compute(item))
"""
# A writer of its own (OutputLedger refuses an id it already holds), in the ledger's format.
OWN_WRITER = """
import json, os
def append(path, item, record):
    with open(path, "a", encoding="utf-8") as file:
        if file.tell() == 0:
            file.write(json.dumps({"format": "kernodeck-ledger", "version": 1,
                                   "expected_ids": ids}) + "\\n")
        file.write(json.dumps({"id": item, "record": record}) + "\\n")
        file.flush()
        os.fsync(file.fileno())
"""
NEVER_SKIPS = WORK + OWN_WRITER + """
for item in ids:
    append(sys.argv[1], item, compute(item))
"""
# Ctrl-C asks it to stop: it finishes the record at hand, then waits for a loader worker that
# never exits (only SIGTERM ends it). Its output goes through a 1 MiB buffer it never flushes.
NEVER_FLUSHES = """
import signal
stopping = []
signal.signal(signal.SIGINT, lambda signum, frame: stopping.append(signum))
""" + WORK + """
import json
checkpoint = sys.argv[1] + ".done"
done = set(open(checkpoint).read().split()) if os.path.exists(checkpoint) else set()
out = open(sys.argv[1], "a", buffering=2**20)
with open(checkpoint, "a") as marks:
    for item in ids:
        if item in done:
            continue
        out.write(json.dumps({"id": item, "record": compute(item)}) + "\\n")
        marks.write(item + "\\n")  # "done": the application believes it is written
        marks.flush()
        os.fsync(marks.fileno())
        if stopping:
            signal.pause()
out.close()
"""


def _check(pyz: Path, tmp_path: Path, source: str, *options: str,
           count: int = COUNT) -> tuple[Result, Path]:
    app, ledger = tmp_path / "app.py", tmp_path / "out" / "results.jsonl"
    app.write_text(source)
    ledger.parent.mkdir()
    torch_python = envs.python_of(envs.torch_cpu())
    env = clean_env({"LC_ALL": "C.UTF-8", "APP_COUNT": str(count), "PYTHONPATH": str(SRC)})
    text = run_tool(sys.executable, pyz, ["resume-check", "--ledger", str(ledger), *options,
                                          "--", str(torch_python), str(app), str(ledger)],
                    env=env)
    return text, ledger


def _ids(line: str) -> list[str]:
    return [part.split(" (x")[0] for part in line.split(": ", 1)[1].split(", ")]


def _complete_ids(ledger: Path) -> list[str]:
    found = []
    for raw in ledger.read_bytes().split(b"\n"):
        try:
            document = json.loads(raw)
        except ValueError:
            continue
        if isinstance(document, dict) and "id" in document:
            found.append(document["id"])
    return found


@pytest.mark.slow
def test_an_application_that_uses_the_ledger_resumes_intact(pyz: Path, tmp_path: Path) -> None:
    result, ledger = _check(pyz, tmp_path, USES_LEDGER, "--stop-after-records", "10",
                            "--format", "json")
    verdict = json.loads(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdict["intact"] is True
    assert verdict["stopped"] is True
    assert 10 <= verdict["records_at_stop"] < COUNT  # really stopped mid-run
    assert verdict["expected"] == COUNT  # from the ledger's header
    assert (verdict["lost"], verdict["duplicated"], verdict["half_records"]) == ([], [], [])
    assert sorted(_complete_ids(ledger)) == sorted(f"doc-{i}" for i in range(COUNT))
    assert "first run stopped with" in result.stderr


@pytest.mark.slow
def test_an_application_that_never_skips_done_work_has_its_duplicates_named(
        pyz: Path, tmp_path: Path) -> None:
    result, ledger = _check(pyz, tmp_path, NEVER_SKIPS, "--stop-after-records", "10")
    assert result.returncode == 27, result.stdout + result.stderr  # RESUME_RECORDS_DUPLICATED
    lines = result.stdout.splitlines()
    assert lines[0] == "RESUME FAILED (exit 27, RESUME_RECORDS_DUPLICATED)"
    duplicated = next(line for line in lines if line.startswith("  duplicated ("))
    named = _ids(duplicated)
    # Every id the first run wrote was written again: the first ones, in order, twice each.
    assert named == [f"doc-{i}" for i in range(len(named))]
    assert len(named) >= 10
    assert all(f"{item} (x2)" in duplicated for item in named)
    written = _complete_ids(ledger)
    assert all(written.count(item) == 2 for item in named)
    assert not any(line.startswith("  lost (") for line in lines)


@pytest.mark.slow
def test_an_application_that_never_flushes_has_its_lost_ids_named(pyz: Path,
                                                                  tmp_path: Path) -> None:
    count = 200  # more work (some 5 s) than the 3 s before the stop
    expected = tmp_path / "ids.txt"
    expected.write_text("".join(f"doc-{i}\n" for i in range(count)))
    result, ledger = _check(pyz, tmp_path, NEVER_FLUSHES, "--stop-after", "3",
                            "--stop-signal", "SIGINT", "--grace", "1",
                            "--expect-ids", str(expected), "--format", "json", count=count)
    assert result.returncode == 26, result.stdout + result.stderr  # RESUME_RECORDS_LOST
    verdict = json.loads(result.stdout)
    assert (verdict["intact"], verdict["stopped"], verdict["expected"]) == (False, True, count)
    lost = verdict["lost"]
    # Everything the first run did: marked done (so the second run skipped it), never written.
    assert lost == [f"doc-{i}" for i in range(len(lost))]
    assert len(lost) >= 1
    marked = (tmp_path / "out" / "results.jsonl.done").read_text().split()
    written = set(_complete_ids(ledger))
    assert all(item in marked and item not in written for item in lost)
    assert written == {f"doc-{i}" for i in range(len(lost), count)}
    assert (verdict["duplicated"], verdict["half_records"]) == ([], [])


def test_the_ledger_must_not_exist_before_the_check(pyz: Path, tmp_path: Path) -> None:
    ledger = tmp_path / "results.jsonl"
    ledger.write_text('{"id": "x"}\n')
    result = run_tool(sys.executable, pyz, ["resume-check", "--ledger", str(ledger),
                                            "--stop-after", "1", "--", sys.executable, "-c", ""],
                      env=clean_env({"LC_ALL": "C.UTF-8"}))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("kernodeck-diagnostic resume-check: error: the ledger already "
                             "exists: the check starts from an empty ledger (move it aside) "
                             "(see --help)\n")


# -- plain Python applications: each verdict and its own exit status -------------------------------

# The work of one id: real hashing, some milliseconds of one core; a unit vector of 256 values.
PLAIN = """
import hashlib, math, os, signal, sys
from kernodeck_diagnostic import OutputLedger
ids = [f"doc-{i}" for i in range(int(os.environ["APP_COUNT"]))]
def compute(item, dim=256):
    digest = item.encode()
    for _ in range(4000):
        digest = hashlib.sha256(digest).digest()
    values = [1.0 + b for b in (digest * (dim // 32))[:dim]]
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]
def mark(name):
    open(os.path.join(os.environ["APP_MARKS"], name), "a").write(f"{os.getpid()}\\n")
mark("started")
"""
# Ignores Ctrl-C and SIGTERM, finishes all its work, then waits (a pool it never joins) until
# it is killed: the stop came too late to interrupt anything.
FINISHES_WHILE_STOPPED = PLAIN + """
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
todo = [item for item in ids if item not in done]
for item in todo:
    ledger.append(item, {"vector": compute(item)})
if todo:
    signal.pause()
"""
# Resumes correctly, but a bug cuts two vectors to 128 of their 256 dimensions, and one is NaN;
# the ledger's header declares the dimension, and where the vector is in a record.
CUTS_VECTORS = PLAIN + """
ledger = OutputLedger(sys.argv[1], expected_ids=ids, vector_dim=256, vector_field="vector")
done = ledger.done_ids()
for item in ids:
    if item in done:
        continue
    vector = compute(item)
    if item in ("doc-3", "doc-17"):
        vector = vector[:128]
    if item == "doc-20":
        vector[5] = float("nan")
    ledger.append(item, {"vector": vector})
"""
# Resumes correctly; one vector is not of unit norm (the user's own check finds it).
SCALES_ONE = PLAIN + """
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item not in done:
        vector = compute(item)
        ledger.append(item, {"vector": [2 * v for v in vector] if item == "doc-9" else vector})
"""
USER_CHECK = """
import math

def unit_norm(record_id, record):
    norm = math.sqrt(sum(v * v for v in record["vector"]))
    assert abs(norm - 1) < 1e-6, f"norm {norm:.2f}, expected 1"
"""
# Resumes correctly, and says which signals reached it.
RESUMES = PLAIN + """
for name in ("SIGINT", "SIGTERM"):
    signal.signal(getattr(signal, name), lambda signum, frame: (mark(signal.Signals(signum).name),
                                                                sys.exit(1)))
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item not in done:
        ledger.append(item, {"vector": compute(item)})
"""
# The second run writes one record, then fails.
FAILS_WHEN_RESUMED = PLAIN + """
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item not in done:
        ledger.append(item, {"vector": compute(item)})
        if done:
            sys.exit("resumed: the cache is corrupt")
"""
PLAIN_NEVER_SKIPS = PLAIN + OWN_WRITER + """
for item in ids:
    append(sys.argv[1], item, {"vector": compute(item)})
"""


def _plain(pyz: Path, tmp_path: Path, source: str, *options: str, count: int = 40,
           ledger: Path | None = None) -> tuple[Result, Path]:
    app, marks = tmp_path / "app.py", tmp_path / "marks"
    ledger = ledger or tmp_path / "out" / "results.jsonl"
    app.write_text(source)
    marks.mkdir(exist_ok=True)
    ledger.parent.mkdir(exist_ok=True)
    env = clean_env({"LC_ALL": "C.UTF-8", "APP_COUNT": str(count), "PYTHONPATH": str(SRC),
                     "APP_MARKS": str(marks)})
    text = run_tool(sys.executable, pyz, ["resume-check", "--ledger", str(ledger), *options,
                                          "--", sys.executable, str(app), str(ledger)],
                    env=env, cwd=tmp_path)
    return text, ledger


def _marks(tmp_path: Path, name: str) -> int:
    path = tmp_path / "marks" / name
    return len(path.read_text().split()) if path.exists() else 0


def test_a_first_run_that_finished_its_work_while_stopped_is_inconclusive(
        pyz: Path, tmp_path: Path) -> None:
    """Before: "RESUME OK", intact, exit 0, records_at_stop 5 (when the stop was decided), though
    the program ignored the stop, wrote all 40 records, and the second run had nothing to do."""
    result, ledger = _plain(pyz, tmp_path, FINISHES_WHILE_STOPPED, "--stop-after-records", "5",
                            "--stop-signal", "SIGINT", "--grace", "1", "--format", "json")
    assert len(_complete_ids(ledger)) == 40
    assert result.returncode == 29, result.stdout + result.stderr  # RESUME_INCONCLUSIVE
    verdict = json.loads(result.stdout)
    assert (verdict["intact"], verdict["code"], verdict["exit_code"]) == (
        False, "RESUME_INCONCLUSIVE", 29)
    assert verdict["records_at_stop"] == 40  # the ledger when the process really ended
    assert verdict["remaining_at_stop"] == 0
    assert verdict["first_run_signal"] == "SIGKILL"  # it ignored SIGINT and SIGTERM
    assert set(verdict["inconclusive"]) == {"first_run_finished", "second_run_idle"}
    (tmp_path / "text").mkdir()
    text, _ = _plain(pyz, tmp_path / "text", FINISHES_WHILE_STOPPED, "--stop-after-records", "5",
                     "--stop-signal", "SIGINT", "--grace", "1")
    assert text.returncode == 29
    lines = text.stdout.splitlines()
    assert lines[0] == "RESUME INCONCLUSIVE (exit 29, RESUME_INCONCLUSIVE)"
    assert "  the first run had finished its work when it ended: 40 record(s), no expected id " \
           "left; nothing was resumed (stop it earlier, or give it more work)" in lines


def test_records_of_the_wrong_dimension_are_bad_records(pyz: Path, tmp_path: Path) -> None:
    """Before: OutputLedger had no dimension; a vector cut to 128 of 256 dimensions passed."""
    result, _ = _plain(pyz, tmp_path, CUTS_VECTORS, "--stop-after-records", "5",
                       "--format", "json")
    assert result.returncode == 28, result.stdout + result.stderr  # RESUME_BAD_RECORD
    verdict = json.loads(result.stdout)
    assert (verdict["lost"], verdict["duplicated"]) == ([], [])
    assert [(bad["id"], bad["problem"]) for bad in verdict["bad_records"]] == [
        ("doc-3", "wrong_dimension"), ("doc-17", "wrong_dimension"), ("doc-20", "non_finite")]
    (tmp_path / "text").mkdir()
    text, _ = _plain(pyz, tmp_path / "text", CUTS_VECTORS, "--stop-after-records", "5")
    assert text.returncode == 28
    assert ("  bad records (3): doc-3 (wrong_dimension: 128, expected 256), doc-17 "
            "(wrong_dimension: 128, expected 256), doc-20 (non_finite)") in text.stdout.splitlines()


def test_the_users_record_check_names_the_records_that_fail_it(pyz: Path,
                                                                tmp_path: Path) -> None:
    (tmp_path / "checks.py").write_text(USER_CHECK)  # imported from the current folder
    result, _ = _plain(pyz, tmp_path, SCALES_ONE, "--stop-after-records", "5",
                       "--record-check", "checks:unit_norm", "--format", "json")
    assert result.returncode == 28, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["bad_records"] == [{"id": "doc-9", "line": 11, "problem": "record_check",
                                       "detail": "AssertionError: norm 2.00, expected 1"}]
    assert verdict["records_checked"] == 40


def test_a_record_check_that_cannot_be_imported_is_a_usage_error_before_anything_runs(
        pyz: Path, tmp_path: Path) -> None:
    result, ledger = _plain(pyz, tmp_path, RESUMES, "--stop-after-records", "5",
                            "--record-check", "no_such_module:check")
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert "--record-check" in result.stderr
    assert "No module named 'no_such_module'" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert _marks(tmp_path, "started") == 0
    assert not ledger.exists()


@pytest.mark.parametrize(("stop_signal", "seen"), [("SIGINT", "SIGINT"), ("SIGTERM", "SIGTERM"),
                                                    ("SIGKILL", None), (None, None)])
def test_the_stop_signal_is_the_one_asked_for(pyz: Path, tmp_path: Path, stop_signal: str | None,
                                              seen: str | None) -> None:
    """None: the default, a hard stop (SIGKILL at once), as a preemption or the OOM killer."""
    asked = ["--stop-signal", stop_signal] if stop_signal else []
    result, _ = _plain(pyz, tmp_path, RESUMES, "--stop-after-records", "5", *asked,
                       "--format", "json", count=80)
    assert result.returncode == 0, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["stop_signal"] == (stop_signal or "SIGKILL")
    assert verdict["intact"] is True
    assert 5 <= verdict["records_at_stop"] < 80
    for name in ("SIGINT", "SIGTERM"):
        assert _marks(tmp_path, name) == (1 if name == seen else 0)
    if seen is None:
        assert verdict["first_run_signal"] == "SIGKILL"


def test_a_second_run_that_fails_is_its_own_status(pyz: Path, tmp_path: Path) -> None:
    result, _ = _plain(pyz, tmp_path, FAILS_WHEN_RESUMED, "--stop-after-records", "5")
    assert result.returncode == 30, result.stdout + result.stderr  # RESUME_RUN_FAILED
    lines = result.stdout.splitlines()
    assert lines[0] == "RESUME FAILED (exit 30, RESUME_RUN_FAILED)"
    assert "  the second run did not end well (exit 1): resumed: the cache is corrupt" in lines


def test_duplicates_of_a_plain_application_are_their_own_status(pyz: Path,
                                                                 tmp_path: Path) -> None:
    result, _ = _plain(pyz, tmp_path, PLAIN_NEVER_SKIPS, "--stop-after-records", "5")
    assert result.returncode == 27, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == "RESUME FAILED (exit 27, RESUME_RECORDS_DUPLICATED)"


def test_a_ledger_whose_folder_is_missing_is_refused_before_anything_runs(
        pyz: Path, tmp_path: Path) -> None:
    """Before: both runs ran, the program failed twice on the missing folder, and the verdict
    was "RESUME FAILED" (exit 1)."""
    app = tmp_path / "app.py"
    app.write_text(RESUMES)
    (tmp_path / "marks").mkdir()
    ledger = tmp_path / "missing" / "results.jsonl"
    result = run_tool(sys.executable, pyz, [
        "resume-check", "--ledger", str(ledger), "--stop-after-records", "5", "--",
        sys.executable, str(app), str(ledger)], env=clean_env({
            "LC_ALL": "C.UTF-8", "APP_COUNT": "10", "PYTHONPATH": str(SRC),
            "APP_MARKS": str(tmp_path / "marks")}))
    assert (result.returncode, result.stdout) == (12, "")  # as the check's --output
    assert result.stderr == ("kernodeck-diagnostic resume-check: cannot use the ledger asked "
                             "for: its folder does not exist. Nothing was run (exit 12).\n")
    assert _marks(tmp_path, "started") == 0


# -- a ledger verified without running anything (a job preempted for real) -------------------------

def _ledger(path: Path, ids: list[str], lines: list[bytes]) -> Path:
    from kernodeck_diagnostic.ledger import OutputLedger

    OutputLedger(path, expected_ids=ids)
    with open(path, "ab") as file:
        file.write(b"".join(lines))
    return path


def _record(item: str) -> bytes:
    return json.dumps({"id": item, "record": {"n": len(item)}}).encode() + b"\n"


def _verify(pyz: Path, *options: str) -> Result:
    return run_tool(sys.executable, pyz, ["resume-check", *options],
                    env=clean_env({"LC_ALL": "C.UTF-8"}))


def test_a_ledger_is_verified_without_running_anything(pyz: Path, tmp_path: Path) -> None:
    ids = ["a", "b", "c"]
    whole = _ledger(tmp_path / "whole.jsonl", ids, [_record(i) for i in ids])
    result = _verify(pyz, "--verify-ledger", str(whole))
    assert (result.returncode, result.stdout.splitlines()[0]) == (
        0, "RESUME OK: nothing lost, nothing counted twice"), result.stderr
    twice = _ledger(tmp_path / "twice.jsonl", ids, [_record(i) for i in ("a", "b", "b", "c")])
    result = _verify(pyz, "--verify-ledger", str(twice), "--format", "json")
    assert result.returncode == 27
    verdict = json.loads(result.stdout)
    assert verdict["duplicated"] == [{"id": "b", "count": 2}]
    assert (verdict["stopped"], verdict["first_run_exit"], verdict["mode"]) == (
        None, None, "verify")
    short = _ledger(tmp_path / "short.jsonl", ids, [_record("a")])
    result = _verify(pyz, "--verify-ledger", str(short))
    assert result.returncode == 26
    assert "  lost (2): b, c" in result.stdout.splitlines()
    expected = tmp_path / "ids.txt"
    expected.write_text("a\nb\n")
    assert _verify(pyz, "--verify-ledger", str(short), "--expect-ids",
                   str(expected)).returncode == 26
    # No expected ids known: whether anything is lost cannot be said.
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_bytes(_record("a") + _record("b"))
    result = _verify(pyz, "--verify-ledger", str(unknown))
    assert result.returncode == 29
    assert result.stdout.splitlines()[0] == "RESUME INCONCLUSIVE (exit 29, RESUME_INCONCLUSIVE)"


def test_verifying_refuses_what_only_a_run_takes(pyz: Path, tmp_path: Path) -> None:
    path = _ledger(tmp_path / "l.jsonl", ["a"], [_record("a")])
    result = _verify(pyz, "--verify-ledger", str(path), "--stop-after", "3")
    assert (result.returncode, result.stdout) == (2, "")
    assert "--stop-after" in result.stderr
    result = _verify(pyz, "--verify-ledger", str(path), "--", sys.executable, "app.py")
    assert result.returncode == 2
    result = _verify(pyz, "--verify-ledger", str(tmp_path / "none.jsonl"))
    assert result.returncode == 2
    assert "--verify-ledger cannot be read: no such file or directory" in result.stderr


def test_garbage_and_a_misplaced_header_are_named_as_what_they_are(pyz: Path,
                                                                    tmp_path: Path) -> None:
    """Before: each was a "half record"."""
    path = tmp_path / "mixed.jsonl"
    header = json.dumps({"format": "kernodeck-ledger", "version": 1,
                         "expected_ids": ["a", "b"]}).encode() + b"\n"
    path.write_bytes(_record("a") + header + b"\x00\x9f\xff\xfe binary\n" + b"not json at all\n"
                     + b'{"id": "b", "rec' + _record("b") + b'{"id": "c", "reco')
    result = _verify(pyz, "--verify-ledger", str(path), "--format", "json")
    assert result.returncode == 28, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["not_records"] == [
        {"line": 2, "kind": "misplaced_header"}, {"line": 3, "kind": "binary"},
        {"line": 4, "kind": "not_json"}]
    assert verdict["half_records"] == [5, 6]  # a cut record with one after it; a cut last line
    text = _verify(pyz, "--verify-ledger", str(path)).stdout.splitlines()
    assert "  the ledger's header is on line 2, not line 1: its expected ids are not used" in text
    assert "  not records (2) at line(s): 3 (binary bytes, not UTF-8 text), 4 (text that is " \
           "not JSON)" in text


# -- the false passes of issue 42, each a real program run twice (slow) ---------------------------

# Starts over on every run: its own writer truncates the output (an --overwrite default) and
# writes every id again, each once: the ledger at the end looks perfect.
STARTS_OVER = PLAIN + OWN_WRITER + """
open(sys.argv[1], "w").close()
for item in ids:
    append(sys.argv[1], item, {"vector": compute(item)})
"""
# Starts over into a temporary file, renamed over the output at the end.
STARTS_OVER_RENAMED = PLAIN + OWN_WRITER + """
partial = sys.argv[1] + ".tmp"
open(partial, "w").close()
for item in ids:
    append(partial, item, {"vector": compute(item)})
os.replace(partial, sys.argv[1])
"""
# Records in a userspace buffer, "done" made durable per record (a progress file replaced
# atomically); SIGINT and SIGTERM end it through its finally, which flushes the buffer.
BUFFERED = PLAIN + """
import json
stopping = []
signal.signal(signal.SIGINT, lambda signum, frame: stopping.append(signum))
signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
progress = sys.argv[1] + ".progress"
done = set(open(progress).read().split()) if os.path.exists(progress) else set()
if not os.path.exists(sys.argv[1]):
    with open(sys.argv[1], "w") as header:
        header.write(json.dumps({"format": "kernodeck-ledger", "version": 1,
                                 "expected_ids": ids}) + "\\n")
out = open(sys.argv[1], "a", buffering=2**20)
try:
    for item in ids:
        if stopping:
            sys.exit(1)
        if item in done:
            continue
        # Small records: a second of them stays within the buffer, never flushed by itself.
        out.write(json.dumps({"id": item, "record": {"vector": compute(item, 32)}}) + "\\n")
        done.add(item)
        with open(progress + ".tmp", "w") as marks:
            marks.write("\\n".join(sorted(done)))
            marks.flush()
            os.fsync(marks.fileno())
        os.replace(progress + ".tmp", progress)
finally:
    out.close()
"""
# Appends the id, then writes its real output (a file per id): the wrong order.
OUTPUT_AFTER_APPEND = PLAIN + """
import hashlib, json
outputs = os.path.join(os.path.dirname(sys.argv[1]), "outputs")
os.makedirs(outputs, exist_ok=True)
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item in done:
        continue
    data = json.dumps({"id": item}).encode()  # what the output will hold, known at once
    path = os.path.join(outputs, item + ".json")
    ledger.append(item, {"output": path, "sha256": hashlib.sha256(data).hexdigest()})
    compute(item)  # the id's work, all of it after the ledger said done: a kill lands here
    open(path, "wb").write(data)
"""
# The second run waits forever on a lock the killed first run left.
HANGS_WHEN_RESUMED = PLAIN + """
import time
lock = sys.argv[1] + ".lock"
while os.path.exists(lock):
    time.sleep(0.1)
open(lock, "w").close()
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item not in done:
        ledger.append(item, {"vector": compute(item)})
os.remove(lock)
"""
# Uses OutputLedger but never asks which ids are done: the ledger refuses the first again.
NEVER_ASKS = PLAIN + """
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
for item in ids:
    ledger.append(item, {"vector": compute(item)})
"""
# Fails by itself after 3 records the first time; complete the second.
CRASHES_FIRST = PLAIN + """
crashed = os.path.join(os.environ["APP_MARKS"], "crashed")
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
done = ledger.done_ids()
for item in ids:
    if item in done:
        continue
    ledger.append(item, {"vector": compute(item)})
    if len(ledger.done_ids()) == 3 and not os.path.exists(crashed):
        open(crashed, "w").close()
        sys.exit("a bug of the first run")
"""


@pytest.mark.slow
@pytest.mark.parametrize("source", [STARTS_OVER, STARTS_OVER_RENAMED],
                         ids=["truncates", "renames_a_temporary_file"])
def test_a_program_that_starts_over_is_never_intact(pyz: Path, tmp_path: Path,
                                                    source: str) -> None:
    """Before: RESUME_INTACT, and "the second run wrote 20 records" when it rewrote all 40."""
    result, ledger = _plain(pyz, tmp_path, source, "--stop-after-records", "5",
                            "--format", "json")
    assert result.returncode == 27, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert sorted(_complete_ids(ledger)) == sorted(f"doc-{i}" for i in range(40))  # each once
    assert (verdict["duplicated"], verdict["lost"]) == ([], [])
    assert verdict["second_run_rewrote_ledger"] is True
    assert verdict["second_run_records"] == 40
    assert verdict["redone"] == [f"doc-{i}" for i in range(verdict["records_at_stop"])]
    assert verdict["records_at_stop"] >= 5
    (tmp_path / "text").mkdir()
    text, _ = _plain(pyz, tmp_path / "text", source, "--stop-after-records", "5")
    lines = text.stdout.splitlines()
    assert lines[0] == "RESUME FAILED (exit 27, RESUME_RECORDS_DUPLICATED)"
    assert any(line.startswith("  redone (") for line in lines)
    assert "  the second run did not keep the ledger as the stop left it (truncated or " \
           "replaced): it started over instead of resuming" in lines


@pytest.mark.slow
def test_records_buffered_while_done_is_durable_are_lost_to_the_default_hard_stop(
        pyz: Path, tmp_path: Path) -> None:
    """Before: the default stop (SIGINT) let the program's finally flush its buffer: intact.
    Now the default is SIGKILL, and a gentle stop is said to be one."""
    result, ledger = _plain(pyz, tmp_path, BUFFERED, "--stop-after", "1", "--format", "json",
                            count=1000)
    assert result.returncode == 26, result.stdout + result.stderr  # RESUME_RECORDS_LOST
    verdict = json.loads(result.stdout)
    assert (verdict["stop_signal"], verdict["first_run_signal"]) == ("SIGKILL", "SIGKILL")
    assert verdict["lost"]
    assert verdict["lost"] == [f"doc-{i}" for i in range(len(verdict["lost"]))]
    assert not set(verdict["lost"]) & set(_complete_ids(ledger))
    (tmp_path / "gentle").mkdir()
    gentle, _ = _plain(pyz, tmp_path / "gentle", BUFFERED, "--stop-after", "1",
                       "--stop-signal", "SIGINT", count=1000)
    assert gentle.returncode == 0, gentle.stdout + gentle.stderr
    lines = gentle.stdout.splitlines()
    assert lines[0] == ("RESUME OK after a stop by SIGINT: nothing lost, nothing redone, "
                        "nothing counted twice")
    assert "  SIGINT is a gentle stop: the program could flush what it still held; prove the " \
           "resume against a hard stop too (--stop-signal SIGKILL, the default)" in lines


@pytest.mark.slow
def test_an_output_written_after_append_is_found_by_the_record_check(
        pyz: Path, tmp_path: Path) -> None:
    """Before: RESUME_INTACT with an id's file missing, and nothing said how to see it."""
    example = (ROOT / "examples" / "resume_record_check.py").read_text()
    (tmp_path / "resume_record_check.py").write_text(example)  # the check, from the cwd
    result, _ = _plain(pyz, tmp_path, OUTPUT_AFTER_APPEND, "--stop-after-records", "5")
    assert result.returncode == 0, result.stdout + result.stderr  # the ledger alone is whole
    assert "  only the ledger's lines were verified: when each id has an output of its own (a " \
           "file written after append), verify it with --record-check MODULE:FUNCTION " \
           "(examples/resume_record_check.py)" in result.stdout.splitlines()
    (tmp_path / "checked").mkdir()
    (tmp_path / "checked" / "resume_record_check.py").write_text(example)
    checked, _ = _plain(pyz, tmp_path / "checked", OUTPUT_AFTER_APPEND, "--stop-after-records",
                        "5", "--record-check", "resume_record_check:output_exists",
                        "--format", "json")
    assert checked.returncode == 28, checked.stdout + checked.stderr  # RESUME_BAD_RECORD
    verdict = json.loads(checked.stdout)
    missing = [bad for bad in verdict["bad_records"] if bad["problem"] == "record_check"]
    assert len(missing) == 1
    assert missing[0]["detail"] == f"AssertionError: no output file for {missing[0]['id']}"
    assert verdict["records_checked"] == 40


@pytest.mark.slow
def test_the_example_that_writes_its_output_first_passes_its_record_check(
        pyz: Path, tmp_path: Path) -> None:
    example = (ROOT / "examples" / "resume_record_check.py").read_text()
    (tmp_path / "resume_record_check.py").write_text(example)
    result, ledger = _plain(pyz, tmp_path, example, "--stop-after-records", "20",
                            "--record-check", "resume_record_check:output_exists",
                            "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert (verdict["records_checked"], verdict["bad_records"], verdict["redone"]) == (
        100, [], [])
    assert 20 <= verdict["records_at_stop"] < 100
    assert len(list((ledger.parent / "outputs").glob("*.json"))) == 100


@pytest.mark.slow
def test_a_hung_second_run_is_said_ended_by_its_time_limit(pyz: Path, tmp_path: Path) -> None:
    """Before: "the second run did not end well (exit -9): -" and "it had nothing to do"."""
    result, _ = _plain(pyz, tmp_path, HANGS_WHEN_RESUMED, "--stop-after-records", "5",
                       "--timeout", "8")
    assert result.returncode == 30, result.stdout + result.stderr  # RESUME_RUN_FAILED
    lines = result.stdout.splitlines()
    assert lines[0] == "RESUME FAILED (exit 30, RESUME_RUN_FAILED)"
    assert "  the second run was ended by its time limit (8 s, --timeout): it hung (a stale " \
           "lock, a wait that never ends) or needs more time" in lines
    assert not any("exit -9" in line or "nothing to do" in line for line in lines)


@pytest.mark.slow
def test_a_duplicate_refused_by_the_ledger_is_explained(pyz: Path, tmp_path: Path) -> None:
    result, _ = _plain(pyz, tmp_path, NEVER_ASKS, "--stop-after-records", "5")
    assert result.returncode == 30, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("  the second run did not end well (exit 1): ValueError: the "
                               "ledger already holds the id 'doc-0'") for line in lines)
    assert "  the ledger refused an id it already held: the program does not skip the ids in " \
           "done_ids() when it starts" in lines
    assert not any("nothing to do" in line for line in lines)


@pytest.mark.slow
def test_a_first_run_that_crashed_then_a_complete_second_is_never_intact(
        pyz: Path, tmp_path: Path) -> None:
    result, ledger = _plain(pyz, tmp_path, CRASHES_FIRST, "--stop-after-records", "20",
                            "--format", "json")
    assert result.returncode == 30, result.stdout + result.stderr  # RESUME_RUN_FAILED
    verdict = json.loads(result.stdout)
    assert (verdict["stopped"], verdict["first_run_exit"], verdict["lost"]) == (False, 1, [])
    assert sorted(_complete_ids(ledger)) == sorted(f"doc-{i}" for i in range(40))
