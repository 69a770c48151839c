"""What the worker reads about torch's installation before it imports it, read faster than the
standard library reads it, must read the same: the distribution's version (``origin``'s header
scan against importlib.metadata's email parse) and the standard library's folder (``os``'s
folder against sysconfig's)."""

from __future__ import annotations

import os
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernodeck_diagnostic.worker import origin


class RawDistribution(metadata.Distribution):
    """A distribution whose files are given as they are, without the newline translation of a
    file read as text (a finder of another kind may hand them over so)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def read_text(self, filename: str) -> str | None:
        return self.text if filename == "METADATA" else None

    def locate_file(self, path: Any) -> Any:
        return Path(str(path))


# Header lines as metadata files hold them, and the odd ones email reads in its own way: folded
# lines, spaces and tabs around the value, lines that end the headers, line ends of every kind.
HEADER_NAMES = st.sampled_from(["Metadata-Version", "Name", "Version", "version", "VERSION",
                                "Summary", "Home-page", "Requires-Dist", "X Bad", "", "Versions",
                                "\ufeffVersion", "Vérsion"])
VALUES = st.text(alphabet=st.sampled_from(list("0123456789.+abcrcpu- \t\x0c\x85\u2028é")),
                 max_size=12)
LINES = st.one_of(
    st.builds(lambda name, value: f"{name}:{value}", HEADER_NAMES, VALUES),
    st.builds(lambda value: f" {value}", VALUES),  # folded onto the header above
    st.builds(lambda value: f"\t{value}", VALUES),
    st.just(""),  # the headers' end: the description follows
    st.just("no colon here"),
    st.just("From someone Thu Dec  3 00:00:00 2026"),
    st.just("Version: 9.9.9 (in the description, after the headers)"),
)
ENDS = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=400, deadline=None)
@given(lines=st.lists(LINES, max_size=8), ends=st.lists(ENDS, min_size=8, max_size=8))
def test_the_version_read_from_the_headers_is_importlib_metadatas(lines: list[str],
                                                                   ends: list[str]) -> None:
    text = "".join(line + end for line, end in zip(lines, ends))
    text += "\nA long description.\nVersion: 0.0.0\n"
    dist = RawDistribution(text)
    assert origin.distribution_version(dist) == dist.version


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(LINES, max_size=8))
def test_a_metadata_file_on_disk_reads_the_same_version(tmp_path_factory: pytest.TempPathFactory,
                                                        lines: list[str]) -> None:
    info = tmp_path_factory.mktemp("site") / "torch-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("\n".join(lines) + "\n\nA description.\n", encoding="utf-8")
    dist = metadata.PathDistribution(info)
    assert origin.distribution_version(dist) == dist.version


def _unparsed() -> Any:
    raise AssertionError("the metadata file was parsed whole")


def test_plain_headers_are_read_without_parsing_the_whole_file() -> None:
    # The point of the function: torch's headers, as its wheels write them, never reach the
    # email parser.
    dist = RawDistribution("Metadata-Version: 2.4\nName: torch\nVersion: 2.13.0+cpu\n"
                           "Summary: Tensors and Dynamic neural networks\n\n" + "x\n" * 5000)
    with mock.patch.object(metadata.Distribution, "metadata", property(lambda self: _unparsed())):
        assert origin.distribution_version(dist) == "2.13.0+cpu"


def test_a_distribution_that_reads_its_own_version_is_asked_for_it() -> None:
    class Vendored(RawDistribution):
        @property
        def version(self) -> str:  # type: ignore[override]
            return "2.0.0+vendored"

    assert origin.distribution_version(Vendored("Version: 1.0\n")) == "2.0.0+vendored"


def test_every_installed_distribution_reads_the_same_version() -> None:
    """The real metadata files of this environment (long descriptions, licences, folded
    headers written by every build backend its packages used)."""
    found = list(metadata.distributions())
    assert len(found) > 10
    for dist in found:
        assert origin.distribution_version(dist) == dist.version, dist.metadata["Name"]


def test_a_distribution_without_metadata_reads_as_importlib_metadata_reads_it(
        tmp_path: Path) -> None:
    info = tmp_path / "torch-2.0.dist-info"
    info.mkdir()
    dist = metadata.PathDistribution(info)
    assert origin.distribution_version(dist) == dist.version


def test_the_standard_librarys_folder_is_sysconfigs() -> None:
    assert origin.same_path(origin.stdlib_folder(), sysconfig.get_paths()["stdlib"])
    assert os.path.isfile(os.path.join(origin.stdlib_folder(), "os.py"))
