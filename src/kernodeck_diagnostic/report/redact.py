"""Privacy rules: what a shared report may say about a message that came from the machine.

Every rule lives here, and ``Redactor.text`` applies them in this order:

0. A text that is wholly one of the tool's own words (``is_vocabulary``) is left as it is: a fact
   such as ``cuda:0``, ``system``, ``CPython`` or ``site-packages`` says nothing about anyone,
   whatever a variable or a name on this machine also holds. The words are every value the
   report's schema names (its ``enum`` and ``const`` values, read from the shipped schema once),
   the form of a device the schema gives (``cpu``, ``cuda:N``), Python's exception and warning
   classes, and the closed sets the worker reports in fields the schema leaves open
   (``_WORKER_WORDS``: ``CPython``, ``PyPy``..., ``linux``, ``windows``, ``macos``).
1. The values of variables named like secrets (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``...) become
   ``<redacted>`` wherever they appear, even inside a longer word.
2. Credentials in URLs become ``<redacted>@``; token-shaped strings (``hf_``, ``ghp_``, ``sk-``...)
   ``<token>``.
3. The home and working folders, found as they are written (spaces and all), become ``<home>``
   and ``<cwd>``, however short (``/root`` too); only the file system's root is left alone. At the
   start of a longer path, the folder becomes its label and the rest is reduced as rule 4 does:
   ``/home/John Smith/venv/.../libcudnn.so.9`` becomes ``<home>/libcudnn.so.9``.
4. Any other absolute path is reduced to its last component (``<path>/libcudnn.so.9``); a user's
   own folder (``/home/NAME``, ``/Users/NAME``, ``C:\\Users\\NAME``, anyone's, not only this
   machine's) to ``<path>/<user>``. A name in a path has no spaces, except where the path surely
   goes on: the user's name after ``/home/``, ``/Users/`` or ``\\Users\\`` when a separator
   follows it (``/home/Jane Doe/venv/x.so``), any folder of a Windows path (``C:\\Program
   Files\\...``), and anywhere in a path in quotes (``'/home/Jane Doe'``, as Python's ``OSError``
   writes it). A POSIX path is otherwise cut at a space ("/usr/lib and torch/lib" is prose).
5. The value of every other environment variable becomes ``<redacted>`` where it stands as a
   whole token (not preceded or followed by a letter, digit or ``_``), except:

   - values under ``MIN_VALUE_CHARS`` characters: too short to tell from ordinary words;
   - version numbers (``3.11.7``, ``12.4.1``, ``2.5.1+rocm6.2``): Docker's and NVIDIA's images
     set ``PYTHON_VERSION``, ``CUDA_VERSION``, ``NV_CUDNN_VERSION``..., and the report states
     such versions as facts. A four-part number that could be an IPv4 address is an address,
     not a version, and is hidden;
   - names of processor and GPU architectures (``x86_64``, ``sm_90``, ``gfx942``), which the
     report states as facts too (``PYTORCH_ROCM_ARCH=gfx942`` is common);
   - the tool's own words (rule 0): ``DEVICE=cuda:0`` or ``KIND=system`` hide nothing, and
     redacting them erased the facts that the findings read;
   - the variables of ``NOT_IDENTIFYING_VARIABLES``, which describe the locale, the terminal and
     the shell that every machine has (``LANG=C.UTF-8``, ``TERM=xterm-256color``).
   - the allow-listed configuration variables (``facts.system.CONFIGURATION_VARIABLES``:
     ``PYTORCH_CUDA_ALLOC_CONF``, ``NCCL_DEBUG``...), whose values the report's ``system`` block
     states, bounded; the other rules (secrets, paths, names) still apply to them.

   A value that is a path becomes ``<redacted>`` when named by itself (before rule 3, unless it
   is the home or working folder, which keep their labels); at the start of a longer path, rules
   3 and 4 reduce the whole path. Any other text equal to a value is hidden, even a fact of the
   report (a GPU's name that a variable also holds): privacy comes first.
6. ``user@host`` becomes ``<user>@<host>``, where the host is a name of two characters or more
   with a letter in it, or an IPv4 address: ``recall@10``, ``precision@k`` (metrics) and
   ``torch@2.5.1`` (a pinned version) stay as they are (a user name in them still goes by rule
   7).
7. This machine's host names and the user's names, as whole words and in any case, become
   ``<host>`` and ``<user>``. The names ``root``, ``user`` and ``localhost`` are left alone: they
   are the same on every machine and say nothing about whose it is, while the words are common
   in messages ("the root of the tree"); ``root@...`` still becomes ``<user>@<host>`` and the
   folder ``/root`` ``<home>`` when it is the home.
"""

from __future__ import annotations

