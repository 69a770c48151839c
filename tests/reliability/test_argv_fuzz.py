"""Bad input: for any argument vector, the one right verdict, and what it says, in one line.

Property-based: hypothesis builds argument vectors from the real options, near misses, nasty
values (empty, huge, non-finite, unicode digits, control characters, line separators, NUL, a lone
``--``) and free text, and runs ``cli.main`` in-process. The worker is replaced by a recorded run
of the real worker (so a valid vector finishes in milliseconds) and the report may only be
written inside a scratch folder.

For every vector an oracle written here from the documented rules (``verdict``) says what must
happen, and the test asserts exactly that: the exit status (0 for --help, --version or a check
that passes, 2 for a usage error, 12 for an output file refused), the shape of what is printed
(one line on stderr for 2 and 12, in the language asked for), and the file written (exactly the
one asked for, and only when the check ran). A few real processes check the same with what only a
real command line carries (bytes that are not UTF-8, a real terminal-less run).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import fake_gpu_env, run_tool
from kernodeck_diagnostic import __version__, cli
from kernodeck_diagnostic.i18n import translator
from kernodeck_diagnostic.report import writer as output
from kernodeck_diagnostic.report.writer import OutputError, write_new
from kernodeck_diagnostic.supervision import supervisor
from reliability.harness import recorded_run

TOOL = "kernodeck-diagnostic"
# In-process, a few milliseconds each: bounded for CI; KERNODECK_FUZZ_EXAMPLES asks for more.
EXAMPLES = int(os.environ.get("KERNODECK_FUZZ_EXAMPLES", "400"))

# -- the documented rules (README, --help), written again here, independently of the parser ------

Kind = Literal["help", "version", "usage", "output_refused", "passed"]
EXIT_STATUS: dict[Kind, int] = {"help": 0, "version": 0, "passed": 0, "usage": 2,
                                "output_refused": 12}
FLAGS = ("--host-check", "--show-paths", "--debug")
ENDING: dict[str, Kind] = {"--help": "help", "-h": "help", "--version": "version"}  # exit 0
FORMATS = ("text", "json", "markdown")
LANGUAGES = ("en", "pt", "fr")
TIMEOUT_RANGE_S = (5.0, 120.0)
NAME_MAX, PATH_MAX = 255, 4096  # Linux: bytes in one name, in a whole path
# argparse: a word that starts with "-" names an option, except "-" itself, a negative number
# (the tool has no option that looks like one) and, when it names no option, a word with a space.
NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
PASSED = {"gpu": "GPU_CHECK_PASSED", "cpu": "CPU_CHECK_PASSED"}  # what the recorded worker gives


@dataclass(frozen=True)
class Verdict:
    """What one argument vector must give: its kind, and for a check that ran, the result code,
    the format shown and the file written (relative to the working folder)."""

    kind: Kind
    language: str = "en"
    code: str | None = None
    format: str = "text"
    output: str | None = None

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.kind]


class Unknowable(Exception):
    """The vector names a real program other than this Python as --python: running it is not
    this test's business (tests/test_interfaces.py runs real interpreters)."""


def names_option(word: str) -> str | None:
    """The option ``word`` names (with ``=value`` or not), or None."""
    name = word.split("=", 1)[0] if "=" in word else word
    return name if name in VALUE_RULES or name in FLAGS or name in ENDING else None


def looks_like_option(word: str) -> bool:
    if names_option(word) is not None:
        return True
    return (word.startswith("-") and word != "-" and not NEGATIVE_NUMBER.match(word)
            and " " not in word)


def language_of(argv: Sequence[str]) -> str:
    """The language of the messages: the last valid --lang anywhere in argv (read before the
    arguments are parsed, so that a usage error speaks it too), else English (the test's
    environment names none)."""
    language = "en"
    for index, word in enumerate(argv):
        value = (argv[index + 1] if word == "--lang" and index + 1 < len(argv)
                 else word.split("=", 1)[1] if word.startswith("--lang=") else None)
        if value in LANGUAGES:
            language = value
    return language


