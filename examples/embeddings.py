"""An embeddings job under the trial toolkit: a tiny model with random weights, on the CPU.

    python examples/embeddings.py                      # writes runs/<attempt-id>/
    python examples/embeddings.py --batch 4 --max-len 64 --passes 5
    python examples/embeddings.py --device cuda        # the same job on a GPU

Each stage of the job is a stage of the trial: the parameters are read, the libraries imported,
the weights built, the input prepared and moved to the device, the embeddings computed (three
passes by default, the first one reported apart), written, read back and checked against the
job's contract: one finite vector of the expected dimension per input id. The model is a
stand-in (an embedding table, mean pooling, a projection) so the example runs in seconds
anywhere; put your own model in ``load_weights`` and keep everything else. See docs/trial.md.
"""

from __future__ import annotations

import argparse
import json
import os
import zlib

from kernodeck_diagnostic import Trial

# The minimal input: short texts, each with its identifier. Keep the lengths of the real work.
TEXTS = {
    "doc-1": "the allocator keeps freed blocks in a cache for the next request",
    "doc-2": "a stage is marked when it completes, not when it starts",
    "doc-3": "the first pass pays for lazy initialisation and is reported apart",
    "doc-4": "an output contract says what a correct output is",
    "doc-5": "memory that grows from pass to pass points to retained tensors",
    "doc-6": "synchronise the device at both ends of a timed segment",
}
VOCABULARY = 1000
DIMENSION = 32


def token_ids(text: str, max_len: int) -> list[int]:
    """A stand-in tokenizer: each word to a stable id (1..VOCABULARY-1), padded with 0."""
    ids = [1 + zlib.crc32(word.encode()) % (VOCABULARY - 1) for word in text.split()][:max_len]
    return ids + [0] * (max_len - len(ids))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=len(TEXTS))
    parser.add_argument("--max-len", type=int, default=16)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--runs", default="runs", help="the folder of the attempt folders")
    args = parser.parse_args()
    params = {"batch": args.batch, "max_len": args.max_len, "passes": args.passes,
              "device": args.device, "model": f"random-embedding-{VOCABULARY}x{DIMENSION}"}

    with Trial(args.runs, params=params) as trial:
        with trial.stage("import_libraries"):
            import torch

        with trial.stage("load_weights"):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.EmbeddingBag(VOCABULARY, 64, mode="mean"),
                                        torch.nn.Linear(64, DIMENSION))
            model.eval()  # the modules' inference behaviour (dropout, batch norm)

        with trial.stage("prepare_input"):
            ids = list(TEXTS)[:args.batch]
            batch = torch.tensor([token_ids(TEXTS[i], args.max_len) for i in ids])

        with trial.stage("transfer"):
            device = torch.device(args.device)
            model.to(device)
            batch = batch.to(device)
        trial.describe(input_ids=batch)  # "input_ids: int64 6x16 cpu", never the values

        for _ in trial.passes(args.passes):
            with trial.stage("compute", sync=True), torch.inference_mode():
                vectors = model(batch)  # no graph is kept: these tensors feed no gradient
        trial.describe(vectors=vectors)

        output = os.path.join(trial.folder or ".", "embeddings.jsonl")
        with trial.stage("write_output"), open(output, "w", encoding="utf-8") as file:
            for identifier, vector in zip(ids, vectors.cpu().tolist()):
                file.write(json.dumps({"id": identifier, "vector": vector}) + "\n")

        with trial.stage("read_back"), open(output, encoding="utf-8") as file:
            written = {row["id"]: row["vector"] for row in map(json.loads, file)}
        ok = trial.expect_vectors(ids, written, dim=DIMENSION)

    print(f"attempt {trial.attempt_id}: vectors {'as expected' if ok else 'NOT as expected'}; "
          f"folder {os.path.relpath(trial.folder or '.')}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
