"""Privacy rules: what a shared report may say about a message that came from the machine."""

from __future__ import annotations

import getpass
import os
import re
import socket
from collections.abc import Iterable, Mapping
from typing import Any

# Names of environment variables whose values are secrets wherever they appear.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|PASS$|API_?KEY|ACCESS_KEY|PRIVATE|"
                          r"CREDENTIAL|AUTH|SESSION|COOKIE", re.IGNORECASE)
_MIN_SECRET_LEN = 4

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


class Redactor:
    """Removes secrets, names and paths from text that may reach a report or a terminal."""

    def __init__(self, secrets: Iterable[str] = (), names: Mapping[str, str] | None = None,
                 folders: Mapping[str, str] | None = None) -> None:
        # Longest first, so a value that contains another is replaced whole.
        self._secrets = sorted({s for s in secrets if len(s) >= _MIN_SECRET_LEN}, key=len,
                               reverse=True)
        self._names = sorted(((k, v) for k, v in (names or {}).items() if len(k) >= 2),
                             key=lambda item: len(item[0]), reverse=True)
        # A known folder named by itself (not as the start of a longer path) becomes its label:
        # reduced to its last component, the working folder would still give its own name.
        self._folders = [
            (re.compile(re.escape(folder) + r"[\\/]?(?=$|[\s:;,'\"()\[\]{}<>|]|\.(?:\s|$))"), label)
            for folder, label in sorted(
                ((f.rstrip("/\\"), v) for f, v in (folders or {}).items()),
                key=lambda item: len(item[0]), reverse=True)
            if folder.count("/") + folder.count("\\") >= 2 or ":" in folder]

    @classmethod
    def for_this_machine(cls, environ: Mapping[str, str] | None = None) -> Redactor:
        env = os.environ if environ is None else environ
        secrets = [value for key, value in env.items() if _SECRET_NAME.search(key)]
        names: dict[str, str] = {}
        for label, value in (("<host>", _safe(socket.gethostname)),
                             ("<user>", _safe(getpass.getuser)),
                             ("<user>", os.path.basename(_safe(_home).rstrip("/\\")))):
            if value and value.lower() not in {"root", "user", "localhost"}:
                names[value] = label
        return cls(secrets, names, {_safe(_home): "<home>", _safe(os.getcwd): "<cwd>"})

    def text(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "<redacted>")
        text = _URL_CREDENTIALS.sub(r"\g<scheme><redacted>@", text)
        text = _TOKEN_SHAPES.sub("<token>", text)
        for folder, label in self._folders:
            text = folder.sub(label, text)
        text = _FILE_URL.sub(lambda m: "file://" + _keep_last_component(m, prefix=7), text)
        text = _WINDOWS_PATH.sub(_keep_last_component, text)
        text = _POSIX_PATH.sub(_keep_last_component, text)
        text = _USER_AT_HOST.sub("<user>@<host>", text)
        for name, label in self._names:
            text = re.sub(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])", label, text,
                          flags=re.IGNORECASE)
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


def _keep_last_component(match: re.Match[str], prefix: int = 0) -> str:
    path = match.group(0)[prefix:].rstrip("/\\")
    separator = "\\" if "\\" in path and "/" not in path else "/"
    last = re.split(r"[\\/]", path)[-1]
    if path.startswith("/") and path.count("/") == 1 and not last:
        return match.group(0)[prefix:]
    return "<path>" + separator + last if last else "<path>"


def _safe(read: Any) -> str:
    try:
        return str(read())
    except Exception:  # no user or host name to hide is not an error
        return ""


def _home() -> str:
    return os.path.expanduser("~")
