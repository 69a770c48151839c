"""Every message key the code uses is in the catalog, and every key in the catalog is used.

A key is written whole where it is used, so that searching the source for a key finds its uses:
no ``f"ui.status.{status}"``, rather a table from the value to the whole key. Two families are
built from a table on purpose, and only they: ``code.<CODE>.summary|next_action``, one pair per
result code of ``report/codes.py``; ``finding.<ID>[.<variant>].summary|next_action``, one pair
per id and variant each rule of ``report/findings/`` declares (``@layer.rule(rank, "ID",
variants=...)``). Their keys are derived here from those tables.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernodeck_diagnostic.i18n import DEFAULT, LANGUAGES, messages
from kernodeck_diagnostic.report.codes import CODES
from kernodeck_diagnostic.report.findings import LAYERS
from kernodeck_diagnostic.report.findings.core import sentences

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "kernodeck_diagnostic"
CATALOGS = {PACKAGE / "i18n" / f"{language}.py" for language in LANGUAGES}
ENGLISH = messages(DEFAULT)
# The first part of every key: ``ui``, ``cli``, ``error``... A string of the code that starts with
# one of them followed by a dot, and holds nothing but names and dots, is taken for a key.
PREFIXES = frozenset(key.split(".", 1)[0] for key in ENGLISH)
KEY_SHAPE = re.compile(r"([a-z_]+)\.[A-Za-z0-9_.]*")
# The end of a key, written apart to be glued to a start (``key + "_stderr"``).
TAIL_SHAPE = re.compile(r"[._][A-Za-z0-9_.]+")

# Strings shaped like keys that are no key, each for its reason.
NOT_KEYS = {
    # The files of a ramp's folder (ramp/record.py).
    "ramp.json", "ramp.md", "ramp.png",
    # The captured stderr of resume-check's record check (resume/record_check.py).
    "check.stderr",
    # Paths of fields inside a report (report/compare.py, supervision/events.py).
    "error.message_key", "error.message_values",
}
# The pieces the table-built families are made of (see the module's docstring): allowed only
# for them.
TABLE_PIECES = {"code.", "finding.", ".summary", ".next_action"}
# The names a translator goes by where it is called: its first argument, when written in the
# call, must be a key.
TRANSLATORS = {"t", "_t", "h", "translate", "ENGLISH", "compose"}


def _sources() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path not in CATALOGS:
            yield path


def _strings() -> dict[str, list[str]]:
    """Every string constant of the package's code (f-strings' fixed parts too), with where."""
    found: dict[str, list[str]] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.setdefault(node.value, []).append(
                    f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


STRINGS = _strings()


def _looks_like_a_key(text: str) -> bool:
    shape = KEY_SHAPE.fullmatch(text)
    return shape is not None and shape.group(1) in PREFIXES


def _code_keys() -> set[str]:
    return {f"code.{code.name}.{part}" for code in CODES.values()
            for part in ("summary", "next_action")}


def _finding_keys() -> set[str]:
    return {key for layer in LAYERS for entry in layer.registered for finding_id in entry.ids
            for variant in entry.variants for key in sentences(finding_id, variant)}


def test_the_catalog_has_its_prefixes() -> None:
    """The prefixes this test knows keys by come from the catalog: a sanity check."""
    assert {"code", "finding", "ui", "cli", "error", "output"} <= PREFIXES
    assert all(re.fullmatch(r"[a-z_]+", prefix) for prefix in PREFIXES)


def test_every_key_the_code_writes_is_in_the_catalog() -> None:
    """A string shaped like a key is a key of the English catalog, whole: not a misspelt one,
    nor the start of one built at run time (``f"ui.status.{status}"``)."""
    unknown = {text: where for text, where in STRINGS.items()
               if _looks_like_a_key(text) and text not in ENGLISH and text not in NOT_KEYS
               and text not in TABLE_PIECES}
    assert unknown == {}, "not keys of i18n/en.py (write a key whole where it is used)"


def _glued(tail: str) -> bool:
    """Whether some key is another key, or a prefix, and then ``tail``."""
    return any(key.endswith(tail) and (key[:-len(tail)] in ENGLISH or key[:-len(tail)] in PREFIXES)
               for key in ENGLISH)


def test_no_key_is_glued_from_an_end() -> None:
    """No end of a key written apart, to follow another key or a prefix (``key + "_stderr"``,
    ``key + ".reason"``, ``f"{surface}.device.rocm"``)."""
    tails = {text: where for text, where in STRINGS.items()
             if TAIL_SHAPE.fullmatch(text) and text not in TABLE_PIECES and _glued(text)}
    assert tails == {}, "ends of keys: write each key whole where it is used"


def test_what_a_translator_is_given_written_out_is_a_key() -> None:
    called: dict[str, list[str]] = {}
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            function = node.func
            name = function.id if isinstance(function, ast.Name) else getattr(
                function, "attr", None)
            first = node.args[0]
            if name in TRANSLATORS and isinstance(first, ast.Constant) and \
                    isinstance(first.value, str) and first.value not in ENGLISH:
                called.setdefault(first.value, []).append(
                    f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert called == {}


def test_every_key_of_the_catalog_is_used() -> None:
    """Each English key is written whole somewhere in the code, or is one of a table-built
    family's (codes, findings)."""
    built = _code_keys() | _finding_keys()
    unused = sorted(key for key in ENGLISH if key not in STRINGS and key not in built)
    assert unused == [], "keys no code uses: remove them from every catalog"


def test_the_code_keys_are_the_table_of_codes() -> None:
    """``code.*``: exactly the summary and next action of each code of report/codes.py."""
    catalog = {key for key in ENGLISH if key.startswith("code.")}
    assert sorted(catalog - _code_keys()) == [], "no such code in report/codes.py"
    assert sorted(_code_keys() - catalog) == [], "codes without their sentences"


def test_the_finding_keys_are_the_ids_and_variants_the_rules_declare() -> None:
    """``finding.*``: exactly the sentences of each id and variant a rule declares."""
    catalog = {key for key in ENGLISH if key.startswith("finding.")}
    assert sorted(catalog - _finding_keys()) == [], "no rule declares this id or variant"
    assert sorted(_finding_keys() - catalog) == [], "declared ids or variants without sentences"


@pytest.mark.parametrize("text", sorted(NOT_KEYS))
def test_each_string_taken_for_no_key_is_still_in_the_code(text: str) -> None:
    """The list of exceptions stays short: no stale entry, and none that is a key after all."""
    assert text in STRINGS
    assert text not in ENGLISH
