"""Where a report goes: a new file or nowhere, never half-written; stdout, its failure said."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import IO

from ..i18n import ENGLISH, Translate
from ..safe_files import Folder, UnsafePath
from ..terminal import discard, write

NEW_FILE_MODE = 0o644  # a report is made to be shared (less the umask)


class OutputError(Exception):
    """The report cannot be written where asked. The reason is a message key
    (``"output.reason.permission"``...) and never holds a path; ``reason`` is its English text,
    ``explain`` any language's."""

    def __init__(self, key: str, **values: object) -> None:
        self.key = key
        self.values = values
        super().__init__(self.reason)

    @property
    def reason(self) -> str:
        return self.explain(ENGLISH)

    def explain(self, translate: Translate) -> str:
        return translate(self.key, **self.values)


def preflight(path: str) -> None:
    """Fail fast, before the check runs, when ``path`` cannot become a new file."""
    _check_name(path)
    if not os.path.isabs(path):
        try:
            os.getcwd()
        except OSError:  # a shell left in a removed folder: a relative name has no folder
            raise OutputError("output.reason.no_working_folder") from None
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    except OSError as exc:  # a parent that is a file, a name too long, a loop of links...
        raise _reason(exc) from None
    else:
        raise _taken(mode)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(parent):
        if path.startswith("~"):  # quoted, or after '=': the shell left the tilde as it was
            raise OutputError("output.reason.no_folder_tilde")
        raise OutputError("output.reason.no_folder")
    if not os.path.isdir(parent):
        raise OutputError("output.reason.not_a_folder")
    # As the write will open it: a link of another user's on the way, a folder of theirs or one
    # others can write without the sticky bit, refused now rather than after the check.
    _open_folder(os.path.dirname(path)).close()
    kind = pseudo_filesystem(parent)
    if kind is not None:  # root may "write" there: the kernel then refuses every new name
        raise OutputError("output.reason.pseudo_filesystem", kind=kind)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError("output.reason.not_writable")
    name_max = _name_max(parent)
    if name_max is not None and len(os.fsencode(os.path.basename(path))) > name_max:
        raise OutputError("output.reason.name_too_long")


# The kernel's file systems that show its state as files and hold no file of a user's: creating a
# name there fails (ENOENT, EACCES), whatever the folder's mode says to root.
PSEUDO_FILESYSTEMS = frozenset({
    "proc", "sysfs", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs", "configfs",
    "devpts", "bpf", "pstore", "efivarfs", "fusectl", "binfmt_misc", "autofs", "nsfs"})
MOUNTINFO = "/proc/self/mountinfo"


