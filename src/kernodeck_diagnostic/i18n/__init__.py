"""Messages in English, Portuguese and French; JSON reports always keep the English text.

    >>> from kernodeck_diagnostic.i18n import translator
    >>> translator("pt")("ui.status.passed")
    'APROVADO'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache

LANGUAGES = ("en", "pt", "fr")
DEFAULT = "en"
# Read in this order, as gettext does: the first one set decides.
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")

Translate = Callable[..., str]


def language_from(environ: Mapping[str, str]) -> str:
    """The language of ``LC_ALL``, ``LC_MESSAGES`` or ``LANG`` (``pt_BR.UTF-8`` gives pt)."""
    for name in LOCALE_VARIABLES:
        value = environ.get(name)
        if value:
            code = value.split(".")[0].split("@")[0].split("_")[0].lower()
            return code if code in LANGUAGES else DEFAULT
    return DEFAULT


@cache
def messages(language: str) -> Mapping[str, str]:
    module = importlib.import_module(f"{__name__}.{language}")
    catalog: Mapping[str, str] = module.MESSAGES
    return catalog


def placeholders(template: str) -> set[str]:
    import string  # only the catalog tests need it: the command line does not pay for it

    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def translator(language: str = DEFAULT) -> Translate:
    """A function from a message key and its values to the text in ``language``.

    A key missing in that language falls back to English (a test makes sure none is missing).
    """
    catalog = messages(language if language in LANGUAGES else DEFAULT)
    english = messages(DEFAULT)

    def translate(key: str, **values: object) -> str:
        template = catalog.get(key) or english[key]
        return template.format(**values)

    return translate


ENGLISH = translator(DEFAULT)


def compose(key: str, values: Mapping[str, object], translate: Translate) -> str | None:
    """A sentence from a key and values that came from elsewhere (a worker, a saved report):
    None for a key or values the catalog does not know, rather than an error."""
    try:
        return translate(key, **values)
    except (KeyError, IndexError, ValueError):
        return None
