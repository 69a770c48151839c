"""A mutation run over the modules that decide verdicts: does a test fail for each small wrong
change of the code that says pass or fail?

    scripts/mutants                              every mutant of every verdict module (hours)
    scripts/mutants --sample 60                  60 of them, drawn with a fixed seed
    scripts/mutants report/jobs.py --sample 20   20 of one module's
    scripts/mutants --list report/jobs.py        the mutants, nothing run
    scripts/mutants --only 'report/jobs.py::_job::...'   one mutant by its key (as listed)

Each mutant is ONE change, made on the syntax tree and written back into the source text in
place of the expression it changes: a comparison flipped (``==`` and ``!=``, ``<`` and ``>=``,
``in`` and ``not in``, ``is`` and ``is not``), ``and`` and ``or`` swapped, one operand of an
``and``/``or`` dropped, a ``not`` dropped, a branch never taken (``if X`` as ``if False``), a
plain condition negated, one member dropped from a set or from the tuple an ``in`` looks in, an
integer plus one, ``True`` and ``False`` swapped, ``min``/``max`` and ``any``/``all`` swapped,
a string's normalization dropped (``host.split(".")[0]`` as ``host``, ``.strip()``,
``.lower()``), ``+`` and ``-`` swapped beside an integer.

It never edits the clone: the tree as git sees it (tracked and untracked files, not the ignored
ones) is copied into a temporary folder, with a virtual environment of its own whose import path
is that copy's ``src`` and the dev venv's packages, so that the tool's children (``python -m
kernodeck_diagnostic``, started with the tests' interpreter) import the mutant too. One mutant at
a time is written into the copy, the module's fast tests (``MODULES``) run on it with pytest's
``-x`` within a time limit, and the original is put back. A mutant is *killed* when the tests
fail (or time out: said apart), *survived* when they pass. The unmutated copy's tests must pass
first.

A survivor is either a missing test (write the row that kills it) or equivalent to the original
(no input tells them apart): ``scripts/mutants-equivalent.txt`` lists those by key, each with why.
The score and what was run are recorded in docs/development.md. Exit status: 0 when every mutant
run was killed or is listed as equivalent, 1 when one survived, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "src/kernodeck_diagnostic"
EQUIVALENT = ROOT / "scripts" / "mutants-equivalent.txt"

# The modules that decide verdicts (relative to the package), each with the fast tests that pin
# it: the tests that import it and judge its output, not every test that runs the tool.
MODULES: dict[str, tuple[str, ...]] = {
    "report/codes.py": ("test_units.py", "test_findings.py", "test_compare_summarize.py"),
    # build assembles the whole report: the recorded runs' snapshots read all of it
    "report/build.py": ("test_snapshots.py", "test_units.py", "test_worker_protocol.py",
                        "test_distributed.py", "test_all_devices.py",
                        "test_verdicts_libraries.py"),
    "report/findings/core.py": ("test_findings.py", "test_findings_node.py",
                                "test_review_findings.py", "test_accelerators.py",
                                "test_thresholds.py"),
    "report/findings/application.py": ("test_findings.py", "test_review_findings.py",
                                       "test_findings_node.py"),
    "report/findings/build.py": ("test_findings.py", "test_review_findings.py",
                                 "test_accelerators.py"),
    "report/findings/device.py": ("test_findings.py", "test_findings_node.py",
                                  "test_review_findings.py", "test_accelerators.py",
                                  "test_thresholds.py", "test_advice_applied.py"),
    "report/findings/distributed.py": ("test_findings.py", "test_distributed.py"),
    "report/findings/interpreter.py": ("test_findings.py", "test_review_findings.py",
                                       "test_findings_advice.py"),
    "report/findings/libraries.py": ("test_findings.py", "test_verdicts_libraries.py"),
    "report/findings/node.py": ("test_findings_node.py", "test_findings.py",
                                "test_thresholds.py"),
    "resume/verdict.py": ("test_resume_verdict.py",),
    "report/compare.py": ("test_compare_summarize.py", "test_thresholds.py"),
    "ramp/outcome.py": ("test_ramp.py",),
    "report/jobs.py": ("test_summarize_jobs.py",),
    "report/distributed.py": ("test_distributed.py",),
    "report/redact.py": ("test_privacy.py", "test_review_privacy.py", "test_facts_privacy.py"),
    "trial/judge.py": ("test_judge.py",),
}

_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
    ast.LtE: ast.Gt, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_SWAPPED_CALLS = {"min": "max", "max": "min", "any": "all", "all": "any"}
_NORMALIZERS = {"strip", "lstrip", "rstrip", "lower", "upper", "casefold"}
_SPLITTERS = {"split", "rsplit", "partition", "rpartition"}


@dataclass(frozen=True)
class Mutant:
    module: str  # relative to the package, e.g. "report/jobs.py"
    function: str  # the qualified name of the function it is in, "<module>" outside one
    line: int
    start: tuple[int, int]  # (line, column) of the expression replaced, 1-based lines
    end: tuple[int, int]
    original: str
    replacement: str
    key: str  # module::function::original -> replacement[#n], stable across unrelated edits

    def describe(self) -> str:
        return f"{self.module}:{self.line} {self.function}: {self.original} -> {self.replacement}"


def _unparse(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


class _Finder(ast.NodeVisitor):
    """Every mutant of one module, as (node replaced, its replacement's source, function)."""

    def __init__(self) -> None:
        self.found: list[tuple[ast.expr, str, str]] = []
        self._scope: list[str] = []

    def _add(self, node: ast.expr, replacement: ast.expr | str) -> None:
        text = replacement if isinstance(replacement, str) else _unparse(replacement)
        self.found.append((node, text, ".".join(self._scope) or "<module>"))

    # -- where not to look --------------------------------------------------------------------
    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self._scope.append(node.name)
        for statement in node.body:
            self.visit(statement)
        if not isinstance(node, ast.ClassDef):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    self.visit(default)
        self._scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped  # noqa: N815

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        """Positions inside an f-string are not reliable before Python 3.12: left alone."""

    def visit_Assert(self, node: ast.Assert) -> None:
        """An assertion states what holds: mutating it only tests the assertion."""

    def visit_If(self, node: ast.If) -> None:
        if _unparse(node.test) in ("TYPE_CHECKING", "__name__ == '__main__'"):
            return
        self._condition(node.test)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._condition(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._condition(node.test)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        for test in node.ifs:
            self._condition(test)
        self.generic_visit(node)

    # -- the operators --------------------------------------------------------------------------
    def _condition(self, test: ast.expr) -> None:
        self._add(test, "False")  # the branch never taken
        if not isinstance(test, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Constant)):
            self._add(test, ast.UnaryOp(ast.Not(), copy.deepcopy(test)))

    def visit_Compare(self, node: ast.Compare) -> None:
        for index, op in enumerate(node.ops):
            flipped = copy.deepcopy(node)
            flipped.ops[index] = _FLIPPED[type(op)]()
            self._add(node, flipped)
        for index, op in enumerate(node.ops):
            members = node.comparators[index]
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(members, (ast.Tuple, ast.List)):
                self._dropped_members(node, index)
        self.generic_visit(node)

    def _dropped_members(self, node: ast.Compare, index: int) -> None:
        members = node.comparators[index]
        if not isinstance(members, (ast.Tuple, ast.List)) or len(members.elts) < 2:
            return
        for drop in range(len(members.elts)):
            smaller = copy.deepcopy(node)
            kept = smaller.comparators[index]
            if isinstance(kept, (ast.Tuple, ast.List)):
                del kept.elts[drop]
                self._add(node, smaller)

    def visit_Set(self, node: ast.Set) -> None:
        if len(node.elts) >= 2:
            for drop in range(len(node.elts)):
                smaller = copy.deepcopy(node)
                del smaller.elts[drop]
                self._add(node, smaller)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        swapped = copy.deepcopy(node)
        swapped.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self._add(node, swapped)
        for drop in range(len(node.values)):
            kept = [copy.deepcopy(value) for i, value in enumerate(node.values) if i != drop]
            self._add(node, kept[0] if len(kept) == 1 else ast.BoolOp(node.op, kept))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, copy.deepcopy(node.operand))
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, bool):
            self._add(node, repr(not node.value))
        elif isinstance(node.value, int):
            self._add(node, repr(node.value + 1))

    def visit_BinOp(self, node: ast.BinOp) -> None:
        integers = [side for side in (node.left, node.right) if isinstance(side, ast.Constant)
                    and type(side.value) is int]
        if integers and isinstance(node.op, (ast.Add, ast.Sub)):
            swapped = copy.deepcopy(node)
            swapped.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            self._add(node, swapped)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in _SWAPPED_CALLS:
            swapped = copy.deepcopy(node)
            swapped.func = ast.Name(_SWAPPED_CALLS[node.func.id], ast.Load())
            self._add(node, swapped)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _NORMALIZERS:
            self._add(node, copy.deepcopy(node.func.value))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        call = node.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr in _SPLITTERS and isinstance(node.slice, ast.Constant)):
            self._add(node, copy.deepcopy(call.func.value))
        self.generic_visit(node)


