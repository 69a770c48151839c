"""Facts the front reads itself about the environment the check ran in, as categories.

The worker inherits the front's environment unchanged, so once it has ended the front can tell
which library-path variable supplied a library the loader rejected, and whether the check ran in
the tool's own isolated install. Each fact is a category or a file name, never a path or a value.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from ..interpreter import is_front_interpreter
from ..worker.protocol import TORCH_OWN_LIBRARIES

# The variables whose folders the dynamic loader searches before the system's, per platform.
LIBRARY_PATH_VARIABLES = {"darwin": ("DYLD_LIBRARY_PATH",)}
DEFAULT_LIBRARY_PATH_VARIABLES = ("LD_LIBRARY_PATH",)

# What the loader says when the file it found is not a library it can use: glibc's "version
# `GLIBCXX_3.4.30' not found", "file too short", "wrong ELF class: ELFCLASS32", "invalid ELF
# header"; dyld's "incompatible architecture", "not a mach-o file". A path before the name is
# kept when the loader gives one (group "path"): it tells the folder the file came from.
_LIBRARY = r"(?P<path>(?:[^\s'\"`(),:]*/)?)(?P<name>[\w.+-]+\.(?:so(?:\.\d+)*|dylib))"
_REJECTED = re.compile(
    _LIBRARY + r"'?:? ?(?:version `[^']+' not found|file too short|wrong ELF class|"
    r"invalid ELF header|ELF load command|\(mach-o file, but is an incompatible architecture|"
    r"\(not a mach-o file|\(file too short)")

MAX_FOLDER_NAMES = 20_000  # a folder of LD_LIBRARY_PATH read for torch's own libraries
ToolEnvironment = Literal["pipx", "uv_tool", "venv"]


def library_override(texts: Iterable[str | None], environ: Mapping[str, str] | None = None,
                     platform: str | None = None, *, torch_failed: bool = False,
                     interpreter: str | None = None) -> dict[str, Any] | None:
    """Which variable's folder supplied a library the loader rejected, from the raw messages.

    ``{"variable": "LD_LIBRARY_PATH", "library": "libstdc++.so.6", "conda_env_lib": False}``;
    ``variable`` is None when the library came from the active conda environment's own ``lib``
    (reached through the interpreter's run path, not a variable). None when no rejected library
    came from such a folder: a damaged file inside torch's own folder is not an override.
    The conda environment is the active one (``CONDA_PREFIX``) and the one ``interpreter``, the
    checked Python, belongs to: run by its path or with --python, none is active.
    """
    env = os.environ if environ is None else environ
    variables = LIBRARY_PATH_VARIABLES.get(platform or sys.platform,
                                           DEFAULT_LIBRARY_PATH_VARIABLES)
    conda_libs = {_folder(os.path.join(prefix, "lib"))
                  for prefix in (env.get("CONDA_PREFIX"), conda_prefix_of(interpreter)) if prefix}
    for text in texts:
        for match in _REJECTED.finditer(text or ""):
            name, path = match.group("name"), match.group("path")
            given = _folder(path) if path else None
            for variable in variables:
                for entry in _entries(env.get(variable)):
                    if (given == entry if given else os.path.isfile(os.path.join(entry, name))):
                        return {"variable": variable, "library": name,
                                "conda_env_lib": entry in conda_libs}
            if given is not None and given in conda_libs:
                return {"variable": None, "library": name, "conda_env_lib": True}
    if torch_failed:
        return torch_library_on_path(env, variables)
    return None


def conda_prefix_of(interpreter: str | None) -> str | None:
    """The conda environment a Python interpreter is the program of (``PREFIX/bin/python``, with
    ``PREFIX/conda-meta``; on Windows ``PREFIX/python.exe``), or None."""
    if not interpreter:
        return None
    folder = os.path.dirname(os.path.abspath(interpreter))
    for prefix in (os.path.dirname(folder), folder):
        if os.path.isdir(os.path.join(prefix, "conda-meta")):
            return prefix
    return None


def torch_library_on_path(env: Mapping[str, str],
                          variables: tuple[str, ...]) -> dict[str, Any] | None:
    """One of torch's own libraries (a C++ libtorch's libtorch_python.so, libc10.so...) in a
    folder of a library-path variable, for an ``import torch`` that failed: the loader takes that
    copy before the one torch's run path names, whatever the message then says (a CUDA library
    the other build needs, an undefined symbol). A file name, never the folder."""
    for variable in variables:
        for entry in _entries(env.get(variable)):
            found = []
            try:
                with os.scandir(entry) as items:
                    for count, item in enumerate(items):
                        if count >= MAX_FOLDER_NAMES:
                            break
                        stem = item.name.split(".so")[0].split(".dylib")[0]
                        if item.name != stem and stem in TORCH_OWN_LIBRARIES:
                            found.append(item.name)
            except OSError:
                continue
            if found:  # the same name whatever order the folder lists them in
                return {"variable": variable, "library": min(found), "conda_env_lib": False,
                        "torch_library": True}
    return None


def _entries(value: str | None) -> list[str]:
    """The folders of a search-path variable, as the loader reads them: an empty entry is the
    working folder (the worker's too: it runs where the front was started)."""
    if value is None:
        return []
    return [_folder(entry or ".") for entry in value.split(os.pathsep)]


def _folder(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def python_home_set() -> bool:
    """Whether PYTHONHOME is set: every Python started from this environment (the worker's too)
    then looks for its standard library under that folder, whichever Python it is. Only whether
    it is set: its value is a path, never reported."""
    return bool(os.environ.get("PYTHONHOME"))


def working_folder_missing() -> bool:
    """Whether the folder this process was started in no longer exists (a shell left in a
    removed folder): the worker, started there too, cannot resolve a relative path, and torch's
    loader (Intel oneMKL's too) fails on it."""
    try:
        return not os.path.isdir(os.getcwd())
    except OSError:
        return True


# The console script's name, as pip installs it on each system.
_CONSOLE_SCRIPT = re.compile(r"kernodeck-diagnostic(?:-script\.pyw?|\.exe)?")


def tool_environment(python: str, argv0: str | None = None,
                     package_file: str | None = None) -> ToolEnvironment | None:
    """Whether the check ran in the tool's own installed environment, and which kind.

    ``pipx`` (a venv under pipx's ``venvs`` folder, or holding ``pipx_metadata.json``),
    ``uv_tool`` (under uv's ``tools`` folder, or holding ``uv-receipt.toml``), ``venv`` (the
    tool's console script, installed in a virtual environment). None in every other case: another
    interpreter given with --python, the zipapp, ``python -m`` (the user chose that interpreter),
    a source checkout, a system or conda interpreter.
    """
    if not is_front_interpreter(python):
        return None
    # The package's folder (this module is in its facts/ subfolder, unless a test names one).
    here = (os.path.dirname(os.path.abspath(package_file)) if package_file else
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    prefix = _folder(sys.prefix)
    if not _inside(_folder(here), prefix) or os.path.isfile(os.path.dirname(here)):
        return None  # not installed in this interpreter's environment (or inside an archive)
    parent = os.path.dirname(prefix)
    if os.path.isfile(os.path.join(prefix, "pipx_metadata.json")) or (
            os.path.basename(parent) == "venvs"
            and "pipx" in os.path.basename(os.path.dirname(parent)).lower()):
        return "pipx"
    if os.path.isfile(os.path.join(prefix, "uv-receipt.toml")) or (
            os.path.basename(parent) == "tools"
            and os.path.basename(os.path.dirname(parent)).lower() == "uv"):
        return "uv_tool"
    script = os.path.basename(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else ""))
    is_script = _CONSOLE_SCRIPT.fullmatch(script.lower())
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix) and is_script:
        return "venv"
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
