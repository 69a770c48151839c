"""Nothing raw on a terminal or in a report: text from the machine (an ImportError's message, a
warning, what nvidia-smi prints, an application's stderr, a ramp.json written by someone else)
holding terminal escapes (ESC, OSC, BEL), a bidi override (U+202E), HTML or a secret reaches
every printed path escaped, and redacted.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import SRC, clean_env, run_tool

RAW = ("\x1b", "\x07", "\u202e", "\x9b")
HOSTILE = "\x1b]0;owned\x07\x1b[2J\u202eevil\x9b"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="a fake nvidia-smi as a script")


def _fake_torch(folder: Path, secret: str) -> Path:
    """A torch whose import warns and then fails with escapes and a secret in both messages."""
    package = folder / "fake" / "torch"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(f"""
        import warnings
        warnings.warn({HOSTILE!r} + " warning password={secret}")
        raise ImportError({HOSTILE!r} + " libcudnn.so.9: cannot open, Bearer {secret}")
    """), encoding="utf-8")
    # Installed as pip install --target would: the worker imports it (no shadowing verdict).
    metadata = folder / "fake" / "torch-2.7.0.dist-info"
    metadata.mkdir()
    (metadata / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.7.0\n",
                                       encoding="utf-8")
    return package.parent


def _fake_nvidia_smi(folder: Path, secret: str) -> Path:
    tools = folder / "bin"
    tools.mkdir()
    script = tools / "nvidia-smi"
    name = f"NVIDIA {HOSTILE} <img src=x onerror=alert(1)> token={secret}"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        if any(arg.startswith("--query-gpu") for arg in sys.argv):
            print({name!r} + ", 550.54.15 {HOSTILE} sk_live_{secret}, 81559")
    """), encoding="utf-8")
    script.chmod(0o755)
    return tools


@posix_only
@pytest.mark.parametrize("form", ["text", "markdown", "json"])
def test_the_checks_error_warning_and_host_text_are_escaped_and_redacted(
        tmp_path: Path, form: str) -> None:
    secret = "zq" + secrets.token_hex(12)
    fake = _fake_torch(tmp_path, secret)
    tools = _fake_nvidia_smi(tmp_path, secret)
    env = clean_env({"PYTHONPATH": os.pathsep.join([str(fake), str(SRC)]), "LC_ALL": "C.UTF-8",
                     "PATH": str(tools) + os.pathsep + os.environ.get("PATH", "")})
    out = tmp_path / "report.json"
    done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["--host-check", "--format", form, "--output", str(out)], env=env,
                    cwd=tmp_path)
    assert done.report is not None, done.stderr
    assert done.report["host"]["status"] == "ok", done.report["host"]
    written = out.read_text(encoding="utf-8")
    for where, text in (("stdout", done.stdout), ("stderr", done.stderr), ("report", written)):
        assert secret not in text, where
        assert [raw for raw in RAW if raw in text] == [], where
    if form == "text":
        assert "libcudnn.so.9" in done.stdout  # the useful part of the message survives
        assert "NVIDIA" in done.stdout
        assert "550.54.15" in done.stdout
    if form == "markdown":
        assert "<img" not in done.stdout


def _ramp(out: Path, *options: str) -> tuple[int, str, str]:
    done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["ramp", "--axis", "batch", "--start", "1", "--stop", "2", "--out", str(out),
                     *options, "--", sys.executable, "-c", "import sys; sys.exit(0)",
                     "{batch}"],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}))
    return done.returncode, done.stdout, done.stderr


def _tampered(out: Path, attempts: list[object]) -> None:
    """A ramp.json of the same ramp whose attempts someone else wrote."""
    record = json.loads((out / "ramp.json").read_text(encoding="utf-8"))
    record["attempts"] = attempts
    record["status"] = "interrupted"
    (out / "ramp.json").write_text(json.dumps(record), encoding="utf-8")


@pytest.mark.parametrize("form", ["text", "markdown", "json"])
def test_a_resumed_ramp_reads_its_record_as_untrusted_input(tmp_path: Path, form: str) -> None:
    out = tmp_path / "ramp"
    code, _, stderr = _ramp(out)
    assert code == 0, stderr
    _tampered(out, [
        {"value": 2, "outcome": "failed", "duration_s": 0.5, "signal": HOSTILE,
         "error": HOSTILE + " <script>x</script>", "contracts_failed": [HOSTILE],
         "folder": HOSTILE},
        {"value": 1},  # a field missing: not an attempt, run again
        {"outcome": "passed"}, "not an attempt", {"value": True, "outcome": "passed",
                                                   "duration_s": 1}])
    code, stdout, stderr = _ramp(out, "--format", form)
    assert "internal error" not in stderr.lower(), stderr
    assert code == 0, stderr  # value 1 ran again and passed; value 2 is recorded as failed
    assert "evil" in stdout  # the recorded signal is said, escaped
    for where, text in (("stdout", stdout), ("stderr", stderr),
                        ("ramp.md", (out / "ramp.md").read_text(encoding="utf-8"))):
        assert [raw for raw in RAW if raw in text] == [], where
    assert "<script>" not in (out / "ramp.md").read_text(encoding="utf-8")
    record = json.loads((out / "ramp.json").read_text(encoding="utf-8"))
    assert sorted(item["value"] for item in record["attempts"]) == [1, 2]
