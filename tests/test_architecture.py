"""The package's arrows point down: no import circle, no floor importing a higher one, and no
private (underscore) name imported from another module.

Every module's imports are read with ``ast``, never by importing it: relative imports resolved,
imports inside functions and under ``TYPE_CHECKING`` counted like the others (each is an arrow
the code relies on, sooner or later). One kind of import is told apart: a package's lazy public
attributes (PEP 562, a module-level ``__getattr__``: the root's ``check``, ``Report``, ``Trial``...)
are loaded on first use, after the package itself, so they are a node of their own, the
package's *facade* (``PACKAGE.__getattr__``), with the ``TYPE_CHECKING`` imports that declare
their types. The root's facade is the top floor; its body (what was loaded when the package
began, and the working folder ``python -m`` put first) is the lowest.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conftest import SRC

PACKAGE = "kernodeck_diagnostic"
ROOT_BODY, FACADE = "__init__", "__getattr__"

# The floors, lowest first. A module belongs to the floor of the longest entry that is its name
# or a package above it (``report`` holds ``report.findings``, a module or a package alike). A
# module may import its own floor (without a circle) and any floor below it, never one above.
FLOORS: tuple[tuple[str, ...], ...] = (
    # 0. What every side may import: the root's own body (its start records), the worker's
    #    wire protocol (standard library only, imported by the worker and the front alike), the
    #    request types, the report's schema and its checker, and small standard-library-only
    #    utilities (JSON for what the front did not write, the package's identity and files,
    #    the message catalogs, the console, which interpreter is the front's, splitting work in
    #    processes, creating files without following another user's links, appending lines made
    #    durable in batches, child processes bounded in time and killed whole).
    (ROOT_BODY, "worker.protocol", "request", "report_schema", "untrusted_json", "package_data",
     "i18n", "terminal", "interpreter", "forked", "at_fork", "safe_files", "group_commit",
     "children"),
    # 1. The worker: what runs inside the user's interpreter (the stages, the origin analysis,
    #    the collective, the library layer); the front reads its names and bounds.
    ("worker",),
    # 2. What the front reads itself, beside the worker: the facts (its host tools run as
    #    bounded children, from floor 0).
    ("facts",),
    # 3. What the front starts and supervises: the worker, the user's application (the rank's
    #    place in its job read from the facts); and what the API holds a check to before and
    #    after its worker runs: its arguments (``Options``, the rank's place read from the
    #    facts), the interpreter asked what it is when the worker never ran in it.
    ("supervision", "arguments", "interpreter_probe"),
    # 4. The report: model, codes, redaction, findings, rendering, loading, writing.
    ("report",),
    # 5. What stands on the report: the trial toolkit (in the user's program) and its adapters to
    #    training frameworks (Lightning, Transformers, Accelerate, each imported when used), the
    #    output ledger.
    ("trial", "trial.adapters", "ledger"),
    # 6. What stands on the trial toolkit: the ramp (its attempts judged as a Trial's, and
    #    summarize's rows of attempts and ramps), resume-check's core (the ledger checked too).
    ("ramp", "resume"),
    # 7. The Python API: check() and Report.
    ("api",),
    # 8. The commands: parse, call, print.
    ("commands",),
    # 9. The entry points, and the package's public facade (its lazy attributes).
    ("cli", "__main__", "_zipapp", FACADE),
)

@dataclass(frozen=True)
class Arrow:
    source: str  # the importing node: a module's name relative to the package, or a facade
    target: str  # the imported module (relative name; ROOT_BODY for the package itself)
    name: str | None  # the name imported from it (``from target import name``), if any
    line: int
    implicit: bool = False  # the parent package an import of its submodule runs first

    def __str__(self) -> str:
        shown = f" ({self.name})" if self.name else ""
        return f"{self.source}:{self.line} -> {self.target}{shown}"


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package by its relative name, with its file and whether it is a
    package (its ``__init__``); the root is ROOT_BODY."""
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC / PACKAGE).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts = parts[:-1]
        found[".".join(parts) or ROOT_BODY] = (path, package)
    return found


def _absolute(name: str) -> list[str]:
    return [] if name == ROOT_BODY else name.split(".")


