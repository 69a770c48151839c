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
2. Credentials in URLs become ``<redacted>@`` (a password holding a ``/`` too:
   ``postgres://u:pa/ss@host``); token-shaped strings ``<token>``: the shapes of the public
   secret-scanning rule sets, gitleaks v8.30.1 and detect-secrets v1.5.0, one row per rule in
   ``secret_rules.py`` (which says what was left out, and why): Hugging Face's, GitHub's,
   OpenAI's, Stripe's, Google's, npm's, PyPI's, AWS's key ids, Slack's tokens and webhooks,
   GitLab's, Grafana's (``glsa_``), DigitalOcean's (``dop_v1_``), Telegram's bot tokens, JSON Web
   Tokens (``eyJ...``) and about eighty more. Other secret shapes become ``<redacted>``: a PEM
   private-key block (to its end, or to the end of the text when it was cut), what follows
   ``Bearer``, an Azure ``AccountKey=``, a credential header (``Authorization: Basic ...``, any
   scheme, ``x-api-key: ...``, ``Private-Token``, ``Cookie`` to the end of its line), and the
   value given to a name like a secret's (``is_secret_name``: ``password=...``,
   ``wandb_key=...``, ``HF_TOKEN=...``, ``'secret': '...'``, a signed URL's ``?sig=``,
   ``X-Amz-Signature=``, ``Signature=``). Each rule starts only where a match can begin, so a
   hostile megabyte of text costs one pass, never a scan from every position
   (tests/reliability/test_secrets_kept.py, test_secret_rules.py). Arguments of a command and
   parameters are read by name as well (``hidden_options``, ``hide_secret_keys``):
   ``--password X``, ``--api-key=X``, ``--wandb-key X``, ``-p X``, ``-k X``, ``{"token": X}``,
   and a short option's value as getopt reads it: ``-pX``, ``-vpX``, ``-vp X``.
3. The home and working folders, found as they are written (spaces and all), become ``<home>``
   and ``<cwd>``, however short (``/root`` too); only the file system's root is left alone. At the
   start of a longer path, the folder becomes its label and the rest is reduced as rule 4 does:
   ``/home/John Smith/venv/.../libcudnn.so.9`` becomes ``<home>/libcudnn.so.9``. So are the
   folders with a space this machine names (an entry of a variable such as ``PYTHONPATH``,
   ``sys.prefix``, ``sys.path``'s), as ``<path>``: ``<path>/typing_extensions.py`` inside one.
4. Any other absolute path is reduced to its last component (``<path>/libcudnn.so.9``); a user's
   own folder (``/home/NAME``, ``/Users/NAME``, ``C:\\Users\\NAME``, anyone's, not only this
   machine's) to ``<path>/<user>``. A name in a path may hold single spaces where the path goes on
   after it (``from /srv/Acme Corp/lib/x.py: bad`` becomes ``from <path>/x.py: bad``), unless its
   later words read as prose: all in lower case, one of them a short word of a sentence
   (``_PROSE``: "/usr/lib and torch/lib" is cut at the space); the user's name after ``/home/``,
   ``/Users/`` or ``\\Users\\`` always (``/home/Jane Doe/venv/x.so``). Any folder of a Windows
   path (``C:\\Program Files\\...``) and of a path in quotes (``'/home/Jane Doe'``, as Python's
   ``OSError`` writes it) may hold spaces, the last one too.
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
     the shell that every machine has (``LANG=C.UTF-8``, ``TERM=xterm-256color``), and the
     axis and value a ``ramp`` gives each attempt (``KERNODECK_AXIS_NAME=max_len``,
     ``KERNODECK_AXIS_VALUE=131072``: the user's own command-line words, which a Trial's
     parameters must keep).
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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..facts.system import CONFIGURATION_SET
from ..report_schema import fact_schema, named_values
from .secret_rules import CONTEXT_SHAPES, PREFIX_SHAPES

# Names of environment variables whose values are secrets wherever they appear.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|PASS$|API_?KEY|ACCESS_KEY|PRIVATE|"
                          r"CREDENTIAL|AUTH|SESSION|COOKIE", re.IGNORECASE)
_MIN_SECRET_LEN = 4

# Rule 5: every other variable's value, with its exemptions.
MIN_VALUE_CHARS = 6
NOT_IDENTIFYING_VARIABLES = re.compile(r"LANG|LANGUAGE|LC_[A-Z]+|TERM|COLORTERM|SHELL|"
                                       r"KERNODECK_AXIS_NAME|KERNODECK_AXIS_VALUE")
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

# Rule 2. A scheme starts where a run of its characters starts (``lead``, the non-letters a
# scheme cannot begin with, is kept): tried from every letter of a long run, the rule would scan
# the run again each time. The password may hold a ``/`` (``postgres://u:pa/ss@host``), but not
# as a port does (``http://host:8080/a@b``); user and password are bounded.
_URL_CREDENTIALS = re.compile(r"(?<![A-Za-z0-9+.-])(?P<lead>[0-9+.-]*)"
                              r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^\s/@:]{0,256}"
                              r"(?::(?!\d+(?:[/?#]|$))[^\s@]{0,256})?@")
