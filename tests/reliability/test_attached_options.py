"""A short option's value attached to it (``mysql -uroot -pSECRET``) is hidden as its separated
form is (``-p SECRET``), and so is one given after a word of flags (``-vp SECRET``, ``-vpSECRET``).

Before, only ``-p X`` and ``--password=X`` were read: ``-pX`` reached a ramp's ``ramp.json``
(``command``, ``error``), its stdout, a Trial's ``attempt.json`` and ``events.jsonl``, since the
value was never given to the redactor either. The words are read as getopt reads them; a letter
before the secret one is taken for a flag (``-upostgres`` hides ``ostgres``: privacy first).

Each end-to-end test plants random values, runs the real command in a subprocess as a user does,
and searches every file written (but the attempts' ``stdout.txt``, ``stderr.txt`` and
``trace.txt``: the program's own output and traceback, local only, mode 0600: docs/trial.md,
docs/operating-range.md) and the terminal.
"""

from __future__ import annotations

import secrets
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conftest import SRC, clean_env, run_tool
from kernodeck_diagnostic.report.redact import argument_secrets, hidden_options, is_secret_name

REDACTED = "<redacted>"
LOCAL_ONLY = {"stdout.txt", "stderr.txt", "trace.txt"}
FLAG_LETTERS = "".join(sorted(set(string.ascii_letters) - {"p", "k"}))


# -- the rule -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "shown", "hidden"), [
    (["-uroot", "-pSECRETX"], ["-uroot", "-p<redacted>"], ["SECRETX"]),  # mysql
    (["-kSECRETX"], ["-k<redacted>"], ["SECRETX"]),
    (["-p=SECRETX"], ["-p=<redacted>"], ["SECRETX"]),
    (["-vp", "SECRETX", "x"], ["-vp", "<redacted>", "x"], ["SECRETX"]),  # -v -p SECRETX
    (["-vpSECRETX"], ["-vp<redacted>"], ["SECRETX"]),
    (["-vp=SECRETX"], ["-vp=<redacted>"], ["SECRETX"]),
    (["-qvkSECRETX"], ["-qvk<redacted>"], ["SECRETX"]),
    (["-vpk", "x"], ["-vp<redacted>", "x"], ["k"]),  # p's value is k, as getopt reads it
    (["-upostgres"], ["-up<redacted>"], ["ostgres"]),  # -u may be a flag: privacy first
    # a value that reads as a secret's name is still a value (was: kept, the next one hidden)
    (["-uroot", "-pMyTokenPw", "db"], ["-uroot", "-p<redacted>", "<redacted>"],
     ["MyTokenPw", "db"]),
    (["-pS3cretKey"], ["-p<redacted>"], ["S3cretKey"]),
    (["-pW3lcome!Pass"], ["-p<redacted>"], ["W3lcome!Pass"]),
    (["-pSECRET", "-v"], ["-p<redacted>", "-v"], ["SECRET"]),
    # a name like a secret's is read as before: its value is the next argument
    (["-pw", "SECRETX"], ["-pw", "<redacted>"], ["SECRETX"]),
    (["-password", "SECRETX"], ["-password", "<redacted>"], ["SECRETX"]),
    # no secret letter, or not a word of short options: as given
    (["-j8", "-P3306", "-uroot", "-v", "-5", "-", "-1e-5", "-Wignore::DeprecationWarning"],
     ["-j8", "-P3306", "-uroot", "-v", "-5", "-", "-1e-5", "-Wignore::DeprecationWarning"], []),
    (["--pk", "x", "--vp", "x", "-j8p"], ["--pk", "x", "--vp", "x", "-j8p"], []),
    # the next argument is an option, not the value (as -p -v was read)
    (["-vp", "-j8"], ["-vp", "-j8"], []),
])
def test_attached_and_grouped_short_options(argv: list[str], shown: list[str],
                                            hidden: list[str]) -> None:
    assert hidden_options(["app.py", *argv]) == ["app.py", *shown]
    assert argument_secrets(["app.py", *argv]) == hidden


def _value() -> st.SearchStrategy[str]:
    """An option's value: any text that does not start as an option or an ``=`` does."""
    return st.text(min_size=1, max_size=30).filter(lambda value: value[0] not in "-=")


@given(flags=st.text(FLAG_LETTERS, max_size=4), letter=st.sampled_from("pk"), value=_value(),
       equals=st.booleans())