def _number(convert: Callable[[str], float], text: str) -> float | None:
    try:
        return convert(text)
    except ValueError:
        return None


def _index_rule(text: str) -> bool:  # a whole number, 0 or more
    index = _number(int, text)
    return index is not None and index >= 0


def _timeout_rule(text: str) -> bool:  # seconds, 5 to 120
    seconds = _number(float, text)
    return (seconds is not None and math.isfinite(seconds)
            and TIMEOUT_RANGE_S[0] <= seconds <= TIMEOUT_RANGE_S[1])


# The options that take a value, and the rule of their value (README and --help).
VALUE_RULES: dict[str, Callable[[str], bool]] = {
    "--device": lambda text: text.strip().lower() in PASSED,  # case and blanks do not matter
    "--device-index": _index_rule,
    "--timeout": _timeout_rule,
    "--format": lambda text: text in FORMATS,
    "--lang": lambda text: text in LANGUAGES,
    "--output": lambda text: True,  # any text: what it names is judged once all is read
    "--python": lambda text: True,
}


def can_be_created(path: str, scratch: Path) -> bool:
    """Whether ``path``, given in the folder ``scratch``, can become a new file: a name no file
    holds yet, in a folder that exists and can be written, and (this test's own fence) inside
    ``scratch``. Every folder on the way must exist as written (``a/../r.json`` needs ``a``)."""
    if not path or "\0" in path or path.endswith("/"):
        return False
    try:
        encoded = os.fsencode(path)
    except UnicodeError:
        return False
    if len(encoded) >= PATH_MAX or any(len(name) > NAME_MAX for name in encoded.split(b"/")):
        return False
    full = os.path.join(scratch, path)
    folder = os.path.dirname(full)
    return (not os.path.lexists(full) and os.path.isdir(folder)
            and os.access(folder, os.W_OK | os.X_OK)
            and Path(os.path.normpath(full)).is_relative_to(scratch))


def read(argv: Sequence[str]) -> dict[str, str] | Kind:
    """The options' values, read left to right as the documented rules say, or how the reading
    ends: ``help`` or ``version`` (printed, exit 0), ``usage`` (refused, exit 2).

    --help and --version end the reading unless a word before them was already refused. Refused
    at once: an option's value that is missing (the end, or a word that names an option) or
    breaks its rule, and a value given to a flag (``--debug=``). Refused at the end: a word that
    is no option (nothing takes positional arguments), an unknown option, and a lone ``--`` with
    everything after it.
    """
    values: dict[str, str] = {}
    refused_at_end = False
    words = iter(argv)
    for word in words:
        if word == "--":  # what follows are arguments, and nothing takes one: no --help there
            return "usage"
        option = names_option(word) if looks_like_option(word) else None
        if option is None:
            refused_at_end = True
            continue
        given = word.split("=", 1)[1] if "=" in word else None
        if option not in VALUE_RULES:  # a flag, --help or --version: no value
            if given is not None:
                return "usage"
            if option in ENDING:
                return ENDING[option]
            values[option] = ""
            continue
        if given is None:
            given = next(words, None)
            if given is None or given == "--" or looks_like_option(given):
                return "usage"
        if not VALUE_RULES[option](given):
            return "usage"
        values[option] = given
    return "usage" if refused_at_end else values


def contradicts(values: dict[str, str]) -> bool:
    """Two options that contradict each other, refused before anything else is judged: a GPU
    index given to the CPU mode (even 0), the paths asked for in JSON or markdown, which never
    show them."""
    cpu = values.get("--device", "gpu").strip().lower() == "cpu"
    return ((cpu and "--device-index" in values)
            or ("--show-paths" in values and values.get("--format", "text") != "text"))


