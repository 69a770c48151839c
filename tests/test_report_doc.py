"""docs/report.md documents every field of the report schema, and only those; docs/method.md keeps
the seed's order of the four controls and the README's commands.

Each field is one table row starting with ``| `path` | type |``: nested fields are dotted
(``runtime.visibility.CUDA_VISIBLE_DEVICES``), items of an array of objects take ``[]``
(``pytorch.devices[].capability``), and the values of an object with free keys take ``<key>``
(``timings_ms.<key>``). The type column says ``null`` exactly when the schema allows null.
"""

from __future__ import annotations

import re
from typing import Any

from conftest import ROOT, schema
from kernodeck_diagnostic import __version__

DOC = ROOT / "docs" / "report.md"
ROW = re.compile(r"^\| `([^`]+)` \| ([^|]+) \|", re.M)


def schema_fields(node: dict[str, Any], root: dict[str, Any], prefix: str = "") -> dict[str, bool]:
    """Every property path under ``node``, each with whether it may be null."""
    fields: dict[str, bool] = {}
    for name, declared in node.get("properties", {}).items():
        path = f"{prefix}{name}"
        sub = _resolve(declared, root)
        fields[path] = _nullable(sub, root)
        fields.update(_children(sub, root, path))
    for name in node.get("required", []):
        # A required key with no schema of its own (timings_ms.worker_total) is a field too.
        fields.setdefault(f"{prefix}{name}", False)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        fields[f"{prefix}<key>"] = _nullable(_resolve(extra, root), root)
    return fields


def _children(node: dict[str, Any], root: dict[str, Any], path: str) -> dict[str, bool]:
    fields: dict[str, bool] = {}
    for variant in [node, *(_resolve(v, root) for v in node.get("oneOf", []))]:
        if "properties" in variant or isinstance(variant.get("additionalProperties"), dict):
            fields.update(schema_fields(variant, root, path + "."))
        items = variant.get("items")
        if isinstance(items, dict):
            items = _resolve(items, root)
            if "properties" in items:
                fields.update(schema_fields(items, root, path + "[]."))
    return fields


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    target: dict[str, Any] = root
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return target


def _nullable(node: dict[str, Any], root: dict[str, Any]) -> bool:
    kinds = node.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    if None in node.get("enum", []) or ("const" in node and node["const"] is None):
        return True
    return any(_nullable(_resolve(v, root), root) for v in node.get("oneOf", []))


def documented() -> dict[str, str]:
    rows = ROW.findall(DOC.read_text(encoding="utf-8"))
    paths = [path for path, _ in rows]
    assert len(paths) == len(set(paths)), "a field is documented twice"
    return {path: kind.strip() for path, kind in rows}


def test_every_schema_field_is_documented_and_nothing_else() -> None:
    in_schema = schema_fields(schema(), schema())
    in_doc = documented()
    assert sorted(set(in_schema) - set(in_doc)) == [], "fields missing from docs/report.md"
    assert sorted(set(in_doc) - set(in_schema)) == [], "docs/report.md names fields not in schema"


def test_the_type_column_says_null_exactly_when_the_schema_allows_it() -> None:
    in_schema = schema_fields(schema(), schema())
    wrong = {path: kind for path, kind in documented().items()
             if path in in_schema and ("null" in kind) != in_schema[path]}
    assert wrong == {}


def test_the_version_the_doc_gives_is_the_tools() -> None:
    # __version__ is the one source: the doc's example of tool.version is held to it.
    row = next(line for line in DOC.read_text(encoding="utf-8").splitlines()
               if line.startswith("| `tool.version` |"))
    assert re.findall(r"`(\d[^`]*)`", row) == [__version__]


def test_the_walker_sees_nested_fields() -> None:
    fields = schema_fields(schema(), schema())
    for path in ("pytorch.devices[].capability", "runtime.visibility",
                 "runtime.visibility.CUDA_VISIBLE_DEVICES", "host.gpus[].memory_total_mib",
                 "findings[].evidence", "error.step", "timings_ms.worker_total",
                 "timings_ms.<key>"):
        assert path in fields
    assert fields["runtime.visibility"] is True
    assert fields["pytorch.devices[].capability"] is True
    assert fields["findings[].evidence"] is False


def test_method_doc_has_the_four_controls_in_order_and_the_check_pages_commands() -> None:
    # The check's commands open its page (docs/check.md, where the README sends for every
    # option): the method gives the same three.
    method = (ROOT / "docs" / "method.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## Control (\d):", method, re.M)
    assert headings == ["1", "2", "3", "4"]
    opening = (ROOT / "docs" / "check.md").read_text(encoding="utf-8").split("```sh\n", 1)[1]
    commands = re.findall(r"^kernodeck-diagnostic --.*$", method, re.M)
    assert len(commands) == 3
    assert all(command in opening.split("```", 1)[0] for command in commands)
