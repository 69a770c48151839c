"""The worker's companion that lists what surrounds the imported torch, from installed metadata:
the CUDA libraries' wheels next to it (and which copy of each the process really loaded), the
build's debug flag and git revision, and the versions of NumPy's neighbours torch works with
(triton, torchvision, torchaudio). Nothing here imports any of them: importing is the library
check's job, and reading a few small metadata files costs a few milliseconds.

Standard library only at the top (see stages' "companions"); run in the interpreter under
diagnosis, Python 3.9+.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

# Told by this module's name, not __package__: Python 3.9's zipimport runs a module of the zipapp
# before setting __package__, and the front may import this one from there.
if TYPE_CHECKING or not __name__.startswith("_kernodeck_worker_"):
    from . import origin, protocol, stages
else:  # copied beside the worker, which loaded this file (stages.companion)
    origin = sys.modules["_kernodeck_worker_origin"]
    protocol = sys.modules["_kernodeck_worker_protocol"]
    stages = sys.modules["_kernodeck_worker_stages"]

# Distributions whose version is reported when installed (metadata only, never imported).
RELATED = ("triton", "torchvision", "torchaudio")
MAX_LIBRARIES = 40  # nvidia-* wheels next to torch: 16 for a CUDA 13 build
MAX_COPIES = 10  # file names of other copies named per wheel
MAX_MAPS_BYTES = 8 * 1024 * 1024  # /proc/self/maps of a process that loaded torch: ~200 kB
LIBRARY_PATH_VARIABLE = "LD_LIBRARY_PATH"


def inventory(torch: Any) -> dict[str, Any]:
    """The ``pytorch`` facts this module adds; each one that cannot be read is None."""
    version: Any = getattr(torch, "version", None)
    debug, revision = getattr(version, "debug", None), getattr(version, "git_version", None)
    facts: dict[str, Any] = {
        "debug_build": debug if isinstance(debug, bool) else None,
        "git_version": protocol.bounded(str(revision)) if revision else None,
        "cuda_libraries": _guarded(lambda: cuda_libraries(torch)),
        "torch_libraries_elsewhere": _guarded(lambda: torch_libraries_elsewhere(torch)),
    }
    readings = stages.companion("readings")
    for name in RELATED:
        facts[name + "_version"] = readings.distribution_version(name)
    return facts


def _guarded(read: Any) -> Any:
    try:
        return read()
    except Exception:  # one fact that cannot be read is None, never a failed stage
        return None


def cuda_libraries(torch: Any) -> list[dict[str, Any]] | None:
    """The ``nvidia-*`` wheels installed next to torch (in the folder that holds its package),
    by name: each one's version, which copy of its libraries this process loaded, and the file
    names of the copies found in the folders of LD_LIBRARY_PATH. None when torch's folder is not
    known; [] when no such wheel is there (a CPU build, a build that bundles its libraries)."""
    package = os.path.dirname(os.path.abspath(getattr(torch, "__file__", None) or ""))
    if not package or not os.path.isdir(package):
        return None
    site = os.path.dirname(package)
    wheels = [entry for entry in sorted(os.listdir(site))
              if entry.lower().startswith("nvidia") and entry.lower().endswith(".dist-info")]
    if not wheels:  # /proc/self/maps is not read (1 ms, after torch's import)
        return []
    mapped = loaded_libraries()
    folders = library_path_folders()
    found = []
    for entry in wheels:
        library = wheel_libraries(os.path.join(site, entry), site, mapped, folders)
        if library is not None:
            found.append(library)
        if len(found) >= MAX_LIBRARIES:
            break
    return found


def torch_libraries_elsewhere(torch: Any) -> list[dict[str, str]] | None:
    """torch's own libraries (libc10.so, libtorch_cpu.so...) this process mapped from another
    folder than the imported package's lib/: a C++ libtorch on LD_LIBRARY_PATH, which the loader
    searches before torch's own run path. It works while both are the same build and fails in
    odd ways when not. Each as its file name and where it came from (``LD_LIBRARY_PATH`` or
    ``elsewhere``); None where the mapped libraries cannot be read (not Linux)."""
    package = os.path.dirname(os.path.abspath(getattr(torch, "__file__", None) or ""))
    mapped = loaded_libraries() if package and os.path.isdir(package) else None
    if mapped is None:
        return None
    own = os.path.normcase(os.path.realpath(os.path.join(package, "lib")))
    folders = library_path_folders()
    found = []
    for stem, folder, name in mapped:
        if (stem in protocol.TORCH_OWN_LIBRARIES
                and os.path.normcase(os.path.realpath(folder)) != own):
            found.append({"name": protocol.bounded(name),
                          "loaded_from": LIBRARY_PATH_VARIABLE if folder in folders
                          else "elsewhere"})
            if len(found) >= MAX_COPIES:
                break
    return found


def wheel_libraries(dist_info: str, site: str, mapped: list[tuple[str, str, str]] | None,
                    folders: list[str]) -> dict[str, Any] | None:
    """One wheel's entry: its name and version from its METADATA, its shared libraries from its
    RECORD."""
    headers = metadata_headers(os.path.join(dist_info, "METADATA"))
    name = headers.get("name")
    if not name:
        return None
    files = record_libraries(os.path.join(dist_info, "RECORD"), site)
    stems = {library_stem(os.path.basename(path)) for path in files}
    own = {os.path.normcase(os.path.realpath(folder))
           for folder in {os.path.dirname(path) for path in files}}
    entry: dict[str, Any] = {"name": name, "version": headers.get("version"),
                             "loaded": None, "loaded_file": None, "loaded_from": None}
    if mapped is not None and stems:
        named = [(folder, name) for stem, folder, name in mapped if stem in stems]
        others = [(folder, name) for folder, name in named if folder not in own]
        if others:
            # Another copy of one of this wheel's libraries is in the process: the loader took it
            # (a library is loaded once per name), whatever the wheel holds.
            folder, name = others[0]
            entry.update(loaded="other", loaded_file=name,
                         loaded_from=LIBRARY_PATH_VARIABLE if folder in folders else "elsewhere")
        else:
            entry["loaded"] = "wheel" if named else "not_loaded"
    entry["library_path_copies"] = copies_on(folders, stems)
    return entry


def metadata_headers(path: str) -> dict[str, str]:
    """Name and Version from a METADATA file's headers (read up to the first blank line)."""
    found: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            for line in file:
                if not line.strip():
                    break
                key, sep, value = line.partition(":")
                if sep and key.lower() in ("name", "version") and key.lower() not in found:
                    found[key.lower()] = protocol.bounded(value.strip())
    except OSError:
        pass
    return found


