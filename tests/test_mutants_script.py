"""scripts/mutants.py, the mutation run over the verdict modules: what it would run, without
running it (a run takes minutes per module; its score is in docs/development.md)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from types import ModuleType

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def mutants() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kd_mutants", ROOT / "scripts" / "mutants.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_verdict_module_and_its_tests_exist(mutants: ModuleType) -> None:
    for module, tests in mutants.MODULES.items():
        assert (ROOT / mutants.PACKAGE / module).is_file(), module
        assert tests, module
        for name in tests:
            assert (ROOT / "tests" / name).is_file(), (module, name)


# The mutants issue 47 named, each by the change it makes: found, and written where they belong.
NAMED = [
    ("report/findings/core.py", "gpu_failed",
     "Verdict.WORKER_FAILED, Verdict.TIMEOUT)", "Verdict.WORKER_FAILED)"),
    ("report/jobs.py", "_job", "len(codes) == world and len(sizes) == 1", "len(codes) == world"),
    ("report/distributed.py", "job_error", "block['missing_ranks'] is None", "False"),
    ("report/redact.py", "_host_names", "host.split('.')[0]", "host"),
]


@pytest.mark.parametrize(("module", "function", "original", "replacement"), NAMED,
                         ids=[row[0] for row in NAMED])
def test_the_named_mutants_are_found_and_written_in_place(
        mutants: ModuleType, module: str, function: str, original: str,
        replacement: str) -> None:
    found = [mutant for mutant in mutants.mutants_of(module) if mutant.function == function
             and mutant.original.endswith(original) and mutant.replacement.endswith(replacement)]
    assert len(found) == 1, [mutant.key for mutant in mutants.mutants_of(module)
                             if mutant.function == function]
    (mutant,) = found
    source = (ROOT / mutants.PACKAGE / module).read_text(encoding="utf-8")
    text = mutants.mutated(source, mutant)
    assert text is not None
    before, after = source.splitlines(), text.splitlines()
    changed = [number for number, (old, new) in enumerate(zip(before, after), start=1)
               if old != new]
    assert changed[:1] == [mutant.start[0]], changed
    assert f"({mutant.replacement})" in after[mutant.start[0] - 1]
    assert len(after) == len(before) - (mutant.end[0] - mutant.start[0])
    ast.parse(text)


def test_each_mutant_changes_one_expression_and_compiles(mutants: ModuleType) -> None:
    """Every mutant of a small module: a source that still compiles and differs, keys unique."""
    found = mutants.mutants_of("resume/verdict.py")
    assert len({mutant.key for mutant in found}) == len(found)
    source = (ROOT / mutants.PACKAGE / "resume/verdict.py").read_text(encoding="utf-8")
    kinds = set()
    for mutant in found:
        text = mutants.mutated(source, mutant)
        assert text is not None, mutant.key
        assert text != source
        kinds.add(mutant.replacement.split(" ")[0])
    assert "False" in kinds  # a branch never taken


def test_the_equivalent_mutants_listed_are_still_mutants_and_explained(
        mutants: ModuleType) -> None:
    listed = mutants.equivalents()
    every = {mutant.key for module in mutants.MODULES for mutant in mutants.mutants_of(module)}
    for key, why in listed.items():
        assert key in every, f"no longer a mutant: {key}"
        assert len(why) > 20, f"say why it is equivalent: {key}"
