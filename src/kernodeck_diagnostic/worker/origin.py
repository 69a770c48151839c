"""Where ``import torch`` would load torch from, and the user's modules that hide one it needs.

Read before torch is imported, without running anything (finding a top-level module executes
nothing): a torch.py, a torch/ folder or a PyTorch source checkout that would load instead of the
installed distribution is named (``locate``) and never imported; a module of the user's named
like the standard library's or like one torch needs is listed (``local_modules``); a failed
``import torch`` says which module it broke in and where that came from (``failure_origin``).
Places are reported as categories (``place_of``), never as paths.

A companion of the worker (see ``stages``): the standard library only at its top, Python 3.9+.
Loaded before the user's folder is on the import path, and what it reads lazily (``site``,
``urllib.parse``) is loaded by the import stage before that path is put in place.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    stages = sys.modules["_kernodeck_worker_stages"]

# What ``import torch`` can find besides the installed package: a file torch.py, a compiled
# torch.pyc, an extension module, a package folder torch/, a folder torch/ without __init__.py (a
# namespace package), a PyTorch source checkout. Each is named in the sentence the user reads.
SHADOW_MODULES = {"file": "torch.py", "compiled": "torch.pyc", "extension": "torch",
                  "package": "torch/", "folder": "torch/", "source-checkout": "torch/"}
SHADOW_KINDS = frozenset(SHADOW_MODULES)


class TorchInstall:
    """An installed torch distribution: its version and where its own package is."""

    def __init__(self, version: str | None, init_file: str, editable_folder: str | None) -> None:
        self.version = version
        self.init_file = init_file  # torch/__init__.py as the distribution placed it
        self.editable_folder = editable_folder  # pip install -e: the source folder it points to
        # False: a distribution on PYTHONPATH over the environment's own (environment_installs),
        # whose torch is imported and judged by what the import does, never refused.
        self.judged = True

    def owns(self, path: str) -> bool:
        if same_path(path, self.init_file):
            return True
        folder = self.editable_folder
        return folder is not None and is_inside(path, folder)


def load_what_locating_reads() -> None:
    """Load the standard modules that reading the installed distributions and locating torch
    need (importlib.metadata with email and zipfile, site, urllib.parse for editable installs):
    before the user's first import path is in place, where a module of theirs with the same name
    (csv.py, email/) would be loaded instead, and, in a worker started before its request, while
    it waits for it (about 13 ms here, off the check's path; torch loads most of them anyway)."""
    import importlib.machinery  # each loaded now, read later
    import importlib.util  # noqa: F401
    import site  # noqa: F401
    from urllib.parse import unquote  # noqa: F401

    with contextlib.suppress(Exception):  # torch_installs says what fails
        from importlib import metadata  # noqa: F401


def torch_installs(path: list[str], orphans: list[str] | None = None) -> list[TorchInstall] | None:
    """Every torch distribution on ``path``, in search order (the first is what pip shows),
    less the orphans (``orphan_metadata``), whose folder names are added to ``orphans``.

    None when the installed distributions cannot be read at all: nothing to compare with.
    """
    try:
        from importlib import metadata

        found = list(metadata.distributions(name="torch", path=path))
    except Exception:
        return None
    if len(found) > 1:
        named = [orphan_metadata(dist) for dist in found]
        real = [dist for dist, name in zip(found, named) if name is None]
        if real:  # an orphan only in the folder of an install that is not one
            folder = install_folder(real[0])
            here = [index for index, (dist, name) in enumerate(zip(found, named))
                    if name is not None and install_folder(dist) == folder]
            if orphans is not None:
                orphans.extend(str(named[index]) for index in here[:MAX_ORPHANS])
            found = [dist for index, dist in enumerate(found) if index not in here]
    return [install for install in map(torch_install, found) if install is not None]


MAX_ORPHANS = 5
MAX_RECORD_LINES = 200_000  # torch's own RECORD: about 16 000 lines


def install_folder(dist: Any) -> str | None:
    """The folder a distribution is installed in (its site-packages), resolved; None if unknown."""
    try:
        return real(str(dist.locate_file("")))
    except Exception:
        return None


def orphan_metadata(dist: Any) -> str | None:
    """The folder name of a distribution's metadata (``torch-2.12.0.dist-info``) when none of the
    files its RECORD lists outside that folder exists, or it has no RECORD: the metadata an
    interrupted upgrade left behind. pip counts it as an install it cannot remove ("No files
    were found to uninstall", again at every run). None for a distribution with a file of its
    own, or one whose folder is not known."""
    folder = getattr(dist, "_path", None)  # importlib.metadata's PathDistribution keeps it
    if folder is None or not str(folder).endswith((".dist-info", ".egg-info")):
        return None
    name = os.path.basename(str(folder))
    try:
        record = dist.read_text("RECORD")
        site = str(dist.locate_file(""))
    except Exception:
        return None
    for count, line in enumerate((record or "").splitlines()):
        if count >= MAX_RECORD_LINES:
            return None  # too long to tell: not said
        relative = line.rsplit(",", 2)[0].strip('"')
        if not relative or relative.replace("\\", "/").split("/")[0] == name:
            continue
        if os.path.lexists(os.path.join(site, relative)):
            return None
    return name


def environment_installs(installs: list[TorchInstall] | None,
                         path0: str | None) -> list[TorchInstall] | None:
    """The installs ``import torch`` is judged against: ``installs`` unchanged, unless the first
    lies in a folder on PYTHONPATH and a later one in this environment's own packages (another
    Python's site-packages, a second build put on the path by a module system). The environment's
    own install is then the installed torch, and the build on PYTHONPATH, with its dist-info, is
    another build loaded over it (``unverified``): advice to reinstall would change the hidden
    one, taking the folder off PYTHONPATH is the way."""
    if not installs:
        return installs
    places = [place_of(os.path.dirname(os.path.dirname(install.init_file)), path0)
              for install in installs]
    if places[0] != "pythonpath":
        return installs
    own = [install for install, place in zip(installs, places) if place != "pythonpath"]
    if not own:
        return installs
    over = [install for install in installs if install not in own]
    for install in over:
        install.judged = False
    return own + over  # the environment's own first: the installed distribution


def judged_installs(path: list[str], worker: Any) -> list[TorchInstall] | None:
    """The torch installs on ``path`` that ``import torch`` is judged against (the first is the
    installed distribution: ``environment_installs``), kept as the worker's ``installs``. Told
    as facts at once, so that a failed import has them for its advice (a reinstall of that very
    build): the installed distribution's version, the orphans' folder names, its compiled
    libraries that are damaged (``integrity``: a truncated one kills the import outright)."""
    orphans: list[str] = []
    installs = worker.installs = environment_installs(torch_installs(path, orphans),
                                                      worker.path0)
    damaged = (stages.companion("integrity").damaged_libraries(installs[0].init_file)
               if installs else None)
    worker.facts("pytorch", orphan_metadata=orphans or None,
                 distribution_version=installs[0].version if installs else None,
                 **({"damaged_libraries": damaged} if damaged else {}))  # said when there are
    return installs


def torch_install(dist: Any) -> TorchInstall | None:
    try:
        init_file = str(dist.locate_file(os.path.join("torch", "__init__.py")))
        return TorchInstall(distribution_version(dist), init_file, editable_folder(dist))
    except Exception:  # a distribution whose metadata cannot be read is none to compare with
        return None


def distribution_version(dist: Any) -> str | None:
    """``dist.version`` as importlib.metadata reads it (the first ``Version`` header of the
    metadata file, as the email package parses it) without parsing the whole file: torch's holds
    its long description, about 1.5 ms here before ``import torch``. Only for a distribution that
    reads its metadata as importlib.metadata's own classes do (one whose ``version`` or
    ``metadata`` is its own is asked), and only for plain headers before it: a carriage return
    (which email reads as a line's end, and a file read as text never holds), a line email would
    not read as a header, a folded version or no such header is left to importlib.metadata."""
    from importlib import metadata

    kind = type(dist)
    if (getattr(kind, "version", None) is not metadata.Distribution.version
            or getattr(kind, "metadata", None) is not metadata.Distribution.metadata):
        return dist.version  # type: ignore[no-any-return]
    text: str = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    if "\r" in text:
        return dist.version  # type: ignore[no-any-return]
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line[:1] in (" ", "\t"):
            continue  # the folded part of the header above, which was not Version
        name, colon, value = line.partition(":")
        if not (colon and name and all("!" <= char <= "~" for char in name)):
            break  # the headers' end (an empty line), or what email would end them with
        if name.lower() == "version":
            if lines[index + 1:index + 2] and lines[index + 1][:1] in (" ", "\t"):
                break  # folded
            return value.lstrip(" \t")
    return dist.version  # type: ignore[no-any-return]


def editable_folder(dist: Any) -> str | None:
    """The source folder of an editable install (PEP 610's direct_url.json), or None."""
    from urllib.parse import unquote

    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except Exception:
        return None
    if not (isinstance(direct, dict) and isinstance(direct.get("dir_info"), dict)
            and direct["dir_info"].get("editable") and isinstance(direct.get("url"), str)
            and direct["url"].startswith("file://")):
        return None
    path = unquote(str(direct["url"])[len("file://"):])
    if path.startswith("localhost/"):
        path = path[len("localhost"):]
    if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]  # file:///C:/src/pytorch
    return path


