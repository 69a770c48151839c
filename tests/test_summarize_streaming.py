"""``summarize`` reads one report at a time (issue 12's fleet view): what it keeps per report is
the line it prints, never the report; its JSON is the same text as ``json.dumps`` of the whole
document; and the shortcut that redacts thousands of file names at once never lets through a
name that the per-name rules would have changed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from kernodeck_diagnostic.commands import summarize
from kernodeck_diagnostic.forked import can_fork, in_parts
from kernodeck_diagnostic.report.redact import Redactor

SNAPSHOTS = sorted((ROOT / "tests" / "snapshots").glob("*.json"))  # real reports, recorded


def _fleet(folder: Path, count: int) -> Path:
    for index in range(count):
        rack = folder / f"rack-{index // 100:02d}"
        rack.mkdir(parents=True, exist_ok=True)
        shutil.copy(SNAPSHOTS[index % len(SNAPSHOTS)], rack / f"node-{index:04d}.json")
    return folder


def _peak_bytes(folder: Path, form: str) -> int:
    # The output goes to the null device, as to a terminal: only what summarize holds counts.
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        tracemalloc.start()
        try:
            assert summarize.main([str(folder), "--format", form]) == 22  # some failed
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


@pytest.mark.parametrize("form", ["text", "markdown", "json"])
def test_memory_grows_by_a_printed_line_per_report_not_by_a_report(tmp_path: Path,
                                                                   form: str) -> None:
    """Before, every report stayed in memory until the end (about 12 KiB each here)."""
    small = _peak_bytes(_fleet(tmp_path / "small", 100), form)
    large = _peak_bytes(_fleet(tmp_path / "large", 1100), form)
    per_report = (large - small) / 1000
    assert per_report < 2048, f"{per_report:.0f} bytes per report"


def test_json_is_the_text_json_dumps_gives_of_the_whole_document(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _fleet(tmp_path / "fleet", 12)
    (folder / "broken.json").write_text("{", encoding="utf-8")
    assert summarize.main([str(folder), "--format", "json"]) == 22
    out = capsys.readouterr().out
    document = json.loads(out)
    assert out == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    assert len(document["reports"]) == 12
    assert document["unreadable"] == [{"file": "broken.json", "reason": "not_json",
                                       "detail": None}]
    expected = [{"file": path.relative_to(folder).as_posix(),
                 "code": json.loads(path.read_text(encoding="utf-8"))["code"]}
                for path in sorted(folder.rglob("node-*.json"))]
    assert [{key: row[key] for key in ("file", "code")} for row in document["reports"]] == expected


# -- the names' redaction, all at once ------------------------------------------------------------

REDACTOR = Redactor(secrets=["s3cr3t-token-value"],
                    names={"gpu-node-7": "<host>", "alice": "<user>"},
                    folders={"/home/alice": "<home>", "/work/proj": "<cwd>"},
                    values=["some-value-from-env", "/opt/private/tools"])
PIECES = ["rack-01", "node-7", "gpu-node-7", "alice", "report.json", "/", "\\", " ", "'", '"',
          ":", "@", "~", ".", "..", "home", "Users", "C:", "file://", "hf_abcdefgh12", "x@y.z",
          "s3cr3t-token-value", "some-value-from-env", "/opt/private/tools", "/home/alice",
          "/work/proj", "a", "1", "(", "]", ";", "-", "_", "é", "\t"]
NAMES = st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join),
                 min_size=1, max_size=6)


@settings(max_examples=400, deadline=None)
@given(NAMES)
def test_unchanged_says_so_only_when_every_name_is_unchanged(names: list[str]) -> None:
    if REDACTOR.unchanged(names):
        assert [REDACTOR.text(name) for name in names] == names


def test_unchanged_is_true_for_plain_names_and_false_when_one_needs_redacting() -> None:
    plain = [f"rack-{i // 10:02d}/node-{i:04d}.json" for i in range(50)]
    assert REDACTOR.unchanged(plain)
    for name in ("gpu-node-7.json", "rack-01/alice.json", "hf_abcdefgh12.json",
                 "some-value-from-env.json"):
        assert REDACTOR.text(name) != name
        assert not REDACTOR.unchanged([*plain, name])


# -- reading in parts ------------------------------------------------------------------------------

def _mixed(folder: Path) -> list[str]:
    """Reports with unreadable files among them in every part, and a file named twice: through
    its folder (an early part) and directly at the end (the last part)."""
    _fleet(folder, 23)
    (folder / "rack-00" / "broken.json").write_text("{", encoding="utf-8")
    (folder / "rack-00" / "list.json").write_text("[1]", encoding="utf-8")
    (folder / "rack-00" / "version.json").write_text('{"schema_version": 7}', encoding="utf-8")
    return [str(folder), str(folder / "rack-00" / "node-0003.json"), str(folder / "missing.json")]


@pytest.mark.parametrize("form", ["text", "markdown", "json"])
def test_reading_in_parts_gives_the_same_output_as_one_after_the_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        form: str) -> None:
    arguments = [*_mixed(tmp_path / "fleet"), "--format", form]
    assert summarize.main(arguments) == 22
    alone = capsys.readouterr().out
    parts: list[int] = []

    def recorded(work: object, items: list[object], count: int) -> list[object]:
        parts.append(count)
        return in_parts(work, items, count)  # type: ignore[arg-type]

    monkeypatch.setattr(summarize, "FILES_PER_PART", 3)
    monkeypatch.setattr(summarize, "usable_cpus", lambda: 8)
    monkeypatch.setattr(summarize, "in_parts", recorded)
    assert summarize.main(arguments) == 22
    assert capsys.readouterr().out == alone
    assert parts == [8]
    if sys.platform.startswith("linux"):
        assert can_fork()  # the parts really ran in children
    if form == "json":
        assert len(json.loads(alone)["reports"]) == 23
    else:
        assert "27 file(s): 23 report(s), " in alone


def test_a_long_name_with_escaped_characters_keeps_its_end() -> None:
    """A name whose tabs or bidi characters are escaped (longer once shown) is cut in its
    middle all the same: two names that differ at their end stay told apart."""
    from kernodeck_diagnostic.report.summary import name_cell

    stem = "node\t" * 30 + "\u202e" * 5
    first, second = name_cell(stem + "run-1.json"), name_cell(stem + "run-2.json")
    assert first != second
    assert first.endswith("run-1.json")
    assert "\t" not in first
    assert "\u202e" not in first
