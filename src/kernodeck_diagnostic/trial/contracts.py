"""Output contracts: what a correct output is, checked and named precisely when it is not.

Each check returns a contract result ``{"name", "passed", "detail", ...}`` and what was obtained
(counts, never content). Identifiers are named (at most ``MAX_NAMED`` of each problem, as text of
at most ``MAX_ID_CHARS`` characters); vectors and parameters never are.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from ..worker.protocol import encode_number

MAX_NAMED = 10
MAX_ID_CHARS = 64
MAX_DETAIL_CHARS = 2000

Problem = Literal["count_mismatch", "missing_id", "unexpected_id", "duplicated_id",
                  "wrong_dimension", "non_finite", "missing_parameter", "unchanged_parameter",
                  "non_finite_parameter", "non_finite_gradient"]


def shown_id(identifier: Any) -> str:
    text = " ".join(str(identifier).split())
    return text if len(text) <= MAX_ID_CHARS else text[:MAX_ID_CHARS - 1] + "\u2026"


def _named(ids: Sequence[Any]) -> str:
    shown = ", ".join(shown_id(identifier) for identifier in ids[:MAX_NAMED])
    return shown + (f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else "")


def _problem(kind: Problem, ids: Sequence[Any], **more: Any) -> dict[str, Any]:
    return {"kind": kind, "count": len(ids), "ids": [shown_id(i) for i in ids[:MAX_NAMED]],
            **more}


def result(name: str, problems: list[dict[str, Any]], details: list[str],
           **more: Any) -> dict[str, Any]:
    detail = "; ".join(details)
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[:MAX_DETAIL_CHARS - 1] + "\u2026"
    return {"name": name, "passed": not problems, "detail": detail, "problems": problems, **more}


# -- embeddings ---------------------------------------------------------------------------------

def vectors(ids: Iterable[Any], output: Any, dim: int, torch: Any,
            output_ids: Iterable[Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """One finite vector of dimension ``dim`` per input id.

    ``output`` is either a mapping id -> vector, or vectors in the order of ``output_ids``
    (default: the input ids themselves): a 2-D tensor or array, or a sequence of vectors.
    Returns the contract's result and what was obtained.
    """
    wanted = list(ids)
    if isinstance(output, Mapping):
        got_ids = list(output.keys())
        rows = [_vector(output[key], torch) for key in output]
    else:
        got_ids = wanted if output_ids is None else list(output_ids)
        rows = _rows(output, torch)
    found: list[tuple[dict[str, Any], str]] = []
    if len(rows) != len(got_ids):
        found.append(({"kind": "count_mismatch", "count": len(rows), "expected": len(got_ids)},
                      f"count mismatch: {len(rows)} vectors for {len(got_ids)} output ids"))
    elif len(got_ids) != len(wanted):
        found.append(({"kind": "count_mismatch", "count": len(got_ids), "expected": len(wanted)},
                      f"count mismatch: {len(got_ids)} vectors for {len(wanted)} input ids"))
    # Output ids are their own only when given apart (a mapping cannot repeat a key).
    own_output_ids = output_ids is not None and not isinstance(output, Mapping)
    found += _id_problems(wanted, got_ids, own_output_ids)
    dims: Counter[int | None] = Counter()
    found += _vector_problems(got_ids, rows, dim, dims)
    problems = [problem for problem, _ in found]
    details = [detail for _, detail in found] or [
        f"{len(rows)} finite vectors of dimension {dim}, one per id"]
    obtained = {"vectors": len(rows), "ids": len(set(got_ids)),
                "dimensions": sorted(d for d in dims if d is not None)[:MAX_NAMED]}
    return result("vectors", problems, details, expected_dim=dim), obtained


def vector_problem(row: Any, dim: int) -> tuple[Problem, int | None] | None:
    """One vector held to ``vectors``' rules, without torch (a ledger's record, read from JSON):
    ``("wrong_dimension", found)`` (found None: not a vector), ``("non_finite", dim)``, or None
    when it is a finite vector of dimension ``dim``."""
    size, finite = _vector(row, None)
    if size != dim:
        return "wrong_dimension", size
    return None if finite else ("non_finite", size)


def _id_problems(wanted: list[Any], got_ids: list[Any],
                 own_output_ids: bool) -> list[tuple[dict[str, Any], str]]:
    """Duplicated ids (input, output), ids without a vector, vectors of ids never asked for."""
    found = []
    for side, repeated in (("input", _repeated(wanted)),
                           ("output", _repeated(got_ids) if own_output_ids else [])):
        if repeated:
            found.append((_problem("duplicated_id", repeated, side=side),
                          f"duplicated {side} ids: {_named(repeated)}"))
    got_set, wanted_set = set(got_ids), set(wanted)
    missing = [i for i in dict.fromkeys(wanted) if i not in got_set]
    unexpected = [i for i in dict.fromkeys(got_ids) if i not in wanted_set]
    if missing:
        found.append((_problem("missing_id", missing),
                      f"missing ids (no vector): {_named(missing)}"))
    if unexpected:
        found.append((_problem("unexpected_id", unexpected),
                      f"unexpected ids (not in the input): {_named(unexpected)}"))
    return found


def _vector_problems(got_ids: list[Any], rows: list[tuple[int | None, bool]], dim: int,
                     dims: Counter[int | None]) -> list[tuple[dict[str, Any], str]]:
    """Vectors of the wrong dimension, and vectors with NaN or infinity; counts ``dims``.
    ``rows``: each vector's (dimension, all values finite)."""
    wrong: list[Any] = []
    non_finite: list[Any] = []
    for identifier, (size, finite) in zip(got_ids, rows):
        dims[size] += 1
        if size != dim:
            wrong.append(identifier)
        elif not finite:
            non_finite.append(identifier)
    found = []
    if wrong:
        seen = sorted((d for d in dims if d != dim), key=lambda d: -1 if d is None else d)
        found.append((_problem("wrong_dimension", wrong, expected=dim, found=seen),
                      f"wrong dimension {', '.join(map(str, seen))} (expected {dim}) for ids: "
                      f"{_named(wrong)}"))
    if non_finite:
        found.append((_problem("non_finite", non_finite),
                      f"non-finite values (NaN or infinity) for ids: {_named(non_finite)}"))
    return found