# The token shapes: the public rule sets' (``secret_rules``: gitleaks, detect-secrets), each
# compiled once at import; the prefixed ones in one expression grouped by first character.
_TOKEN_SHAPES = PREFIX_SHAPES
_CONTEXT_SHAPES = tuple((pattern, rule.needles) for rule, pattern in CONTEXT_SHAPES)
# Secret shapes whose value becomes <redacted>, the words that name it kept.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN[ A-Z0-9_-]{0,64}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----END)[\s\S])*"
    r"(?:-----END[ A-Z0-9_-]{0,64}PRIVATE KEY(?: BLOCK)?-----)?")
# What follows Bearer: a credential when it holds a digit or is long (not "Bearer authentication").
_BEARER = re.compile(r"\b(?P<word>[Bb]earer|BEARER)(?P<space>\s+)"
                     r"(?=[A-Za-z._~+/=-]{0,64}\d|[A-Za-z0-9._~+/=-]{20})[A-Za-z0-9._~+/=-]{8,}")
_AZURE_KEY = re.compile(r"\b(?P<word>AccountKey|SharedAccessKey|SharedAccessSignature)="
                        r"[^;\s'\"]+")
# An HTTP header that carries a credential (gitleaks' curl-auth-header, detect-secrets'
# KeywordDetector): ``Authorization: Basic <value>`` (any scheme: the scheme's word is kept),
# ``Proxy-Authorization``, ``Cookie`` and ``Set-Cookie`` (to the end of the line), GitLab's
# ``Private-Token``, ``api-key`` and an ``X-`` header named like a secret (``x-api-key``,
# ``X-Auth-Token``, ``X-Amz-Security-Token``), unquoted after its colon as headers are written.
_HEADER = re.compile(
    r"(?<![A-Za-z0-9-])(?P<word>(?i:x-[a-z0-9-]{1,60}|(?:proxy-)?authorization|private-token"
    r"|api-?key))(?P<sep>[\"']?[ \t]*:[ \t]*)"
    r"(?P<scheme>(?i:(?:basic|bearer|token|digest|negotiate|ntlm|aws4-hmac-sha256|apikey|sso-key"
    r"|key)[ \t]+)?)(?P<value>[^\s'\",;]{1,4096})")
_COOKIE = re.compile(r"(?<![A-Za-z0-9-])(?P<word>(?i:(?:set-)?cookie))"
                     r"(?P<sep>[\"']?[ \t]*:[ \t]*)[^\r\n'\"]{1,4096}")
# A name, then a value assigned to it: ``password=hunter2``, ``HF_TOKEN=...``, ``?sig=...``,
# ``'api_key': '...'`` (a colon only before a quoted value: "secret: not found" is prose). The
# value is hidden when the name is a secret's (``is_secret_name``: the same words as options and
# params), else the search goes on inside the value (``opts=password=x``).
_KEYWORD = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<lead>[_.-]*)(?P<word>[A-Za-z0-9][A-Za-z0-9_.-]{0,127})"
    r"(?![A-Za-z0-9_.-])(?P<sep>[\"']?\s*(?:=|:(?=\s*[\"']))\s*)"
    r"(?P<value>\"[^\"]{0,256}\"|'[^']{0,256}'|[^\s;,'\"&<>]{1,256})")
