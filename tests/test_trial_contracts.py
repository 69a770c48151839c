"""Output contracts: each failure named precisely; a training step that changed nothing fails."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kernodeck_diagnostic.trial import contracts
from trial_helpers import assert_valid_attempt, attempt_of, only_attempt, run_app


def _check(ids: list, output: object, dim: int = 3, **more: object) -> dict:
    found, _ = contracts.vectors(ids, output, dim, None, **more)
    return found


def _kinds(found: dict) -> dict[str, list[str]]:
    return {problem["kind"]: problem.get("ids", []) for problem in found["problems"]}


def test_matching_vectors_pass() -> None:
    found, obtained = contracts.vectors(["a", "b"], [[1, 2, 3], [4, 5, 6]], 3, None)
    assert found["passed"] is True
    assert found["problems"] == []
    assert found["detail"] == "2 finite vectors of dimension 3, one per id"
    assert obtained == {"vectors": 2, "ids": 2, "dimensions": [3]}


def test_a_count_mismatch_is_named() -> None:
    found = _check(["a", "b", "c"], [[1, 2, 3], [4, 5, 6]])
    assert found["passed"] is False
    assert found["problems"][0] == {"kind": "count_mismatch", "count": 2, "expected": 3}
    assert "count mismatch: 2 vectors for 3 output ids" in found["detail"]


def test_a_missing_id_is_named() -> None:
    found = _check(["a", "b", "c"], {"a": [1, 2, 3], "c": [1, 2, 3]})
    assert _kinds(found) == {"count_mismatch": [], "missing_id": ["b"]}
    assert "missing ids (no vector): b" in found["detail"]


def test_an_unexpected_id_is_named() -> None:
    found = _check(["a"], {"a": [1, 2, 3], "zz": [1, 2, 3]})
    assert _kinds(found)["unexpected_id"] == ["zz"]


def test_duplicated_ids_are_named_on_each_side() -> None:
    found = _check(["a", "b", "a"], [[1, 2, 3]] * 3)
    assert found["problems"] == [{"kind": "duplicated_id", "count": 1, "ids": ["a"],
                                  "side": "input"}]
    found = _check(["a", "b", "c"], [[1, 2, 3]] * 3, output_ids=["a", "b", "b"])
    assert {p["kind"]: (p.get("ids"), p.get("side")) for p in found["problems"]} == {
        "duplicated_id": (["b"], "output"), "missing_id": (["c"], None)}
    assert "duplicated output ids: b" in found["detail"]


def test_a_wrong_dimension_names_the_ids_and_the_dimension() -> None:
    found = _check(["a", "b", "c"], [[1, 2, 3], [1, 2], [1, 2, 3, 4]])
    (problem,) = found["problems"]
    assert problem == {"kind": "wrong_dimension", "count": 2, "ids": ["b", "c"], "expected": 3,
                       "found": [2, 4]}
    assert "wrong dimension 2, 4 (expected 3) for ids: b, c" in found["detail"]


def test_non_finite_values_name_the_ids() -> None:
    found = _check(["a", "b", "c"], [[1, 2, 3], [1, math.nan, 3], [math.inf, 0, 0]])
    assert _kinds(found) == {"non_finite": ["b", "c"]}
    assert "non-finite values (NaN or infinity) for ids: b, c" in found["detail"]


def test_many_ids_are_named_up_to_a_bound() -> None:
    ids = [f"id-{i}" for i in range(25)]
    found = _check(ids, {})
    missing = next(p for p in found["problems"] if p["kind"] == "missing_id")
    assert missing["count"] == 25
    assert len(missing["ids"]) == contracts.MAX_NAMED
    assert "and 15 more" in found["detail"]


# -- with real tensors and a real training step ----------------------------------------------------

TENSORS = """
    import torch
    from kernodeck_diagnostic import Trial

    with Trial("runs") as trial:
        good = torch.ones(3, 8)
        bad = torch.ones(3, 8)
        bad[1, 2] = float("nan")
        bad[2, 0] = float("inf")
        assert trial.expect_vectors(["a", "b", "c"], good, dim=8)
        assert not trial.expect_vectors(["a", "b", "c"], bad, dim=8)
        assert not trial.expect_vectors(["a", "b", "c"], torch.ones(3, 4), dim=8)
        assert not trial.expect_vectors(["a", "b", "c"], torch.ones(2, 8), dim=8)
        assert not trial.expect("recall_at_10", 0.42 >= 0.8, detail="recall at 10 = 0.42 < 0.80")
