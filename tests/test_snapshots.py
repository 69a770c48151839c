"""Snapshots of what people read, built by the real code from recorded runs of the real worker.

Each case is one whole check, recorded once (tests/snapshots/runs): the worker's event log byte
for byte, and how the run ended, as the front saw them (``reliability.harness.record``). Every
test run reads that log with the front's event reader, builds the report (``report.build``:
result code, findings, redaction), renders it (text and markdown in every language, and the
JSON) and compares each output with its file in tests/snapshots, byte for byte. A change to the
event reader, a rule, a sentence, the renderer or the JSON moves the snapshots it touches.

The cases, and how each was recorded (``SCENARIOS``), with real builds wherever one exists here:

- ``torch_missing``: a real venv without torch;
- ``gpu_unavailable``: the real CUDA 2.14.1 build, which finds no driver on this machine, with
  ``CUDA_VISIBLE_DEVICES=-1`` as well;
- ``gpu_pass`` and ``out_of_memory``: the fake torch (tests/fakes/torch, scenarios ``cuda_pass``
  and ``oom_at_allocation``), for the two situations only a GPU gives.

What changes from one run, machine or release to the next is fixed in one place,
``normalised``: the creation time, the tool's version, the timings. The recording machine's
folders are replaced by stand-ins when a run is recorded (``harness.STAND_IN_*``).

After an intended change of what the worker says (its protocol, a new fact), record the runs
again; after an intended change of wording or rendering, write the snapshots again:

    KERNODECK_RECORD_RUNS=1 python -m pytest tests/test_snapshots.py
    KERNODECK_UPDATE_SNAPSHOTS=1 python -m pytest tests/test_snapshots.py

(both together do both) and review the diff of tests/snapshots/ like any other change. Recording
runs each check for real: the real torch environments of tests/envs.py are built if missing.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from conftest import ROOT, assert_valid_report, clean_env, fake_gpu_env
from kernodeck_diagnostic.api import Report
from kernodeck_diagnostic.i18n import LANGUAGES, en, translator
from kernodeck_diagnostic.report import findings
from kernodeck_diagnostic.report.build import Built, to_json
from kernodeck_diagnostic.report.render import markdown, text
from reliability.harness import Recording, record

SNAPSHOTS = ROOT / "tests" / "snapshots"
RECORD = bool(os.environ.get("KERNODECK_RECORD_RUNS"))
UPDATE = bool(os.environ.get("KERNODECK_UPDATE_SNAPSHOTS"))


@dataclass(frozen=True)
class Scenario:
    """How a case is recorded: the interpreter (a fixture of conftest) and its environment."""

    python: str
    fake_torch: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    device: str = "gpu"

    def environment(self) -> dict[str, str]:
        if self.fake_torch is not None:
            return fake_gpu_env(self.fake_torch, **self.env)
        return clean_env(self.env)


SCENARIOS = {
    "gpu_pass": Scenario("notorch_python", fake_torch="cuda_pass"),
    "torch_missing": Scenario("notorch_python"),
    "gpu_unavailable": Scenario("cuda_torch_python", env={"CUDA_VISIBLE_DEVICES": "-1"}),
    "out_of_memory": Scenario("notorch_python", fake_torch="oom_at_allocation"),
}
CASES = tuple(SCENARIOS)

# The fields that differ from run to run (the time, the timings) or from release to release (the
# version), fixed to these values before anything is rendered or compared. Nothing else is.
FIXED_CREATED_AT = "2000-01-01T00:00:00Z"
FIXED_VERSION = "0.0.0"
FIXED_MS = 1.0


def normalised(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its volatile fields fixed (a copy): the one place they are."""
    fixed = copy.deepcopy(report)
    fixed["created_at"] = FIXED_CREATED_AT
    fixed["tool"]["version"] = FIXED_VERSION
    fixed["timings_ms"] = dict.fromkeys(fixed["timings_ms"], FIXED_MS)
    if fixed["execution"]["duration_ms"] is not None:
        fixed["execution"]["duration_ms"] = FIXED_MS
    return fixed