import builtins
import functools
import getpass
import os
import re
import socket
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..facts.system import CONFIGURATION_SET
from ..report_schema import fact_schema, named_values

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
# Rule 0's words beside the schema's: closed sets the worker reports in fields the schema leaves
# open (a new Python or system still reports). What platform.python_implementation() answers, and
# the worker's os_family.
_WORKER_WORDS = frozenset({"CPython", "PyPy", "IronPython", "Jython", "GraalVM",
                           "linux", "windows", "macos"})
# Rule 7: the same on every machine (see the module's docstring).
_COMMON_NAMES = frozenset({"root", "user", "localhost", "localhost.localdomain"})
_USER_VARIABLES = ("USER", "LOGNAME", "USERNAME", "LNAME", "SUDO_USER", "DOAS_USER")
_HOST_VARIABLES = ("HOSTNAME", "COMPUTERNAME")

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^\s/@:]+(?::[^\s/@]*)?@")
_TOKEN_SHAPES = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{8,}|gh[pousr]_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}"
    r"|sk-[A-Za-z0-9_-]{8,}|AKIA[0-9A-Z]{12,}|xox[abposr]-[A-Za-z0-9-]{8,}|glpat-[A-Za-z0-9_-]{8,})")
# Rule 6: the host is an IPv4 address or a name with a letter in it, of two characters or more;
# ``recall@10``, ``torch@2.5.1`` or ``precision@k`` (a metric, a pinned version) name no one.
_USER_AT_HOST = re.compile(r"\b[A-Za-z0-9._-]+@(?:\d{1,3}(?:\.\d{1,3}){3}\b"
                           r"|(?=[A-Za-z0-9.-]*[A-Za-z])"
                           r"(?:[A-Za-z0-9-]{2,}|[A-Za-z0-9-](?=\.[A-Za-z0-9-]))"
                           r"(?:\.[A-Za-z0-9-]+)*\b)")
# A path: a run of separators and names. Only its last component is kept (rule 4).
_NAME = r"[^\s/\\:;,'\"()\[\]{}<>|]+"  # a folder's or a file's name, without spaces
_WINDOWS_NAME = r"[^\s\\/:*?\"<>|;,'()\[\]{}]+"


def _spaced(name: str) -> str:
    """A name that may hold single spaces where the path surely goes on: right before the next
    separator (``John Smith/``, ``Program Files\\``); else a name without spaces."""
    return "(?:" + name + "(?: " + name + r")*(?=[\\/])|" + name + ")"


# The name right after /home/, /Users/ or \Users\ is a user's, spaces and all ("John Smith").
_AFTER_USERS = r"(?:(?<=/(?i:home)/)|(?<=[\\/](?i:users)[\\/]))"
_FILE_URL = re.compile(r"\bfile://(?!<)[^\s'\"]*")  # (?!<): a folder's label is there already
_POSIX_PATH = re.compile(r"(?<![\w.~<>:/-])(?:~|\.{1,2})?(?:/(?:" + _AFTER_USERS
                         + _spaced(_NAME) + "|" + _NAME + r"))+/?")
# Backslashes are not prose: any folder of a Windows path may hold spaces (Program Files).
_WINDOWS_PATH = re.compile(r"(?:\b[A-Za-z]:|\\\\[^\s\\/:*?\"<>|]+)(?:[\\/]"
                           + _spaced(_WINDOWS_NAME) + r")+[\\/]?")
# A path in quotes, as Python's OSError and most libraries quote one: spaces anywhere in it.
_QUOTED_PATH = re.compile(
    r"(?P<quote>['\"])(?P<path>(?:~?/|[A-Za-z]:[\\/]|\\\\)[^'\"]*?[^'\"\s\\/])(?P=quote)")
# What follows a folder named by itself, not as the start of a longer path.
_FOLDER_END = r"[\\/]?(?=$|[\s:;,'\"()\[\]{}<>|]|\.(?:\s|$))"
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
            or name in CONFIGURATION_SET
            or (_VERSION.fullmatch(value) is not None and _IPV4.match(value) is None)
            or _ARCHITECTURE.fullmatch(value) is not None
            or is_vocabulary(value))


def is_vocabulary(text: str) -> bool:
    """Whether ``text`` is wholly one of the tool's own words (see the docstring), which say
    nothing about anyone whatever a variable also holds."""
    words, device = _vocabulary()
    return text in words or device.fullmatch(text) is not None


