"""The boundary between the front and the worker, read from the sources: the front imports the
worker's protocol and nothing else of the worker, and the protocol needs nothing but the standard
library, so that it runs unchanged in the interpreter under diagnosis.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import os
import py_compile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conftest import SRC
from kernodeck_diagnostic import worker
from kernodeck_diagnostic.supervision.start import share_bytecode, worker_files
from kernodeck_diagnostic.worker.origin import stdlib_names
from kernodeck_diagnostic.worker.protocol import COMPANIONS

PACKAGE = SRC / "kernodeck_diagnostic"
WORKER = PACKAGE / "worker"
# The worker names the front may import besides the protocol: a Trial reads the facts of the
# program it runs in with the worker's own stages (trial/facts.py); the worker's start copies the
# companions the package names (worker/__init__.py: no worker module at all), and the front forked
# as the early worker runs the worker module, and tells its companion ``origin`` how to ask a fresh
# interpreter what it loads (supervision/start.py's ``_become_worker``: the front never runs them).
ALLOWED = {("trial/facts.py", "kernodeck_diagnostic.worker.readings", "environment"),
           ("supervision/start.py", "kernodeck_diagnostic.worker.COMPANIONS", "COMPANIONS"),
           ("supervision/start.py", "kernodeck_diagnostic.worker.stages", "stages"),
           ("supervision/start.py", "kernodeck_diagnostic.worker.origin", "origin")}


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
    modules = {path.stem for path in WORKER.glob("*.py")} - {"__init__", "stages", "launcher"}
    assert set(COMPANIONS) == modules
    # The list the front copies from, named before typing is loaded, is the protocol's.
    assert worker.COMPANIONS == COMPANIONS
    assert set(worker_files()) == {"worker.py", "stages.py",
                                   *(f"{name}.py" for name in COMPANIONS)}
    assert worker_files()["worker.py"] == (WORKER / "launcher.py").read_bytes()


def test_the_companions_load_the_packages_bytecode_beside_their_copies(tmp_path: Path) -> None:
    """Copied into the worker's private folder with the installed bytecode beside them, the
    worker module and its companions are not compiled again (issue 28): Python accepts that
    bytecode for the copies. A stale one (the source changed since) is refused and the copy
    compiled, as in the package."""
    sources = worker_files()
    for name in sources:
        if name != "worker.py":  # the bytecode an install has (pip compiles every module)
            original = str(WORKER / name)
            py_compile.compile(original, cfile=importlib.util.cache_from_source(original),
                               doraise=True)
        (tmp_path / name).write_bytes(sources[name])
    share_bytecode(str(tmp_path), sources)
    compiled = []

    class Loader(importlib.machinery.SourceFileLoader):
        def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> Any:  # type: ignore[override]
            compiled.append(Path(path).name)
            return super().source_to_code(data, path)

    for name in ("stages", *COMPANIONS):
        path = str(tmp_path / f"{name}.py")
        assert Loader(f"_kd_test_{name}", path).get_code(f"_kd_test_{name}") is not None
    assert compiled == []
    os.utime(tmp_path / "protocol.py", (1, 1))  # no longer the source the bytecode was made from
    Loader("_kd_test_protocol", str(tmp_path / "protocol.py")).get_code("_kd_test_protocol")
    assert compiled == ["protocol.py"]