@pytest.fixture(scope="module")
def recordings(request: pytest.FixtureRequest) -> dict[str, Recording]:
    """The recorded runs; recorded anew first with KERNODECK_RECORD_RUNS=1."""
    if RECORD:
        for case, scenario in SCENARIOS.items():
            python = request.getfixturevalue(scenario.python)
            recording, live = record(python, scenario.device, scenario.environment())
            # The replay must give the report the check itself gave, or it proves nothing.
            assert normalised(recording.report()) == normalised(live), case
            recording.save(case)
    return {case: Recording.load(case) for case in CASES}


def built(recordings: dict[str, Recording], case: str) -> Built:
    """The report the real code builds from the recording, its volatile fields fixed, with its
    findings as the rules gave them (what every language shows)."""
    made = recordings[case].built()
    return Built(normalised(made.report), made.findings)


def matches_snapshot(name: str, rendered: str) -> None:
    path = SNAPSHOTS / name
    if UPDATE:
        path.write_text(rendered, encoding="utf-8")
    assert path.exists(), f"no snapshot {name}: run with KERNODECK_UPDATE_SNAPSHOTS=1, review it"
    assert rendered == path.read_text(encoding="utf-8"), (
        f"{name} differs: if the change is intended, run with KERNODECK_UPDATE_SNAPSHOTS=1 and "
        "review the diff")


def every_rendering(made: Built, case: str) -> Iterator[tuple[str, str]]:
    """Each snapshot of ``case`` (its file name) and what the real code renders for it now."""
    yield f"{case}.json", to_json(made.report).decode("utf-8")
    for language in LANGUAGES:
        yield f"{case}.{language}.txt", text(made.report, translate=translator(language),
                                             findings=made.findings)
        yield f"{case}.{language}.md", markdown(made.report, translator(language), made.findings)


def shape(log: bytes) -> list[tuple[Any, ...]]:
    """What an event log says, without its values: each event's name, fields and fact names."""
    events = [json.loads(line) for line in log.splitlines() if line.strip()]
    return [(event["event"], event.get("block"), *sorted(set(event) - {"t_ms"}),
             *sorted(event.get("values", {}) if event["event"] == "facts" else ()))
            for event in events]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_the_recordings_are_what_the_worker_says_today(request: pytest.FixtureRequest,
                                                       case: str) -> None:
    """A recording is kept until the worker changes what it says: then it must be recorded
    again (KERNODECK_RECORD_RUNS=1). Today's worker, run the same way, writes the same events
    with the same fields in the same order, and the check ends the same way."""
    scenario = SCENARIOS[case]
    kept = Recording.load(case)
    fresh, live = record(request.getfixturevalue(scenario.python), scenario.device,
                         scenario.environment())
    assert shape(fresh.events) == shape(kept.events), "record the runs again"
    assert (live["code"], live["stage"], [f["id"] for f in live["findings"]]) == (
        kept.report()["code"], kept.report()["stage"],
        [f["id"] for f in kept.report()["findings"]]), "record the runs again"


@pytest.mark.parametrize("case", CASES)
def test_built_reports_are_valid(recordings: dict[str, Recording], case: str) -> None:
    report = recordings[case].report()
    assert_valid_report(report)
    assert_valid_report(normalised(report))


@pytest.mark.parametrize("case", CASES)
def test_json(recordings: dict[str, Recording], case: str) -> None:
    # JSON is the report itself: the same in every language, English sentences.
    matches_snapshot(f"{case}.json", to_json(built(recordings, case).report).decode("utf-8"))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("case", CASES)
def test_text(recordings: dict[str, Recording], case: str, language: str) -> None:
    made = built(recordings, case)
    matches_snapshot(f"{case}.{language}.txt",
                     text(made.report, translate=translator(language), findings=made.findings))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("case", CASES)
def test_markdown(recordings: dict[str, Recording], case: str, language: str) -> None:
    made = built(recordings, case)
    matches_snapshot(f"{case}.{language}.md",
                     markdown(made.report, translator(language), made.findings))


