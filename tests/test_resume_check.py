"""``kernodeck-diagnostic resume-check`` run as a user runs it (the zipapp), over real CPU torch
applications that compute one small result per id (real matrix products, no sleeps) and write it:

- through ``OutputLedger``, skipping the ids already done: intact;
- through ``OutputLedger``, never asking which ids are done: the duplicated ids, named;
- through a buffered file it never flushes, ignoring Ctrl-C, with its own "done" checkpoint:
  stopped by SIGTERM after the grace period, the records still in its buffer are lost, and named.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import envs
from conftest import SRC, Result, clean_env, run_tool

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")]

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
NEVER_SKIPS = WORK + """
from kernodeck_diagnostic import OutputLedger
ledger = OutputLedger(sys.argv[1], expected_ids=ids)
for item in ids:
    ledger.append(item, compute(item))
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


def test_an_application_that_never_skips_done_work_has_its_duplicates_named(
        pyz: Path, tmp_path: Path) -> None:
    result, ledger = _check(pyz, tmp_path, NEVER_SKIPS, "--stop-after-records", "10")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "RESUME FAILED"
    duplicated = next(line for line in lines if line.startswith("  duplicated ("))
    named = _ids(duplicated)
    # Every id the first run wrote was written again: the first ones, in order, twice each.
    assert named == [f"doc-{i}" for i in range(len(named))]
    assert len(named) >= 10
    assert all(f"{item} (x2)" in duplicated for item in named)
    written = _complete_ids(ledger)
    assert all(written.count(item) == 2 for item in named)
    assert not any(line.startswith("  lost (") for line in lines)


def test_an_application_that_never_flushes_has_its_lost_ids_named(pyz: Path,
                                                                  tmp_path: Path) -> None:
    count = 200  # more work (some 5 s) than the 3 s before the stop
    expected = tmp_path / "ids.txt"
    expected.write_text("".join(f"doc-{i}\n" for i in range(count)))
    result, ledger = _check(pyz, tmp_path, NEVER_FLUSHES, "--stop-after", "3", "--grace", "1",
                            "--expect-ids", str(expected), "--format", "json", count=count)
    assert result.returncode == 1, result.stdout + result.stderr
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
