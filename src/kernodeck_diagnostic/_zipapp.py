"""The single-file download's entry point: the command line, each module compiled once, not twice.

The archive holds sources only (any Python 3.9+ runs it), so every module the front imports is
compiled on every run. CPython's zipimport compiles each one twice: once to answer
``get_filename``, which the import system asks while it builds the module's spec, and once more to
load it. That doubled about 30 ms of the zipapp's start (docs/performance.md). The importer below
names the file without compiling it; everything else is zipimport's own.
"""

from __future__ import annotations

import os
import sys
import zipimport
from typing import NoReturn


class _Importer(zipimport.zipimporter):
    def get_filename(self, fullname: str) -> str:
        # The archive has no bytecode: a module's file is its package's __init__.py or name.py,
        # in the form zipimport itself gives (archive, separator, prefix, file).
        name = fullname.rpartition(".")[2]
        tail = name + os.sep + "__init__.py" if self.is_package(fullname) else name + ".py"
        return self.archive + os.sep + self.prefix + tail


def install() -> None:
    """Use the importer for the archive's folders: those already seen, and those to come."""
    sys.path_hooks[:] = [_Importer if hook is zipimport.zipimporter else hook
                         for hook in sys.path_hooks]
    for path, finder in list(sys.path_importer_cache.items()):
        if type(finder) is zipimport.zipimporter:
            sys.path_importer_cache[path] = _Importer(path)


def main() -> NoReturn:
    install()
    from .cli import entry

    entry()
