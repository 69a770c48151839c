"""Privacy rules: what a shared report may say about a message that came from the machine.

Every rule lives here, and ``Redactor.text`` applies them in this order:

1. The values of variables named like secrets (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``...) become
   ``<redacted>`` wherever they appear, even inside a longer word.
2. Credentials in URLs become ``<redacted>@``; token-shaped strings (``hf_``, ``ghp_``, ``sk-``...)
   ``<token>``.
3. The home and working folders named by themselves become ``<home>`` and ``<cwd>``, however
   short (``/root`` too); only the file system's root is left alone.
4. Any other absolute path is reduced to its last component (``<path>/libcudnn.so.9``); a user's
   own folder (``/home/NAME``, ``/Users/NAME``, ``C:\\Users\\NAME``) to ``<path>/<user>``.
5. The value of every other environment variable becomes ``<redacted>`` where it stands as a
   whole token (not preceded or followed by a letter, digit or ``_``), except:

   - values under ``MIN_VALUE_CHARS`` characters: too short to tell from ordinary words;
   - version numbers (``3.11.7``, ``12.4.1``, ``2.5.1+rocm6.2``): Docker's and NVIDIA's images
     set ``PYTHON_VERSION``, ``CUDA_VERSION``, ``NV_CUDNN_VERSION``..., and the report states
     such versions as facts. A four-part number that could be an IPv4 address is an address,
     not a version, and is hidden;
   - names of processor and GPU architectures (``x86_64``, ``sm_90``, ``gfx942``), which the
     report states as facts too (``PYTORCH_ROCM_ARCH=gfx942`` is common);
   - the variables of ``NOT_IDENTIFYING_VARIABLES``, which describe the locale, the terminal and
     the shell that every machine has (``LANG=C.UTF-8``, ``TERM=xterm-256color``).

   A value that is a path becomes ``<redacted>`` when named by itself (before rule 4); at the
   start of a longer path, rule 4 reduces the whole path to its last component. Any other text
   equal to a value is hidden, even a fact of the report (a GPU's name that a variable also
   holds): privacy comes first.
6. ``user@host`` becomes ``<user>@<host>``.
7. This machine's host names and the user's names, as whole words and in any case, become
   ``<host>`` and ``<user>``. The names ``root``, ``user`` and ``localhost`` are left alone: they
   are the same on every machine and say nothing about whose it is, while the words are common
   in messages ("the root of the tree"); ``root@...`` still becomes ``<user>@<host>`` and the
   folder ``/root`` ``<home>`` when it is the home.
"""

from __future__ import annotations

import getpass
import os
import re
import socket
import sys
from collections.abc import Iterable, Mapping
from typing import Any

# Names of environment variables whose values are secrets wherever they appear.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|PASS$|API_?KEY|ACCESS_KEY|PRIVATE|"
                          r"CREDENTIAL|AUTH|SESSION|COOKIE", re.IGNORECASE)
_MIN_SECRET_LEN = 4

# Rule 5: every other variable's value, with its exemptions.
MIN_VALUE_CHARS = 6
NOT_IDENTIFYING_VARIABLES = re.compile(r"LANG|LANGUAGE|LC_[A-Z]+|TERM|COLORTERM|SHELL")
_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+~.][0-9A-Za-z]+){0,3}")
_IPV4 = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}(?!\d)")
_ARCHITECTURE = re.compile(r"(?:sm|compute)_\d+[a-z]?|gfx[0-9a-f]{3,4}|x86_64|aarch64|arm64|"
                           r"amd64|i686|ppc64le|s390x|riscv64", re.IGNORECASE)
# Rule 7: the same on every machine (see the module's docstring).
_COMMON_NAMES = frozenset({"root", "user", "localhost", "localhost.localdomain"})
_USER_VARIABLES = ("USER", "LOGNAME", "USERNAME", "LNAME", "SUDO_USER", "DOAS_USER")
_HOST_VARIABLES = ("HOSTNAME", "COMPUTERNAME")

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^\s/@:]+(?::[^\s/@]*)?@")
_TOKEN_SHAPES = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}"
    r"|sk-[A-Za-z0-9_-]{8,}|AKIA[0-9A-Z]{12,}|xox[abposr]-[A-Za-z0-9-]{8,}|glpat-[A-Za-z0-9_-]{8,})")
