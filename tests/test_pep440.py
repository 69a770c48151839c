"""The PEP 440 subset that judges an extension's declared torch requirement (report/pep440.py),
held to the reference implementation (``packaging``, a test dependency only) on generated
versions and specifiers, and to the cases a torch requirement meets in practice."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from kernodeck_diagnostic.report.pep440 import parse, satisfies

RELEASE = st.lists(st.integers(0, 12), min_size=1, max_size=4).map(
    lambda parts: ".".join(map(str, parts)))
PRE = st.sampled_from(["", "a1", "b2", "rc1", "rc0", ".dev3", "a1.dev1", ".post1", ".post2.dev1",
                       "rc1.post1"])
LOCAL = st.sampled_from(["", "+cpu", "+cu128", "+cu130", "+rocm6.3", "+1", "+abc.2", "+2.abc"])
VERSION = st.builds(lambda epoch, release, pre, local: epoch + release + pre + local,
                    st.sampled_from(["", "", "", "1!"]), RELEASE, PRE, LOCAL)
PUBLIC = st.builds(lambda epoch, release, pre: epoch + release + pre,
                   st.sampled_from(["", "", "1!"]), RELEASE, PRE)
ORDERED = st.builds(lambda op, version: op + version,
                    st.sampled_from([">=", "<=", "<", ">"]), PUBLIC)
# ~= needs two release numbers or more (a single one is refused: see test_cases).
COMPATIBLE = st.builds(lambda epoch, release, pre: f"~={epoch}{release}{pre}",
                       st.sampled_from(["", "1!"]),
                       st.lists(st.integers(0, 12), min_size=2, max_size=4).map(
                           lambda parts: ".".join(map(str, parts))), PRE)
EQUAL = st.builds(lambda op, version: op + version, st.sampled_from(["==", "!="]), VERSION)
WILDCARD = st.builds(lambda op, epoch, release: f"{op}{epoch}{release}.*",
                     st.sampled_from(["==", "!="]), st.sampled_from(["", "1!"]), RELEASE)
SPECIFIER = st.one_of(ORDERED, COMPATIBLE, EQUAL, WILDCARD)


def reference(version: str, specifiers: str) -> bool:
    """What pip check decides: an installed pre-release judged by its version."""
    return SpecifierSet(specifiers).contains(Version(version), prereleases=True)


@settings(max_examples=1500, deadline=None)
@given(VERSION, st.lists(SPECIFIER, min_size=1, max_size=3))
def test_satisfies_agrees_with_packaging(version: str, specifiers: list[str]) -> None:
    joined = ",".join(specifiers)
    assert satisfies(version, joined) is reference(version, joined), (version, joined)


@settings(max_examples=1000, deadline=None)
@given(VERSION, VERSION)
def test_order_agrees_with_packaging(a: str, b: str) -> None:
    left, right = parse(a), parse(b)
    assert left is not None
    assert right is not None
    assert (left.key() < right.key()) is (Version(a) < Version(b))
    assert (left.key() == right.key()) is (Version(a) == Version(b))
    assert str(left) == str(Version(a))


@pytest.mark.parametrize(("version", "specifiers", "expected"), [
    ("2.13.0+cpu", ">=2.14.0", False),  # torchvision 0.29.1 beside torch 2.13.0
    ("2.14.1+cu130", ">=2.14.0", True),
    ("2.14.1", "==2.14.1", True),
    ("2.14.1+cu128", "==2.14.1", True),  # a public version ignores the local label
    ("2.14.1+cu128", "==2.14.1+cu130", False),
    ("2.9.1", "==2.9.*", True),
    ("2.10.0", "==2.1.*", False),
    ("2.15.0.dev20260101+cu128", ">=2.14", True),  # a nightly is judged by its version
    ("2.14.0rc1", "<2.14", False),
    ("2.14.0.post1", ">2.14", False),
    ("2.14.0+cu128", ">2.14", False),
    ("2.14.0+cu128", "<=2.14.0", True),
    ("2.5.3", "~=2.5", True),
    ("3.0", "~=2.5", False),
    ("2.5.1", "~=2.5.0", True),
    ("2.6.0", "~=2.5.0", False),
    ("2.14.1", ">=2.1,<3,!=2.14.0", True),
    ("2.14.1", "", True),
    ("V2.14.1", ">= 2.14", True),
    ("2.14.1", "=>2.14", None),  # not a specifier
    ("2.14.1", ">=2.14,,<3", None),
    ("2.14.1", "~=2", None),
    ("2.14.1", ">=2.14+cu128", None),
    ("2.14.1", "==2.14rc1.*", None),
    ("not a version", ">=1", None),
])
def test_cases(version: str, specifiers: str, expected: bool | None) -> None:
    assert satisfies(version, specifiers) is expected