def locate(spec: Any, installs: list[TorchInstall]) -> tuple[str, str | None] | None:
    """What ``import torch`` would load, as (kind, the folder holding it), without running it.

    ``installed``: the installed distribution's own files (an editable install's source folder
    included). ``unverified``: a built torch that is not the installed distribution's (a copy
    without its dist-info, another build on PYTHONPATH), or a module not in a file (a zip, a
    custom finder): imported, and judged by what the import does. Otherwise a kind of
    SHADOW_KINDS: never imported.
    """
    origin = file_origin(spec)
    folder = module_folder(spec)
    if origin is None:
        # A folder torch/ without __init__.py, which imports as an empty namespace package.
        return ("folder", folder) if folder is not None else None
    if not os.path.isfile(origin):
        return "unverified", None
    owner = next((install for install in installs if install.owns(origin)), None)
    if owner is not None:
        kind = "installed" if owner.judged else "unverified"
    elif getattr(spec, "submodule_search_locations", None) is not None:
        kind = package_kind(os.path.dirname(origin), installs)
    elif origin.endswith(tuple(extension_suffixes())):
        kind = "extension"
    else:
        kind = "compiled" if origin.endswith(".pyc") else "file"
    return kind, folder


def file_origin(spec: Any) -> str | None:
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or origin in ("namespace", "built-in", "frozen"):
        return None
    return origin


