"""Files written without following anyone's link: every file the tool (and its ``Trial`` and
``OutputLedger``, in the user's application) writes goes through here.

A diagnostic is run as root on shared machines, often in a folder other users can write. A plain
``open(path, "w")`` there follows whatever another user planted at ``path`` (a symbolic link to a
file of root's), and even exclusive creation protects only the last component: a folder renamed
and replaced by a link between two writes receives the second one. So:

- A folder is opened once, as a descriptor, walking its path one component at a time
  (``O_NOFOLLOW | O_DIRECTORY`` relative to the folder before). Every file is then created,
  replaced, renamed or made relative to that descriptor (``dir_fd``), never through its path
  again: what happens to the path afterwards cannot redirect a write.
- A symbolic link on the way is followed only when it is owned by the current user or root
  (another user cannot create such a link; the kernel's ``protected_symlinks`` reasons the same
  way). A link owned by anyone else is refused, never followed.
- The folder written into, when the tool did not create it, must be *trusted*: owned by the
  current user or root, and nobody else may rename or replace what is in it, i.e. it is not
  writable by others, or it has the sticky bit (``/tmp``: others may add names, never touch
  ours). Writable by its group is accepted only when this process belongs to that group (a
  user's private group under ``umask 002``, or a team the user shares the folder with): root,
  whose groups are root's, refuses a folder a team of users can write. A folder the tool created
  itself is made with ``FOLDER_MODE`` (never writable by others, whatever the umask) and must
  be owned by the current user.
- Files are created exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``): a name already taken, a
  link included, is never written through. A file replaced atomically is written to
  ``<name>.partial`` first (created exclusively; a leftover of ours from a killed run is removed,
  anything else at that name refused), synced, then renamed over the name: a rename replaces a
  link itself, never its target. An existing file opened to append (a ledger) must be a regular
  file of the current user or root with no other hard link.

Anything refused raises ``UnsafePath`` (an ``OSError``; ``reason`` says why, as a key of
``REASONS``). Where the platform has no ``O_NOFOLLOW`` or no ``dir_fd`` (Windows), the same
calls degrade to paths: exclusive creation, links refused by ``lstat``.

Standard library only, Python 3.9+: it runs inside the user's application too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable
from types import TracebackType

_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_BINARY: int = getattr(os, "O_BINARY", 0)
_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
# Folders as descriptors and every call relative to one: POSIX (Linux, macOS), not Windows.
DIR_FDS = bool(_NOFOLLOW and _DIRECTORY) and all(
    call in os.supports_dir_fd for call in (os.open, os.stat, os.mkdir, os.rename, os.unlink,
                                            os.readlink))
# What only the file's owner may read: a program's captured output, a local trace.
PRIVATE_MODE = 0o600
# Every folder the tool makes (a Trial's root and attempt folders, a ramp's): others may read
# it, never write in it, whatever the umask (under ``umask 000`` a plain mkdir gives 0777, and
# anyone could then rename or replace the files in it); a narrower umask narrows it further.
FOLDER_MODE = 0o755
MAX_LINKS = 40  # links followed on one path (Linux's own limit)
PARTIAL = ".partial"
WRITE_BUFFER = 64 * 1024  # what a file written in pieces holds before it writes

# Why a path is refused: each reason's message key (the catalogs of i18n say it, in English in
# the exception, in the user's language where a command prints it).
REASONS = {
    "link": "files.unsafe.link",
    "owner": "files.unsafe.owner",
    "writable": "files.unsafe.writable",
    "not_folder": "files.unsafe.not_folder",
    "not_file": "files.unsafe.not_file",
    "file_owner": "files.unsafe.file_owner",
    "hard_link": "files.unsafe.hard_link",
}


class UnsafePath(OSError):
    """A path the tool refuses to write through; ``reason`` is a key of ``REASONS``, ``key``
    its message's."""

    def __init__(self, reason: str, path: str) -> None:
        from .i18n import ENGLISH  # only when a path is refused: the catalogs stay unloaded

        code = errno.ELOOP if reason == "link" else errno.EPERM
        self.reason = reason
        self.key = REASONS[reason]
        super().__init__(code, ENGLISH(self.key), path)


def _euid() -> int | None:
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else int(geteuid())


def _trusted_owner(uid: int) -> bool:
    euid = _euid()
    return euid is None or uid in (euid, 0)