def verdict(argv: Sequence[str], scratch: Path) -> Verdict:
    """The one right verdict for ``argv``, run in the (empty) folder ``scratch``.

    Once the words are read (``read``): no two options may contradict each other, --python must
    name a file that can be run, --output must not be ``-`` (exit 2); then a file that cannot be
    created is refused with 12 (before anything runs, or when written outside the scratch
    folder); else the check runs and passes.
    """
    language = language_of(argv)
    values = read(argv)
    if isinstance(values, str):
        return Verdict(values, language)
    if contradicts(values):
        return Verdict("usage", language)
    python = values.get("--python")
    if python is not None and python != sys.executable:
        if os.path.isfile(python) and os.access(python, os.X_OK):
            raise Unknowable(python)
        return Verdict("usage", language)
    target = values.get("--output")
    if target == "-":
        return Verdict("usage", language)
    if target is not None and not can_be_created(target, scratch):
        return Verdict("output_refused", language)
    device = values.get("--device", "gpu").strip().lower()
    written = None if target is None else \
        os.path.relpath(os.path.normpath(os.path.join(scratch, target)), scratch)
    return Verdict("passed", language, PASSED[device], values.get("--format", "text"), written)


# -- the vectors ---------------------------------------------------------------------------------

OPTIONS = ["--device", "--device-index", "--timeout", "--output", "--host-check", "--debug",
           "--format", "--lang", "--show-paths", "--python", "--help", "-h", "--version"]
NEAR_MISSES = ["--devic", "--device-indx", "-device", "--DEVICE", "--", "-", "---", "--=",
               "--timeout=", "--output=", "--device=", "-d", "--host-check=yes", "--help=1",
               "--format=", "--lang=", "--no-such-flag", "--debug=", "--version=x"]
VALUES = ["gpu", "cpu", "GPU", " cpu ", "rocm", "hip", "cuda", "tpu", "0", "1", "-1", "007",
          "5", "4.999", "120", "120.0001", "30", "nan", "inf", "-inf", "1e400", "1e-400",
          "0x10", "\u0663", "\uff15", "9" * 5000, "", " ", "text", "json", "markdown", "html",
          "en", "pt", "fr", "xx", "report.json", "dir/", ".", "..", "/", "~", "~/r.json",
          "-r.json", "a\nb", "a\rb", "\x1b[31mred", "a\u2028b", "a\u0085b", "\x00",
          "\udcff", "\U0001f600", "--", "-", "../outside.json", "a/../r.json", "x" * 300,
          sys.executable]
# Free text, except words that start like "-h" without being it ("-hx", "-h="): how argparse
# splits such a word changed between Python versions (3.13 reads "-hx" as -h).
FREE_TEXT = st.text(max_size=30).filter(lambda word: word == "-h" or not word.startswith("-h"))
TOKENS = st.one_of(
    st.sampled_from(OPTIONS),
    st.sampled_from(NEAR_MISSES),
    st.sampled_from(VALUES),
    st.builds(lambda option, value: f"{option}={value}",
              st.sampled_from(OPTIONS[:10]), st.sampled_from(VALUES)),
    FREE_TEXT,
)
# Valid pieces too, so that about half the vectors run a whole check, then one token spoiled.
VALID_PIECES = [["--device", "cpu"], ["--device=gpu"], ["--device-index", "0"], ["--timeout", "5"],
                ["--timeout=120"], ["--output", "r.json"], ["--output=sub dir/r.json"],
                ["--output", "r2.json"], ["--format", "json"], ["--format", "markdown"],
                ["--lang", "pt"], ["--lang=fr"], ["--host-check"], ["--show-paths"], ["--debug"],
                ["--python", sys.executable]]
VALID = st.lists(st.sampled_from(VALID_PIECES), max_size=6).map(
    lambda pieces: [token for piece in pieces for token in piece])
ARGVS = st.one_of(
    st.lists(TOKENS, max_size=8),
    VALID,
    st.tuples(VALID, st.integers(0, 12), TOKENS).map(
        lambda spoil: [*spoil[0][:spoil[1]], spoil[2], *spoil[0][spoil[1]:]]),
)


# -- running a vector and judging what it did ------------------------------------------------------

