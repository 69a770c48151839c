"""Build the single-file download, dist/kernodeck-diagnostic-v1.pyz, with the standard zipapp.

    $ python scripts/build_pyz.py
    dist/kernodeck-diagnostic-v1.pyz (41 KiB, sha256 3f1c...)
    $ python dist/kernodeck-diagnostic-v1.pyz --device cpu --output diagnostic-cpu.json

The archive holds the package's sources and schema only (no bytecode), so it runs on any Python
3.9+; an older one gets one line saying so (exit 2). Builds are reproducible: entries are sorted,
with fixed dates and modes, so two builds of the same sources are byte-identical.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
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


def build(target: Path = TARGET) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    zipapp.create_archive(PACKAGE.parent, target, interpreter="/usr/bin/env python3", main=MAIN,
                          filter=_included)
    _normalise(target)
    return target


def _included(path: Path) -> bool:
    """Only the package's own sources and data, never bytecode or build leftovers."""
    if path.parts[0] != PACKAGE.name or "__pycache__" in path.parts:
        return False
    return not path.suffix or path.suffix in INCLUDED_SUFFIXES


def _normalise(archive: Path) -> None:
    """Rewrite the archive with sorted entries, fixed dates and modes: byte-identical rebuilds."""
    data = archive.read_bytes()
    shebang_end = data.index(b"\n") + 1 if data.startswith(b"#!") else 0
    rebuilt = archive.with_name(archive.name + ".tmp")
    with zipfile.ZipFile(archive) as source, rebuilt.open("wb") as file:
        file.write(data[:shebang_end])
        with zipfile.ZipFile(file, "w") as out:
            for info in sorted(source.infolist(), key=lambda item: item.filename):
                fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_DATE)
                fixed.external_attr = (0o40755 << 16 | 0x10) if info.is_dir() else 0o100644 << 16
                fixed.compress_type = zipfile.ZIP_DEFLATED
                fixed.create_system = 3  # Unix, whatever machine builds it
                data = MAIN_SOURCE.encode("utf-8") if info.filename == "__main__.py" \
                    else source.read(info.filename)
                out.writestr(fixed, data)
    os.chmod(rebuilt, 0o755)  # noqa: S103 - an executable archive, readable by all like any download
    os.replace(rebuilt, archive)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=TARGET,
                        help=f"default {TARGET.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    target = build(args.output)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    size = target.stat().st_size
    print(f"{os.path.relpath(target)} ({size // 1024} KiB, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