def mutants_of(module: str) -> list[Mutant]:
    source = (ROOT / PACKAGE / module).read_text(encoding="utf-8")
    finder = _Finder()
    finder.visit(ast.parse(source))
    found: list[Mutant] = []
    seen: dict[str, int] = {}
    for node, replacement, function in finder.found:
        if node.end_lineno is None or node.end_col_offset is None:
            continue
        original = _unparse(node)
        if replacement == original:
            continue
        key = f"{module}::{function}::{original} -> {replacement}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key += f"#{seen[key]}"
        found.append(Mutant(module, function, node.lineno, (node.lineno, node.col_offset),
                            (node.end_lineno, node.end_col_offset), original, replacement, key))
    return found


def mutated(source: str, mutant: Mutant) -> str | None:
    """The module's source with the mutant in place of its expression, in parentheses (always
    safe where an expression stands); None if that does not compile."""
    lines = source.splitlines(keepends=True)
    (first, start), (last, end) = mutant.start, mutant.end
    # ast's columns count UTF-8 bytes
    head = lines[first - 1].encode()[:start].decode()
    tail = lines[last - 1].encode()[end:].decode()
    text = "".join([*lines[: first - 1], head, f"({mutant.replacement})", tail, *lines[last:]])
    try:
        compile(text, mutant.module, "exec", dont_inherit=True)
    except SyntaxError:
        return None
    return text


