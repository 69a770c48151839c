"""Versions and version specifiers (PEP 440), the part a requirement on torch uses, without a
dependency: does the installed torch satisfy ``torch>=2.14.0``, ``torch==2.9.*``, ``~=2.5``?

It answers as ``pip check`` does: an installed pre-release is judged by its version, like any
other (``2.15.0.dev20260101`` satisfies ``>=2.14``). A version or specifier it cannot read gives
None (unknown), never a guess. What it implements: normalised versions (epoch, release,
pre-, post- and development releases, local labels), the operators ``==``, ``!=`` (both with a
``.*`` prefix), ``<=``, ``>=``, ``<``, ``>``, ``~=`` and ``===``, and comma-separated sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Union

_VERSION = re.compile(r"""
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""", re.VERBOSE | re.IGNORECASE)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc",
        "preview": "rc", "rc": "rc"}
_SPECIFIER = re.compile(r"^\s*(===|==|!=|~=|<=|>=|<|>)\s*([^\s,;]+)\s*$")
_INFINITY = float("inf")
LocalPart = Union[int, str]


@dataclass(frozen=True)
class Version:
    """A PEP 440 version, normalised: ``2.14.1+cu128``, ``2.15.0.dev20260101``, ``1!2.0rc1``."""

    epoch: int
    release: tuple[int, ...]
    pre: tuple[str, int] | None
    post: int | None
    dev: int | None
    local: tuple[LocalPart, ...] | None

    def __str__(self) -> str:
        """The normalised text: ``1!2.0rc1.post2.dev3+cu128``."""
        text = (f"{self.epoch}!" if self.epoch else "") + ".".join(map(str, self.release))
        if self.pre is not None:
            text += f"{self.pre[0]}{self.pre[1]}"
        if self.post is not None:
            text += f".post{self.post}"
        if self.dev is not None:
            text += f".dev{self.dev}"
        if self.local is not None:
            text += "+" + ".".join(map(str, self.local))
        return text

    @property
    def public(self) -> Version:
        return Version(self.epoch, self.release, self.pre, self.post, self.dev, None)

    @property
    def is_prerelease(self) -> bool:
        return self.pre is not None or self.dev is not None

    def key(self) -> tuple[object, ...]:
        """The order PEP 440 defines: trailing zeros of the release do not count; a development
        release of a final version sorts before its pre-releases; a local label after none."""
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre: tuple[object, ...] = (-_INFINITY,)
        elif self.pre is None:
            pre = (_INFINITY,)
        else:
            pre = (("a", "b", "rc").index(self.pre[0]), self.pre[1])
        post = -_INFINITY if self.post is None else self.post
        dev = _INFINITY if self.dev is None else self.dev
        # No label sorts first; within one, a number after any letters, numbers by value.
        local = tuple((1, part, "") if isinstance(part, int) else (0, 0, part)
                      for part in self.local or ())
        return (self.epoch, tuple(release), pre, post, dev, local)


def parse(text: str) -> Version | None:
    """The version ``text`` names, or None when it is not a PEP 440 version."""
    match = _VERSION.match(text)
    if match is None:
        return None
    pre = None
    if match.group("pre_l"):
        pre = (_PRE[match.group("pre_l").lower()], int(match.group("pre_n") or 0))
    post = None
    if match.group("post_n1") is not None:
        post = int(match.group("post_n1"))
    elif match.group("post_l"):
        post = int(match.group("post_n2") or 0)
    dev = int(match.group("dev_n") or 0) if match.group("dev_l") else None
    local = None
    if match.group("local"):
        local = tuple(int(part) if part.isdigit() else part.lower()
                      for part in re.split(r"[-_.]", match.group("local")))
    return Version(int(match.group("epoch") or 0),
                   tuple(int(part) for part in match.group("release").split(".")),
                   pre, post, dev, local)


def satisfies(version: str, specifiers: str) -> bool | None:
    """Whether ``version`` meets every specifier of ``specifiers`` (``>=2.1,<3``; "" meets any
    version), as ``pip check`` judges an installed version; None when either cannot be read."""
    candidate = parse(version)
    if candidate is None:
        return None
    results = []
    for part in specifiers.split(","):
        if not part.strip():
            if specifiers.strip():
                return None  # an empty item between commas: not a specifier set
            continue
        found = _SPECIFIER.match(part)
        if found is None:
            return None
        result = _matches(found.group(1), found.group(2), candidate)
        if result is None:
            return None
        results.append(result)
    return all(results)


def _matches(operator: str, text: str, candidate: Version) -> bool | None:
    if operator == "===":
        return str(candidate).lower() == text.lower()
    if text.endswith(".*"):
        return _wildcard(operator, text[:-2], candidate)
    wanted = parse(text)
    if wanted is None or (wanted.local is not None and operator not in ("==", "!=")):
        return None  # only == and != take a local label
    return _COMPARE[operator](candidate, wanted)


def _wildcard(operator: str, text: str, candidate: Version) -> bool | None:
    """``==2.14.*`` and ``!=2.14.*``: a prefix is an epoch and a release alone."""
    prefix = parse(text)
    if operator not in ("==", "!=") or prefix is None or str(prefix) != str(
            Version(prefix.epoch, prefix.release, None, None, None, None)):
        return None
    return _prefix_match(prefix, candidate) is (operator == "==")


def _equal(candidate: Version, wanted: Version) -> bool:
    # A public version asks nothing of the candidate's local label (2.1 == 2.1+cu128).
    compared = candidate if wanted.local is not None else candidate.public
    return compared.key() == wanted.key()


def _compatible(candidate: Version, wanted: Version) -> bool | None:
    """``~=2.5.1``: at least 2.5.1, and 2.5.* (two release numbers at least)."""
    if len(wanted.release) < 2:
        return None
    head = Version(wanted.epoch, wanted.release[:-1], None, None, None, None)
    return candidate.key() >= wanted.key() and _prefix_match(head, candidate)


def _less(candidate: Version, wanted: Version) -> bool:
    # Not a pre-release of the version named unless it names one itself: below a final V
    # means below V.dev0 (<2.0 excludes 2.0rc1 and 2.0.dev1).
    if not wanted.is_prerelease:
        wanted = Version(wanted.epoch, wanted.release, wanted.pre, wanted.post, 0, None)
    return candidate.key() < wanted.key()


def _greater(candidate: Version, wanted: Version) -> bool:
    # Not a local version of the version named (>2.0 excludes 2.0+cu128), nor, unless it names
    # a post- or development release, one of its post-releases (2.0.post1; 2.0a1.post1 for
    # >2.0a1).
    if not candidate.key() > wanted.key():
        return False
    if wanted.post is not None or wanted.dev is not None:
        return candidate.public.key() != wanted.key()
    return not (_base(candidate) == _base(wanted) and candidate.pre == wanted.pre)


# The local label does not count for <= and >= (2.14.0+cu128 <= 2.14.0).
_COMPARE: dict[str, Callable[[Version, Version], bool | None]] = {
    "==": _equal, "!=": lambda candidate, wanted: not _equal(candidate, wanted),
    "~=": _compatible, "<": _less, ">": _greater,
    ">=": lambda candidate, wanted: candidate.public.key() >= wanted.key(),
    "<=": lambda candidate, wanted: candidate.public.key() <= wanted.key(),
}


def _base(version: Version) -> tuple[object, ...]:
    """The epoch and release alone (trailing zeros dropped)."""
    return Version(version.epoch, version.release, None, None, None, None).key()


def _prefix_match(prefix: Version, candidate: Version) -> bool:
    """``==prefix.*``: the candidate's epoch is the prefix's and its release starts with the
    prefix's, padded with zeros (``2.0`` matches ``==2.0.0.*``, ``2.14.1rc1`` ``==2.14.*``)."""
    release = candidate.release + (0,) * max(0, len(prefix.release) - len(candidate.release))
    return candidate.epoch == prefix.epoch and release[:len(prefix.release)] == prefix.release
