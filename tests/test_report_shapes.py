"""report/shapes.py and the report's JSON Schema say the same thing: every object of the schema has
its TypedDict, with the same properties, the same required ones, and value types that allow
exactly what the schema allows (null included), down to the last nested object.

The walk reads the TypedDicts as Python sees them at run time (``__required_keys__``,
``get_type_hints``), so it holds on Python 3.9 too, and the planted disagreements below prove it
notices each kind: a missing key, an extra one, a lost ``None``, a required key made optional.
No ``from __future__ import annotations`` here: the planted TypedDicts are spelt as Python 3.9
evaluates them.
"""

import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Literal, Optional, TypedDict, Union

import pytest

from conftest import ROOT, SRC, schema
from kernodeck_diagnostic.report import shapes

# What one alternative of a value is: ("null",), ("str",), ("int",), ("float",), ("bool",),
# ("literal", type, value), ("list", item), ("dict", value), ("object", node or class); an item
# or value is None for "anything" (an array without items, an object without properties).
Alternative = tuple[Any, ...]
_SCALARS = {"null": "null", "string": "str", "integer": "int", "number": "float",
            "boolean": "bool"}
_PYTHON = {type(None): "null", str: "str", int: "int", float: "float", bool: "bool"}


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = root
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def schema_alternatives(node: dict[str, Any], root: dict[str, Any]) -> list[Alternative]:
    node = _resolve(node, root)
    if "const" in node:
        return [("literal", type(node["const"]), node["const"])]
    if "enum" in node:
        return [("null",) if value is None else ("literal", type(value), value)
                for value in node["enum"]]
    if "oneOf" in node or "anyOf" in node:
        return [alternative for sub in node.get("oneOf", node.get("anyOf"))
                for alternative in schema_alternatives(sub, root)]
    found: list[Alternative] = []
    for kind in node["type"] if isinstance(node["type"], list) else [node["type"]]:
        if kind in _SCALARS:
            found.append((_SCALARS[kind],))
        elif kind == "array":
            found.append(("list", node.get("items")))
        elif isinstance(node.get("additionalProperties"), dict):
            found.append(("dict", node["additionalProperties"]))
        elif "properties" in node:
            found.append(("object", node))
        else:
            found.append(("dict", None))
    return found


def _is_typeddict(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, dict) \
        and hasattr(annotation, "__required_keys__")


def python_alternatives(annotation: Any) -> list[Alternative]:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return [alternative for arg in args for alternative in python_alternatives(arg)]
    if origin is Literal:
        return [("literal", type(value), value) for value in args]
    if origin is list:
        return [("list", None if args[0] is Any else args[0])]
    if origin is dict:
        assert args[0] is str, annotation
        return [("dict", None if args[1] is Any else args[1])]
    if _is_typeddict(annotation):
        return [("object", annotation)]
    if annotation is None or annotation in _PYTHON:
        return [(_PYTHON[type(None) if annotation is None else annotation],)]
    raise AssertionError(f"an annotation the schema cannot express: {annotation!r}")


def _show(alternatives: set[Alternative]) -> str:
    return ", ".join(sorted(repr(a[2]) if a[0] == "literal" else a[0] for a in alternatives))


def disagreements(node: dict[str, Any], annotation: Any, root: dict[str, Any],
                  path: str) -> list[str]:
    """Where the value the schema describes at ``path`` and ``annotation`` differ."""
    wanted, declared = schema_alternatives(node, root), python_alternatives(annotation)
    flat = {a for a in wanted if a[0] not in ("list", "dict", "object")}
    flat_declared = {a for a in declared if a[0] not in ("list", "dict", "object")}
    found = []
    if flat - flat_declared:
        found.append(f"{path}: the schema allows {_show(flat - flat_declared)}, the type not")
    if flat_declared - flat:
        found.append(f"{path}: the type allows {_show(flat_declared - flat)}, the schema not")
    for kind in ("list", "dict", "object"):
        mine = [a[1] for a in wanted if a[0] == kind]
        theirs = [a[1] for a in declared if a[0] == kind]
        if len(mine) != len(theirs):
            found.append(f"{path}: {kind} in the schema {len(mine)} time(s), in the type "
                         f"{len(theirs)}")
            continue
        for sub, sub_annotation in zip(mine, theirs):
            where = path + ("[]" if kind == "list" else ".<key>" if kind == "dict" else "")
            if kind == "object":
                found += object_disagreements(sub, sub_annotation, root, path)
            elif (sub is None) != (sub_annotation is None):
                found.append(f"{where}: one side says anything, the other does not")
            elif sub is not None:
                found += disagreements(sub, sub_annotation, root, where)
    return found


def object_disagreements(node: dict[str, Any], typed: Any, root: dict[str, Any],
                         path: str) -> list[str]:
    properties, required = node["properties"], set(node.get("required", []))
    hints = typing.get_type_hints(typed)
    name = f"{path or 'the report'} ({typed.__name__})"
    found = [f"{name}: {key!r} is in the schema, not in the type"
             for key in sorted(set(properties) - set(hints))]
    found += [f"{name}: {key!r} is in the type, not in the schema"
              for key in sorted(set(hints) - set(properties))]
    found += [f"{name}: {key!r} is required by the schema, optional in the type"
              for key in sorted(required - typed.__required_keys__)]
    found += [f"{name}: {key!r} is optional in the schema, required in the type"
              for key in sorted(typed.__required_keys__ - required)]
    for key in sorted(set(properties) & set(hints)):
        found += disagreements(properties[key], hints[key], root,
                               f"{path}.{key}" if path else key)
    return found


