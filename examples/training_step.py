"""A training step under the trial toolkit: a tiny classifier with random weights, on the CPU.

    python examples/training_step.py                   # writes runs/<attempt-id>/
    python examples/training_step.py --lr 0            # a step that updates nothing: the
                                                       # contract fails and names the parameters

The contract of a training step: the loss is one finite number, the parameters were updated,
and the checkpoint is saved and loads back. The steps run as passes (the first one reported
apart); the loss is kept as a number (``loss.item()``), never as a tensor, so no graph is
retained from step to step. See docs/trial.md.
"""

from __future__ import annotations

import argparse
import os

from kernodeck_diagnostic import Trial


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--runs", default="runs", help="the folder of the attempt folders")
    args = parser.parse_args()
    params = {"batch": args.batch, "steps": args.steps, "lr": args.lr, "device": args.device,
              "model": "random-mlp-20-64-4"}

    with Trial(args.runs, params=params) as trial:
        with trial.stage("import_libraries"):
            import torch

        with trial.stage("load_weights"):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(),
                                        torch.nn.Linear(64, 4)).to(args.device)
            optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

        with trial.stage("prepare_input"):
            features = torch.randn(args.batch, 20, device=args.device)
            labels = torch.randint(0, 4, (args.batch,), device=args.device)
        trial.describe(features=features, labels=labels)

        before = {name: p.detach().clone() for name, p in model.named_parameters()}
        model.train()  # the modules' training behaviour; gradients are recorded
        losses: list[float] = []
        for _ in trial.passes(args.steps):
            with trial.stage("train_step", sync=True):
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(features), labels)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())  # a number: a tensor would keep its graph alive

        checkpoint = os.path.join(trial.folder or ".", "checkpoint.pt")
        with trial.stage("save_checkpoint"):
            torch.save(model.state_dict(), checkpoint)
        after = {name: p.detach() for name, p in model.named_parameters()}
        ok = trial.expect_training_step(loss, before, after, checkpoint=checkpoint)

    print(f"attempt {trial.attempt_id}: training step {'as expected' if ok else 'NOT as expected'}"
          f"; folder {os.path.relpath(trial.folder or '.')}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
