"""What the worker reads about torch's installation before it imports it, read faster than the
standard library reads it, must read the same: the distribution's version (``origin``'s header
scan against importlib.metadata's email parse) and the standard library's folder (``os``'s
folder against sysconfig's)."""

from __future__ import annotations

import sysconfig
import tempfile
from importlib import metadata
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kernodeck_diagnostic.worker import origin

# Header lines as metadata files hold them, and the odd ones email reads in its own way: folded
# lines, spaces and tabs around the value, a line that ends the headers, \r\n line ends.
HEADER_NAMES = st.sampled_from(["Metadata-Version", "Name", "Version", "version", "VERSION",
                                "Summary", "Home-page", "Requires-Dist", "X Bad", "", "Versions"])
VALUES = st.text(alphabet=st.sampled_from(list("0123456789.+abcrcpu- \t")), max_size=12)
LINES = st.one_of(
    st.builds(lambda name, value: f"{name}:{value}", HEADER_NAMES, VALUES),
    st.builds(lambda value: f" {value}", VALUES),  # folded onto the header above
    st.builds(lambda value: f"\t{value}", VALUES),
    st.just(""),  # the headers' end: the description follows
    st.just("no colon here"),
    st.just("Version: 9.9.9 (in the description, after the headers)"),
)


def distribution(folder: Path, metadata_text: str) -> metadata.Distribution:
    info = folder / "torch-0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_bytes(metadata_text.encode("utf-8"))
    return metadata.PathDistribution(info)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(LINES, max_size=8), crlf=st.booleans())
def test_the_version_read_from_the_headers_is_importlib_metadatas(lines: list[str],
                                                                   crlf: bool) -> None:
    text = ("\r\n" if crlf else "\n").join(lines) + "\n\nA long description.\nVersion: 0.0.0\n"
    with tempfile.TemporaryDirectory() as folder:
        dist = distribution(Path(folder), text)
        assert origin.distribution_version(dist) == dist.version


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