# Each with the strings one of which a text must hold for the rule to be tried at all: a
# substring test is far cheaper than a search that fails at every position.
_VALUE_SHAPES = ((_PRIVATE_KEY, "<redacted>", ("PRIVATE KEY",)),
                 (_BEARER, r"\g<word>\g<space><redacted>", ("earer", "EARER")),
                 (_AZURE_KEY, r"\g<word>=<redacted>", ("Key=", "Signature=")),
                 (_COOKIE, r"\g<word>\g<sep><redacted>", ("ookie", "OOKIE")))
# Rule 6: the host is an IPv4 address or a name with a letter in it, of two characters or more;
# ``recall@10``, ``torch@2.5.1`` or ``precision@k`` (a metric, a pinned version) name no one.
# The user starts where a run of its characters does (``lead``: the ``.``, ``-`` a word does not
# start with, kept), for the same reason as the scheme above.
_USER_AT_HOST = re.compile(r"(?<![A-Za-z0-9._-])(?P<lead>[._-]*)\b[A-Za-z0-9._-]+@"
                           r"(?:\d{1,3}(?:\.\d{1,3}){3}\b"
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
# The same, a name holding single spaces wherever the path goes on after it (``/srv/Acme Corp/
# lib/x.py``), unless those words read as prose (``_reads_as_prose``: "/usr/lib and torch/lib").
_POSIX_SPACED = re.compile(r"(?<![\w.~<>:/-])(?:~|\.{1,2})?(?:/" + _spaced(_NAME) + r")+/?")
# Short words of a sentence: a name's later words all in lower case, one of them among these, are
# prose after a path, not the rest of a folder's name.
_PROSE = frozenset({"a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "in",
                    "into", "is", "it", "not", "of", "on", "or", "than", "that", "the", "then",
                    "to", "under", "via", "was", "were", "when", "where", "which", "while", "with"})
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


def _secret_variable(name: str) -> bool:
    """Whether a variable's value is a secret, hidden wherever it appears (rule 1): its name
    matches ``_SECRET_NAME`` or is named like a secret option (``WANDB_KEY``), except the
    shell's working folders (``PWD``: a folder, which rules 3 and 5 say as such)."""
    return _SECRET_NAME.search(name) is not None or (name not in _SHELL_FOLDERS
                                                     and is_secret_name(name))


_SHELL_FOLDERS = frozenset({"PWD", "OLDPWD"})


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
                 folders: Mapping[str, str] | None = None, values: Iterable[str] = (),
                 places: Iterable[str] = ()) -> None:
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
        # Folders this machine names (``places``: the environment's, the import path's) whose
        # names a path's rules would cut (a space): ``<path>``, a folder's label first.
        named = sorted({_folder_key(place) for place in places} - known.keys() - {""},
                       key=len, reverse=True)
        self._labels = [*self._folders, *((place, "<path>") for place in named)]
        every = sorted([*known, *named], key=len, reverse=True)
        # A known folder, by itself or at the start of a longer path, is found as it is written,
        # spaces and all, before paths are cut at spaces (rule 3): reduced to its last component,
        # the working folder would give its own name, and a home with a space its owner's.
        self._known = None if not every else re.compile(
            r"(?:(?<=file://)|(?<![\w.~/\\-]))(?:" + "|".join(map(re.escape, every))
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
    def for_this_machine(cls, environ: Mapping[str, str] | None = None,
                         secrets: Iterable[str] = ()) -> Redactor:
        """The rules with what this machine knows: its environment, host and user names, the
        home and working folders; ``secrets``: more values hidden wherever they appear (those
        of a command's secret options, ``argument_secrets``)."""
        env = os.environ if environ is None else environ
        secrets = [*secrets, *(value for key, value in env.items() if _secret_variable(key))]
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
        places = [entry for key, value in env.items() if not _secret_variable(key)
                  for entry in value.split(os.pathsep)]
        places += [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]
        lowered = {name.lower() for name in names}
        values = [value for key, value in env.items()
                  if not _secret_variable(key) and not is_exempt_value(key, value)
                  # a value that is a host or user name keeps that name's label
                  and _one_line(value).lower() not in lowered]
        return cls(secrets, names, folders, values, [place for place in places
                                                     if os.path.isabs(place)
                                                     and not _POSIX_PATH.fullmatch(place)])

    def text(self, text: str) -> str:
        if is_vocabulary(text):
            return text  # a fact in the tool's own words, whatever a variable or name also says
        for secret in self._secrets:
            text = text.replace(secret, "<redacted>")
        text = _hide_secret_shapes(text)
        if self._path_values is not None:
            text = self._path_values.sub("<redacted>", text)
        if self._known is not None:
            text = self._known.sub(lambda m: self._path(m.group(0)), text)
        text = _QUOTED_PATH.sub(lambda m: m.group("quote") + self._path(m.group("path"))
                                + m.group("quote"), text)
        text = _FILE_URL.sub(lambda m: "file://" + self._path(m.group(0)[7:]), text)
        text = _WINDOWS_PATH.sub(lambda m: self._path(m.group(0)), text)
        text = _POSIX_SPACED.sub(self._posix, text)
        if self._values is not None:
            text = self._values.sub("<redacted>", text)
        if "@" in text:
            text = _USER_AT_HOST.sub(r"\g<lead><user>@<host>", text)
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
        if ":" in joined and any(_header(found) != found.group(0)
                                 for found in _HEADER.finditer(joined)):
            return False
        if next(_secret_keywords(joined), None) is not None:
            return False
        patterns = [_URL_CREDENTIALS if "://" in joined else None,
                    *(shape for shape, _, needles in _VALUE_SHAPES
                      if any(needle in joined for needle in needles)),
                    *(context for context, hints in _CONTEXT_SHAPES
                      if any(hint in joined for hint in hints)),
                    _TOKEN_SHAPES, self._path_values, self._known, _QUOTED_PATH,
                    _FILE_URL, _WINDOWS_PATH, _POSIX_PATH, self._values,
                    _USER_AT_HOST if "@" in joined else None,
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

    def _posix(self, found: re.Match[str]) -> str:
        """A POSIX path (``_POSIX_SPACED``) reduced; where its spaces read as prose, cut at them."""
        if " " in found.group(0) and _reads_as_prose(found.group(0)):
            return _POSIX_PATH.sub(lambda m: self._path(m.group(0)), found.group(0))
        return self._path(found.group(0))

    def _path(self, path: str) -> str:
        """A path as a report may say it: a known folder's label, alone or before the last
        component of a path inside it (``<home>/libcudnn.so.9``); else ``<path>`` and the last
        component."""
        key = _folder_key(path)
        for folder, label in self._labels:
            if key == folder:
                return label
            if key.startswith(folder) and key[len(folder)] in "/\\":
                return label + key[len(folder)] + re.split(r"[\\/]", key)[-1]
        separator = "\\" if "\\" in path and "/" not in path else "/"
        parts = without_user_names([part for part in re.split(r"[\\/]", path) if part])
        return "<path>" + separator + parts[-1] if parts else "<path>"


def _reads_as_prose(path: str) -> bool:
    """Whether a name of ``path`` holding spaces goes on as a sentence does (``lib and torch``):
    its later words all in lower case, one of them in ``_PROSE``. A user's name is a name."""
    parts = path.split("/")
    for before, part in zip(["", *parts], parts):
        later = part.split(" ")[1:]
        if (later and before.lower() not in _USERS_FOLDERS and part.islower()
                and any(word in _PROSE for word in later)):
            return True
    return False


def _hide_secret_shapes(text: str) -> str:
    """Rule 2: credentials in URLs, the value shapes, headers, keywords and token shapes."""
    if "://" in text:
        text = _URL_CREDENTIALS.sub(r"\g<lead>\g<scheme><redacted>@", text)
    for shape, replacement, needles in _VALUE_SHAPES:
        if any(needle in text for needle in needles):
            text = shape.sub(replacement, text)
    if ":" in text:
        text = _HEADER.sub(_header, text)
    text = _hide_keywords(text)
    for context, hints in _CONTEXT_SHAPES:
        if any(hint in text for hint in hints):
            text = context.sub("<token>", text)
    return _TOKEN_SHAPES.sub("<token>", text)


def _header(found: re.Match[str]) -> str:
    """A header's credential hidden, its name and scheme kept; an ``X-`` header not named like
    a secret (``X-Request-Id``) as it is."""
    word = found.group("word")
    if word[:2].lower() == "x-" and not is_secret_name(word):
        return found.group(0)
    return word + found.group("sep") + found.group("scheme") + REDACTED


def _secret_keywords(text: str) -> Iterator[re.Match[str]]:
    """The assignments of ``text`` whose name is a secret's, in order. After any other one the
    search goes on at its value, which may hold one (``opts=password=x``)."""
    if "=" not in text and ":" not in text:
        return
    position = 0
    while True:
        found = _KEYWORD.search(text, position)
        if found is None:
            return
        if is_secret_name(found.group("word")):
            yield found
            position = found.end()
        else:
            position = found.start("value")


def _hide_keywords(text: str) -> str:
    """Each value assigned to a name like a secret's (``_secret_keywords``) as ``<redacted>``."""
    parts: list[str] = []
    kept = 0
    for found in _secret_keywords(text):
        parts += [text[kept:found.start("value")], REDACTED]
        kept = found.end()
    return "".join(parts) + text[kept:] if parts else text


# Names of options, parameters and keywords that hold secrets, as words (``--hf-token``,
# ``db.password``, ``apiKey``, ``--wandb-key``): one of ``_SECRET_WORDS`` anywhere in the name,
# one of ``_SECRET_LAST_WORDS`` as its last word, or one of ``_SECRET_PAIRS`` in a row. The
# words are detect-secrets' KeywordDetector's and gitleaks' generic-api-key's (password, secret,
# token, key, auth, credential...), with the short forms people give options (``--pw``,
# ``--privkey``, ``--sig``). A word that names a secret only as the name's end (``key``,
# ``token``, ``pass``, ``auth``, ``session``) leaves a name that goes on alone: ``--key-dim 64``,
# ``--num-key-value-heads``, ``--token-limit``, ``--pass-count``, ``auth_type`` say no secret,
# while ``--key``, ``--signing-key``, ``--max-key`` hide their value (a false redaction there
# costs a value in a record; a missed one, a credential). ``--max-tokens`` or ``tokenizer``
# name no secret (``tokens`` and ``tokenizer`` are other words).
_SECRET_WORDS = frozenset({"password", "passwd", "passphrase", "passcode", "pwd", "pw", "secret",
                           "secrets", "apikey", "credential", "credentials", "creds", "cookie",
                           "cookies", "authorization", "bearer", "jwt", "privkey", "privatekey",
                           "accesskey", "secretkey", "sessionid", "authtoken"})
_SECRET_LAST_WORDS = frozenset({"key", "token", "pass", "auth", "session", "sig", "signature"})
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"),
                           ("secret", "key"), ("account", "key"), ("client", "secret"),
                           ("session", "id"), ("auth", "token"), ("access", "token")})
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
# ``NAME=value`` as a command's argument: a variable given to ``env``, an override (Hydra's
# ``db.password=...``).
_ASSIGNED_NAME = re.compile(r"[+~]{0,2}[A-Za-z_][A-Za-z0-9_.-]*")
# Short options that hold a password by convention (mysql, psql's clients...).
# ``-k``: a key, as ``--key``'s short form (curl's ``-k`` is a flag: what follows it, if not an
# option, is hidden too).
_SECRET_SHORT_OPTIONS = frozenset({"-p", "-k"})
# A word of short options, read as getopt reads one: ``-pX`` is ``-p X``, ``-vp X`` and ``-vpX``
# are ``-v -p X``. The first secret letter among the word's leading letters takes the rest of the
# word as its value (``-p=X`` too), or the next argument when it ends the word. Every letter
# before it is taken for a flag, since which ones take a value is the program's to say: privacy
# first, ``-upostgres`` hides ``ostgres`` and ``mpirun -np 4`` the 4 (as ``-n -p 4`` would).
_SHORT_WORD = re.compile(r"-(?P<flags>[A-Za-z]*?)(?P<letter>["
                         + "".join(sorted(option[1] for option in _SECRET_SHORT_OPTIONS))
                         + r"])(?P<equals>=?)(?P<value>.*)", re.DOTALL)