def package_kind(package: str, installs: list[TorchInstall]) -> str:
    """unverified (a built torch: imported and judged by what the import does), source-checkout
    (a checkout not built) or package.

    A package folder holding a compiled ``_C`` (for any Python) or torch's own libraries is a
    build, whatever surrounds it: a wheel's files without their dist-info (a copied
    site-packages, some images), a checkout built in place, another build on PYTHONPATH. Real
    wheels ship ``torch/csrc`` too, so that folder proves nothing; the import is tried and its
    outcome is the verdict (a heuristic explains a failure, it never causes one).
    """
    if built(package):
        return "unverified"
    if (os.path.isfile(os.path.join(os.path.dirname(package), "setup.py"))
            or os.path.isdir(os.path.join(package, "csrc"))):
        return "source-checkout"
    return "package"


def built(package: str) -> bool:
    """Whether a torch/ folder holds a build: a compiled ``_C`` or libtorch in its lib/."""
    try:
        names = os.listdir(package)
        libraries = os.listdir(os.path.join(package, "lib")) if "lib" in names else []
    except OSError:
        return False
    return (any(name.startswith("_C.") and name.endswith((".so", ".pyd")) for name in names)
            or any(name.startswith(("libtorch_python", "torch_python")) for name in libraries))


def extension_tags(spec: Any) -> dict[str, Any] | None:
    """For a torch package that is a build: the ABI tags of its compiled ``_C`` files
    (``cpython-312-x86_64-linux-gnu``; none when it has none) and the one this interpreter loads.
    None for what is no build (no ``_C`` and no libtorch) or no package folder."""
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if not locations:
        return None
    package = str(locations[0])
    try:
        names = os.listdir(package)
    except OSError:
        return None
    tags = sorted(name[len("_C."):].rsplit(".", 1)[0] for name in names
                  if name.startswith("_C.") and name.endswith((".so", ".pyd"))
                  and name.count(".") >= 2)
    if not tags and not built(package):
        return None
    own = next((suffix for suffix in extension_suffixes() if suffix.count(".") >= 2), None)
    return {"extension_tags": tags,
            "interpreter_tag": own[1:].rsplit(".", 1)[0] if own else None}


