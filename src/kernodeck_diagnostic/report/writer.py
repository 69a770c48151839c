"""Where a report goes: a new file or nowhere, never half-written; stdout, its failure said."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import IO

from ..i18n import ENGLISH, Translate
from ..terminal import discard, write

_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


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
    """Create ``path`` exclusively and write ``data``; on any failure no file is left behind."""
    _check_name(path)
    try:
        descriptor = os.open(path, _NEW_FILE_FLAGS, 0o644)
    except FileExistsError:
        # Taken since the pre-flight, or never checked: say what took it (a device, a FIFO...).
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            raise OutputError("output.reason.exists_file") from None
        raise _taken(mode) from None
    except OSError as exc:
        raise _reason(exc) from None
    try:
        view = memoryview(data)
        while view:
            written = os.write(descriptor, view)
            view = view[written:]
        os.fsync(descriptor)
    except OSError as exc:
        os.close(descriptor)
        _remove_quietly(path)
        raise _reason(exc) from None
    except BaseException:
        os.close(descriptor)
        _remove_quietly(path)
        raise
    try:
        os.close(descriptor)
    except OSError as exc:  # NFS and full disks may report the failure only here
        _remove_quietly(path)
        raise _reason(exc) from None


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



def _remove_quietly(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


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
