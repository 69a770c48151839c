"""What the worker reads about torch's installation before it imports it, read faster than the
standard library reads it, must read the same: the distribution's version (``origin``'s header
scan against importlib.metadata's email parse) and the standard library's folder (``os``'s
folder against sysconfig's); and what a worker forked from the front, which has more loaded than
a fresh interpreter, says is loaded before a script's first line (``origin.preloaded``)."""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernodeck_diagnostic.worker import origin, stages


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


# -- what a fresh interpreter has loaded, asked by a worker forked from the front ----------------

def fresh_start(*options: str) -> frozenset[str]:
    """What a script's first line finds loaded in this interpreter started with ``options``."""
    code = "import sys; print(' '.join(sys.modules))"
    done = subprocess.run([sys.executable, *options, "-c", code], capture_output=True,
                          text=True, timeout=60, check=True)
    return frozenset(done.stdout.split())


@pytest.fixture
def forked_worker(monkeypatch: pytest.MonkeyPatch) -> Any:
    """This process as a worker forked from a front: everything it has loaded counts as loaded
    when the front's package began (a superset of a fresh start), and a fresh interpreter is
    asked, once, which of those it loads itself."""
    monkeypatch.setattr(stages, "STARTUP_MODULES", frozenset(sys.modules))
    monkeypatch.setattr(origin, "STARTUP_PROBE", [sys.executable, "-I"])
    monkeypatch.setattr(origin, "_FRESH_STARTUP", [])
    return origin


def test_a_forked_worker_asks_a_fresh_interpreter_what_it_loads(forked_worker: Any) -> None:
    fresh = fresh_start("-I")
    loaded_here_only = sorted(name for name in sys.modules
                              if name not in fresh and "." not in name
                              and name not in sys.builtin_module_names
                              and not importlib.machinery.FrozenImporter.find_spec(name))
    assert {"json", "pytest"} <= set(loaded_here_only)  # loaded here, never by a start-up
    with mock.patch.object(subprocess, "run", wraps=subprocess.run) as run:
        assert [name for name in loaded_here_only if origin.preloaded(name)] == []
        assert origin.preloaded("encodings")  # loaded by every start-up, frozen or not
        assert all(origin.preloaded(name) for name in fresh)
    assert run.call_count == 1  # asked once


def test_what_cannot_be_asked_is_not_said_to_be_loaded(forked_worker: Any,
                                                       tmp_path: Path) -> None:
    """The fresh interpreter cannot start (here: not there at all), or answers nothing usable:
    a module loaded here may hide nothing or may; the user's file named like it is listed."""
    forked_worker.STARTUP_PROBE = [str(tmp_path / "no-python")]
    assert not origin.preloaded("json")
    assert origin.preloaded("sys")  # built in: nothing can hide it, nothing to ask
    assert origin.fresh_startup_modules() is None


def test_a_worker_started_anew_asks_nothing() -> None:
    """Its STARTUP_MODULES are its own start-up's (worker/launcher.py): no interpreter asked."""
    assert origin.STARTUP_PROBE is None
    with mock.patch.object(subprocess, "run") as run:
        origin.preloaded("json")
    run.assert_not_called()


def dist_info(site: Path, version: str, record: str | None) -> None:
    folder = site / f"torch-{version}.dist-info"
    folder.mkdir()
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
                                     encoding="utf-8")
    if record is not None:
        (folder / "RECORD").write_text(record, encoding="utf-8")


@pytest.mark.parametrize(("orphan_record", "orphan"), [
    ("torch/_gone.py,,\ntorch-2.12.0.dist-info/METADATA,,\n", True),  # its files are gone
    (None, True),  # no RECORD at all: pip cannot uninstall it either
    ("torch/__init__.py,,\n", False),  # it owns a file that is there: a second install
])
def test_an_orphan_dist_info_is_told_from_a_second_install(
        tmp_path: Path, orphan_record: str | None, orphan: bool) -> None:
    """Issue 44: metadata whose recorded files are all gone, beside an install that has its own,
    is left out of the installs (the installed distribution stays the real one, whatever order
    the folder lists them in) and named."""
    site = tmp_path / "site-packages"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("", encoding="utf-8")
    dist_info(site, "2.13.0+cpu", "torch/__init__.py,,\ntorch-2.13.0+cpu.dist-info/RECORD,,\n")
    dist_info(site, "2.12.0", orphan_record)
    orphans: list[str] = []
    installs = origin.torch_installs([str(site)], orphans)
    assert installs is not None
    if orphan:
        assert orphans == ["torch-2.12.0.dist-info"]
        assert [install.version for install in installs] == ["2.13.0+cpu"]
    else:
        assert orphans == []
        assert sorted(str(install.version) for install in installs) == ["2.12.0", "2.13.0+cpu"]


def test_no_install_with_files_left_is_no_orphan_case(tmp_path: Path) -> None:
    """Every torch's files gone (a half-finished uninstall): nothing is an orphan beside a real
    install; TORCH_PARTIAL_INSTALL's forced reinstall is the way."""
    site = tmp_path / "site-packages"
    site.mkdir()
    dist_info(site, "2.13.0+cpu", "torch/__init__.py,,\n")
    dist_info(site, "2.12.0", None)
    orphans: list[str] = []
    installs = origin.torch_installs([str(site)], orphans)
    assert orphans == []
    assert installs is not None
    assert len(installs) == 2