def equivalents() -> dict[str, str]:
    """The survivors explained as equivalent: a key on a line of its own, then the reason, each
    line of it indented."""
    found: dict[str, str] = {}
    key = None
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines() if EQUIVALENT.exists() else []:
        if not line.strip() or line.startswith("#"):
            continue
        if line[0].isspace() and key is not None:
            found[key] = (found[key] + " " + line.strip()).strip()
        else:
            key = line.strip()
            found[key] = ""
    return found


# -- the copy and its interpreter ----------------------------------------------------------------
def _copy_tree(target: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
    for name in sorted({entry for entry in listed.decode().split("\0") if entry}):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)


def _interpreter(folder: Path, tree: Path) -> Path:
    """A venv whose import path is the copy's ``src``, then this interpreter's packages (the dev
    venv's: pytest and the rest), without the editable install that points at the clone."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True,
                   timeout=120)
    python = folder / "bin" / "python"
    found = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    dev_sites = [entry for entry in sys.path if entry.endswith("site-packages")]
    Path(found, "_kernodeck_mutants.pth").write_text(
        "\n".join([str(tree / "src"), *dev_sites]) + "\n", encoding="utf-8")
    return python


def _forget_bytecode(path: Path) -> None:
    """A source written twice within a second, at the same size, would pass the cached
    bytecode's check: that bytecode goes."""
    for cached in path.parent.glob(f"__pycache__/{path.stem}.*.pyc"):
        cached.unlink()


def _run_tests(python: Path, tree: Path, tests: tuple[str, ...],
               timeout: float) -> tuple[str, float]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["KERNODECK_TEST_FAST"] = "1"
    command = [str(python), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               "-p", "no:randomly", "-m", "not slow and not long",
               *(f"tests/{name}" for name in tests)]
    start = time.monotonic()
    try:
        completed = subprocess.run(command, cwd=tree, env=env, capture_output=True,
                                   timeout=timeout, check=False, start_new_session=True)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start
    took = time.monotonic() - start
    if completed.returncode == 0:
        return "passed", took
    if completed.returncode in (1, 2, 3):  # tests failed, interrupted, an internal error
        return "failed", took
    tail = completed.stdout.decode(errors="replace")[-2000:]
    raise SystemExit(f"mutants: pytest exited {completed.returncode}:\n{tail}")