def _repeated(ids: list[Any]) -> list[Any]:
    counts = Counter(ids)
    return [identifier for identifier, count in counts.items() if count > 1]


def _rows(output: Any, torch: Any) -> list[tuple[int | None, bool]]:
    """(dimension, all values finite) of each vector of the output: the rows of a 2-D tensor
    (checked at once, on its device) or array, or the items of a sequence."""
    if torch is not None and isinstance(output, torch.Tensor) and output.dim() == 2:
        count, size = int(output.shape[0]), int(output.shape[1])
        if not (output.is_floating_point() or output.is_complex()):
            return [(size, True)] * count
        finite = torch.isfinite(output.detach()).all(dim=1).cpu().tolist()
        return [(size, bool(value)) for value in finite]
    shape = getattr(output, "shape", None)
    if shape is not None and len(shape) == 1 and not len(output):
        return []
    return [_vector(row, torch) for row in output]


def _vector(row: Any, torch: Any) -> tuple[int | None, bool]:
    """(dimension, all values finite) of one vector; dimension None when it is not a vector."""
    shape = getattr(row, "shape", None)
    if shape is not None:  # a tensor or an array
        if len(shape) != 1:
            return None, True
        if torch is not None and isinstance(row, torch.Tensor):
            finite = bool(torch.isfinite(row).all()) if row.is_floating_point() or \
                row.is_complex() else True
            return int(shape[0]), finite
        row = row.tolist() if hasattr(row, "tolist") else list(row)
    if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
        return None, True
    try:
        return len(row), all(math.isfinite(float(value)) for value in row)
    except (TypeError, ValueError):
        return len(row), False


# -- a training step ----------------------------------------------------------------------------

LOSS_UNSEEN = object()  # the loss given by an adapter that saw none: the rest is judged, not it