@pytest.mark.parametrize("case", CASES)
def test_languages_differ_only_in_words(recordings: dict[str, Recording], case: str) -> None:
    """Codes, stages and ids are never translated; the sentences always are."""
    made = built(recordings, case)
    report = made.report
    english = text(report)
    for language in ("pt", "fr"):
        translated = text(report, translate=translator(language), findings=made.findings)
        assert translated != english
        for stable in (report["code"], report["stage"], *(f["id"] for f in report["findings"])):
            assert stable in translated


@pytest.mark.skipif(UPDATE, reason="the snapshots are being written")
def test_a_changed_rule_moves_every_snapshot_of_its_case(
        recordings: dict[str, Recording], monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule that now says "info" instead of "warning" changes the JSON and the text and
    markdown of all three languages: none of them keeps findings frozen from another time."""
    def numpy_missing_as_info(report: dict[str, Any]) -> findings.Finding | None:
        found = findings.numpy_missing(report)
        return None if found is None else findings.Finding(
            found.id, "info", found.evidence, found.values, found.variant)

    rules = tuple(numpy_missing_as_info if rule is findings.numpy_missing else rule
                  for rule in findings.RULES)
    monkeypatch.setattr(findings, "RULES", rules)
    moved = [name for name, rendered in every_rendering(built(recordings, "gpu_pass"), "gpu_pass")
             if rendered != (SNAPSHOTS / name).read_text(encoding="utf-8")]
    assert len(moved) == 1 + 2 * len(LANGUAGES), moved


@pytest.mark.skipif(UPDATE, reason="the snapshots are being written")
def test_a_sentence_changed_by_one_character_fails_its_snapshots(
        recordings: dict[str, Recording], monkeypatch: pytest.MonkeyPatch) -> None:
    """One character more in an English sentence of a finding: the English text, markdown and
    JSON no longer match, the Portuguese and French ones (other catalogs) still do."""
    key = "finding.NUMPY_MISSING.summary"
    monkeypatch.setitem(en.MESSAGES, key, en.MESSAGES[key] + "!")
    moved = {name for name, rendered in every_rendering(built(recordings, "gpu_pass"), "gpu_pass")
             if rendered != (SNAPSHOTS / name).read_text(encoding="utf-8")}
    assert moved == {"gpu_pass.json", "gpu_pass.en.txt", "gpu_pass.en.md"}


@pytest.mark.parametrize("language", [*LANGUAGES, "default"])
def test_every_language_shows_the_findings_the_report_was_built_with(
        recordings: dict[str, Recording], language: str) -> None:
    """The findings are derived once, when the report is built: every language shows those,
    in the report's order (``default``: the English of ``text(report)`` and of a ``Report`` in
    Jupyter, from the report's own list), and none derives them again from the facts: a render
    given no findings shows none, whatever the facts say."""
    made = built(recordings, "gpu_unavailable")
    expected = [finding["id"] for finding in made.report["findings"]]
    assert expected  # the case has findings to show
    if language == "default":
        shown, as_markdown = text(made.report), Report(made.report)._repr_markdown_()
        stale = dict(made.report, findings=[])
        assert not any(finding_id in text(stale) for finding_id in expected)
    else:
        translate = translator(language)
        shown = text(made.report, translate=translate, findings=made.findings)
        as_markdown = markdown(made.report, translate, made.findings)
        assert not any(finding_id in text(made.report, translate=translate, findings=())
                       for finding_id in expected)
    assert [finding_id for finding_id in shown.split() if finding_id.rstrip(":") in expected
            ] == [f"{finding_id}:" for finding_id in expected]
    assert all(f"`{finding_id}`" in as_markdown for finding_id in expected)


def test_another_language_needs_the_findings_as_built(recordings: dict[str, Recording]) -> None:
    """A report shown in Portuguese or French without its findings as the rules gave them
    would show English sentences among translated ones: refused, not guessed."""
    report = built(recordings, "gpu_unavailable").report
    for language in ("pt", "fr"):
        with pytest.raises(ValueError, match="findings it was built with"):
            text(report, translate=translator(language))
