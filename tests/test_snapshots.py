"""Snapshots of what people read: text and markdown in every language, and the JSON.

The reports under tests/snapshots/reports were produced by real runs (a fake GPU pass, a venv
without torch, the CUDA build with CUDA_VISIBLE_DEVICES=-1, a fake out-of-memory) and frozen, so
rendering is compared byte for byte. After an intended change of wording:

    KD_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_snapshots.py

and review the diff of tests/snapshots/ like any other change.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from conftest import ROOT, assert_valid_report
from kernodeck_diagnostic.i18n import LANGUAGES, translator
from kernodeck_diagnostic.report.build import to_json
from kernodeck_diagnostic.report.render import markdown, text

SNAPSHOTS = ROOT / "tests" / "snapshots"
CASES = ("gpu_pass", "torch_missing", "gpu_unavailable", "out_of_memory")


def load(case: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((SNAPSHOTS / "reports" / f"{case}.json").read_text())
    return report


def matches_snapshot(name: str, rendered: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("KD_UPDATE_SNAPSHOTS"):
        path.write_text(rendered, encoding="utf-8")
    assert path.exists(), f"no snapshot {name}: run with KD_UPDATE_SNAPSHOTS=1 and review it"
    assert rendered == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES)
def test_frozen_reports_are_valid(case: str) -> None:
    assert_valid_report(load(case))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("case", CASES)
def test_text(case: str, language: str) -> None:
    matches_snapshot(f"{case}.{language}.txt", text(load(case), translate=translator(language)))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("case", CASES)
def test_markdown(case: str, language: str) -> None:
    matches_snapshot(f"{case}.{language}.md", markdown(load(case), translator(language)))


@pytest.mark.parametrize("case", CASES)
def test_json(case: str) -> None:
    # JSON is the report itself: the same in every language, English sentences.
    matches_snapshot(f"{case}.json", to_json(load(case)).decode("utf-8"))


@pytest.mark.parametrize("case", CASES)
def test_languages_differ_only_in_words(case: str) -> None:
    """Codes, stages and ids are never translated; the sentences always are."""
    report = load(case)
    english = text(report)
    for language in ("pt", "fr"):
        translated = text(report, translate=translator(language))
        assert translated != english
        for stable in (report["code"], report["stage"], *(f["id"] for f in report["findings"])):
            assert stable in translated
