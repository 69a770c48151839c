"""A mypy plugin: ``.get("key")`` on a TypedDict that has no such key is an error.

mypy checks ``block["key"]`` against a TypedDict's keys, but lets ``block.get("misspelt")`` pass
(typing's spec allows any ``str`` there) and types it ``object``: a silent ``None`` at run time,
which is how the report's blocks (``report/shapes.py``) are mostly read. This plugin, named in
``pyproject.toml``'s ``[tool.mypy]``, reports the literal key a TypedDict lacks, then leaves the
call's type to mypy's own rule. A key read only from some of a union's TypedDicts is reported on
the others: narrow first, or read it from the one that has it.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.errorcodes import TYPEDDICT_ITEM
from mypy.plugin import MethodContext, Plugin
from mypy.plugins.default import typed_dict_get_callback
from mypy.typeops import try_getting_str_literals
from mypy.types import Type, TypedDictType

_GET = "typing.Mapping.get"


def _checked_get(ctx: MethodContext) -> Type:
    if isinstance(ctx.type, TypedDictType) and ctx.args and len(ctx.args[0]) == 1:
        keys = try_getting_str_literals(ctx.args[0][0], ctx.arg_types[0][0]) or []
        name = ctx.type.fallback.type.name
        for key in keys:
            if key not in ctx.type.items:
                ctx.api.fail(f'TypedDict "{name}" has no key "{key}"', ctx.context,
                             code=TYPEDDICT_ITEM)
    return typed_dict_get_callback(ctx)


class TypedDictGetPlugin(Plugin):
    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return _checked_get if fullname == _GET else None


def plugin(version: str) -> type[Plugin]:
    return TypedDictGetPlugin
