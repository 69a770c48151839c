"""Whether the installed torch's compiled libraries are whole, read before torch is imported.

A library cut short (a copy or a download interrupted, a full disk) kills ``import torch`` with
SIGBUS or SIGSEGV when the loader touches a page past its end: the worker is gone before it can
say anything, so this is read first and told as a fact. An ELF file says its own length: its
section header table and its loaded segments lie within it. A library shorter than that, or one
whose first bytes are not an ELF header (zeroed, overwritten), is damaged, whatever loads it.
Only names relative to torch's folder's parent are told (``torch/lib/libtorch_cpu.so``), never
a path. Evidence for a cause only: the verdict is what the import does.

A companion of the worker (see ``stages``): the standard library only, Python 3.9+; Linux's ELF
files only (elsewhere nothing is claimed). About a dozen files, 4 KiB of each, before the import.
"""

from __future__ import annotations

import os
import struct
import sys

MAX_DAMAGED = 5
HEAD_BYTES = 4096  # the ELF header and, in practice, the program headers after it
PT_LOAD = 1


def damaged_libraries(init_file: str) -> list[dict[str, str]] | None:
    """The damaged compiled libraries of the torch package whose ``__init__.py`` is
    ``init_file`` (``_C`` and ``torch/lib``'s), each ``{"name": "torch/lib/x.so", "damage":
    "truncated" | "not_elf"}``; None when none is, or off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    package = os.path.dirname(init_file)
    found: list[dict[str, str]] = []
    for folder, prefix in ((package, "torch/"), (os.path.join(package, "lib"), "torch/lib/")):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if not (name.endswith(".so") or ".so." in name):
                continue
            damage = elf_damage(os.path.join(folder, name))
            if damage is not None and len(found) < MAX_DAMAGED:
                found.append({"name": prefix + name, "damage": damage})
    return found or None


def elf_damage(path: str) -> str | None:
    """``not_elf`` for a file whose first bytes are no ELF header, ``truncated`` for one shorter
    than its header says; None for a whole file, or one that cannot be read (not claimed)."""
    try:
        descriptor = os.open(path, os.O_RDONLY)  # read only: torch's own links followed
    except OSError:
        return None
    try:
        size = os.fstat(descriptor).st_size
        head = os.read(descriptor, HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    if head[:4] != b"\x7fELF" or len(head) < 52 or head[4] not in (1, 2) or head[5] not in (1, 2):
        return "not_elf"
    return "truncated" if size < elf_length(head) else None


def elf_length(head: bytes) -> int:
    """The least length an ELF file with this header must have: the end of its section header
    table and of every loaded segment the program headers in ``head`` describe."""
    wide = head[4] == 2
    order = "<" if head[5] == 1 else ">"
    if wide:
        if len(head) < 64:
            return len(head) + 1
        phoff, shoff = struct.unpack_from(order + "QQ", head, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 0x36)
    else:
        phoff, shoff = struct.unpack_from(order + "II", head, 0x1C)
        phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 0x2A)
    length = shoff + shentsize * shnum if shoff else 0
    for index in range(phnum):
        start = phoff + index * phentsize
        if start + (56 if wide else 32) > len(head):
            break  # beyond the bytes read: the section headers' end still counts
        if wide:
            kind, = struct.unpack_from(order + "I", head, start)
            offset, = struct.unpack_from(order + "Q", head, start + 8)
            filesz, = struct.unpack_from(order + "Q", head, start + 32)
        else:
            kind, offset = struct.unpack_from(order + "II", head, start)
            filesz, = struct.unpack_from(order + "I", head, start + 16)
        if kind == PT_LOAD:
            length = max(length, offset + filesz)
    return length


def on_noexec_mount(init_file: str) -> bool:
    """Whether the torch package whose ``__init__.py`` is ``init_file`` lies on a file system
    mounted ``noexec``: the loader then cannot map its libraries ("failed to map segment from
    shared object"), however whole they are. False when it cannot be told."""
    if sys.platform == "win32":  # no statvfs, no such mount option
        return False
    try:
        return bool(os.statvfs(os.path.dirname(init_file)).f_flag & os.ST_NOEXEC)
    except (OSError, AttributeError):  # an old Python without ST_NOEXEC
        return False


def unreadable_file(exc: BaseException, init_file: str) -> str | None:
    """The file of the torch package (``init_file``'s) that a failed import could not read for
    want of permission, as a name relative to its site-packages (``torch/functional.py``), from
    the exception or one it was raised from; None for any other failure."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(init_file)))
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            break
        name = getattr(seen, "filename", None) if isinstance(seen, PermissionError) else None
        if isinstance(name, str) and name:
            relative = os.path.relpath(os.path.abspath(name), site)
            if relative.split(os.sep)[0] == "torch" and ".." not in relative.split(os.sep):
                return relative.replace(os.sep, "/")
        seen = seen.__cause__ or seen.__context__
    return None


def path_not_utf8(init_file: str) -> bool:
    """Whether the path of the torch package holds bytes that are not UTF-8 (Python keeps them
    as surrogates): torch encodes its own folder's path as UTF-8 as it is imported
    (``_manager_path``) and fails there, "surrogates not allowed"."""
    try:
        init_file.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
