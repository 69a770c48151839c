"""A path whose folders' names hold spaces, outside the home and working folders, leaves none of
its middle folders in a message.

Before, a POSIX path was cut at its first space: ``cannot load config from /tmp/Acme Corp Secret
Merger/lib/typing_extensions.py`` (a module on ``PYTHONPATH`` that raises) became ``... from
<path>/Acme Corp Secret Merger/lib/typing_extensions.py`` in ``error.message``, the finding's
evidence, and the text and markdown output. Now a folder with a space this machine names (an
entry of ``PYTHONPATH``, the import path, ``sys.prefix``) is found whole, as the home is; and any
other path goes on across a space where the path goes on after it, unless the words read as prose
("/usr/lib and torch/lib": lower case, with a short word of a sentence).
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SRC, assert_valid_report, clean_env, run_tool
from kernodeck_diagnostic.report.redact import Redactor

FORMATS = ["text", "json", "markdown"]


# -- the rule -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "redacted"), [
    ("cannot load config from /tmp/Acme Corp Secret Merger/lib/typing_extensions.py",
     "cannot load config from <path>/typing_extensions.py"),
    ("from /a b/c.py: bad", "from <path>/c.py: bad"),
    ("[Errno 2] /srv/Acme Corp/data/x.yaml, then /opt/My Env/bin/python (exit 1)",
     "[Errno 2] <path>/x.yaml, then <path>/python (exit 1)"),
    ("/srv/Research and Development/x.py failed", "<path>/x.py failed"),  # not all lower case
    ("/data/my project/out/model.pt: truncated", "<path>/model.pt: truncated"),
    ("/Applications/Visual Studio Code.app/Contents/x", "<path>/x"),
    # prose after a path stays prose
    ("/usr/lib and torch/lib", "<path>/lib and torch/lib"),
    ("/opt/x.so is not compatible with torch/lib/y.so",
     "<path>/x.so is not compatible with torch/lib/y.so"),
    # a user's name is a name, whatever its case
    ("/home/jane and co/venv/x.so: no", "<path>/x.so: no"),
])
def test_a_path_with_spaces_keeps_only_its_last_name(raw: str, redacted: str) -> None:
    redactor = Redactor()
    assert redactor.text(raw) == redacted
    assert redactor.unchanged([raw]) is False


def test_a_folder_this_machine_names_is_found_whole() -> None:
    """An entry of PYTHONPATH with a space goes whole, prose-like or not, by itself too; a
    folder inside the home keeps the home's label; PYTHONPATH's whole value is still hidden."""
    redactor = Redactor.for_this_machine({
        "HOME": "/home/ann", "DATA_DIR": "/srv/old and new",
        "PYTHONPATH": "/opt/notes on torch:/tmp/Acme Corp/lib:/home/ann/my libs"})
    assert redactor.text("in /opt/notes on torch/x.py: bad; /opt/notes on torch; "
                         "/tmp/Acme Corp/lib/typing_extensions.py, /home/ann/my libs/y.py "
                         "and /srv/old and new/z.csv") == (
        "in <path>/x.py: bad; <path>; <path>/typing_extensions.py, <home>/y.py "
        "and <path>/z.csv")
    assert redactor.text("/opt/notes on torch:/tmp/Acme Corp/lib:/home/ann/my libs") == (
        "<redacted>")
    # the places are not folders with a label of their own (summarize names files by those)
    assert {label for _, label in redactor.folders} <= {"<home>", "<cwd>"}


_WORD = st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True)
_CAPITAL = st.from_regex(r"[A-Z][a-z0-9]{1,7}", fullmatch=True)


@st.composite
def _folders(draw: st.DrawFn) -> list[str]:
    """Folders' names, at least one holding spaces (words of a name, not of a sentence)."""
    names = draw(st.lists(_WORD, min_size=1, max_size=4))
    spaced = " ".join(draw(st.lists(_CAPITAL, min_size=2, max_size=4)))
    names.insert(draw(st.integers(0, len(names))), spaced)
    return names


@given(folders=_folders(), file=st.from_regex(r"[a-z][a-z0-9_]{0,8}\.(py|yaml|so)",
                                              fullmatch=True),
       end=st.sampled_from(["", ": bad", " (errno 2)", ", retrying", "; then stop", "."]))
def test_no_middle_folder_is_left(folders: list[str], file: str, end: str) -> None:
    path = "/" + "/".join([*folders, file])
    said = Redactor().text(f"cannot load config from {path}{end}")
    assert said == f"cannot load config from <path>/{file}{end}"


@given(folders=st.lists(st.from_regex(r"[a-z]{1,6}( (and|of|in|with|the) [a-z]{1,6})?",
                                      fullmatch=True), min_size=1, max_size=4),
       file=st.from_regex(r"[a-z][a-z0-9_]{0,8}\.py", fullmatch=True))
def test_a_named_folder_goes_whole_whatever_its_words(folders: list[str], file: str) -> None:
    folder = "/" + "/".join(folders)
    redactor = Redactor(places=[folder])
    assert redactor.text(f"x {folder}/{file}: bad") == f"x <path>/{file}: bad"
    assert redactor.text(f"x {folder}: bad") == "x <path>: bad"


def test_the_spaced_rule_is_bounded_on_hostile_text() -> None:
    """Every run of words after a slash is read once: a megabyte of each ends (the child's
    time limit is the bound)."""
    script = """
from kernodeck_diagnostic.report.redact import Redactor
redactor = Redactor.for_this_machine({"PYTHONPATH": "/tmp/a b/c d:/x y", "HOME": "/home/u v"})
size = 2**20
for unit in ["/a b", "/a b ", "/a and ", " /A b", "/Ab c/", " /a", "/tmp/a b/c d/"]:
    redactor.text(unit * (size // len(unit)))
redactor.text("/" + "a " * (size // 2))
print("done")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=clean_env({"PYTHONPATH": str(SRC)}), timeout=120, check=False)
    assert done.stdout.strip() == "done", done.stderr[-2000:]


# -- as a user runs it ----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("form", FORMATS)
def test_a_path_with_spaces_leaves_no_folder_in_a_real_check(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, form: str) -> None:
    """A module on PYTHONPATH, in a folder with spaces outside the home and working folder,
    breaks ``import torch`` and names its own file and a config file elsewhere (a folder with
    spaces no variable names) in its error."""
    secret, other = "Zq" + secrets.token_hex(4), "Zq" + secrets.token_hex(4)
    lib = tmp_path / f"Acme Corp {secret} Merger" / "lib"
    lib.mkdir(parents=True)
    config = tmp_path / f"Shared {other} Data" / "etc" / "config.yaml"
    (lib / "typing_extensions.py").write_text(
        f"raise ImportError('cannot load config from ' + __file__ + ' or {config}: bad')\n",
        encoding="utf-8")
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    out = work / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--format", form,
                                              "--output", str(out)],
                      env=clean_env({"PYTHONPATH": str(lib), "HOME": str(home)}), cwd=work)
    report = result.report
    assert report is not None, result.stdout + result.stderr
    assert_valid_report(report)
    assert report["code"] == "TORCH_IMPORT_FAILED"
    assert report["error"]["message"] == (
        "cannot load config from <path>/typing_extensions.py or <path>/config.yaml: bad")
    for where, text in (("stdout", result.stdout), ("stderr", result.stderr),
                        ("report file", out.read_text(encoding="utf-8"))):
        for private in (secret, other, "Acme", "Merger", "Shared", str(tmp_path)):
            assert private not in text, (where, private, text)
    if form == "json":
        assert json.loads(result.stdout)["error"] == report["error"]
