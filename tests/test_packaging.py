"""What the package index gets: a README whose links work there, an sdist and a wheel that carry
the whole package, an SPDX license, and no test without what it needs (so no test at all)."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, fresh_checkout

# A markdown link or image, or an HTML one; its target must be absolute on the index's page.
LINK_TARGETS = re.compile(r"\]\(\s*<?([^)\s>]+)|^\s*\[[^\]]+\]:\s*(\S+)|(?:href|src)=\"([^\"]+)\"",
                          re.MULTILINE)
# What the sdist holds besides the package: the files the README names and the build's own.
SDIST_EXTRAS = {"PKG-INFO", "setup.cfg", "README.md", "LICENSE", "pyproject.toml", "MANIFEST.in"}


def test_the_readme_has_no_relative_link() -> None:
    """The README is the project's page on the package index, where a relative link leads
    nowhere: files of the repository are named as plain paths (`docs/findings.md`)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [target for match in LINK_TARGETS.finditer(readme) for target in match.groups()
               if target]
    assert [target for target in targets
            if not target.startswith(("https://", "http://", "mailto:"))] == []


def _package_files(checkout: Path) -> set[str]:
    """The package's files as the repository holds them: sources, schema and marker."""
    package = checkout / "src" / "kernodeck_diagnostic"
    return {path.relative_to(package).as_posix() for path in package.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, str]:
    """The sdist and the wheel ``python -m build`` makes of a fresh clone (the wheel from the
    sdist, as an installer would), the clone itself, and what the build printed."""
    work = tmp_path_factory.mktemp("packaging")
    checkout = fresh_checkout(work / "checkout")
    completed = subprocess.run([sys.executable, "-m", "build", "--outdir", str(work / "dist"),
                                str(checkout)], capture_output=True, text=True, timeout=600,
                               env=clean_env(), stdin=subprocess.DEVNULL, check=False)
    said = completed.stdout + completed.stderr
    assert completed.returncode == 0, said[-3000:]
    (sdist,) = (work / "dist").glob("*.tar.gz")
    (wheel,) = (work / "dist").glob("*.whl")
    return sdist, wheel, checkout, said


@pytest.mark.slow
def test_the_build_uses_no_deprecated_setting(built: tuple[Path, Path, Path, str]) -> None:
    said = built[3]
    assert "deprecated" not in said.lower(), said[-3000:]


@pytest.mark.slow
def test_the_sdist_is_the_package_and_its_docs_and_no_test(
        built: tuple[Path, Path, Path, str]) -> None:
    sdist, _, checkout, _ = built
    with tarfile.open(sdist) as archive:
        names = {member.name.split("/", 1)[1] for member in archive.getmembers()
                 if member.isfile()}
    assert not [name for name in names if name.startswith("tests/")]
    package = {name[len("src/kernodeck_diagnostic/"):] for name in names
               if name.startswith("src/kernodeck_diagnostic/")}
    assert package == _package_files(checkout)
    docs = {f"docs/{path.name}" for path in (checkout / "docs").glob("*.md")} | {
        f"docs/images/{path.name}" for path in (checkout / "docs" / "images").glob("*.png")}
    built_here = ("src/kernodeck_diagnostic/", "src/kernodeck_diagnostic.egg-info/")
    others = {name for name in names if not name.startswith(built_here)}
    assert others == SDIST_EXTRAS | docs


@pytest.mark.slow
def test_the_license_is_an_spdx_expression(built: tuple[Path, Path, Path, str]) -> None:
    sdist, wheel, _, _ = built
    with tarfile.open(sdist) as archive:
        member = archive.extractfile(f"{sdist.name[:-len('.tar.gz')]}/PKG-INFO")
        assert member is not None
        sdist_metadata = member.read().decode("utf-8")
    with zipfile.ZipFile(wheel) as archive:
        (metadata_name,) = [name for name in archive.namelist()
                            if name.endswith(".dist-info/METADATA")]
        wheel_metadata = archive.read(metadata_name).decode("utf-8")
        licenses = [name for name in archive.namelist() if ".dist-info/licenses/" in name]
        assert archive.read(licenses[0]) == (ROOT / "LICENSE").read_bytes()
    assert "MIT License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    for metadata in (sdist_metadata, wheel_metadata):
        headers = metadata.split("\n\n", 1)[0].splitlines()
        assert "License-Expression: MIT" in headers
        assert "License-File: LICENSE" in headers
        assert not [header for header in headers if header.startswith("License:")]


@pytest.mark.slow
def test_the_wheel_installs_the_whole_package(built: tuple[Path, Path, Path, str]) -> None:
    _, wheel, checkout, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    package = {name[len("kernodeck_diagnostic/"):] for name in names
               if name.startswith("kernodeck_diagnostic/")}
    assert package == _package_files(checkout)
    assert "report/schema/report-v1.json" in package
    assert "py.typed" in package
