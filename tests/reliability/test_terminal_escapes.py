"""Nothing raw on a terminal from a Trial's program: control characters planted in stage names,
the first error's message and a contract's name and detail, one row per character, reach every
terminal output escaped, through ``terminal``'s one rule (``safe``: what ``str.isprintable``
refuses), spelled ``\\x1b`` in text and ``\\u001b`` in JSON:

- the Trial's end-of-attempt line on stderr and its ``summary=True`` table (the adapters'
  ``summary.txt`` is that table, ``Trial.summary()``);
- ``compare`` of two such attempts and ``summarize`` of them, in text, markdown and JSON; the JSON
  still parses, and gives each character back.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import SRC, clean_env, run_tool
from kernodeck_diagnostic.terminal import json_text, one_line, safe

# One row per kind of character a terminal obeys or a reader is fooled by.
CHARACTERS = {
    "esc": "\x1b", "bel": "\x07", "osc": "\x1b]0;owned\x07", "csi-c1": "\x9b", "nel-c1": "\x85",
    "del": "\x7f", "nul": "\x00", "cr": "\r", "lf": "\n", "tab": "\t", "line-separator": "\u2028",
    "paragraph-separator": "\u2029", "rlo": "\u202e", "rli": "\u2067", "lrm": "\u200e",
    "zero-width-space": "\u200b", "bom": "\ufeff", "tag-a": "\U000e0041",
}

APP = """
import json, sys
from kernodeck_diagnostic import Trial
planted = json.loads(sys.argv[2])
with Trial(sys.argv[1], summary=True) as trial:
    for index, char in enumerate(planted):
        with trial.stage(f"s{index}{char}x"):
            pass
    trial.expect("contract" + "".join(planted), False, sys.argv[3] + "".join(planted))
    with trial.stage("last" + "".join(planted)):
        raise RuntimeError(sys.argv[3] + "".join(planted))
"""


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("escapes")
    env = clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"})
    (tmp / "app.py").write_text(APP, encoding="utf-8")
    # Raw in the program's arguments too (JSON escapes only the C0 controls, NUL among them).
    planted = json.dumps(list(CHARACTERS.values()), ensure_ascii=False)
    out: dict[str, str] = {}
    folders = []
    for run in ("a", "b"):
        done = subprocess.run([sys.executable, str(tmp / "app.py"), str(tmp / run), planted,
                               f"error of run {run}"],
                              capture_output=True, env=env, timeout=120, check=False)
        assert done.returncode == 1, done.stderr[-2000:]
        stderr = done.stderr.decode("utf-8", "surrogateescape")
        # Python's own traceback of the program's error is the program's, not the tool's.
        out[f"trial {run} stderr"] = stderr.split("Traceback (most recent call last)")[0]
        (folder,) = (entry for entry in (tmp / run).iterdir() if entry.is_dir())
        folders.append(folder)
    for form in ("text", "markdown", "json"):
        for command in (["compare", str(folders[0]), str(folders[1])],
                        ["summarize", str(tmp / "a"), str(tmp / "b")]):
            done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                            [*command, "--format", form], env=env)
            assert "internal error" not in done.stderr.lower(), done.stderr
            out[f"{command[0]} {form}"] = done.stdout
            out[f"{command[0]} {form} stderr"] = done.stderr
            if form == "json":
                json.loads(done.stdout)  # still JSON
    return out


@pytest.mark.parametrize("kind", sorted(CHARACTERS))
def test_no_control_character_reaches_a_terminal_raw(shown: dict[str, str], kind: str) -> None:
    char = CHARACTERS[kind]
    raw = [where for where, text in shown.items()
           if any(not safe(one) and one != "\n" and one in text for one in char)
           or (char == "\n" and any("\n" in part for part in _fields(text)))]
    assert raw == [], (kind, raw)
    index = list(CHARACTERS).index(kind)
    # The stage is shown, its character escaped: the end line names the failed stage, the
    # table each stage (a line break in a name is escaped there, not a new row).
    escaped = one_line(char)
    assert f"s{index}{escaped}x" in shown["trial a stderr"], shown["trial a stderr"][-3000:]


def _fields(text: str) -> list[str]:
    """The table's stage column of each row: a planted line break would start a row of its own
    whose first cell is not a stage's (``s<N>`` or a header)."""
    return [row for row in text.split("\n") if row.startswith("x ")]


@pytest.mark.parametrize("command", ["compare", "summarize"])
def test_json_outputs_give_every_character_back(shown: dict[str, str], command: str) -> None:
    """The escapes are JSON's own: the document read back holds the characters planted."""
    text = json.dumps(json.loads(shown[f"{command} json"]), ensure_ascii=False)
    assert "\u202e" in text
    assert "\u202e" not in shown[f"{command} json"]


@pytest.mark.parametrize("kind", sorted(CHARACTERS))
def test_the_one_rule_spells_each_character_in_text_and_json(kind: str) -> None:
    char = CHARACTERS[kind]
    assert one_line(f"a{char}b").isprintable()
    dumped = json_text(json.dumps({"k": f"a{char}b"}, ensure_ascii=False, indent=2))
    assert json.loads(dumped) == {"k": f"a{char}b"}  # the same JSON
    assert all(safe(one) or one == "\n" for one in dumped)