REDACTED = "<redacted>"


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether an option, a parameter or a variable named ``name`` holds a secret: one of its
    words (split at ``-``, ``_``, ``.`` and camelCase) is one of ``_SECRET_WORDS``, its last
    one of ``_SECRET_LAST_WORDS``, or two in a row one of ``_SECRET_PAIRS``."""
    words = [word.lower() for word in _WORD_SPLIT.split(name) if word]
    return bool(words) and (words[-1] in _SECRET_LAST_WORDS
                            or any(word in _SECRET_WORDS for word in words)
                            or any(pair in _SECRET_PAIRS for pair in zip(words, words[1:])))


def _option_name(bare: str) -> bool:
    """Whether a single-dash word is a secret option's whole name (``-password``, ``-pw``,
    ``-pass``, ``-token``): each of its words a secret's, so nothing in it is a value."""
    words = [word.lower() for word in _WORD_SPLIT.split(bare) if word]
    return bool(words) and all(word in _SECRET_WORDS or word in _SECRET_LAST_WORDS
                               for word in words)


def _secret_arguments(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The arguments with the values of secret options hidden, and those values."""
    shown: list[str] = []
    hidden: list[str] = []
    value_next = False
    for argument in map(str, argv):
        if value_next:
            value_next = False
            if not argument.startswith("-"):  # the option's value, not the next option
                shown.append(REDACTED)
                hidden.append(argument)
                continue
        name, equals, value = argument.partition("=")
        bare = name.lstrip("-")
        word = None if argument.startswith("--") else _SHORT_WORD.match(argument)
        if word is not None and word.group("value") and not _option_name(bare):
            # -pX, -vpX, -p=X: the value hidden; -pMyTokenPw reads as a secret's name too,
            # and its next argument is hidden as well (privacy first)
            shown.append(argument[:word.start("value")] + REDACTED)
            hidden.append(word.group("value"))
            value_next = is_secret_name(bare)
            continue
        if argument.startswith("-") and (name in _SECRET_SHORT_OPTIONS or (
                len(bare) > 1 and is_secret_name(bare))):
            if equals:
                shown.append(name + "=" + REDACTED)
                hidden.append(value)
            else:
                shown.append(argument)
                value_next = True
            continue
        if word is not None:  # -vp X: the value is the next argument
            shown.append(argument)
            value_next = True
            continue
        if equals and _ASSIGNED_NAME.fullmatch(name) and is_secret_name(name):
            shown.append(name + "=" + REDACTED)
            hidden.append(value)
            continue
        shown.append(argument)
    return shown, hidden


def hidden_options(argv: Sequence[str]) -> list[str]:
    """A command's arguments with the value of every secret option hidden: ``--password X``,
    ``--api-key=X``, ``-p X``, ``HF_TOKEN=X`` (``is_secret_name``). The rest is as given."""
    return _secret_arguments(argv)[0]


def argument_secrets(argv: Sequence[str]) -> list[str]:
    """The values of a command's secret options: give them to ``Redactor.for_this_machine`` and
    they are hidden wherever else they appear (a program that prints its arguments)."""
    return _secret_arguments(argv)[1]


def redact_argv(argv: Sequence[str], redactor: Redactor) -> list[str]:
    """A command as a record may keep it: secret options' values hidden, then every argument
    through ``redactor`` (paths, names, secret shapes)."""
    return [redactor.text(argument) for argument in hidden_options(argv)]


def hide_secret_keys(value: Any) -> Any:
    """A JSON-like value (``Trial``'s params) with the value of every key named like a secret
    (``password``, ``api_key``, ``token``, a nested ``secret``) replaced by ``<redacted>``."""
    if isinstance(value, Mapping):
        return {key: REDACTED if is_secret_name(str(key)) else hide_secret_keys(item)
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [hide_secret_keys(item) for item in value]
    return value


def secret_key_values(value: Any) -> list[str]:
    """The strings held under keys named like secrets in a JSON-like value (for
    ``Redactor.for_this_machine``'s ``secrets``)."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if is_secret_name(str(key)):
                found += [item] if isinstance(item, str) else _strings(item)
            else:
                found += secret_key_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            found += secret_key_values(item)
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, (list, tuple)):
        return [text for item in value for text in _strings(item)]
    return []


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


_ROOT_KEY = re.compile(r"(?:[A-Za-z]:)?")  # a root's key, its separators stripped: "" or "C:"


def _folder_key(folder: str) -> str:
    """A folder as compared with paths in messages; empty for the file system's root (and a
    drive's), which names nothing."""
    key = folder.rstrip("/\\")
    return "" if _ROOT_KEY.fullmatch(key) else key


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