def test_an_attached_value_is_hidden_as_the_separated_one(flags: str, letter: str, value: str,
                                                          equals: bool) -> None:
    """``-FLAGSpVALUE`` (or ``-FLAGSp=VALUE``) hides what ``-F -L -A -G -S -p VALUE`` hides, and
    gives the redactor the same value; ``-FLAGSp VALUE`` too."""
    word = f"-{flags}{letter}"
    attached = word + ("=" if equals else "") + value
    # a word that is a secret's name (-pw, -pass) is read as one: the next argument is hidden
    assume(not is_secret_name(attached.partition("=")[0].lstrip("-")))
    assume(not is_secret_name(flags + letter))
    separated = ["app.py", *(f"-{flag}" for flag in flags), f"-{letter}", value, "--batch", "8"]
    assert argument_secrets(separated) == [value]
    assert hidden_options(["app.py", attached, "--batch", "8"]) == [
        "app.py", attached[:len(attached) - len(value)] + REDACTED, "--batch", "8"]
    assert argument_secrets(["app.py", attached, "--batch", "8"]) == [value]
    assert hidden_options(["app.py", word, value, "--batch", "8"]) == [
        "app.py", word, REDACTED, "--batch", "8"]
    assert argument_secrets(["app.py", word, value]) == [value]


@given(word=st.text(FLAG_LETTERS + string.digits, min_size=1, max_size=8), value=_value())
def test_a_word_without_a_secret_letter_is_kept(word: str, value: str) -> None:
    """``-j8``, ``-uroot``, ``-vv``: no ``p`` or ``k`` among the leading letters, no secret name:
    the word and the next argument as given."""
    assume(not is_secret_name(word))
    argv = ["app.py", "-" + word, value]
    assert hidden_options(argv) == argv
    assert argument_secrets(argv) == []


# -- as a user runs it ----------------------------------------------------------------------------

TRIAL_APP = """
import sys
from kernodeck_diagnostic import Trial
try:
    with Trial(sys.argv[1], params={"batch": int(sys.argv[2])}) as trial:
        with trial.stage("connect"):
            raise RuntimeError("refused: " + " ".join(sys.argv[3:]))
except RuntimeError:
    sys.exit(1)  # the program's own traceback stays off the terminal
"""


def _planted() -> tuple[list[str], list[str]]:
    """Arguments with attached and grouped secret values, and those values."""
    values = ["SECRETX" + secrets.token_hex(6) for _ in range(4)]
    return (["-uroot", "-p" + values[0], "-vk" + values[1], "-vp", values[2],
             "-p=" + values[3]], values)


def _leaks(folder: Path, texts: dict[str, str], values: list[str]) -> list[tuple[str, str]]:
    """Where a planted value was found: a file under ``folder`` or one of ``texts``."""
    found = {str(path.relative_to(folder)): path.read_text(encoding="utf-8", errors="replace")
             for path in folder.rglob("*") if path.is_file() and path.name not in LOCAL_ONLY}
    assert found, "nothing written"
    found.update(texts)
    return [(where, value) for where, text in found.items() for value in values
            if value in text]


def test_a_trial_keeps_no_attached_secret(tmp_path: Path) -> None:
    argv, values = _planted()
    app = tmp_path / "app.py"
    app.write_text(TRIAL_APP, encoding="utf-8")
    done = subprocess.run([sys.executable, str(app), str(tmp_path / "runs"), "8", *argv],
                          capture_output=True, text=True, timeout=120, check=False,
                          env=clean_env({"PYTHONPATH": str(SRC)}), cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    (attempt,) = (tmp_path / "runs").glob("*/attempt.json")
    record = attempt.read_text(encoding="utf-8")
    for shown in ("-uroot", "-p<redacted>", "-vk<redacted>", "-vp", "refused:"):
        assert shown in record, shown
    assert _leaks(tmp_path / "runs", {"stdout": done.stdout, "stderr": done.stderr},
                  values) == []


def test_a_ramp_keeps_no_attached_secret(tmp_path: Path) -> None:
    argv, values = _planted()
    app = tmp_path / "app.py"
    app.write_text(TRIAL_APP.replace("sys.argv[1]", "'runs'"), encoding="utf-8")
    out = tmp_path / "ramp"
    done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["ramp", "--axis", "batch", "--start", "1", "--stop", "1", "--out", str(out),
                     "--", sys.executable, str(app), "x", "{batch}", *argv],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}), cwd=tmp_path)
    assert done.returncode == 24, done.stdout + done.stderr  # RAMP_NOTHING_PASSED
    record = (out / "ramp.json").read_text(encoding="utf-8")
    for shown in ("-uroot", "-p<redacted>", "-vk<redacted>", "refused:"):
        assert shown in record, shown
    assert list(tmp_path.glob("**/attempt.json")), "the Trial wrote no attempt"
    assert _leaks(tmp_path, {"stdout": done.stdout, "stderr": done.stderr}, values) == []