_USER_AT_HOST = re.compile(r"\b[A-Za-z0-9._-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\b")
# A path: a run of separators and name characters. Only its last component is kept.
_FILE_URL = re.compile(r"\bfile://[^\s'\"]*")
_POSIX_PATH = re.compile(r"(?<![\w.~<>:/-])(?:~|\.{1,2})?(?:/[^\s/\\:;,'\"()\[\]{}<>|]+)+/?")
_WINDOWS_PATH = re.compile(
    r"(?:\b[A-Za-z]:|\\\\[^\s\\/:*?\"<>|]+)(?:[\\/][^\s\\/:*?\"<>|;,'()\[\]{}]+)+[\\/]?")
_USERS_FOLDERS = ("home", "users")  # /home/NAME, /Users/NAME, C:\Users\NAME


def _one_line(value: str) -> str:
    # Messages reach the report as one line with single spaces (the worker's ``bounded``): a
    # value is looked for in the same form.
    return " ".join(value.split())


def is_exempt_value(name: str, value: str) -> bool:
    """Whether rule 5 leaves the value of variable ``name`` in place (see the docstring)."""
    value = _one_line(value)
    return (len(value) < MIN_VALUE_CHARS
            or NOT_IDENTIFYING_VARIABLES.fullmatch(name.upper()) is not None
            or (_VERSION.fullmatch(value) is not None and _IPV4.match(value) is None)
            or _ARCHITECTURE.fullmatch(value) is not None)


