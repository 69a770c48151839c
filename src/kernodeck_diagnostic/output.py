"""The never-overwrite writer: a report goes to a new file or nowhere, and never half-written."""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from .i18n import ENGLISH, Translate

_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


class OutputError(Exception):
    """The report cannot be written where asked. The reason is a message key (``output.reason.*``)
    and never holds a path; ``reason`` is its English text, ``explain`` any language's."""

    def __init__(self, key: str, **values: object) -> None:
        self.key = key
        self.values = values
        super().__init__(self.reason)

    @property
    def reason(self) -> str:
        return self.explain(ENGLISH)

    def explain(self, translate: Translate) -> str:
        return translate(f"output.reason.{self.key}", **self.values)


def preflight(path: str) -> None:
    """Fail fast, before the check runs, when ``path`` cannot become a new file."""
    _check_name(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    except OSError as exc:  # a parent that is a file, a name too long, a loop of links...
        raise _reason(exc) from None
    else:
        raise OutputError("exists_link" if stat.S_ISLNK(mode) else
                          "exists_folder" if stat.S_ISDIR(mode) else "exists_file")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(parent):
        if path.startswith("~"):  # quoted, or after '=': the shell left the tilde as it was
            raise OutputError("no_folder_tilde")
        raise OutputError("no_folder")
    if not os.path.isdir(parent):
        raise OutputError("not_a_folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError("not_writable")
    name_max = _name_max(parent)
    if name_max is not None and len(os.fsencode(os.path.basename(path))) > name_max:
        raise OutputError("name_too_long")


def _check_name(path: str) -> None:
    """A name no file system takes: empty, with a NUL, or not encodable for this system."""
    if path == "":
        raise OutputError("empty")
    if "\0" in path:
        raise OutputError("nul")
    if path.endswith(("/", os.sep)):
        raise OutputError("trailing_separator")
    try:
        os.fsencode(path)
    except UnicodeError:
        raise OutputError("unencodable") from None


def write_new(path: str, data: bytes) -> None:
    """Create ``path`` exclusively and write ``data``; on any failure no file is left behind."""
    _check_name(path)
    try:
        descriptor = os.open(path, _NEW_FILE_FLAGS, 0o644)
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
    errno.EEXIST: "exists_file",
    errno.ENOENT: "no_folder",
    errno.ENOTDIR: "not_a_folder",
    errno.EACCES: "permission",
    errno.EPERM: "permission",
    errno.EISDIR: "exists_folder",
    errno.ENOSPC: "no_space",
    errno.EFBIG: "too_large",
    errno.EDQUOT: "quota",
    errno.ENAMETOOLONG: "name_too_long",
    errno.EROFS: "read_only",
    errno.ELOOP: "loop",
}


def _reason(exc: OSError) -> OutputError:
    key = _REASONS.get(exc.errno or 0)
    if key is not None:
        return OutputError(key)
    return OutputError("other", detail=(exc.strerror or type(exc).__name__).lower())
