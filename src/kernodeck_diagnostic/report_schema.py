"""What the report's JSON Schema (``report/schema/report-v1.json``) allows, checked without a
library.

The front holds every fact the worker sends to the schema of the report field it fills, so a
value of the wrong type or shape is dropped on arrival and never reaches a report, a rule or a
renderer. The schema is the one source of truth: no table here repeats a type. Only the keywords
the schema uses are known (``KEYWORDS``); a value is never held to one this module does not know
(the tests check that the schema uses no other).

It stands below both of its users: the event reader (``supervision/events.py``), which holds
each fact the worker sends to it, and the report's privacy rules (``report/redact.py``), which
keep the words the schema names.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

SCHEMA_FILE = ("report", "schema", "report-v1.json")
# Keywords that constrain a value, and those that only describe (ignored).
KEYWORDS = frozenset(("type", "enum", "const", "pattern", "minimum", "maximum", "maxItems",
                      "items", "properties", "required", "additionalProperties", "oneOf",
                      "$ref"))
ANNOTATIONS = frozenset(("$schema", "$id", "$defs", "title", "description"))



@functools.cache
def schema() -> dict[str, Any]:
    """The report's schema, read once (inside the zipapp too)."""
    from .package_data import read

    loaded: dict[str, Any] = json.loads(read(*SCHEMA_FILE).decode("utf-8"))
    return loaded


@functools.cache
def named_values() -> frozenset[str]:
    """Every string the schema allows by name (``enum`` and ``const``): the report's closed
    vocabulary (``cuda``, ``site-packages``, ``GPU_CHECK_PASSED``...), read once."""
    found: set[str] = set()
    pending: list[Any] = [schema()]
    while pending:
        part = pending.pop()
        if isinstance(part, dict):
            options = part.get("enum")
            named = [*(options if isinstance(options, list) else ()), part.get("const")]
            found.update(value for value in named if isinstance(value, str))
            pending += part.values()
        elif isinstance(part, list):
            pending += part
    return frozenset(found)


def fact_schema(block: str, name: str) -> dict[str, Any] | None:
    """The schema of the report field ``block.name`` (``pytorch.devices``), None if none."""
    properties = schema()["properties"].get(block, {}).get("properties", {})
    found = properties.get(name)
    return found if isinstance(found, dict) else None


def conforms(value: Any, rule: dict[str, Any]) -> bool:
    """Whether ``value`` (decoded JSON) meets ``rule``, a part of the report's schema."""
    for keyword, expected in rule.items():
        if keyword in ANNOTATIONS:
            continue
        if keyword == "additionalProperties":  # the one keyword that reads a sibling
            if not _additional(value, expected, rule.get("properties", {})):
                return False
            continue
        check = _CHECKS.get(keyword)
        if check is None or not check(value, expected):
            return False  # a keyword not known here: nothing is let through unchecked
    return True


def _type(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    return any(_is(value, name) for name in names)


def _is(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        # JSON has no NaN nor infinity: a report holding one could not be written as JSON.
        return isinstance(value, int) or (name == "number" and math.isfinite(value))
    return isinstance(value, {"string": str, "array": list, "object": dict}.get(name, ()))


def _same(a: Any, b: Any) -> bool:
    """JSON equality: true is not 1, 1.0 is 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    comparable = type(a) is type(b) or (_is(a, "number") and _is(b, "number"))
    return comparable and bool(a == b)


def _pattern(value: Any, pattern: str) -> bool:
    # As JSON Schema does: a search, not a full match (the schema's patterns are anchored).
    return not isinstance(value, str) or re.search(pattern, value) is not None


def _number(value: Any) -> bool:
    return _is(value, "number")


def _properties(value: Any, properties: dict[str, Any]) -> bool:
    return not isinstance(value, dict) or all(
        conforms(value[name], rule) for name, rule in properties.items() if name in value)


def _additional(value: Any, rule: bool | dict[str, Any], properties: dict[str, Any]) -> bool:
    if not isinstance(value, dict):
        return True
    others = [item for name, item in value.items() if name not in properties]
    if isinstance(rule, bool):
        return rule or not others
    return all(conforms(item, rule) for item in others)


def _ref(value: Any, reference: str) -> bool:
    target: Any = schema()
    for part in reference.removeprefix("#/").split("/") if reference.startswith("#/") else ["?"]:
        target = target.get(part) if isinstance(target, dict) else None
    return isinstance(target, dict) and conforms(value, target)


_CHECKS: dict[str, Any] = {
    "type": _type,
    "enum": lambda value, options: any(_same(value, option) for option in options),
    "const": _same,
    "pattern": _pattern,
    "minimum": lambda value, low: not _number(value) or value >= low,
    "maximum": lambda value, high: not _number(value) or value <= high,
    "maxItems": lambda value, most: not isinstance(value, list) or len(value) <= most,
    "items": lambda value, rule: not isinstance(value, list) or all(
        conforms(item, rule) for item in value),
    "properties": _properties,
    "required": lambda value, names: not isinstance(value, dict) or all(
        name in value for name in names),
    "oneOf": lambda value, rules: sum(conforms(value, rule) for rule in rules) == 1,
    "$ref": _ref,
}
