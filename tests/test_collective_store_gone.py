"""The collective stage's last exchanges with rank 0's store, which ends as soon as every other
rank said it is done: a rank reads what it reads last (``duplicated``: a rank claimed twice)
before it says so. Seen in a full run: a third process claiming rank 0 was named by both rank 0s,
while rank 1, whose store was gone by then, reported a failed collective with no rank named.

A store of the standard library (``torch.distributed.TCPStore``'s calls, kept in a dict) that
fails every call once rank 0 has heard ``done`` from the others, as rank 0's process exits then."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from kernodeck_diagnostic.worker import collective


class GoneOnceDone:
    """Rank 0's store, as another rank sees it: gone once ``done`` reaches ``ranks - 1``."""

    def __init__(self, ranks: int, values: dict[str, str]) -> None:
        self.ranks = ranks
        self.values = {key: value.encode() for key, value in values.items()}
        self.gone = False

    def _alive(self) -> None:
        if self.gone:
            raise RuntimeError("Connection reset by peer")

    def add(self, key: str, amount: int) -> int:
        self._alive()
        value = int(self.values.get(key, b"0")) + amount
        self.values[key] = str(value).encode()
        if key == "done" and value >= self.ranks - 1:
            self.gone = True  # rank 0 heard every rank: its process, and the store, end
        return value

    def set(self, key: str, value: str) -> None:
        self._alive()
        self.values[key] = value.encode()

    def get(self, key: str) -> bytes:
        self._alive()
        return self.values[key]

    def check(self, keys: list[str]) -> bool:
        self._alive()
        return all(key in self.values for key in keys)

    def wait(self, keys: list[str], timeout: Any) -> None:
        self._alive()
        if not self.check(keys):
            raise RuntimeError("Wait timeout")

    def compare_set(self, key: str, expected: str, wanted: str) -> bytes:
        self._alive()
        current = self.values.get(key, b"").decode()
        if current == expected:
            self.values[key] = wanted.encode()
            return wanted.encode()
        return current.encode()


def test_a_rank_reads_the_ranks_claimed_twice_before_rank_0s_store_ends() -> None:
    """Rank 1 of 2; rank 0 said its check, gathered the results, and a second process claiming
    rank 0 is in ``duplicated``. Rank 1 names it, whatever rank 0 does once told done."""
    store = GoneOnceDone(2, {"check/0": '{"rank": 0}', "sizes": "2", "duplicated": "0",
                             "all": '[{"rank": 0}, {"rank": 1}]'})
    said: list[tuple[str, dict[str, Any]]] = []
    worker = SimpleNamespace(
        distributed={"rank": 1, "world_size": 2, "deadline": time.monotonic() + 10,
                     "launcher": "torchrun"},
        events=SimpleNamespace(emit=lambda *event, **fields: said.append((event[0], fields))))
    own = {"rank": 1, "kind": None, "product": 4.0}
    outcome: dict[str, Any] = {"status": "timeout", "observed": None, "duplicated_ranks": None}
    collective._run(worker, store, own, outcome, lambda share: time.monotonic() + 5 * share)
    assert outcome["status"] == "skipped"  # no group formed with a rank claimed twice
    assert outcome["duplicated_ranks"] == [0]
    assert outcome["gathered"] is True
    assert store.gone  # it said it was done: rank 0 stops waiting for it
    assert [fields["rank"] for kind, fields in said if kind == "rank"] == [0, 1]