def pseudo_filesystem(folder: str, mountinfo: str = MOUNTINFO) -> str | None:
    """The type of the kernel's pseudo-filesystem ``folder`` is on ("proc", "sysfs"...), from the
    mount that holds it (/proc/self/mountinfo, Linux); None elsewhere or when it cannot be read."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as file:
            lines = file.read(4 * 2**20).splitlines()
    except OSError:
        return None
    target = os.path.realpath(folder)
    best, kind = "", None
    for line in lines:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        point = fields[4].replace("\\040", " ")
        after = line.split(" - ", 1)[1].split()
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if after and inside and len(point) >= len(best):
            best, kind = point, after[0]
    return kind if kind in PSEUDO_FILESYSTEMS else None


def _taken(mode: int) -> OutputError:
    """What already holds the name, said as what it is: a device or a FIFO is not a file."""
    if stat.S_ISLNK(mode):
        return OutputError("output.reason.exists_link")
    if stat.S_ISDIR(mode):
        return OutputError("output.reason.exists_folder")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/full, /dev/null, a disk
        return OutputError("output.reason.exists_device")
    if stat.S_ISFIFO(mode):
        return OutputError("output.reason.exists_fifo")
    if stat.S_ISSOCK(mode):
        return OutputError("output.reason.exists_socket")
    return OutputError("output.reason.exists_file")


def _check_name(path: str) -> None:
    """A name no file system takes: empty, with a NUL, or not encodable for this system."""
    if path == "":
        raise OutputError("output.reason.empty")
    if "\0" in path:
        raise OutputError("output.reason.nul")
    if path.endswith(("/", os.sep)):
        raise OutputError("output.reason.trailing_separator")
    try:
        os.fsencode(path)
    except UnicodeError:
        raise OutputError("output.reason.unencodable") from None


def write_new(path: str, data: bytes) -> None:
    """Create ``path`` exclusively and write ``data``; on any failure no file is left behind.

    Through the safe file layer, as every file the tool writes (``safe_files``): the folder is
    opened one component at a time, a link owned by another user refused, never followed (one
    planted at ``/tmp/reports`` once made root write where it pointed), the folder checked as
    every folder the tool writes into; the file created relative to that folder's descriptor,
    never through a link at its name. A failed write empties the file through its own
    descriptor, then removes the name from the folder opened, and only while that name is
    still this very file: never by a path that a renamed folder or a planted link can redirect.
    """
    _check_name(path)
    parent, name = os.path.split(path)
    folder = _open_folder(parent)
    with folder:
        try:
            descriptor = folder.open_new(name, NEW_FILE_MODE)
        except UnsafePath as exc:
            raise OutputError(exc.key) from None
        except FileExistsError:
            # Taken since the pre-flight, or never checked: say what took it (a device, a FIFO...).
            found = folder.lstat(name)
            if found is None:
                raise OutputError("output.reason.exists_file") from None
            raise _taken(found.st_mode) from None
        except OSError as exc:
            raise _reason(exc) from None
        try:
            created = os.fstat(descriptor)
        except OSError as exc:
            os.close(descriptor)
            raise _reason(exc) from None
        try:
            view = memoryview(data)
            while view:
                written = os.write(descriptor, view)
                view = view[written:]
            os.fsync(descriptor)
        except BaseException as exc:
            _discard(folder, name, descriptor, created)
            if isinstance(exc, OSError):
                raise _reason(exc) from None
            raise
        try:
            os.close(descriptor)
        except OSError as exc:  # NFS and full disks may report the failure only here
            _remove_if_ours(folder, name, created)
            raise _reason(exc) from None
        folder.sync()


def _open_folder(parent: str) -> Folder:
    """The folder a report goes into, opened and checked by the safe file layer."""
    try:
        return Folder.open(parent or ".")
    except UnsafePath as exc:
        raise OutputError(exc.key) from None
    except OSError as exc:
        raise _reason(exc) from None


def _discard(folder: Folder, name: str, descriptor: int, created: os.stat_result) -> None:
    """A write that failed: nothing of it kept, wherever its name went meanwhile."""
    with contextlib.suppress(OSError):
        os.ftruncate(descriptor, 0)
    with contextlib.suppress(OSError):
        os.close(descriptor)
    _remove_if_ours(folder, name, created)


def _remove_if_ours(folder: Folder, name: str, created: os.stat_result) -> None:
    """Remove ``name`` from the folder opened when it is still the file this process created."""
    with contextlib.suppress(OSError):
        found = folder.lstat(name)
        if found is not None and (found.st_dev, found.st_ino) == (created.st_dev,
                                                                  created.st_ino):
            folder.unlink(name)


def show(stream: IO[str] | None, message: str) -> OutputError | None:
    """Print what the command shows on stdout; a failure is returned, not raised.

    A reader that left (``| head -1``) is no failure (see ``terminal.write``). A stdout closed
    before the start (``>&-``: Python then has no ``sys.stdout`` at all) or refusing the bytes
    (``>/dev/full``) is one: the caller says so in one line and exits with its own code. What is
    left for that stream goes nowhere, so the interpreter's own flush at exit cannot fail again
    ("Exception ignored", exit 120) after the tool has said what happened.
    """
    if stream is None:
        return OutputError("output.reason.closed")
    try:
        write(stream, message)
    except ValueError:  # the stream object was closed: "I/O operation on closed file"
        return OutputError("output.reason.closed")
    except OSError as exc:
        discard(stream)
        return _reason(exc)
    return None



def _name_max(folder: str) -> int | None:
    pathconf = getattr(os, "pathconf", None)
    if pathconf is None:
        return None
    try:
        return int(pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return None


_REASONS = {
    errno.EEXIST: "output.reason.exists_file",
    errno.ENOENT: "output.reason.no_folder",
    errno.ENOTDIR: "output.reason.not_a_folder",
    errno.EACCES: "output.reason.permission",
    errno.EPERM: "output.reason.permission",
    errno.EISDIR: "output.reason.exists_folder",
    errno.ENOSPC: "output.reason.no_space",
    errno.EFBIG: "output.reason.too_large",
    errno.EDQUOT: "output.reason.quota",
    errno.ENAMETOOLONG: "output.reason.name_too_long",
    errno.EROFS: "output.reason.read_only",
    errno.ELOOP: "output.reason.loop",
    errno.EBADF: "output.reason.closed",  # stdout closed by the caller (`>&-`)
}


def _reason(exc: OSError) -> OutputError:
    key = _REASONS.get(exc.errno or 0)
    if key is not None:
        return OutputError(key)
    return OutputError("output.reason.other", detail=(exc.strerror or type(exc).__name__).lower())