def record_libraries(path: str, site: str) -> list[str]:
    """The shared libraries a wheel installed, from its RECORD: absolute paths under ``site``."""
    found = []
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            for line in file:
                relative = line.split(",", 1)[0]
                if is_library(os.path.basename(relative)):
                    found.append(os.path.normpath(os.path.join(site, relative)))
    except OSError:
        pass
    return found


def is_library(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith((".so", ".dll", ".dylib")) or ".so." in lowered


def library_stem(name: str) -> str:
    """A library's name without its version: ``libcudnn.so.9.1.0`` -> ``libcudnn``."""
    for suffix in (".so", ".dylib", ".dll"):
        index = name.lower().find(suffix)
        if index > 0:
            return name[:index]
    return name


def loaded_libraries() -> list[tuple[str, str, str]] | None:
    """The shared libraries this process has mapped (Linux: /proc/self/maps), each as (name
    without version, folder, file name); None where that cannot be read."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as file:
            text = file.read(MAX_MAPS_BYTES)
    except OSError:
        return None
    paths = set()
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
            paths.add(parts[5].strip())
    found = []
    for path in sorted(paths):
        folder, name = os.path.split(path)
        if is_library(name):
            found.append((library_stem(name), os.path.normcase(folder), name))
    return found


def library_path_folders() -> list[str]:
    """The folders of LD_LIBRARY_PATH as the loader reads them (an empty entry: the working
    folder), resolved and case-normalised like the paths they are compared with."""
    value = os.environ.get(LIBRARY_PATH_VARIABLE)
    if not value:
        return []
    return [os.path.normcase(os.path.realpath(entry or ".")) for entry in value.split(os.pathsep)]


def copies_on(folders: list[str], stems: set[str]) -> list[str]:
    """File names of libraries named like one of ``stems`` in ``folders``: the copies a program
    that does not load the wheel's first would find."""
    names: list[str] = []
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                for count, item in enumerate(entries):
                    if count >= origin.MAX_FOLDER_ENTRIES or len(names) >= MAX_COPIES:
                        break
                    if is_library(item.name) and library_stem(item.name) in stems \
                            and item.name not in names:
                        names.append(item.name)
        except OSError:
            continue
    return sorted(names)
