"""The never-overwrite writer: a report goes to a new file or nowhere, and never half-written."""

from __future__ import annotations

import contextlib
import errno
import os
import stat

_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


class OutputError(Exception):
    """The report cannot be written where asked; ``reason`` is safe to show (no path)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def preflight(path: str) -> None:
    """Fail fast, before the check runs, when ``path`` cannot become a new file."""
    _check_name(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    except OSError as exc:  # a parent that is a file, a name too long, a loop of links...
        raise OutputError(_reason(exc)) from None
    else:
        kind = ("a symbolic link" if stat.S_ISLNK(mode) else
                "a folder" if stat.S_ISDIR(mode) else "a file")
        raise OutputError(f"{kind} of that name already exists; it is never overwritten")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(parent):
        if path.startswith("~"):  # quoted, or after '=': the shell left the tilde as it was
            raise OutputError("its folder does not exist (a leading ~ is not your home folder "
                              "here: the shell did not expand it; write the path in full)")
        raise OutputError("its folder does not exist")
    if not os.path.isdir(parent):
        raise OutputError("its folder is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError("its folder is not writable")
    name_max = _name_max(parent)
    if name_max is not None and len(os.fsencode(os.path.basename(path))) > name_max:
        raise OutputError("the file name is too long")


def _check_name(path: str) -> None:
    """A name no file system takes: empty, with a NUL, or not encodable for this system."""
    if path == "":
        raise OutputError("the file name is empty")
    if "\0" in path:
        raise OutputError("the file name contains a NUL character")
    if path.endswith(("/", os.sep)):
        raise OutputError("the name ends with a folder separator: give a file name")
    try:
        os.fsencode(path)
    except UnicodeError:
        raise OutputError("the file name cannot be encoded for this file system") from None


def write_new(path: str, data: bytes) -> None:
    """Create ``path`` exclusively and write ``data``; on any failure no file is left behind."""
    _check_name(path)
    try:
        descriptor = os.open(path, _NEW_FILE_FLAGS, 0o644)
    except OSError as exc:
        raise OutputError(_reason(exc)) from None
    try:
        view = memoryview(data)
        while view:
            written = os.write(descriptor, view)
            view = view[written:]
        os.fsync(descriptor)
    except OSError as exc:
        os.close(descriptor)
        _remove_quietly(path)
        raise OutputError(_reason(exc)) from None
    except BaseException:
        os.close(descriptor)
        _remove_quietly(path)
        raise
    try:
        os.close(descriptor)
    except OSError as exc:  # NFS and full disks may report the failure only here
        _remove_quietly(path)
        raise OutputError(_reason(exc)) from None


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
    errno.EEXIST: "a file of that name already exists; it is never overwritten",
    errno.ENOENT: "its folder does not exist",
    errno.ENOTDIR: "its folder is not a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "a folder of that name already exists",
    errno.ENOSPC: "no space left on the device",
    errno.EFBIG: "the file is larger than allowed (file size limit)",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENAMETOOLONG: "the file name is too long",
    errno.EROFS: "the file system is read-only",
    errno.ELOOP: "too many levels of symbolic links",
}


def _reason(exc: OSError) -> str:
    return _REASONS.get(exc.errno or 0, (exc.strerror or type(exc).__name__).lower())