@dataclass
class Outcome:
    """What ``cli.main`` did: its exit status, its terminal output, the files it left."""

    status: int
    stdout: str
    stderr: str
    files: dict[str, bytes]


@contextlib.contextmanager
def scratch_folder() -> Iterator[Path]:
    """A fresh, empty working folder for one vector, removed afterwards."""
    before = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="kd-fuzz-") as folder:
        os.chdir(folder)
        try:
            yield Path(folder).resolve()
        finally:
            os.chdir(before)


def judged(argv: list[str]) -> tuple[Verdict, Outcome]:
    """The oracle's verdict on ``argv``, and what ``cli.main(argv)`` did, in the same fresh
    folder, with a recorded worker run and no locale in the environment."""
    out, err = io.StringIO(), io.StringIO()
    with scratch_folder() as folder, pytest.MonkeyPatch.context() as patch:
        for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
            patch.delenv(variable, raising=False)
        expected = verdict(argv, folder)
        patch.setattr(supervisor, "run_worker", _recorded_worker)
        patch.setattr(output, "write_new", _write_inside(folder))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(argv)
            except SystemExit as exit_:  # a command returns its status: never accepted
                status = exit_.code if isinstance(exit_.code, int) else -1
        files = {str(path.relative_to(folder)): path.read_bytes()
                 for path in folder.rglob("*") if path.is_file()}
    return expected, Outcome(int(status), out.getvalue(), err.getvalue(), files)


def _recorded_worker(python: str, *, device: str, **kwargs: Any) -> supervisor.WorkerRun:
    return recorded_run("cuda_pass", device)


def _write_inside(folder: Path) -> Any:
    def write(path: str, data: bytes) -> None:
        if not Path(os.path.abspath(path)).is_relative_to(folder):
            raise OutputError("output.reason.permission")  # a fence: this test writes nowhere else
        write_new(path, data)

    return write


def one_line_frame(language: str) -> tuple[str, str]:
    """How a usage error's line starts and ends in ``language``."""
    start, end = translator(language)("command.usage_error", message="\0").split("\0")
    return f"{TOOL}: {start}", end


def assert_as_judged(argv: Sequence[Any], expected: Verdict, outcome: Outcome) -> None:
    """The exit status, what is printed and what is written: exactly the verdict's."""
    said = f"argv={argv!r}\nexpected {expected}\ngot exit {outcome.status}\n" \
           f"stdout: {outcome.stdout[:500]!r}\nstderr: {outcome.stderr[:500]!r}"
    assert outcome.status == expected.exit_status, said
    assert "Traceback" not in outcome.stderr, said
    if expected.kind == "usage":
        start, end = one_line_frame(expected.language)
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1, said
        assert lines[0].startswith(start), said
        assert lines[0].endswith(end), said
        assert outcome.stdout == "", said
    elif expected.kind == "output_refused":
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1, said
        assert lines[0].startswith(f"{TOOL}: "), said
        assert "12" in lines[0], said
    elif expected.kind == "help":
        assert outcome.stdout.startswith(f"usage: {TOOL}"), said
        assert outcome.stderr == "", said
    elif expected.kind == "version":
        assert outcome.stdout == f"{TOOL} {__version__}\n", said
        assert outcome.stderr == "", said
    else:
        assert outcome.stderr == "", said
        if expected.format == "json":
            assert json.loads(outcome.stdout)["code"] == expected.code, said
        else:
            assert expected.code in outcome.stdout, said
    if expected.kind == "passed" and expected.output is not None:
        assert list(outcome.files) == [expected.output], said
        assert json.loads(outcome.files[expected.output])["code"] == expected.code, said
    else:
        assert outcome.files == {}, said


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(argv=ARGVS)
def test_every_argument_vector_gets_its_one_right_verdict(argv: list[str]) -> None:
    """In-process, hundreds of vectors: each gets exactly the verdict the oracle gives."""
    assume(not argv or argv[0] not in cli.SUBCOMMANDS)  # other commands, other contracts
    try:
        expected, outcome = judged(argv)
    except Unknowable:
        assume(False)
        return
    assert_as_judged(argv, expected, outcome)


