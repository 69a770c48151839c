"""Bad input: whatever the argument vector, the check succeeds or says why in one line.

Property-based: hypothesis builds argument vectors from the real options, near misses, nasty
values (empty, huge, non-finite, unicode digits, control characters, line separators, NUL) and
free text, and runs ``cli.main`` in-process 500 times. The worker is replaced by a recorded run
of the real worker (so a valid vector finishes in milliseconds) and the report may only be
written inside a scratch folder. Every run ends with a result code and never with exit 1 (an
internal error) or a traceback; a usage error is exit 2 with exactly one line on stderr. A few
real processes check the same property with what only a real command line carries (bytes that
are not UTF-8, a real terminal-less run).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import fake_gpu_env, run_tool
from kernodeck_diagnostic import cli
from kernodeck_diagnostic.report import writer as output
from kernodeck_diagnostic.report.writer import OutputError, write_new
from kernodeck_diagnostic.supervision import supervisor
from reliability.harness import recorded_run

OPTIONS = ["--device", "--device-index", "--timeout", "--output", "--host-check", "--debug",
           "--format", "--lang", "--show-paths", "--python", "--help", "-h", "--version"]
NEAR_MISSES = ["--devic", "--device-indx", "-device", "--DEVICE", "--", "-", "---", "--=",
               "--timeout=", "--output=", "--device=", "-d", "--host-check=yes", "--help=1",
               "--format=", "--lang=", "--no-such-flag"]
VALUES = ["gpu", "cpu", "GPU", " cpu ", "rocm", "hip", "cuda", "tpu", "0", "1", "-1", "007",
          "5", "4.999", "120", "120.0001", "30", "nan", "inf", "-inf", "1e400", "1e-400",
          "0x10", "\u0663", "\uff15", "9" * 5000, "", " ", "text", "json", "markdown", "html",
          "en", "pt", "fr", "xx", "report.json", "dir/", ".", "..", "/", "~", "~/r.json",
          "-r.json", "a\nb", "a\rb", "\x1b[31mred", "a\u2028b", "a\u0085b", "\x00",
          "\udcff", "\U0001f600", sys.executable]
TOKENS = st.one_of(
    st.sampled_from(OPTIONS),
    st.sampled_from(NEAR_MISSES),
    st.sampled_from(VALUES),
    st.builds(lambda option, value: f"{option}={value}",
              st.sampled_from(OPTIONS[:10]), st.sampled_from(VALUES)),
    st.text(max_size=30),
)
# Valid pieces too, so that about half the vectors run a whole check, then one token spoiled.
VALID_PIECES = [["--device", "cpu"], ["--device=gpu"], ["--device-index", "0"], ["--timeout", "5"],
                ["--timeout=120"], ["--output", "r.json"], ["--output=sub dir/r.json"],
                ["--format", "json"], ["--format", "markdown"], ["--lang", "pt"], ["--lang=fr"],
                ["--host-check"], ["--show-paths"], ["--debug"]]
VALID = st.lists(st.sampled_from(VALID_PIECES), max_size=6).map(
    lambda pieces: [token for piece in pieces for token in piece])
ARGVS = st.one_of(
    st.lists(TOKENS, max_size=8),
    VALID,
    st.tuples(VALID, st.integers(0, 12), TOKENS).map(
        lambda spoil: [*spoil[0][:spoil[1]], spoil[2], *spoil[0][spoil[1]:]]),
)
RESULT_CODES = {0, 2, *range(3, 14)}


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """A fresh working folder for one example, left afterwards."""
    before = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="kd-fuzz-") as folder:
        os.chdir(folder)
        try:
            yield Path(folder).resolve()
        finally:
            os.chdir(before)


def run_main(argv: list[str]) -> tuple[int, str, str]:
    """``cli.main(argv)`` with a recorded worker run, its exit code and terminal output."""
    out, err = io.StringIO(), io.StringIO()
    with scratch_folder() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(supervisor, "run_worker", _recorded_worker)
        patch.setattr(output, "write_new", _write_inside(folder))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exit_:  # --help and --version exit from argparse
                code = exit_.code if isinstance(exit_.code, int) else (exit_.code is not None)
    return int(code), out.getvalue(), err.getvalue()


def _recorded_worker(python: str, *, device: str, **kwargs: Any) -> supervisor.WorkerRun:
    return recorded_run("cuda_pass", device)


def _write_inside(folder: Path) -> Any:
    def write(path: str, data: bytes) -> None:
        if not Path(os.path.abspath(path)).is_relative_to(folder):
            raise OutputError("outside the scratch folder of this test")
        write_new(path, data)

    return write


def assert_the_property(argv: list[str], code: int, err: str) -> None:
    assert code in RESULT_CODES, (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1, (argv, err)
        assert lines[0].startswith("kernodeck-diagnostic: "), (argv, err)


@settings(max_examples=500, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(argv=ARGVS)
def test_any_argument_vector_succeeds_or_is_one_line_and_exit_2(argv: list[str]) -> None:
    """500 argument vectors, in-process: a result code, never exit 1, never a traceback; a
    usage error is exit 2 and exactly one line on stderr."""
    assume(not argv or argv[0] not in cli.SUBCOMMANDS)  # other commands, other contracts
    code, _, err = run_main(argv)
    assert_the_property(argv, code, err)


@pytest.mark.parametrize("argv", [
    ["--timeout", "nan"],
    ["--device", "a\nb"],
    ["unexpected\nsecond line"],
    ["--device-index", "9" * 5000],
    ["--output", "\x00"],
    ["--output", "report.json/"],
    ["--lang", "pt", "--timeout", "1"],
    ["--output", "\udcff.json", "--format", "json"],
    ["x\u2028y", "--device=cpu"],
])
def test_the_nastiest_vectors_explicitly(argv: list[str]) -> None:
    """Vectors that broke the front once (multi-line errors, NUL, a huge number), kept as
    regression cases with their exact verdicts."""
    code, _, err = run_main(argv)
    assert_the_property(argv, code, err)
    assert code in (0, 2, 12)


@pytest.mark.parametrize("argv", [
    [b"--device=\xff\xfe"],
    [b"--output", b"r\xe9port.json", b"--device", b"cpu"],
    [b"--timeout", b"1e400"],
    [b"--device-index", b"99999999999999999999999"],
    ["--\u00e9tiquette", "\u8a3a\u65ad"],
    ["--device", "cpu\nsecond line"],
    ["unexpected\nsecond line"],  # argparse echoes it raw: two lines on stderr, once
    ["\x1b[2J\x1b[31m--device"],
])
def test_real_command_lines_keep_the_property(pyz: Path, tmp_path: Path,
                                              argv: list[str | bytes]) -> None:
    """Real processes: bytes that are not UTF-8 arrive as surrogate escapes, and the answer is
    still a result code, one line for a usage error, never a traceback."""
    env = fake_gpu_env("cuda_pass")
    result = run_tool(sys.executable, pyz, [os.fsdecode(arg) for arg in argv], env=env,
                      cwd=tmp_path, timeout=60)
    assert_the_property([repr(arg) for arg in argv], result.returncode, result.stderr)