def _our_group(gid: int) -> bool:
    """The group is one this process belongs to: its members are people the user shares with
    on purpose (a private group of one, a team). Root's groups are root's: a team's folder
    writable by the team is not root's to write in."""
    if sys.platform == "win32":
        return False
    return gid == os.getegid() or gid in os.getgroups()


def check_folder(info: os.stat_result, path: str, *, created: bool = False) -> None:
    """Raise ``UnsafePath`` unless ``info`` is a folder this user may write into safely (see the
    module's docstring). ``created``: the tool made it itself (owner only)."""
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePath("not_folder", path)
    euid = _euid()
    if euid is None:  # Windows: no owners to compare, no modes that mean this
        return
    if created:
        if info.st_uid != euid:
            raise UnsafePath("owner", path)
        return
    if info.st_uid not in (euid, 0):
        raise UnsafePath("owner", path)
    if info.st_mode & stat.S_ISVTX:
        return
    if info.st_mode & stat.S_IWOTH:
        raise UnsafePath("writable", path)
    if info.st_mode & stat.S_IWGRP and not _our_group(info.st_gid):
        raise UnsafePath("writable", path)


def check_file(info: os.stat_result, path: str) -> None:
    """An existing file the tool writes into (appends to, truncates, removes as its own)."""
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath("link" if stat.S_ISLNK(info.st_mode) else "not_file", path)
    if not _trusted_owner(info.st_uid):
        raise UnsafePath("file_owner", path)
    if info.st_nlink > 1:
        raise UnsafePath("hard_link", path)