def _relative(dotted: str) -> str | None:
    """``kernodeck_diagnostic.x.y`` as ``x.y`` (ROOT_BODY for the package); None outside it."""
    if dotted == PACKAGE:
        return ROOT_BODY
    return dotted[len(PACKAGE) + 1:] if dotted.startswith(PACKAGE + ".") else None


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _facade_nodes(tree: ast.Module) -> set[int]:
    """The ids of the import nodes that belong to a package's facade: those inside its
    module-level ``__getattr__`` and, when it has one, under its module-level TYPE_CHECKING."""
    lazy = [node for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"]
    if not lazy:
        return set()
    owned = [*lazy, *(node for node in tree.body
                      if isinstance(node, ast.If) and _type_checking(node))]
    return {id(inner) for node in owned for inner in ast.walk(node)
            if isinstance(inner, (ast.Import, ast.ImportFrom))}


def arrows() -> Iterator[Arrow]:
    known = modules()
    for name, (path, package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        facade = _facade_nodes(tree) if package else set()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if id(node) in facade:
                source = FACADE if name == ROOT_BODY else f"{name}.{FACADE}"
            else:
                source = name
            for target, imported in _targets(node, name, package, known):
                yield Arrow(source, target, imported, node.lineno)
        # Importing a module first runs each package above it (their __init__).
        parts = _absolute(name)
        for depth in range(len(parts) - 1, -1, -1):
            yield Arrow(name, ".".join(parts[:depth]) or ROOT_BODY, None, 0, implicit=True)


def _targets(node: ast.Import | ast.ImportFrom, name: str, package: bool,
             known: dict[str, tuple[Path, bool]]) -> Iterator[tuple[str, str | None]]:
    """The package's modules an import statement loads, each with the name it takes."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            target = _relative(alias.name)
            if target is not None:
                yield _module(target, known), None
        return
    if node.level:
        base = [PACKAGE, *_absolute(name)]
        if not package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        dotted = ".".join([*base, *([node.module] if node.module else [])])
    else:
        dotted = node.module or ""
    origin = _relative(dotted)
    if origin is None:
        return
    for alias in node.names:
        submodule = alias.name if origin == ROOT_BODY else f"{origin}.{alias.name}"
        if submodule in known:
            yield submodule, None  # ``from package import module``
        else:
            yield _module(origin, known), alias.name


def _module(target: str, known: dict[str, tuple[Path, bool]]) -> str:
    while target not in known and "." in target:
        target = target.rsplit(".", 1)[0]
    return target if target in known else ROOT_BODY


def floor(node: str) -> int:
    """The floor of a module or facade: that of its longest entry in FLOORS."""
    matches = [(len(entry), level) for level, entries in enumerate(FLOORS) for entry in entries
               if node == entry or (entry not in (ROOT_BODY, FACADE)
                                    and node.startswith(entry + "."))]
    if not matches:
        raise AssertionError(f"{node} has no floor: place it in FLOORS")
    return max(matches)[1]


def test_every_module_has_a_floor() -> None:
    for name in modules():
        floor(name)
    assert floor(FACADE) == len(FLOORS) - 1
    assert floor(ROOT_BODY) == 0


def test_no_module_imports_a_higher_floor() -> None:
    upward = [f"{arrow} (floor {floor(arrow.source)} -> {floor(arrow.target)})"
              for arrow in arrows() if not arrow.implicit
              and floor(arrow.target) > floor(arrow.source)]
    assert upward == []


def test_no_import_circle() -> None:
    # A package's __init__ that gathers its own modules (report/findings/ gathers its layers) is
    # no circle with them: a module reaches its own packages first by how Python imports, not by
    # an import of its own (an explicit one from a module back to its package still counts).
    graph: dict[str, set[str]] = {}
    for arrow in arrows():
        if arrow.source != arrow.target and not arrow.implicit:
            graph.setdefault(arrow.source, set()).add(arrow.target)
    circles = [sorted(group) for group in _strongly_connected(graph) if len(group) > 1]
    assert circles == []


# What the root's body holds for the modules below it: what the interpreter had loaded, and where
# imports were searched, when the package began (which only its first lines can record), and the
# working folder ``python -m`` put first. The package's identity (its name and version) is
# ``package_data``'s: the root's ``__version__`` repeats it for its users, not for its modules.
START_RECORDS = frozenset(("MODULES_AT_START", "PATH_AT_START", "PYTHON_M_PATH0"))


def test_the_root_gives_its_modules_only_its_start_records() -> None:
    taken = {str(arrow) for arrow in arrows() if arrow.target == ROOT_BODY
             and not arrow.implicit and arrow.source not in (ROOT_BODY, FACADE)
             and arrow.name not in START_RECORDS}
    assert taken == set()


def package_of(node: str) -> str:
    """The top-level package (or module) a node belongs to: ``trial`` for ``trial.rows``; the
    root's body and its facade are nodes of their own."""
    return node if node in (ROOT_BODY, FACADE) else node.split(".", maxsplit=1)[0]


def test_no_import_circle_between_packages() -> None:
    # Packages seen whole: a circle between two packages (a module of ``trial`` importing
    # ``ramp`` while ``ramp`` imports ``trial``) ties them together even when no two modules
    # import each other. A package's own facade (``trial.__getattr__``) is part of it.
    graph: dict[str, set[str]] = {}
    for arrow in arrows():
        source, target = package_of(arrow.source), package_of(arrow.target)
        if source != target and not arrow.implicit:
            graph.setdefault(source, set()).add(target)
    circles = [sorted(group) for group in _strongly_connected(graph) if len(group) > 1]
    assert circles == []


def test_no_private_name_crosses_a_module() -> None:
    crossing = {(arrow.source, arrow.target, arrow.name) for arrow in arrows()
                if arrow.name is not None and arrow.name.startswith("_")
                and not arrow.name.startswith("__") and arrow.source != arrow.target}
    assert crossing == set()


def test_the_reader_sees_what_the_code_imports() -> None:
    """The reading itself: relative imports, imports in functions, TYPE_CHECKING, facades."""
    found = {(arrow.source, arrow.target, arrow.name) for arrow in arrows()}
    assert ("supervision.start", ROOT_BODY, "MODULES_AT_START") in found  # from .. import
    assert ("report.build", "package_data", "VERSION") in found  # from ..module import
    assert ("report.build", "report", "SCHEMA_VERSION") in found  # from . import, a package's
    assert ("trial.session", "trial.contracts", None) in found  # from . import module
    assert ("api", "report.build", "build") in found  # inside a function
    assert ("api", "supervision.supervisor", "WorkerRun") in found  # under TYPE_CHECKING
    assert (FACADE, "api", None) in found  # the root's lazy check and Report
    assert ("trial.__getattr__", "trial.session", None) in found
    assert ("report.build", "report", None) in found  # the parent package, run first


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                groups.append(group)
    return groups


# A module a maintainer reads whole: past this many lines it holds more than one subject. The
# message catalogs are tables, one line a message, and are exempt.
MAX_MODULE_LINES = 700
TABLES = frozenset(("i18n.en", "i18n.pt", "i18n.fr"))


def test_no_module_is_longer_than_a_maintainer_reads_whole() -> None:
    long = {name: lines for name, (path, _) in modules().items() if name not in TABLES
            and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}
