"""The single-file download's entry point: the command line, each module loaded from bytecode.

The archive holds every module's source (any Python 3.9+ runs it) and, under each folder's
``__pycache__``, the bytecode of the Pythons it was built for (scripts/build_pyz.py), checked
against the source's hash (PEP 552). zipimport never reads a ``__pycache__``: it compiles every
module the front imports on every run, and compiles each one twice, once to answer
``get_filename``, which the import system asks while it builds the module's spec, and once more
to load it (CPython issue gh-141276, "Syntax warnings are duplicated in zipimport", open for
3.13, 3.14 and 3.15 when this was written). That was about 30 ms of the zipapp's start, and once
the worker runs, the front's reading of its command line is what the worker waits for
(docs/performance.md). The importer below names a module's file without compiling it, and loads
the module from this Python's bytecode in the archive when it matches its source; everything
else is zipimport's own. On Python 3.9, whose zipimport loads a module without asking for its
code, every module is compiled once (the archive holds only the worker's bytecode for it).

The package, this module and ``package_data`` (which names the bytecode) are imported before the
importer is installed: zipimport compiles those three, as before.

It leans on zipimport's internals (a subclass, its ``archive`` and ``prefix`` attributes), which a
future Python may change. So nothing here may fail a run: if the subclass cannot be made, if its
names disagree with zipimport's own for the modules already imported, or if naming or loading a
module fails later, zipimport's own importer does the work, compiling the source.
"""

from __future__ import annotations

import _imp
import contextlib
import marshal
import os
import sys
import zipimport

from .package_data import bytecode_name

# What importlib.util would give (loading it takes 2 ms), from the import system itself: the
# bytecode's magic number, and how a loader gives compiled code its file's path. Missing (another
# interpreter, a later Python): every module is compiled.
_MAGIC: bytes | None = getattr(sys.modules.get("_frozen_importlib_external"), "MAGIC_NUMBER",
                               None)
_FIX_FILENAME = getattr(_imp, "_fix_co_filename", None)

# Not typing's: it would lengthen the path to the worker's start (docs/performance.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, NoReturn

try:
    class _NamingImporter(zipimport.zipimporter):
        """zipimport's importer, except that it names a module's file without compiling it and
        loads a module from the archive's bytecode when there is bytecode for this Python."""

        def get_filename(self, fullname: str, *args: Any, **kwargs: Any) -> str:
            if not args and not kwargs:  # extra arguments: a signature of a later Python
                # A zipimport whose internals changed raises here: then its own answer.
                with contextlib.suppress(Exception):
                    return _file_name(self, fullname)
            return super().get_filename(fullname, *args, **kwargs)

        def get_code(self, fullname: str) -> Any:
            # Bytecode missing, stale, of another Python, or a zipimport that changed: compiled.
            with contextlib.suppress(Exception):
                code = _bytecode(self, fullname)
                if code is not None:
                    return code
            return super().get_code(fullname)
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


# A hash-based .pyc's flags (PEP 552): hash-based, and to be checked against its source.
_HASH_BASED, _CHECK_SOURCE = 0b01, 0b10


def _bytecode(importer: zipimport.zipimporter, fullname: str) -> Any:
    """The module's code from this Python's bytecode in the archive (``name.<tag>.pyc`` under
    ``__pycache__``, as an installed package has it), or None: none for this Python or this
    optimisation level, or bytecode whose source hash is not its source's. Python's own rule
    decides whether the hash is compared (``--check-hash-based-pycs``; compared by default)."""
    if sys.implementation.cache_tag is None or _MAGIC is None or _FIX_FILENAME is None:
        return None
    source = _file_name(importer, fullname)
    folder, file = os.path.split(source)
    try:
        data = importer.get_data(os.path.join(folder, "__pycache__", bytecode_name(file)))
    except OSError:
        return None
    flags = int.from_bytes(data[4:8], "little")
    # As the import system's own check: only the flags PEP 552 defines, hash-based here.
    if data[:4] != _MAGIC or len(data) < 16 or flags & ~(_HASH_BASED | _CHECK_SOURCE) \
            or not flags & _HASH_BASED:
        return None
    check = _imp.check_hash_based_pycs
    if check == "always" or (check != "never" and flags & _CHECK_SOURCE):
        key = int.from_bytes(_MAGIC, "little")
        if _imp.source_hash(key, importer.get_data(source)) != data[8:16]:
            return None
    # The archive's own bytecode, as trusted as its sources (and, by default, their hash's).
    code = marshal.loads(data[16:])  # noqa: S302
    # The build compiled it with the file's name in the archive; its path here, as a compiled
    # source would have (tracebacks, warnings).
    _FIX_FILENAME(code, source)
    return code


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
