"""A job that writes one output per id through ``OutputLedger``, and resumes without loss.

    mkdir -p out && python examples/ledger.py out/results.jsonl
    kernodeck-diagnostic resume-check --ledger out/results.jsonl --stop-after-records 20 \
        -- python examples/ledger.py out/results.jsonl

Each id's output is a small vector computed with torch on the CPU (real work, some 20 ms an id).
When the job starts it asks the ledger which ids are already done and skips them: stopped in the
middle and started again, no output is lost or written twice, which ``resume-check`` proves by
doing exactly that. See docs/operating-range.md.
"""

from __future__ import annotations

import sys

import torch

from kernodeck_diagnostic import OutputLedger

IDS = [f"doc-{number}" for number in range(100)]
DIMENSION = 64


def embed(item: str, weights: torch.Tensor) -> list[float]:
    """A stand-in for a model: a few hundred small matrix products from the id's length."""
    x = torch.full((16, DIMENSION), float(len(item)))
    for _ in range(300):
        x = torch.tanh(x @ weights)
    return [float(value) for value in x[0]]


def main(path: str) -> int:
    torch.set_num_threads(1)
    weights = torch.randn(DIMENSION, DIMENSION, generator=torch.Generator().manual_seed(0)) / 8
    ledger = OutputLedger(path, expected_ids=IDS, vector_dim=DIMENSION)
    done = ledger.done_ids()
    for item in IDS:
        if item not in done:  # written by an earlier run: never twice
            ledger.append(item, embed(item, weights))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
