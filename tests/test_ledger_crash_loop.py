"""``OutputLedger`` killed again and again: for each durability mode, a real writer process is
sent SIGKILL at random moments while it appends (single records and batches, small and large
ones), then resumed; at the end the ledger holds every expected id exactly once and no torn
line, and between two kills no id was ever doubled.

A SIGKILL keeps what reached the kernel whatever the mode (the modes differ on a crash of the
machine, which a test cannot cause): what this proves is that a kill at any moment, the torn
tail it may leave and the resume that follows never lose, double or tear a record.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SRC, clean_env
from kernodeck_diagnostic.ledger import read_ledger

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

# Records per mode: each mode is killed about as often (per-record fsync is the slower).
IDS = {"group": 4000, "record": 1200}
KILLS = 12  # SIGKILLs that must land while the writer is appending
KILL_WITHIN_S = 0.05  # after the writer says it is ready
# Skips what is done, appends the rest: one by one or in batches of 1 to 20, records of 10 bytes
# to 60 KiB (a write the kernel may cut when the kill lands during it). Says "ready" once open.
WRITER = """
import random, sys
from kernodeck_diagnostic import OutputLedger
path, mode, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
ids = [f"id-{i}" for i in range(count)]
ledger = OutputLedger(path, expected_ids=ids, durability=mode, sync_interval_s=0.002,
                      sync_records=7)
done = ledger.done_ids()
todo = [item for item in ids if item not in done]
print("ready", flush=True)
while todo:
    size = random.choice([10, 200, 4000, 60000])
    batch = random.randint(1, 20) if random.random() < 0.3 else 0
    if batch:
        items, todo = todo[:batch], todo[batch:]
        ledger.append_many((item, {"payload": "x" * size}) for item in items)
    else:
        ledger.append(todo.pop(0), {"payload": "x" * size})
ledger.close()
"""


def _run_until_killed(path: Path, mode: str, rng: random.Random) -> bool:
    """One run of the writer, killed after a random delay once it is appending; True when it
    finished before the kill."""
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), mode, str(IDS[mode])],
                              env=clean_env({"PYTHONPATH": str(SRC)}), stdout=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True)
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, KILL_WITHIN_S))
        finished = writer.poll() is not None
        if not finished:
            writer.send_signal(signal.SIGKILL)
        writer.wait(60)
        if finished:
            assert writer.returncode == 0
        return finished
    finally:
        writer.kill()
        writer.wait(60)
        if writer.stdout is not None:
            writer.stdout.close()


@pytest.mark.parametrize("mode", ["group", "record"])
def test_random_sigkills_then_resumes_leave_every_id_exactly_once(tmp_path: Path,
                                                                   mode: str) -> None:
    rng = random.Random(f"ledger-crash-loop-{mode}")  # noqa: S311 (kill moments, not secrets)
    kills = 0
    for ledger in range(1, 6):  # another ledger from the start while too few kills landed
        path = tmp_path / f"results-{ledger}.jsonl"
        kills += _kill_and_resume_until_done(path, mode, rng)
        contents = read_ledger(str(path))
        assert contents.counts == {f"id-{i}": 1 for i in range(IDS[mode])}
        assert (contents.half_records, contents.not_records, contents.torn_tail_bytes) == (
            [], {}, 0)
        assert path.read_bytes().endswith(b"\n")
        if kills >= KILLS:
            break
    assert kills >= KILLS, f"only {kills} kills landed while appending"


def _kill_and_resume_until_done(path: Path, mode: str, rng: random.Random) -> int:
    """Runs of the writer, each killed at a random moment, until one finishes: the kills."""
    for kills in range(400):
        finished = _run_until_killed(path, mode, rng)
        contents = read_ledger(str(path))
        # Between kills: no id twice, at most the last line torn (the next run cuts it off).
        assert contents.duplicated == []
        assert contents.not_records == {}
        assert len(contents.half_records) <= 1
        assert bool(contents.half_records) == bool(contents.torn_tail_bytes)
        if finished:
            return kills
    raise AssertionError("the writer never finished")