# -- the run ---------------------------------------------------------------------------------------
def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/mutants", description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help="modules under src/kernodeck_diagnostic (default: every verdict"
                             " module): " + ", ".join(MODULES))
    parser.add_argument("--sample", type=int, metavar="N",
                        help="run N mutants drawn at random (seeded) among them")
    parser.add_argument("--seed", type=int, default=47, help="the sample's seed (default 47)")
    parser.add_argument("--only", action="append", default=[], metavar="KEY",
                        help="run the mutant of this key (as --list shows it); repeatable")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--timeout", type=float, default=0, metavar="S",
                        help="each mutant's time limit (default: 3 times the tests' own run,"
                             " at least 60 s)")
    parser.add_argument("--skip-equivalent", action="store_true",
                        help="do not run the mutants listed as equivalent")
    arguments = parser.parse_args(argv)
    unknown = [name for name in arguments.modules if name not in MODULES]
    if unknown:
        parser.error(f"not a verdict module: {', '.join(unknown)}")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    modules = arguments.modules or list(MODULES)
    candidates = [mutant for module in modules for mutant in mutants_of(module)]
    explained = equivalents()
    if arguments.only:
        candidates = [mutant for mutant in candidates if mutant.key in arguments.only]
        missing = set(arguments.only) - {mutant.key for mutant in candidates}
        if missing:
            print(f"mutants: no such mutant: {', '.join(sorted(missing))}", file=sys.stderr)
            return 2
    if arguments.skip_equivalent:
        candidates = [mutant for mutant in candidates if mutant.key not in explained]
    if arguments.sample is not None and arguments.sample < len(candidates):
        candidates = random.Random(arguments.seed).sample(  # noqa: S311 (a sample, no secret)
            candidates, arguments.sample)
        candidates.sort(key=lambda mutant: (modules.index(mutant.module), mutant.start))
    if arguments.list:
        for mutant in candidates:
            print(f"{mutant.module}:{mutant.line}  {mutant.key}")
        print(f"{len(candidates)} mutants of {len(modules)} modules")
        return 0
    stale = sorted(set(explained) - {m.key for module in modules for m in mutants_of(module)}
                   - {m.key for module in MODULES if module not in modules
                      for m in mutants_of(module)})
    for key in stale:
        print(f"mutants: listed as equivalent, no longer a mutant: {key}", file=sys.stderr)
    return _run(candidates, explained, arguments.timeout)


def _run(candidates: list[Mutant], explained: dict[str, str], timeout: float) -> int:
    counts = {"killed": 0, "timeout": 0, "survived": 0, "equivalent": 0, "invalid": 0}
    with tempfile.TemporaryDirectory(prefix="kernodeck-mutants-") as folder:
        tree = Path(folder) / "tree"
        _copy_tree(tree)
        python = _interpreter(Path(folder) / "venv", tree)
        baselines: dict[tuple[str, ...], float] = {}
        for mutant in candidates:
            tests = MODULES[mutant.module]
            if tests not in baselines:
                outcome, took = _run_tests(python, tree, tests, 900)
                if outcome != "passed":
                    print(f"mutants: the unmutated tests fail: {' '.join(tests)}",
                          file=sys.stderr)
                    return 2
                baselines[tests] = took
            path = tree / PACKAGE / mutant.module
            original = path.read_text(encoding="utf-8")
            text = mutated(original, mutant)
            if text is None:
                counts["invalid"] += 1
                print(f"invalid    {mutant.describe()}")
                continue
            path.write_text(text, encoding="utf-8")
            _forget_bytecode(path)
            try:
                limit = timeout or max(60.0, 3 * baselines[tests])
                outcome, took = _run_tests(python, tree, tests, limit)
            finally:
                path.write_text(original, encoding="utf-8")
                _forget_bytecode(path)
            verdict = {"failed": "killed", "timeout": "timeout"}.get(outcome, "survived")
            if verdict == "survived" and mutant.key in explained:
                verdict = "equivalent"
            counts[verdict] += 1
            shown = "SURVIVED" if verdict == "survived" else verdict
            print(f"{shown:<11}{mutant.describe()}  ({took:.0f} s)", flush=True)
            if verdict == "survived":
                print(f"           key: {mutant.key}", flush=True)
    judged = len(candidates) - counts["invalid"] - counts["equivalent"]
    dead = counts["killed"] + counts["timeout"]
    score = f"{dead}/{judged} killed ({100 * dead / judged:.0f} %)" if judged else "nothing run"
    print(f"{score}; " + ", ".join(f"{count} {name}" for name, count in counts.items()))
    return 1 if counts["survived"] else 0


if __name__ == "__main__":
    sys.exit(main())