@functools.cache
def _vocabulary() -> tuple[frozenset[str], re.Pattern[str]]:
    """The tool's words, read once: the values the report's schema names, Python's exception
    and warning classes, the closed sets below; and the form of a device (``cuda:0``)."""
    exceptions = {name for name, value in vars(builtins).items()
                  if isinstance(value, type) and issubclass(value, BaseException)}
    device = (fact_schema("execution", "device") or {}).get("pattern")
    return (named_values() | _WORKER_WORDS | exceptions,
            re.compile(device if isinstance(device, str) else "cpu"))


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
        known = {_folder_key(folder): label for folder, label in (folders or {}).items()
                 if _folder_key(folder)}
        # Longest first: a folder inside another (the working folder in the home) is itself.
        self._folders = sorted(known.items(), key=lambda item: len(item[0]), reverse=True)
        # A known folder, by itself or at the start of a longer path, is found as it is written,
        # spaces and all, before paths are cut at spaces (rule 3): reduced to its last component,
        # the working folder would give its own name, and a home with a space its owner's.
        self._known = None if not known else re.compile(
            r"(?:(?<=file://)|(?<![\w.~/\\-]))(?:"
            + "|".join(re.escape(folder) for folder, _ in self._folders)
            + r")(?:(?:[\\/]" + _spaced(_NAME) + r")+[\\/]?|" + _FOLDER_END + ")")
        kept = sorted({_one_line(v) for v in values if len(_one_line(v)) >= MIN_VALUE_CHARS},
                      key=len, reverse=True)
        self._values = _whole_tokens(kept, r"(?!\w)")
        # A value that is a path, named by itself, goes before the folders and paths are reduced
        # (which would keep its last component); at the start of a longer path, the path rules
        # do. A value that is a known folder keeps the folder's label.
        self._path_values = _whole_tokens(
            [v for v in kept if ("/" in v or "\\" in v) and _folder_key(v) not in known],
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
        if is_vocabulary(text):
            return text  # a fact in the tool's own words, whatever a variable or name also says
        for secret in self._secrets:
            text = text.replace(secret, "<redacted>")
        text = _URL_CREDENTIALS.sub(r"\g<scheme><redacted>@", text)
        text = _TOKEN_SHAPES.sub("<token>", text)
        if self._path_values is not None:
            text = self._path_values.sub("<redacted>", text)
        if self._known is not None:
            text = self._known.sub(lambda m: self._path(m.group(0)), text)
        text = _QUOTED_PATH.sub(lambda m: m.group("quote") + self._path(m.group("path"))
                                + m.group("quote"), text)
        text = _FILE_URL.sub(lambda m: "file://" + self._path(m.group(0)[7:]), text)
        text = _WINDOWS_PATH.sub(lambda m: self._path(m.group(0)), text)
        text = _POSIX_PATH.sub(lambda m: self._path(m.group(0)), text)
        if self._values is not None:
            text = self._values.sub("<redacted>", text)
        text = _USER_AT_HOST.sub("<user>@<host>", text)
        for name, label in self._names:
            text = name.sub(label, text)
        return text

    def unchanged(self, texts: Sequence[str]) -> bool:
        """True only when ``text`` would return every one of ``texts`` as it is: no rule finds
        anything in them. One search per rule over all of them together (joined by newlines),
        instead of every rule for each one: what ``summarize`` does for thousands of file names.

        Exact in the direction that matters: each rule of ``text`` only changes what it matches,
        and a match inside one text is a match inside the joined texts too, because every
        lookaround of the rules at a text's edge sees a newline there as it sees the edge (a
        newline is neither a word character nor a path's, and ``_FOLDER_END`` accepts it as it
        accepts the end). A match across two texts can only make this say False, and then each
        text goes through ``text``. A text holding a newline itself is never judged here.
        """
        joined = "\n".join(texts)
        if joined.count("\n") != max(len(texts) - 1, 0):
            return False
        if any(secret in joined for secret in self._secrets):
            return False
        patterns = [_URL_CREDENTIALS, _TOKEN_SHAPES, self._path_values, self._known, _QUOTED_PATH,
                    _FILE_URL, _WINDOWS_PATH, _POSIX_PATH, self._values, _USER_AT_HOST,
                    *(name for name, _ in self._names)]
        return not any(pattern.search(joined) for pattern in patterns if pattern is not None)

    @property
    def folders(self) -> list[tuple[str, str]]:
        """The known folders (home, working folder) with their labels, the longest first."""
        return list(self._folders)

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
        """A path as a report may say it: a known folder's label, alone or before the last
        component of a path inside it (``<home>/libcudnn.so.9``); else ``<path>`` and the last
        component."""
        key = _folder_key(path)
        for folder, label in self._folders:
            if key == folder:
                return label
            if key.startswith(folder) and key[len(folder)] in "/\\":
                return label + key[len(folder)] + re.split(r"[\\/]", key)[-1]
        separator = "\\" if "\\" in path and "/" not in path else "/"
        parts = without_user_names([part for part in re.split(r"[\\/]", path) if part])
        return "<path>" + separator + parts[-1] if parts else "<path>"


def without_user_names(parts: list[str]) -> list[str]:
    """The components of a path, each user's own folder (the name after ``home`` or ``Users``)
    as ``<user>``: the folder of a user is named after the user."""
    return ["<user>" if index and parts[index - 1].lower() in _USERS_FOLDERS else part
            for index, part in enumerate(parts)]


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
