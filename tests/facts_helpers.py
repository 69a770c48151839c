"""Shared by the facts tests (test_facts_*.py, test_peers.py): one check run as a user runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import assert_valid_report, clean_env, run_tool


def checked(python: Path, pyz: Path, tmp_path: Path, *args: str,
            **env: str) -> tuple[dict[str, Any], str]:
    """The valid report of ``python pyz ARGS --output FILE`` and all it showed: the terminal's
    text, stderr and the report file's text (what a privacy test reads)."""
    out = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    result = run_tool(python, pyz, [*args, "--output", str(out)], env=clean_env(env))
    assert result.report is not None, result.stderr
    assert_valid_report(result.report)
    return result.report, result.stdout + result.stderr + out.read_text()