"""


@pytest.mark.slow
def test_tensor_contracts_are_named_in_the_attempt(cpu_torch_python: Path,
                                                   tmp_path: Path) -> None:
    done = run_app(cpu_torch_python, tmp_path, TENSORS)
    assert done.returncode == 0, done.stderr[-3000:]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    details = [(c["name"], c["passed"], c["detail"]) for c in attempt["contracts"]]
    # Each name's first result and first failure are kept whole, every check counted (the
    # attempt does not grow with a program that checks every batch).
    assert details == [
        ("vectors", True, "3 finite vectors of dimension 8, one per id"),
        ("vectors", False, "non-finite values (NaN or infinity) for ids: b, c"),
        ("recall_at_10", False, "recall at 10 = 0.42 < 0.80"),
    ]
    assert attempt["contracts_summary"] == {
        "checked": 5, "failed": 4,
        "by_name": [{"name": "vectors", "checked": 4, "failed": 3},
                    {"name": "recall_at_10", "checked": 1, "failed": 1}]}
    assert attempt["contracts_passed"] is False
    assert attempt["status"] == "completed"  # the program ran; its output is what failed


TRAINING = """
    import sys
    import torch
    from kernodeck_diagnostic import Trial

    lr, checkpoint = float(sys.argv[1]), sys.argv[2]
    with Trial("runs") as trial:
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=abs(lr))
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        loss = model(torch.ones(8, 4)).pow(2).mean()
        if lr < 0:  # a diverged step
            loss = loss * float("nan")
        if sys.argv[3:] == ["inf-grad"]:  # a gradient hook gone wrong: the loss stays finite
            model.weight.register_hook(lambda grad: grad * float("inf"))
        loss.backward()
        optimizer.step()
        after = {n: p.detach() for n, p in model.named_parameters()}
        if checkpoint == "saved":
            torch.save(model.state_dict(), "model.pt")
        elif checkpoint == "corrupt":
            open("model.pt", "wb").write(b"not a checkpoint")
        print(trial.expect_training_step(loss, before, after, checkpoint="model.pt"))
        if sys.argv[3:] == ["inf-grad"]:  # the parameters themselves: their gradients too
            print(trial.expect_training_step(loss, before, dict(model.named_parameters())))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("lr", "checkpoint", "expected"), [
    ("0.1", "saved", (True,
                      "finite loss, 2 parameters updated, checkpoint saved and loadable")),
    ("0.0", "saved", (False, "parameters not updated by the step: weight, bias")),
    ("0.1", "none", (False, "checkpoint not saved: no such file")),
    ("0.1", "corrupt", (False, "checkpoint saved but not loadable: UnpicklingError")),
    ("-1", "saved", (False, "loss not finite: nan")),
])
def test_a_training_step_contract(cpu_torch_python: Path, tmp_path: Path, lr: str,
                                  checkpoint: str, expected: tuple[bool, str]) -> None:
    passed, detail = expected
    done = run_app(cpu_torch_python, tmp_path, TRAINING, lr, checkpoint)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == str(passed)
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    (contract,) = attempt["contracts"]
    assert (contract["name"], contract["passed"]) == ("training_step", passed)
    assert detail in contract["detail"]
    assert attempt["output"]["training_step"]["parameters"] == 2


@pytest.mark.slow
def test_non_finite_parameters_or_gradients_fail_the_training_step(
        cpu_torch_python: Path, tmp_path: Path) -> None:
    done = run_app(cpu_torch_python, tmp_path, TRAINING, "0.1", "saved", "inf-grad")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["False", "False"]
    attempt = attempt_of(only_attempt(tmp_path / "runs"))
    assert_valid_attempt(attempt)
    (first,) = attempt["contracts"]  # the name's first failure kept whole, both counted
    assert "non-finite parameters after the step: weight" in first["detail"]
    assert "non_finite_parameter" in [problem["kind"] for problem in first["problems"]]
    assert attempt["contracts_summary"]["by_name"] == [
        {"name": "training_step", "checked": 2, "failed": 2}]
