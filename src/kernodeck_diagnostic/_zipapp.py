"""The single-file download's entry point: the command line, each module compiled once, not twice.

The archive holds sources (any Python 3.9+ runs it), so every module the front imports is
compiled on every run (its one bytecode, the worker's, lies under ``__pycache__``, where zipimport
never looks: the worker reads it, scripts/build_pyz.py). CPython's zipimport compiles each one
twice: once to answer ``get_filename``, which the import system asks while it builds the
module's spec, and once more to load it (CPython issue gh-141276, "Syntax warnings are
duplicated in zipimport", open for 3.13, 3.14 and 3.15 when this was written). That doubled
about 30 ms of the zipapp's start (docs/performance.md). The importer below names the file
without compiling it; everything else is zipimport's own.

It leans on zipimport's internals (a subclass, its ``archive`` and ``prefix`` attributes), which a
future Python may change. So nothing here may fail a run: if the subclass cannot be made, if its
names disagree with zipimport's own for the modules already imported, or if naming a module fails
later, zipimport's own importer does the work, one compile slower.
"""

from __future__ import annotations

import contextlib
import os
import sys
import zipimport

# Not typing's: it would lengthen the path to the worker's start (docs/performance.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, NoReturn

try:
    class _NamingImporter(zipimport.zipimporter):
        """zipimport's importer, except that it names a module's file without compiling it."""

        def get_filename(self, fullname: str, *args: Any, **kwargs: Any) -> str:
            if not args and not kwargs:  # extra arguments: a signature of a later Python
                # A zipimport whose internals changed raises here: then its own answer.
                with contextlib.suppress(Exception):
                    return _file_name(self, fullname)
            return super().get_filename(fullname, *args, **kwargs)
except Exception:  # a zipimporter that cannot be subclassed (a C type again, say)
    _IMPORTER: type[zipimport.zipimporter] | None = None
else:
    _IMPORTER = _NamingImporter


def _file_name(importer: zipimport.zipimporter, fullname: str) -> str:
    # No bytecode beside the sources: a module's file is its package's __init__.py or name.py, in
    # the form zipimport itself gives (archive, separator, prefix, file).
    name = fullname.rpartition(".")[2]
    tail = name + os.sep + "__init__.py" if importer.is_package(fullname) else name + ".py"
    return importer.archive + os.sep + importer.prefix + tail


def _hook(path: str) -> zipimport.zipimporter:
    """The path hook: the naming importer for a folder of an archive, zipimport's if it fails."""
    if _IMPORTER is not None:
        try:
            return _IMPORTER(path)
        except ImportError:
            raise  # not an archive (ZipImportError): the next hook's turn, as before
        except Exception:  # a constructor of a later Python: zipimport's own importer
            return zipimport.zipimporter(path)
    return zipimport.zipimporter(path)


def _names_agree(*modules: ModuleType) -> bool:
    """Whether the naming importer names each module as zipimport did when it imported it.

    ``modules`` were imported before ``install``, by zipimport itself: their ``__file__`` is its
    answer. A disagreement, or any failure, means this Python's zipimport is not the one the
    naming importer was written for.
    """
    if _IMPORTER is None:
        return False
    try:
        for module in modules:
            file, name = str(module.__file__), module.__name__
            folder = os.path.dirname(file)
            if file.endswith(os.sep + "__init__.py"):
                folder = os.path.dirname(folder)  # a package is found from its parent's folder
            if _file_name(_IMPORTER(folder), name) != file:
                return False
    except Exception:  # not in an archive, or a zipimport that changed
        return False
    return True


def install() -> bool:
    """Use the naming importer for the archive's folders, those already seen and those to come.

    Returns whether it is in use; when it is not, zipimport's own importer does everything.
    """
    if not _names_agree(sys.modules[__name__.rpartition(".")[0]], sys.modules[__name__]):
        return False
    sys.path_hooks[:] = [_hook if hook is zipimport.zipimporter else hook
                         for hook in sys.path_hooks]
    for path, finder in list(sys.path_importer_cache.items()):
        if type(finder) is zipimport.zipimporter:
            sys.path_importer_cache[path] = _hook(path)
    return True


def main() -> NoReturn:
    install()
    from .cli import entry

    entry()