class Folder:
    """A folder opened and checked once; every file in it is reached relative to it.

    ``path`` is kept for messages and for what needs a path (a child process's variables);
    ``fd`` is the descriptor (None where the platform has none: see ``DIR_FDS``).
    """

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False) -> Folder:
        """The folder at ``path``, its missing folders made when ``create``; ``UnsafePath`` when
        a link on the way or the folder itself is not to be trusted."""
        shown = os.fspath(path)
        if not DIR_FDS:
            return cls(shown, None)._open_by_path(create)
        return cls(shown, _walk(shown, create))

    @classmethod
    def made(cls, path: str) -> Folder:
        """A private folder this process has just made (``tempfile.mkdtemp``: mode 0700, a name
        nobody could guess): opened without following a link at its own name, and checked to
        be the current user's. Its parents were resolved by ``mkdtemp`` itself."""
        if not DIR_FDS:
            return cls(path, None)._open_by_path(False)
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
        try:
            check_folder(os.fstat(fd), path, created=True)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    def _open_by_path(self, create: bool) -> Folder:
        if create:
            os.makedirs(self.path, FOLDER_MODE, exist_ok=True)
        if os.path.islink(self.path):
            raise UnsafePath("link", self.path)
        check_folder(os.stat(self.path), self.path)
        return self

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def child(self, name: str) -> str:
        """A path for people (and child processes) of ``name`` in this folder."""
        return os.path.join(self.path, name)

    # -- what is in it ------------------------------------------------------------------------

    def lstat(self, name: str) -> os.stat_result | None:
        """``name``'s own status (a link's, not its target's); None when there is none."""
        try:
            if self.fd is None:
                return os.lstat(self.child(name))
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def _open(self, name: str, flags: int, mode: int = 0o644) -> int:
        flags |= _NOFOLLOW | _BINARY | _CLOEXEC
        try:
            if self.fd is None:
                return os.open(self.child(name), flags, mode)
            return os.open(name, flags, mode, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link (EMLINK: BSD)
                raise UnsafePath("link", self.child(name)) from None
            if isinstance(exc, FileExistsError):
                found = self.lstat(name)
                if found is not None and stat.S_ISLNK(found.st_mode):
                    raise UnsafePath("link", self.child(name)) from None
            raise

    def open_new(self, name: str, mode: int = 0o644, *, append: bool = False) -> int:
        """A descriptor on a new file ``name``, created exclusively (``FileExistsError`` or
        ``UnsafePath`` when the name is taken: nothing is written through it)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | (os.O_APPEND if append else 0)
        return self._open(name, flags, mode)

    def open_existing(self, name: str, flags: int) -> int:
        """A descriptor on the existing regular file ``name`` (ours or root's, one hard link):
        ``os.O_RDONLY``, or ``os.O_WRONLY | os.O_APPEND`` to add to it."""
        fd = self._open(name, flags)
        try:
            check_file(os.fstat(fd), self.child(name))
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, name: str, limit: int) -> bytes | None:
        """At most ``limit`` bytes of the regular file ``name`` (never through a link; read by
        the one reader, ``untrusted_json.read_regular``: a FIFO never waited on); None when
        there is none."""
        # Here, not at the top: the worker's start writes through this module before anything
        # loads json, which the reader's module needs.
        from .untrusted_json import NotARegularFile, read_regular

        try:
            return read_regular(name if self.fd is not None else self.child(name), limit,
                                cut=True, follow_links=False, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except NotARegularFile:
            found = self.lstat(name)
            link = found is not None and stat.S_ISLNK(found.st_mode)
            raise UnsafePath("link" if link else "not_file", self.child(name)) from None

    def create_file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        """Write the new file ``name`` (exclusive creation) and make it durable."""
        fd = self.open_new(name, mode)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def replace(self, name: str, data: bytes | Iterable[bytes], mode: int = 0o644) -> None:
        """Replace ``name`` atomically with ``data``: a reader sees the old file or the new one,
        never half of one, and a link at ``name`` is replaced, never followed. ``data`` may come
        in pieces, written through a small buffer as they come (never the whole at once: a
        trial's end must not need memory the program may not have left)."""
        partial = name + PARTIAL
        found = self.lstat(partial)
        if found is not None:  # a killed run's leftover is ours to remove; nothing else is
            check_file(found, self.child(partial))
            self.unlink(partial)
        fd = self.open_new(partial, mode)
        try:
            if isinstance(data, bytes):
                _write_all(fd, data)
            else:
                with os.fdopen(fd, "wb", buffering=WRITE_BUFFER, closefd=False) as file:
                    for piece in data:
                        file.write(piece)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                self.unlink(partial)
            raise
        os.close(fd)
        self.rename(partial, name)
        self.sync()

    def rename(self, source: str, target: str) -> None:
        """Rename within this folder (names, never followed: a link is moved as a link)."""
        if self.fd is None:
            os.replace(self.child(source), self.child(target))
        else:
            os.replace(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        if self.fd is None:
            os.unlink(self.child(name))
        else:
            os.unlink(name, dir_fd=self.fd)

    def names(self) -> list[str]:
        """The names in this folder, read from the folder opened (never through a link)."""
        return os.listdir(self.path if self.fd is None else self.fd)

    def remove_files_folder(self, name: str) -> bool:
        """Remove the folder ``name`` of this one when it holds plain files (or links) only, as
        an attempt folder does: each unlinked by name relative to the folder (a link is removed
        as a link, never followed), then the folder. False, with nothing removed, when ``name``
        is not a folder of its own (a link to one included) or holds anything else."""
        info = self.lstat(name)
        if info is None or not stat.S_ISDIR(info.st_mode):
            return False
        with self.subfolder(name, exclusive=False) as inner:
            names = inner.names()
            kinds = [inner.lstat(entry) for entry in names]
            if not all(kind is not None and (stat.S_ISREG(kind.st_mode)
                                             or stat.S_ISLNK(kind.st_mode)) for kind in kinds):
                return False
            for entry in names:
                inner.unlink(entry)
        if self.fd is None:
            os.rmdir(self.child(name))
        else:
            os.rmdir(name, dir_fd=self.fd)
        return True

    def subfolder(self, name: str, *, exclusive: bool = True) -> Folder:
        """The folder ``name`` in this one, made here (``FileExistsError`` when ``exclusive``
        and it exists), opened without following a link and checked."""
        try:
            if self.fd is None:
                os.mkdir(self.child(name), FOLDER_MODE)
            else:
                os.mkdir(name, FOLDER_MODE, dir_fd=self.fd)
            created = True
        except FileExistsError:
            if exclusive:
                raise
            created = False
        if self.fd is None:
            made = Folder(self.child(name), None)
            if os.path.islink(made.path):
                raise UnsafePath("link", made.path)
            check_folder(os.stat(made.path), made.path, created=created)
            return made
        try:
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise UnsafePath("link", self.child(name)) from None
            raise
        try:
            check_folder(os.fstat(fd), self.child(name), created=created)
        except BaseException:
            os.close(fd)
            raise
        return Folder(self.child(name), fd)

    def sync(self) -> None:
        """Make the names in this folder durable (POSIX; a no-op where folders cannot be
        synced)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self.fd)


def descriptor_path(fd: int) -> str | None:
    """A name that opens the file of ``fd`` itself, whatever happened to its path since
    (``/proc/self/fd/N`` on Linux, ``/dev/fd/N`` on macOS); None where there is none."""
    for base in ("/proc/self/fd", "/dev/fd"):
        if os.path.isdir(base):
            return f"{base}/{fd}"
    return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _walk(path: str, create: bool) -> int:
    """A descriptor on the folder at ``path``: each component opened relative to the one before,
    links followed only when trusted, missing folders made when ``create``; the last checked."""
    if path == "":
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    walk = _Walk(path)
    try:
        pending = _components(path)
        created = False
        while pending:
            name = pending.pop(0)
            info, created = walk.look(name, create)
            if info is None:  # made by someone else meanwhile: look again
                pending.insert(0, name)
            elif stat.S_ISLNK(info.st_mode):
                pending[:0] = walk.link(name, info)
            else:
                walk.enter(name)
        check_folder(os.fstat(walk.fd), path, created=created)
    except BaseException:
        walk.close()
        raise
    return walk.fd


class _Walk:
    """Where ``_walk`` is: the descriptor of the folder reached, and the path to it (for
    messages)."""

    FLAGS = os.O_RDONLY | _DIRECTORY | _CLOEXEC

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = -1
        self.fd = os.open("/" if os.path.isabs(path) else ".", self.FLAGS)
        self.done = os.sep if os.path.isabs(path) else ""
        self.hops = 0

    def shown(self, name: str) -> str:
        return os.path.join(self.done, name) if self.done else name

    def look(self, name: str, create: bool) -> tuple[os.stat_result | None, bool]:
        """``name``'s own status, made first when missing and ``create`` (then True); None when
        someone else made it between the look and the ``mkdir``."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False), False
        except FileNotFoundError:
            if not create:
                raise
        try:
            os.mkdir(name, FOLDER_MODE, dir_fd=self.fd)
        except FileExistsError:
            return None, False
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False), True

    def link(self, name: str, info: os.stat_result) -> list[str]:
        """The components a trusted link stands for; ``UnsafePath`` for anyone else's."""
        if not _trusted_owner(info.st_uid):
            raise UnsafePath("link", self.shown(name))
        self.hops += 1
        if self.hops > MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), self.path)
        target = os.readlink(name, dir_fd=self.fd)
        if os.path.isabs(target):
            self.close()
            self.fd = os.open("/", self.FLAGS)
            self.done = os.sep
        return _components(target)

    def enter(self, name: str) -> None:
        try:
            child = os.open(name, self.FLAGS | _NOFOLLOW, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # became a link since the look
                raise UnsafePath("link", self.shown(name)) from None
            raise
        self.close()
        self.fd = child
        self.done = self.shown(name)

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)


def _components(path: str) -> list[str]:
    separators = "/" + (os.sep if os.sep != "/" else "") + (os.altsep or "")
    parts = [path]
    for separator in separators:
        parts = [piece for part in parts for piece in part.split(separator)]
    return [part for part in parts if part not in ("", ".")]


def link_within(link: str, top: str) -> bool:
    """Whether the folder ``link`` (a symbolic link met while listing ``top``) leads back inside
    ``top`` (``latest -> run-42``, a loop to ``.``): what it holds is listed there already, and
    the link need not be followed nor said. Only names are resolved; nothing is read."""
    try:
        target, root = os.path.realpath(link), os.path.realpath(top)
        return os.path.commonpath([target, root]) == root
    except (OSError, ValueError):  # another drive, a name that cannot be resolved
        return False


def remove_folder(folder: str) -> None:
    """A private folder of the tool's (0700: no other user can write in it, so removing by path
    is safe) removed, with all it holds. ``shutil.rmtree`` holds descriptors as it goes down (two
    for each level): a front at its last few (``ulimit -n 5``) left the worker's folder's
    ``__pycache__`` behind. What it could not remove goes one name at a time, holding one
    descriptor at most."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    if os.path.isdir(folder) and not os.path.islink(folder):
        _remove_by_names(folder)


def _remove_by_names(folder: str) -> None:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            _remove_by_names(path)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)
