"""The boundary between the front and the worker, read from the sources: the front imports the
worker's protocol and nothing else of the worker, and the protocol needs nothing but the standard
library, so that it runs unchanged in the interpreter under diagnosis.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from conftest import SRC
from kernodeck_diagnostic.supervision.supervisor import worker_files
from kernodeck_diagnostic.worker.origin import stdlib_names
from kernodeck_diagnostic.worker.protocol import COMPANIONS

PACKAGE = SRC / "kernodeck_diagnostic"
WORKER = PACKAGE / "worker"
# The one worker name the front may import besides the protocol: a Trial reads the facts of the
# program it runs in with the worker's own stages (trial/facts.py).
ALLOWED = {("trial/facts.py", "kernodeck_diagnostic.worker.readings", "environment")}


def imports(path: Path) -> Iterator[tuple[str, str | None]]:
    """(module, name imported from it or None) for every import of the file, at any depth,
    relative ones resolved against the file's package."""
    package = ".".join(path.relative_to(SRC).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            for alias in node.names:
                yield base, alias.name


def worker_module(module: str, name: str | None) -> str | None:
    """The worker module an import reaches (``kernodeck_diagnostic.worker.X``), if any."""
    if module == "kernodeck_diagnostic.worker" and name is not None:
        return f"{module}.{name}"
    if module.startswith("kernodeck_diagnostic.worker."):
        return ".".join(module.split(".")[:3])
    return None


def test_the_front_imports_only_the_protocol_of_the_worker() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if WORKER in path.parents:
            continue
        where = path.relative_to(PACKAGE).as_posix()
        for module, name in imports(path):
            reached = worker_module(module, name)
            if reached in (None, "kernodeck_diagnostic.worker.protocol"):
                continue
            if (where, reached, name) not in ALLOWED:
                found.append(f"{where}: {module} {name or ''}".strip())
    assert found == []


def test_the_protocol_imports_the_standard_library_alone() -> None:
    stdlib = stdlib_names()
    found = [(module, name) for module, name in imports(WORKER / "protocol.py")
             if module.split(".")[0] not in stdlib]
    assert found == []


def test_every_worker_module_is_copied_beside_the_worker() -> None:
    """A companion left out of COMPANIONS would be missing from the worker's private folder."""
    modules = {path.stem for path in WORKER.glob("*.py")} - {"__init__", "stages"}
    assert set(COMPANIONS) == modules
    assert set(worker_files()) == {"worker.py", *(f"{name}.py" for name in COMPANIONS)}
