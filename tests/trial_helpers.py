"""Running test applications that use the trial toolkit, and reading the folders they leave.

Each application is a real program: a script written to a work folder and run by a real
interpreter (the real CPU torch build, or the fake torch for GPU situations) with the package's
sources on PYTHONPATH, as a user's script importing the installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conftest import FAKES, SRC, clean_env, inductor_cache

ATTEMPT_SCHEMA = SRC / "kernodeck_diagnostic" / "trial" / "schema" / "attempt-v1.json"
REPORT_SCHEMA = SRC / "kernodeck_diagnostic" / "report" / "schema" / "report-v1.json"
APP_TIMEOUT_S = 120


def app_env(extra: Mapping[str, str] | None = None, *, fake: str | None = None) -> dict[str, str]:
    """The environment of a user's shell, the package importable; ``fake``: a fake-torch
    scenario (GPU situations only)."""
    path = os.pathsep.join([str(FAKES), str(SRC)] if fake else [str(SRC)])
    env = clean_env({"PYTHONPATH": path, **({"KD_FAKE_TORCH": fake} if fake else {}),
                     **inductor_cache()})
    env.update(extra or {})
    return env


def write_app(work: Path, source: str, name: str = "app.py") -> Path:
    work.mkdir(parents=True, exist_ok=True)
    script = work / name
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    return script


def run_app(python: Path | str, work: Path, source: str, *args: str,
            env: Mapping[str, str] | None = None,
            timeout: float = APP_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Write ``source`` as work/app.py and run it from ``work``."""
    script = write_app(work, source)
    return subprocess.run([str(python), script.name, *args], cwd=work, capture_output=True,
                          text=True, env=app_env() if env is None else dict(env),
                          timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def only_attempt(root: Path) -> Path:
    """The one attempt folder under ``root``."""
    folders = [path for path in root.iterdir() if path.is_dir()]
    assert len(folders) == 1, folders
    return folders[0]


def attempt_of(folder: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((folder / "attempt.json").read_text(encoding="utf-8"))
    return document


def events_of(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def assert_valid_attempt(document: dict[str, Any]) -> None:
    """Valid against the shipped attempt schema; its runtime and pytorch blocks against the
    check report's own schema of those blocks."""
    import jsonschema

    checker = jsonschema.FormatChecker()
    jsonschema.validate(document, json.loads(ATTEMPT_SCHEMA.read_text(encoding="utf-8")),
                        format_checker=checker)
    report = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    for block in ("runtime", "pytorch"):
        schema = {"$defs": report.get("$defs", {}), **report["properties"][block]}
        jsonschema.validate(document[block], schema, format_checker=checker)