# Vectors that broke the front once (multi-line errors, NUL, a huge number, argparse's "--"),
# kept as regression cases with their verdicts written out, which the oracle must give too.
HUGE_NUMBER_REFUSED = hasattr(sys, "get_int_max_str_digits")  # int() refuses 4301+ digits


@pytest.mark.parametrize(("argv", "kind", "written"), [
    (["--timeout", "nan"], "usage", None),
    (["--device", "a\nb"], "usage", None),
    (["unexpected\nsecond line"], "usage", None),
    (["--device-index", "9" * 5000], "usage" if HUGE_NUMBER_REFUSED else "passed", None),
    (["--output", "\x00"], "output_refused", None),
    (["--output", "report.json/"], "output_refused", None),
    (["--lang", "pt", "--timeout", "1"], "usage", None),
    (["--output", "\udcff.json", "--format", "json"], "passed", "\udcff.json"),
    (["x\u2028y", "--device=cpu"], "usage", None),
    # Python 3.9 to 3.12 drop the value of --output=-- (an empty list where a text is due).
    (["--output=--", "--device", "cpu"], "passed", "--"),
    (["--device=--"], "usage", None),
    (["--timeout=--"], "usage", None),
    (["--output=sub dir/r.json"], "output_refused", None),
    (["--output", "../outside.json"], "output_refused", None),
    (["--output", "-1"], "passed", "-1"),
    (["--output", "-r.json"], "usage", None),
    (["--output", "-"], "usage", None),
    (["--output", "--", "r.json"], "usage", None),
    (["--", "--help"], "usage", None),
    (["--bogus", "--help"], "help", None),
    (["--device", "--help"], "usage", None),
    (["--timeout=nan", "--version"], "usage", None),
    (["--version", "--bogus"], "version", None),
    (["--debug="], "usage", None),
    (["--timeout", "\uff15", "--device", " CPU "], "passed", None),
])
def test_the_nastiest_vectors_explicitly(argv: list[str], kind: Kind, written: str | None) -> None:
    expected, outcome = judged(argv)
    assert (expected.kind, expected.output) == (kind, written)  # the oracle agrees
    assert_as_judged(argv, expected, outcome)


@pytest.mark.parametrize(("argv", "status"), [
    ([b"--device=\xff\xfe"], 2),
    ([b"--output", b"r\xe9port.json", b"--device", b"cpu"], 0),
    ([b"--timeout", b"1e400"], 2),
    # Read whole, then refused as a contradiction: the CPU mode has no GPU index.
    ([b"--device-index", b"99999999999999999999999", b"--device", b"cpu"], 2),
    (["--\u00e9tiquette", "\u8a3a\u65ad"], 2),
    (["--device", "cpu\nsecond line"], 2),
    (["unexpected\nsecond line"], 2),
    (["\x1b[2J\x1b[31m--device"], 2),
])
def test_real_command_lines_get_their_verdicts(pyz: Path, tmp_path: Path,
                                               argv: list[str | bytes], status: int) -> None:
    """Real processes: bytes that are not UTF-8 arrive as surrogate escapes, and the answer is
    still the one right exit status, one line for a usage error, never a traceback."""
    words = [os.fsdecode(arg) for arg in argv]
    expected = verdict(words, tmp_path)
    assert expected.exit_status == status  # the oracle agrees
    env = fake_gpu_env("cuda_pass", LANG="C.UTF-8")  # English, as the oracle assumes
    for variable in ("LC_ALL", "LC_MESSAGES"):
        env.pop(variable, None)
    result = run_tool(sys.executable, pyz, words, env=env, cwd=tmp_path, timeout=60)
    files = {str(path.relative_to(tmp_path)): path.read_bytes()
             for path in tmp_path.rglob("*") if path.is_file()}
    assert_as_judged([repr(arg) for arg in argv], expected,
                     Outcome(result.returncode, result.stdout, result.stderr, files))

