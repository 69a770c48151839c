"""Build the single-file download, dist/kernodeck-diagnostic-v1.pyz, with the standard zipapp.

    $ python scripts/build_pyz.py
    dist/kernodeck-diagnostic-v1.pyz (41 KiB, sha256 3f1c...)
    $ python dist/kernodeck-diagnostic-v1.pyz --device cpu --output diagnostic-cpu.json

The archive holds the package's sources and schema, so it runs on any Python 3.9+; an older one
gets one line saying so (exit 2). Beside each source, under its folder's ``__pycache__``, is its
bytecode for each interpreter named by ``--bytecode-for`` (default: the one running this
script), as an installed package has it, but checked against the source's hash (PEP 552): the
archive's entry point loads the front's modules from it (``_zipapp.py``; zipimport would compile
each one on every run), and the front copies the worker's beside the worker's files
(``supervision.start.share_bytecode``). Any other Python compiles the sources, as before. Python
3.9's zipimport loads modules without asking for their code: for it, only the worker's bytecode
is included. For a release, every supported one:

    $ python scripts/build_pyz.py \\
        --bytecode-for python3.9 python3.10 python3.11 python3.12 python3.13

Builds are reproducible: entries are sorted, with fixed dates and modes, and the bytecode is
compiled with a fixed hash seed, so two builds of the same sources with the same interpreters
are byte-identical.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipapp
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "kernodeck_diagnostic"
TARGET = ROOT / "dist" / "kernodeck-diagnostic-v1.pyz"
MAIN = "kernodeck_diagnostic._zipapp:main"  # zipapp ignores a return value: main exits
# The archive's __main__.py, in place of the one zipapp writes for MAIN. It runs first, in whatever
# Python the user has, so it parses on Python 2.7 (no f-strings, no annotations) and checks the
# version before anything of the package is imported: an older Python would otherwise stop at a
# SyntaxError (2.7, 3.6) or an ImportError (3.7, 3.8) with a traceback.
MAIN_SOURCE = """\
# -*- coding: utf-8 -*-
import sys

if sys.version_info < (3, 9):
    sys.stderr.write("kernodeck-diagnostic: Python 3.9 or newer is needed; this is Python "
                     "%d.%d\\n" % sys.version_info[:2])
    sys.exit(2)
import kernodeck_diagnostic._zipapp

kernodeck_diagnostic._zipapp.main()
"""
INCLUDED_SUFFIXES = {".py", ".json", ".typed"}
FIXED_DATE = (1980, 1, 2, 0, 0, 0)  # the earliest ZIP date, plus a day for any time zone
WORKER = f"{PACKAGE.name}/worker"
# Run by each interpreter of --bytecode-for, in the folder that holds the package: each module
# named after the folder argv[1] (the worker's, then "--" and the others, which only Python 3.10+
# loads from bytecode: see _zipapp.py), compiled into checked-hash bytecode under that folder,
# named as the interpreter names its own. Each code object names its file relative to the
# archive (the loader gives it its path): no path of the building machine in the archive.
COMPILE = """
import py_compile, sys
from importlib.util import cache_from_source
out, names = sys.argv[1], sys.argv[2:]
worker, others = names[:names.index("--")], names[names.index("--") + 1:]
for name in worker + (others if sys.version_info >= (3, 10) else []):
    py_compile.compile(name, cfile=out + "/" + cache_from_source(name), dfile=name, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
"""
COMPILE_TIMEOUT_S = 120


def build(target: Path = TARGET, bytecode_for: list[str] | None = None) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    zipapp.create_archive(PACKAGE.parent, target, interpreter="/usr/bin/env python3", main=MAIN,
                          filter=_included)
    _normalise(target, bytecode([sys.executable] if bytecode_for is None else bytecode_for))
    return target


def bytecode(pythons: list[str]) -> dict[str, bytes]:
    """Each module's bytecode compiled by each of ``pythons``, by its name in the archive."""
    sys.path.insert(0, str(PACKAGE.parent))
    from kernodeck_diagnostic.worker import COMPANIONS

    worker = [f"{WORKER}/{name}.py" for name in ("stages", *COMPANIONS)]
    sources = sorted(path.relative_to(PACKAGE.parent).as_posix() for path in PACKAGE.rglob("*.py"))
    others = [name for name in sources if _included(Path(name)) and name not in worker]
    # This environment (to find each interpreter as the shell does), without what would change
    # the bytecode or its name (PYTHONOPTIMIZE, PYTHONPYCACHEPREFIX...), with a fixed hash seed:
    # the order of a frozenset constant depends on it.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PYTHONHASHSEED"] = "0"
    found: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for python in pythons:
            try:
                subprocess.run([python, "-c", COMPILE, scratch, *worker, "--", *others],
                               check=True, timeout=COMPILE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                               env=env, cwd=PACKAGE.parent)
            except (OSError, subprocess.SubprocessError) as exc:
                why = (f"exit status {exc.returncode}"
                       if isinstance(exc, subprocess.CalledProcessError) else str(exc))
                raise SystemExit(f"build_pyz: the bytecode for {python}: {why}") from None
        for path in sorted(Path(scratch).rglob("*.pyc")):
            found[path.relative_to(scratch).as_posix()] = path.read_bytes()
    return found


def _included(path: Path) -> bool:
    """Only the package's own sources and data, never bytecode or build leftovers."""
    if path.parts[0] != PACKAGE.name or "__pycache__" in path.parts:
        return False
    return not path.suffix or path.suffix in INCLUDED_SUFFIXES


def _normalise(archive: Path, extra: dict[str, bytes]) -> None:
    """Rewrite the archive with sorted entries, fixed dates and modes, and the ``extra`` files:
    byte-identical rebuilds."""
    data = archive.read_bytes()
    shebang_end = data.index(b"\n") + 1 if data.startswith(b"#!") else 0
    rebuilt = archive.with_name(archive.name + ".tmp")
    with zipfile.ZipFile(archive) as source, rebuilt.open("wb") as file:
        file.write(data[:shebang_end])
        entries: dict[str, tuple[bool, zipfile.ZipInfo | None]] = {
            info.filename: (info.is_dir(), info) for info in source.infolist()}
        entries.update({name: (False, None) for name in extra})
        with zipfile.ZipFile(file, "w") as out:
            for name in sorted(entries):
                is_dir, info = entries[name]
                fixed = zipfile.ZipInfo(name, date_time=FIXED_DATE)
                fixed.external_attr = (0o40755 << 16 | 0x10) if is_dir else 0o100644 << 16
                fixed.compress_type = zipfile.ZIP_DEFLATED
                fixed.create_system = 3  # Unix, whatever machine builds it
                if name == "__main__.py":
                    data = MAIN_SOURCE.encode("utf-8")
                else:
                    data = extra[name] if info is None else source.read(info)
                out.writestr(fixed, data)
    os.chmod(rebuilt, 0o755)  # noqa: S103 - an executable archive, readable by all like any download
    os.replace(rebuilt, archive)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=TARGET,
                        help=f"default {TARGET.relative_to(ROOT)}")
    parser.add_argument("--bytecode-for", nargs="*", metavar="PYTHON",
                        help="the interpreters the bytecode is compiled for (default: "
                        "this one; none: sources only)")
    args = parser.parse_args(argv)
    target = build(args.output, args.bytecode_for)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    size = target.stat().st_size
    print(f"{os.path.relpath(target)} ({size // 1024} KiB, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