def training_step(loss: Any, before: Mapping[str, Any], after: Mapping[str, Any],
                  checkpoint: str | os.PathLike[str] | None,
                  torch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A usable loss (one finite number), every named parameter changed and finite, and so its
    gradient when it has one (a parameter itself, not a detached copy), the checkpoint saved and
    loadable. ``LOSS_UNSEEN`` as the loss: the framework gave none to see (an adapter's), the
    parameters and the checkpoint are judged. Returns the contract's result and what was
    obtained."""
    problems: list[dict[str, Any]] = []
    details: list[str] = []
    unseen = loss is LOSS_UNSEEN
    value = None if unseen else _number(loss)
    if value is None and not unseen:
        problems.append({"kind": "loss_unusable"})
        details.append(f"loss unusable: not a single number ({type(loss).__name__})")
    elif value is not None and not math.isfinite(value):
        problems.append({"kind": "loss_not_finite", "value": encode_number(value)})
        details.append(f"loss not finite: {encode_number(value)}")
    names = list(before)
    missing = [name for name in names if name not in after]
    unchanged = [name for name in names if name in after
                 and _same(before[name], after[name], torch)]
    if not names:
        problems.append({"kind": "no_parameters"})
        details.append("no parameters given to compare")
    if missing:
        problems.append(_problem("missing_parameter", missing))
        details.append(f"parameters missing after the step: {_named(missing)}")
    if unchanged:
        problems.append(_problem("unchanged_parameter", unchanged))
        details.append(f"parameters not updated by the step: {_named(unchanged)}")
    present = [name for name in names if name in after]
    non_finite = [name for name in present if not _finite(after[name], torch)]
    if non_finite:
        problems.append(_problem("non_finite_parameter", non_finite))
        details.append(f"non-finite parameters after the step: {_named(non_finite)}")
    bad_gradients = [name for name in present
                     if getattr(after[name], "grad", None) is not None
                     and not _finite(after[name].grad, torch)]
    if bad_gradients:
        problems.append(_problem("non_finite_gradient", bad_gradients))
        details.append(f"non-finite gradients: {_named(bad_gradients)}")
    saved: dict[str, Any] | None = None
    if checkpoint is not None:
        saved, problem = _checkpoint(os.fspath(checkpoint), torch)
        if problem is not None:
            problems.append(problem)
            details.append(problem["detail"])
    if not problems:
        details.append(("loss not seen (not judged)" if unseen else "finite loss")
                       + f", {len(names)} parameters updated"
                       + (", checkpoint saved and loadable" if checkpoint is not None else ""))
    obtained = {"loss": None if value is None else encode_number(value),
                "parameters": len(names), "parameters_changed": len(names) - len(unchanged)
                - len(missing), "checkpoint": saved}
    return result("training_step", problems, details), obtained


def _number(loss: Any) -> float | None:
    numel = getattr(loss, "numel", None)
    if numel is not None:
        if numel() != 1:
            return None
        loss = loss.detach().cpu().item() if hasattr(loss, "detach") else loss.item()
    if isinstance(loss, bool) or not isinstance(loss, (int, float)):
        try:
            return float(loss)
        except (TypeError, ValueError):
            return None
    return float(loss)


def _finite(value: Any, torch: Any) -> bool:
    """Whether every value of a tensor (or a number) is finite; anything else counts as finite
    (nothing to check)."""
    if torch is not None and isinstance(value, torch.Tensor):
        if not (value.is_floating_point() or value.is_complex()):
            return True
        return bool(torch.isfinite(value.detach()).all())
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def _same(a: Any, b: Any, torch: Any) -> bool:
    if a is b:
        return True  # the very same tensor, before and after: it was not copied
    if torch is not None and isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.equal(a.detach().cpu(), b.detach().cpu()))
    return bool(a == b)


def _checkpoint(path: str, torch: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Whether the checkpoint file exists, is not empty and loads; its size and tensor count."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return ({"saved": False, "bytes": None, "loadable": False},
                {"kind": "checkpoint_missing", "detail": "checkpoint not saved: no such file"})
    if size == 0:
        return ({"saved": False, "bytes": 0, "loadable": False},
                {"kind": "checkpoint_empty", "detail": "checkpoint not saved: the file is empty"})
    try:
        try:
            loaded = torch.load(path, map_location="cpu", weights_only=True)
        except TypeError:  # a torch older than 1.13 has no weights_only
            loaded = torch.load(path, map_location="cpu")
    except Exception as exc:
        return ({"saved": True, "bytes": size, "loadable": False},
                {"kind": "checkpoint_unloadable",
                 "detail": f"checkpoint saved but not loadable: {type(exc).__name__}"})
    tensors = len(loaded) if isinstance(loaded, Mapping) else None
    return {"saved": True, "bytes": size, "loadable": True, "entries": tensors}, None


# -- tensors ------------------------------------------------------------------------------------

def describe_value(name: str, value: Any, torch: Any) -> dict[str, Any]:
    """A tensor's (or array's) dtype, shape and device, never its values: ``input_ids: int64
    8x512 cuda:0``. Anything else: its type, and its length when it has one."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        dims = [int(size) for size in shape]
        dtype_text = str(dtype).replace("torch.", "")
        device = getattr(value, "device", None)
        device_text = str(device) if device is not None else "cpu"
        text = f"{name}: {dtype_text} {'x'.join(map(str, dims)) or 'scalar'} {device_text}"
        return {"name": name, "kind": "tensor", "dtype": dtype_text, "shape": dims,
                "device": device_text, "text": text}
    length = _length(value)
    kind = type(value).__name__
    text = f"{name}: {kind}" + (f" of {length}" if length is not None else "")
    return {"name": name, "kind": kind, "dtype": None, "shape": None, "device": None,
            "length": length, "text": text}


def _length(value: Any) -> int | None:
    try:
        return len(value)
    except TypeError:
        return None


MAX_KEPT = 200  # contract results kept (each name's first and first failure; as many again for
# failures): every check counted


class Kept:
    """The contracts of an attempt in a bounded size: each name's first result and first failure
    kept (at most ``MAX_KEPT`` passing, as many failing: a failure always finds room), every
    check counted, in all and by name (the first ``MAX_KEPT`` names). A program that checks each
    batch keeps the same attempt as one that checks once."""

    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []
        self.by_name: dict[str, list[int]] = {}  # name: [checked, failed]
        self.checked = 0
        self.failed = 0

    def add(self, found: dict[str, Any]) -> bool:
        """Count ``found``; True when it is kept (appended to ``results``)."""
        passed = bool(found["passed"])
        counts = self.by_name.get(found["name"])
        first = counts is None
        if counts is None:
            counts = [0, 0]
            if len(self.by_name) < MAX_KEPT:
                self.by_name[found["name"]] = counts
        counts[0] += 1
        counts[1] += not passed
        self.checked += 1
        self.failed += not passed
        kept = len(self.results)
        if not (first or (not passed and counts[1] == 1)) or kept >= 2 * MAX_KEPT \
                or (passed and kept >= MAX_KEPT):
            return False
        self.results.append(found)
        return True

    def told(self) -> list[str]:
        """What the Trial's end line says of the contracts: the failed ones named (three at
        most), else how many checks passed."""
        failed = [item for item in self.results if not item["passed"]]
        if not failed:
            return [f"{self.checked} contract(s) passed"] if self.checked else []
        told = ["contract failed: " + ", ".join(
            f"{item['name']} ({item['detail']})" for item in failed[:3])
            + (f" and {len(failed) - 3} more" if len(failed) > 3 else "")]
        if self.checked > len(self.results):  # checks not kept one by one
            told.append(f"{self.failed} of {self.checked} contract checks failed")
        return told

    def passed(self) -> bool | None:
        """Whether every check passed, kept or not (None: none was made)."""
        return None if not self.checked else self.failed == 0

    def summary(self) -> dict[str, Any]:
        """attempt.json's ``contracts_summary``."""
        return {"checked": self.checked, "failed": self.failed,
                "by_name": [{"name": name, "checked": checked, "failed": failed}
                            for name, (checked, failed) in self.by_name.items()]}
