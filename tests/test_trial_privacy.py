"""Planted secrets, names and paths never reach attempt.json or events.jsonl (trace.txt, kept
only locally, may hold the paths of the program's own frames)."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from trial_helpers import app_env, assert_valid_attempt, attempt_of, only_attempt, run_app

pytestmark = pytest.mark.slow

# The program is given private things everywhere the trial records text: its command line,
# its parameters, a stage's name, a tensor's name, an error's message, a contract's detail and
# the ids it checks.
APPLICATION = """
    import os, sys
    import torch
    from kernodeck_diagnostic import Trial

    home, user, token = os.environ["HOME"], os.environ["KD_PLANTED_USER"], os.environ["HF_TOKEN"]
    aws_secret = next(value for name, value in os.environ.items() if name.startswith("AWS_"))
    model_path = os.path.join(home, "models", "private-model.pt")
    params = {"model": model_path, "token": token, "cwd": os.getcwd(), "batch": 2}
    with Trial(os.path.join(home, "runs"), params=params) as trial:
        with trial.stage("load " + model_path):
            weights = torch.ones(2, 2)
        trial.describe(**{"x_" + user: weights})
        trial.expect("login", False, detail=f"{user}@gpu-node-17 rejected {token} at {home}")
        trial.expect_vectors([os.path.join(home, "doc-1.txt")], {}, dim=2)
        with trial.stage("upload"):
            raise PermissionError(
                f"cannot write {home}/out/x.bin as {user} with "
                f"https://{user}:hunter2@example.com/ {aws_secret}")
"""


def test_nothing_private_reaches_the_attempt_files(cpu_torch_python: Path,
                                                   tmp_path: Path) -> None:
    user = "zq" + secrets.token_hex(4)
    home = tmp_path / "home" / user
    home.mkdir(parents=True)
    planted = {"KD_PLANTED_USER": user, "HOME": str(home),
               "HF_TOKEN": "hf_" + secrets.token_hex(16),
               "AWS_SECRET_ACCESS_KEY": secrets.token_hex(20)}
    work = tmp_path / ("work-" + user)
    done = run_app(cpu_torch_python, work, APPLICATION, "--token", planted["HF_TOKEN"],
                   str(home / "data"), env=app_env(planted))
    assert done.returncode == 1, done.stderr[-3000:]
    folder = only_attempt(home / "runs")
    attempt = attempt_of(folder)
    assert_valid_attempt(attempt)
    assert "hunter2" not in str(attempt)
    for name in ("attempt.json", "events.jsonl"):
        text = (folder / name).read_text(encoding="utf-8")
        assert [key for key, value in planted.items() if value in text] == [], name
        assert str(tmp_path) not in text
        assert str(cpu_torch_python.parent.parent) not in text
        assert "site-packages/" not in text
    # What helps is kept: the file names, the error's type, what failed.
    assert attempt["first_error"]["type"] == "PermissionError"
    assert "x.bin" in attempt["first_error"]["message"]
    assert attempt["params"]["model"] == "<home>/private-model.pt"
    assert attempt["params"]["batch"] == 2
    assert attempt["command"][2:4] == ["--token", "<redacted>"]  # given on the command line
    assert (folder / "trace.txt").is_file()