class Redactor:
    """Removes secrets, names, paths and environment values from text that may reach a report or
    a terminal."""

    def __init__(self, secrets: Iterable[str] = (), names: Mapping[str, str] | None = None,
                 folders: Mapping[str, str] | None = None, values: Iterable[str] = ()) -> None:
        # Longest first, so a value that contains another is replaced whole.
        self._secrets = sorted({_one_line(s) for s in secrets
                                if len(_one_line(s)) >= _MIN_SECRET_LEN}, key=len, reverse=True)
        self._names = [
            (re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])",
                        re.IGNORECASE), label)
            for name, label in sorted(((k, v) for k, v in (names or {}).items() if len(k) >= 2),
                                      key=lambda item: len(item[0]), reverse=True)]
        self._folders = {_folder_key(folder): label for folder, label in (folders or {}).items()
                         if _folder_key(folder)}
        # A known folder named by itself (not as the start of a longer path) becomes its label:
        # reduced to its last component, the working folder would still give its own name.
        self._folder_patterns = [
            (re.compile(r"(?<![\w.~/\\-])" + re.escape(folder)
                        + r"[\\/]?(?=$|[\s:;,'\"()\[\]{}<>|]|\.(?:\s|$))"), label)
            for folder, label in sorted(((f.rstrip("/\\"), v) for f, v in (folders or {}).items()
                                         if _folder_key(f)),
                                        key=lambda item: len(item[0]), reverse=True)]
        kept = sorted({_one_line(v) for v in values if len(_one_line(v)) >= MIN_VALUE_CHARS},
                      key=len, reverse=True)
        self._values = _whole_tokens(kept, r"(?!\w)")
        # A value that is a path, named by itself, goes before the paths are reduced (which
        # would keep its last component); at the start of a longer path, the path rule does.
        self._path_values = _whole_tokens([v for v in kept if "/" in v or "\\" in v],
                                          r"(?!\w|[\\/][^\s\\/'\"])")

    @classmethod
    def for_this_machine(cls, environ: Mapping[str, str] | None = None) -> Redactor:
        """The rules with what this machine knows: its environment, host and user names, the
        home and working folders."""
        env = os.environ if environ is None else environ
        secrets = [value for key, value in env.items() if _SECRET_NAME.search(key)]
        homes = {home for home in (_safe(_home), env.get("HOME", ""), env.get("USERPROFILE", ""))
                 if home}
        names: dict[str, str] = {}
        for label, candidates in (("<host>", _host_names(env)),
                                  ("<user>", _user_names(env, homes))):
            for value in candidates:
                if value and value.lower() not in _COMMON_NAMES:
                    names.setdefault(value, label)
        folders = {home: "<home>" for home in homes}
        folders[_safe(os.getcwd)] = "<cwd>"
        lowered = {name.lower() for name in names}
        values = [value for key, value in env.items()
                  if not _SECRET_NAME.search(key) and not is_exempt_value(key, value)
                  # a value that is a host or user name keeps that name's label
                  and _one_line(value).lower() not in lowered]
        return cls(secrets, names, folders, values)

    def text(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "<redacted>")
        text = _URL_CREDENTIALS.sub(r"\g<scheme><redacted>@", text)
        text = _TOKEN_SHAPES.sub("<token>", text)
        for folder, label in self._folder_patterns:
            text = folder.sub(label, text)
        if self._path_values is not None:
            text = self._path_values.sub("<redacted>", text)
        text = _FILE_URL.sub(lambda m: "file://" + self._path(m.group(0)[7:]), text)
        text = _WINDOWS_PATH.sub(lambda m: self._path(m.group(0)), text)
        text = _POSIX_PATH.sub(lambda m: self._path(m.group(0)), text)
        if self._values is not None:
            text = self._values.sub("<redacted>", text)
        text = _USER_AT_HOST.sub("<user>@<host>", text)
        for name, label in self._names:
            text = name.sub(label, text)
        return text

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

    def _path(self, path: str) -> str:
        """A path as a report may say it: a known folder's label, or ``<path>`` and its last
        component."""
        label = self._folders.get(_folder_key(path))
        if label is not None:
            return label
        path = path.rstrip("/\\")
        separator = "\\" if "\\" in path and "/" not in path else "/"
        parts = [part for part in re.split(r"[\\/]", path) if part]
        last = parts[-1] if parts else ""
        if len(parts) >= 2 and parts[-2].lower() in _USERS_FOLDERS:
            last = "<user>"  # the folder of a user is named after the user
        return "<path>" + separator + last if last else "<path>"


def _whole_tokens(values: list[str], end: str) -> re.Pattern[str] | None:
    """Any of ``values`` (longest first) not preceded by a word character, then ``end``."""
    if not values:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, values)) + ")" + end)


def _folder_key(folder: str) -> str:
    """A folder as compared with paths in messages; empty for the file system's root (and a
    drive's), which names nothing."""
    key = folder.rstrip("/\\")
    return "" if re.fullmatch(r"(?:[A-Za-z]:)?", key) else key


def _host_names(env: Mapping[str, str]) -> list[str]:
    host = _safe(socket.gethostname)
    # gpu-node-17.cluster.local is also said gpu-node-17
    return [host, host.split(".")[0], *(env.get(name, "") for name in _HOST_VARIABLES)]


def _user_names(env: Mapping[str, str], homes: Iterable[str]) -> list[str]:
    # sudo keeps the real user in SUDO_USER while USER and LOGNAME say root.
    names = [_safe(getpass.getuser), _safe(_account_name)]
    names += [env.get(name, "") for name in _USER_VARIABLES]
    names += [os.path.basename(home.rstrip("/\\")) for home in homes]
    return names


def _account_name() -> str:
    """The name of the account this process runs as, whatever the environment says."""
    if sys.platform == "win32":
        return ""  # no pwd: getpass.getuser() and USERNAME say it
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def _safe(read: Any) -> str:
    try:
        return str(read())
    except Exception:  # no user or host name to hide is not an error
        return ""


def _home() -> str:
    return os.path.expanduser("~")