def module_path(spec: Any) -> str | None:
    """The file of a module, or the folder of a package, found by ``spec``."""
    origin = file_origin(spec)
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if locations:
        return str(locations[0])
    return origin


def module_folder(spec: Any) -> str | None:
    """The folder holding a module found by ``spec`` (for a package, its parent), or None."""
    origin = file_origin(spec)
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    if origin is not None:
        if getattr(spec, "submodule_search_locations", None) is not None:
            return os.path.dirname(os.path.dirname(origin))
        return os.path.dirname(origin)
    if locations:
        return os.path.dirname(str(locations[0]))
    return None


def place_of(folder: str, path0: str | None) -> str:
    """Where a folder is, as a category the report may carry (never the path).

    working-folder, script-folder (the first import path of the user's code when it is not
    the working folder: a script's or the zipapp's folder), pythonpath (an entry of
    PYTHONPATH), user-site, site-packages or elsewhere. The environment's own package folders
    stay what they are when PYTHONPATH lists them too; another Python's site-packages on
    PYTHONPATH is pythonpath.
    """
    import site

    own: list[str] = getattr(site, "getsitepackages", list)()
    user_site = getattr(site, "getusersitepackages", lambda: "")()
    pythonpath = [] if sys.flags.ignore_environment else \
        [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    # In this order: the first that holds names the folder.
    places: tuple[tuple[str, Callable[[], bool]], ...] = (
        ("working-folder", lambda: same_path(folder, os.getcwd())),
        ("script-folder", lambda: bool(path0) and same_path(folder, str(path0))),
        ("site-packages", lambda: any(same_path(folder, entry) for entry in own)),
        ("pythonpath", lambda: any(same_path(folder, entry) for entry in pythonpath)),
        ("user-site", lambda: bool(user_site) and same_path(folder, user_site)),
        ("site-packages", lambda: os.path.basename(folder) in ("site-packages",
                                                               "dist-packages")),
    )
    for place, holds in places:
        with contextlib.suppress(OSError):  # a working folder deleted under us is none of these
            if holds():
                return place
    return "elsewhere"


def user_import_path(path0: str | None, caller: dict[str, Any] | None) -> list[str]:
    """The import path the user's own code has: the API caller's whole ``sys.path`` when it gave
    one (a notebook's kernel searches the notebook's folder late, and a cell may have added
    entries), else this one's with its first entry put back to ``path0`` (the worker runs from a
    private folder); this one's unchanged when neither is known (-I, -P)."""
    given = (caller or {}).get("import_path")
    if isinstance(given, list) and all(isinstance(entry, str) for entry in given):
        return list(given)
    if path0 is not None and sys.path:
        return [path0, *sys.path[1:]]
    return list(sys.path)


def caller_state(worker: Any) -> dict[str, Any]:
    """How the API caller's own state compares with this worker's: whether it is a Jupyter
    kernel, and the torch it had already imported: its version, where it came from (a category,
    never the path) and whether it is the very module this worker imported (None when this one
    imported none). A kernel keeps the torch it imported until it restarts, whatever the check
    finds on disk since."""
    caller = worker.caller
    file = caller.get("torch_file")
    place = same = None
    if isinstance(file, str) and file:
        folder = os.path.dirname(file)
        if os.path.basename(file).startswith("__init__."):
            folder = os.path.dirname(folder)  # a package: the folder that holds torch/
        place = place_of(folder, worker.path0)
        # The module this worker imported, else the one it found and could not import: the
        # same file failing now is not another torch.
        mine = (getattr(worker.torch, "__file__", None) if worker.torch is not None
                else getattr(worker, "torch_found", None))
        same = same_path(file, mine) if isinstance(mine, str) else None
    version = caller.get("torch_version")
    return {"kernel": caller.get("kernel") is True,
            "torch_imported": caller.get("torch_imported") is True,
            "torch_version": version[:100] if isinstance(version, str) else None,
            "torch_origin": place, "torch_same": same}


def failure_origin(exc: BaseException, path0: str | None) -> dict[str, str | None] | None:
    """The module a failed ``import torch`` broke in, and where the import system found it (a
    category, see place_of): the file an ImportError names (``cannot import name 'deprecated'
    from 'typing_extensions' (FILE)``), else the innermost frame of the traceback that is a file
    under an entry of sys.path. The module's name only when it is one torch needs or the standard
    library's (another name may be the user's own); None when no such file is found."""
    files = []
    named = getattr(exc, "path", None) if isinstance(exc, ImportError) else None
    if isinstance(named, str):
        files.append(named)
    frames = []
    trace = exc.__traceback__
    while trace is not None:
        frames.append(trace.tb_frame.f_code.co_filename)
        trace = trace.tb_next
    files += reversed(frames)
    entries = sorted({entry for entry in sys.path if entry}, key=lambda entry: len(real(entry)),
                     reverse=True)
    stdlib = stdlib_names()
    for file in files:
        if not os.path.isfile(file):
            continue  # <frozen importlib._bootstrap>, <string>
        entry = next((entry for entry in entries if is_inside(file, entry)), None)
        if entry is None:
            continue
        top = os.path.relpath(real(file), real(entry)).split(os.sep)[0]
        module = top.split(".")[0]
        return {"module": module if module in TORCH_NEEDS or module in stdlib else None,
                "place": place_of(entry, path0)}
    return None


def same_path(a: str, b: str) -> bool:
    return real(a) == real(b)


def is_inside(path: str, folder: str) -> bool:
    inner, outer = real(path), real(folder)
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def real(path: str) -> str:
    return os.path.normcase(os.path.realpath(os.path.abspath(path)))


def extension_suffixes() -> list[str]:
    import importlib.machinery

    return list(importlib.machinery.EXTENSION_SUFFIXES)


# Modules torch imports beyond the standard library: its wheel's requirements, what they need,
# and the other top-level packages its wheel installs. A user's module of one of these names
# breaks ``import torch`` in the user's own program.
TORCH_NEEDS = frozenset((
    "torch", "torchgen", "functorch", "numpy", "typing_extensions", "sympy", "mpmath",
    "networkx", "jinja2", "markupsafe", "filelock", "fsspec", "setuptools", "pkg_resources",
    "triton", "nvidia", "opt_einsum", "optree",
))
# Python 3.9 has no sys.stdlib_module_names: its public standard-library modules (3.10's list,
# plus the three that 3.10 removed).
_STDLIB_3_9_NAMES = """
__future__ abc aifc argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb
binascii binhex bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop
collections colorsys compileall concurrent configparser contextlib contextvars copy copyreg crypt
csv ctypes curses dataclasses datetime dbm decimal difflib dis distutils doctest email encodings
ensurepip enum errno faulthandler fcntl filecmp fileinput fnmatch formatter fractions ftplib
functools gc genericpath getopt getpass gettext glob graphlib grp gzip hashlib heapq hmac html http
imaplib imghdr imp importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale
logging lzma mailbox mailcap marshal math mimetypes mmap modulefinder msilib msvcrt
multiprocessing netrc nis nntplib nt ntpath nturl2path numbers opcode operator optparse os
ossaudiodev parser pathlib pdb pickle pickletools pipes pkgutil platform plistlib poplib posix
posixpath pprint profile pstats pty pwd py_compile pyclbr pydoc pydoc_data pyexpat queue quopri
random re readline reprlib resource rlcompleter runpy sched secrets select selectors shelve shlex
shutil signal site smtpd smtplib sndhdr socket socketserver spwd sqlite3 sre_compile
sre_constants sre_parse ssl stat statistics string stringprep struct subprocess sunau symbol
symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios textwrap threading time
timeit tkinter token tokenize trace traceback tracemalloc tty turtle types typing unicodedata
unittest urllib uu uuid venv warnings wave weakref webbrowser winreg winsound wsgiref xdrlib xml
xmlrpc zipapp zipfile zipimport zlib zoneinfo
"""
STDLIB_3_9 = frozenset(_STDLIB_3_9_NAMES.split())


def stdlib_names() -> frozenset[str]:
    return frozenset(getattr(sys, "stdlib_module_names", STDLIB_3_9))
# Standard-library modules no library imports: a user's module of that name breaks nothing.
NEVER_IMPORTED = frozenset(("__main__", "antigravity", "this", "idlelib", "turtledemo"))
MAX_LOCAL_MODULES = 20
VENDORED_WITH = {"torch": {"torchgen", "functorch"}, "setuptools": {"pkg_resources"}}
MAX_FOLDER_ENTRIES = 20_000  # a home folder can be huge: past this many entries, stop looking


def local_modules(path0: str | None, installs: list[TorchInstall],
                  import_path: list[str] | None = None) -> list[dict[str, str]]:
    """The user's modules that hide one their program needs, in the folders it imports from first.

    The folders are those of the user's program, where its import path searches them: the
    working folder (the command line's program starts there, whatever entry point ran the
    check, as ``python -c`` or ``python app.py`` there would) and the calling script's folder
    (the API's). A typing.py or numpy.py there replaces the real one for the user's program (the
    worker has loaded its own typing already). Never a folder the program does not search: the
    working folder of a script run from elsewhere, the folder of the tool's own file. Names and
    categories only, at most MAX_LOCAL_MODULES. None searched when the interpreter's flags say
    the program's folder is not searched (path0 is None).

    ``import_path``: the API caller's own path, in order, else the program's first entry
    ``path0`` stands for it. A folder it searches after the standard library's (a notebook's
    folder in a kernel) hides no standard-library module.
    """
    if path0 is None:
        return []
    searched = import_path if import_path is not None else [path0]
    folders: list[tuple[str, str]] = []
    for place, folder in (("working-folder", _working_folder()), ("script-folder", path0)):
        with contextlib.suppress(OSError):  # '' (python -c's entry) with the folder removed
            if (folder and not any(same_path(folder, known) for _, known in folders)
                    and not same_path(folder, stdlib_folder())
                    and any(same_path(entry or os.getcwd(), folder) for entry in searched)):
                folders.append((place, folder))
    stdlib = stdlib_names()
    found: list[dict[str, str]] = []
    for place, folder in folders:
        before_stdlib = import_path is None or _searched_before_stdlib(folder, import_path)
        for name, entry, path in modules_in(folder):
            if name in TORCH_NEEDS:  # an installed copy, the path's only one: hiding nothing
                hides = ("torch" if name == "torch" else "nothing" if name in vendored(folder)
                         and not elsewhere(name, folder) else "torch-dependency")
            elif name in stdlib and name not in NEVER_IMPORTED and before_stdlib:
                hides = "standard-library"
            else:
                continue
            if preloaded(name) or (name == "torch" and any(i.owns(path) for i in installs)):
                continue  # loaded before any script, or the installed torch itself
            found.append({"name": name, "file": entry, "folder": place, "hides": hides})
            if sum(module["hides"] != "nothing" for module in found) >= MAX_LOCAL_MODULES or len(
                    found) >= 2 * MAX_LOCAL_MODULES:  # those hiding nothing never crowd one out
                return found
    return found


def vendored(folder: str) -> set[str]:
    """The names of the distributions installed in ``folder`` (``pip install --target``: a
    ``*.dist-info`` beside each), with what torch's and setuptools' also provide."""
    names: set[str] = set()
    with contextlib.suppress(OSError, ValueError), os.scandir(folder) as entries:
        for _, entry in zip(range(MAX_FOLDER_ENTRIES), entries):
            if entry.name.endswith(".dist-info"):
                names.add(entry.name.split("-")[0].lower().replace(".", "_"))
    return names.union(*(VENDORED_WITH[name] for name in names & VENDORED_WITH.keys()))


def elsewhere(name: str, folder: str) -> bool:
    """Whether the import path finds ``name`` outside ``folder`` too: what a module there hides
    (a ``pip install --target`` folder's own dependencies hide nothing)."""
    import importlib.machinery

    try:
        entries = [entry for entry in sys.path if not same_path(entry or os.getcwd(), folder)]
        return importlib.machinery.PathFinder.find_spec(name, entries) is not None
    except Exception:  # an entry or a finder that fails: as though found
        return True


def import_torch(local: list[dict[str, str]]) -> Any:
    """``import torch`` as the user's program does it: the worker's own copies of the modules the
    user's hide (``local_modules``: its json or typing, loaded before the user's import path was
    in place), submodules included, are out of sys.modules meanwhile, so torch loads the user's
    json.py, as their program does; put back at once for the worker's own code."""
    names = {module["name"] for module in local if module["hides"] != "nothing"}
    if (STARTUP_PROBE is not None and names & stages.STARTUP_MODULES
            and fresh_startup_modules() is None):  # which ones hide is unknown: none taken out
        names -= stages.STARTUP_MODULES
    hidden = {key: sys.modules.pop(key) for key in list(sys.modules)
              if key.partition(".")[0] in names}
    try:
        import torch
    finally:
        sys.modules.update(hidden)
    return torch


def _working_folder() -> str:
    try:
        return os.getcwd()
    except OSError:  # removed under the user's shell: no folder to search
        return ""


def _searched_before_stdlib(folder: str, import_path: list[str]) -> bool:
    """Whether ``import_path`` searches ``folder`` ('' is the working folder) before the
    standard library's own folder."""
    stdlib = stdlib_folder()
    for entry in import_path:
        place = entry or os.getcwd()
        if stdlib and same_path(place, stdlib):
            return False
        if same_path(place, folder):
            return True
    return False


def stdlib_folder() -> str:
    """The standard library's place on the import path: where the interpreter found its own
    ``os`` when it started. Where sysconfig names the same folder (an install, a venv, a distro's
    Python) this avoids loading it (1-2 ms, and before the user's import path is in place); where
    the library is zipped (Windows' embeddable Python 3.9 and 3.10), it is the zip, which is
    what the import path searches, not the folder sysconfig names."""
    return os.path.dirname(getattr(os, "__file__", None) or "")


def modules_in(folder: str) -> list[tuple[str, str, str]]:
    """(module name, file name, module file) of each importable module in ``folder``, by name."""
    import importlib.machinery

    suffixes = sorted(importlib.machinery.all_suffixes(), key=len, reverse=True)
    found: dict[str, tuple[str, str, str]] = {}
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_FOLDER_ENTRIES:
                    break
                name = entry.name
                with contextlib.suppress(OSError):
                    if entry.is_dir():
                        init = next((os.path.join(entry.path, "__init__" + suffix)
                                     for suffix in suffixes
                                     if os.path.isfile(os.path.join(entry.path,
                                                                    "__init__" + suffix))),
                                    None) if name.isidentifier() else None
                        if init is not None:  # a package comes first, as the import system finds
                            found[name] = (name, name + "/", init)
                        continue
                suffix = next((s for s in suffixes if name.endswith(s)), None)
                stem = name[:-len(suffix)] if suffix else ""
                if stem.isidentifier() and stem not in found:
                    found[stem] = (stem, name, entry.path)
    except OSError:
        return []
    return [found[name] for name in sorted(found)]


# Set in a worker forked from the front (supervision/start.py): the command line, less its code, of
# an interpreter started as the front was. Its STARTUP_MODULES are then what was loaded when the
# front's package began: the interpreter's start-up and what the program importing the package
# loaded before (the console script's ``re``, ``python -m``'s ``runpy``), which may hide nothing
# or may not; a fresh interpreter says which (``fresh_startup_modules``).
STARTUP_PROBE: list[str] | None = None
STARTUP_PROBE_TIMEOUT_S = 20.0
_FRESH_STARTUP: list[frozenset[str] | None] = []


def preloaded(name: str) -> bool:
    """Whether no file can hide ``name``: loaded before any script, built in, or frozen."""
    import importlib.machinery

    if name in sys.builtin_module_names:
        return True
    if name in stages.STARTUP_MODULES and (
            STARTUP_PROBE is None or name in (fresh_startup_modules() or ())):
        return True
    try:
        return importlib.machinery.FrozenImporter.find_spec(name) is not None
    except Exception:
        return False


def fresh_startup_modules() -> frozenset[str] | None:
    """The modules a fresh interpreter started as the front was (``STARTUP_PROBE``) has loaded
    before its program's first line, asked once; None when it cannot say (it fails, hangs past
    ``STARTUP_PROBE_TIMEOUT_S``): then a module of the user's named like one hides it, as far
    as this worker can tell."""
    if not _FRESH_STARTUP and STARTUP_PROBE is not None:
        import subprocess

        code = "import sys; sys.stdout.write(' '.join(sys.modules))"
        try:
            told = subprocess.run([*STARTUP_PROBE, "-c", code], stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=STARTUP_PROBE_TIMEOUT_S,
                                  check=True).stdout
            _FRESH_STARTUP.append(frozenset(told.decode("ascii").split()))
        except (OSError, ValueError, subprocess.SubprocessError):
            _FRESH_STARTUP.append(None)
    return _FRESH_STARTUP[0] if _FRESH_STARTUP else None