def test_the_shapes_follow_the_schema() -> None:
    root = schema()
    assert object_disagreements(root, shapes.Report, root, "") == []


def test_every_object_of_the_schema_has_a_typeddict() -> None:
    """No block of the report is left as ``dict[str, Any]`` when the schema names its keys."""
    root, seen = schema(), set()

    def walk(node: dict[str, Any], typed: Any) -> None:
        seen.add(typed.__name__)
        hints = typing.get_type_hints(typed)
        for key, declared in node["properties"].items():
            for (_, sub), (_, sub_type) in zip(
                    [a for a in schema_alternatives(declared, root) if a[0] == "object"],
                    [a for a in python_alternatives(hints[key]) if a[0] == "object"]):
                walk(sub, sub_type)
            items = [a[1] for a in schema_alternatives(declared, root) if a[0] == "list"]
            item_types = [a[1] for a in python_alternatives(hints[key]) if a[0] == "list"]
            for item, item_type in zip(items, item_types):
                if item is None:
                    continue
                for (_, sub), (_, sub_type) in zip(
                        [a for a in schema_alternatives(item, root) if a[0] == "object"],
                        [a for a in python_alternatives(item_type) if a[0] == "object"]):
                    walk(sub, sub_type)

    walk(root, shapes.Report)
    defined = {name for name, value in vars(shapes).items()
               if _is_typeddict(value) and not name.startswith("_")}
    assert defined == seen, "a TypedDict the report never holds, or one the walk missed"
    assert {"Report", "ReportFinding", "Device", "Pytorch", "Runtime", "Node", "System",
            "Distributed", "ReportError"} <= seen


def test_mypy_reports_a_key_a_block_lacks_read_with_get(tmp_path: Path) -> None:
    """``.get("key")`` is how the findings read the report's blocks, and mypy lets any key pass
    there: the project's plugin (``scripts/mypy_typeddict_get.py``) reports a misspelt one, on a
    block read as ``shapes.EMPTY`` when absent too, and only that one."""
    api = pytest.importorskip("mypy.api")
    planted = tmp_path / "planted.py"
    planted.write_text(textwrap.dedent("""\
        from kernodeck_diagnostic.report.shapes import EMPTY, Report

        def lost(report: Report) -> object:
            return (report.get("host") or EMPTY).get("lost_gpu")

        def kept(report: Report) -> object:
            return (report.get("host") or EMPTY).get("lost_gpus"), report["pytorch"].get("mps")
        """), encoding="utf-8")
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nstrict = True\nmypy_path = {SRC}\n"
                      f"cache_dir = {tmp_path / 'cache'}\n"
                      f"plugins = {ROOT / 'scripts' / 'mypy_typeddict_get.py'}\n", encoding="utf-8")
    out, _, status = api.run(["--config-file", str(config), str(planted)])
    assert status == 1, out
    assert [line for line in out.splitlines() if ": error:" in line] == [
        f'{planted}:4: error: TypedDict "Host" has no key "lost_gpu"  [typeddict-item]'], out


# -- the walk notices each kind of disagreement (a planted one per row) ----------------------------

class _Required(TypedDict):
    name: str
    count: Optional[int]


class _Whole(_Required, total=False):
    kind: Literal["a", "b"]


class _LostNone(TypedDict):
    name: str
    count: int
    kind: Literal["a", "b"]


class _Misspelt(_Required, total=False):
    knid: Literal["a", "b"]


class _Extra(_Whole, total=False):
    extra: bool


class _AllOptional(TypedDict, total=False):
    name: str
    count: Optional[int]
    kind: Literal["a", "b"]


class _NarrowEnum(_Required, total=False):
    kind: Literal["a"]


_PLANTED = {"type": "object", "additionalProperties": False, "required": ["name", "count"],
            "properties": {"name": {"type": "string"}, "count": {"type": ["integer", "null"]},
                           "kind": {"enum": ["a", "b"]}}}


@pytest.mark.parametrize(("typed", "said"), [
    (_LostNone, ["'kind' is optional in the schema, required in the type",
                 "count: the schema allows null, the type not"]),
    (_Misspelt, ["'kind' is in the schema, not in the type", "'knid' is in the type, not in"]),
    (_Extra, ["'extra' is in the type, not in the schema"]),
    (_AllOptional, ["'count' is required by the schema, optional in the type",
                    "'name' is required by the schema, optional in the type"]),
    (_NarrowEnum, ["kind: the schema allows 'b', the type not"]),
])
def test_the_walk_sees_each_planted_disagreement(typed: Any, said: list[str]) -> None:
    assert object_disagreements(_PLANTED, _Whole, _PLANTED, "") == []
    found = object_disagreements(_PLANTED, typed, _PLANTED, "")
    assert len(found) == len(said), found
    for expected in said:
        assert any(expected in line for line in found), (expected, found)
