"""The message catalogs: same keys and placeholders in every language, and the locale choice."""

from __future__ import annotations

import re

import pytest

from kernodeck_diagnostic.i18n import (
    DEFAULT,
    LANGUAGES,
    language_from,
    messages,
    placeholders,
    translator,
)

TRANSLATIONS = [language for language in LANGUAGES if language != DEFAULT]


def test_languages_are_english_portuguese_french() -> None:
    assert DEFAULT == "en"
    assert set(LANGUAGES) == {"en", "pt", "fr"}


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_same_keys_as_english(language: str) -> None:
    english, translated = set(messages(DEFAULT)), set(messages(language))
    assert sorted(english - translated) == [], f"keys missing in {language}"
    assert sorted(translated - english) == [], f"keys in {language} but not in en"


@pytest.mark.parametrize("language", TRANSLATIONS)
def test_same_placeholders_as_english(language: str) -> None:
    english, translated = messages(DEFAULT), messages(language)
    differ = {key: (placeholders(english[key]), placeholders(translated[key]))
              for key in english.keys() & translated.keys()
              if placeholders(english[key]) != placeholders(translated[key])}
    assert differ == {}, f"placeholders differ in {language}: (en, {language}) per key"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_template_formats(language: str) -> None:
    catalog = messages(language)
    for key, template in catalog.items():
        assert template.strip(), f"{language}: {key} is empty"
        values = {name: f"<{name}>" for name in placeholders(template)}
        text = template.format(**values)
        assert all(value in text for value in values.values()), f"{language}: {key}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_translator_formats_every_key(language: str) -> None:
    translate = translator(language)
    for key, template in messages(DEFAULT).items():
        translate(key, **{name: "x" for name in placeholders(template)})


# The other words a language has for a severity, which its catalog must not use: a reader who
# sees "aviso" in one line and "alerta" in the next takes them for two severities.
OTHER_SEVERITY_WORDS = {
    "en": {"warning": ("alert", "caution"), "error": ("failure",)},
    "pt": {"warning": ("alerta", "advertência"), "error": ("falha",)},
    "fr": {"warning": ("alerte",), "error": ("échec",)},
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_one_word_per_severity(language: str) -> None:
    catalog = messages(language)
    for severity in ("error", "warning"):
        word = catalog[f"ui.severity.{severity}"]
        # A finding's severity is the word the same language labels that kind of line with.
        assert catalog[f"ui.label.{severity}"] == word, (language, severity)
    warning_words = OTHER_SEVERITY_WORDS[language]["warning"]
    for key, text in catalog.items():
        found = [other for other in warning_words
                 if re.search(rf"\b{other}s?\b", text, re.IGNORECASE)]
        assert found == [], f"{language} {key} says {found} for {catalog['ui.severity.warning']}"
    # The words for an error name failures elsewhere too ("falha", "échec"): only the
    # severity's own word may stand for the severity.
    for severity, others in OTHER_SEVERITY_WORDS[language].items():
        assert catalog[f"ui.severity.{severity}"] not in others


def test_translator_statuses() -> None:
    assert translator("pt")("ui.status.passed") == "APROVADO"
    assert translator("pt")("ui.status.failed") == "FALHOU"
    assert translator("fr")("ui.status.passed") == "RÉUSSI"
    assert translator("fr")("ui.status.failed") == "ÉCHEC"
    assert translator("en")("ui.status.passed") == "PASSED"
    assert translator()("ui.status.failed") == "FAILED"


def test_translator_unknown_language_is_english() -> None:
    assert translator("de")("ui.status.passed") == "PASSED"


def test_translator_fills_placeholders() -> None:
    text = translator("pt")("arg.index.negative", value=-1)
    assert "-1" in text


def test_result_codes_are_not_translated() -> None:
    """A code or finding id named inside a message stays as it is in every language."""
    for key, template in messages(DEFAULT).items():
        for word in ("OUTPUT_WRITE_FAILED", "--device cpu", "--help"):
            if word in template:
                for language in TRANSLATIONS:
                    assert word in messages(language)[key], f"{language}: {key} lost {word}"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "pt_BR.UTF-8"}, "pt"),
        ({"LANG": "pt_PT.UTF-8"}, "pt"),
        ({"LANG": "pt"}, "pt"),
        ({"LANG": "fr_CA"}, "fr"),
        ({"LANG": "fr_FR.UTF-8@euro"}, "fr"),
        ({"LANG": "FR_fr.utf8"}, "fr"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LANG": "C"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": ""}, "en"),
        # LC_ALL wins over LC_MESSAGES, which wins over LANG.
        ({"LC_ALL": "fr_FR.UTF-8", "LC_MESSAGES": "pt_BR.UTF-8", "LANG": "pt_BR.UTF-8"}, "fr"),
        ({"LC_MESSAGES": "fr_FR.UTF-8", "LANG": "pt_BR.UTF-8"}, "fr"),
        ({"LC_ALL": "pt_BR.UTF-8", "LANG": "fr_FR.UTF-8"}, "pt"),
        # The first one set decides, even when its language has no catalog.
        ({"LC_ALL": "C", "LANG": "pt_BR.UTF-8"}, "en"),
        ({"LC_ALL": "de_DE.UTF-8", "LC_MESSAGES": "fr_FR.UTF-8"}, "en"),
        ({"LC_MESSAGES": "C.UTF-8", "LANG": "fr_CA"}, "en"),
        # An empty variable is unset: the next one decides.
        ({"LC_ALL": "", "LANG": "pt_BR.UTF-8"}, "pt"),
        ({"LC_ALL": "", "LC_MESSAGES": "fr_CA", "LANG": "pt_BR.UTF-8"}, "fr"),
        ({"LC_ALL": "", "LC_MESSAGES": "", "LANG": "fr_CA"}, "fr"),
        ({"LC_ALL": "", "LC_MESSAGES": "", "LANG": ""}, "en"),
        # Other locale categories do not choose the language of messages.
        ({"LC_CTYPE": "pt_BR.UTF-8", "LC_NUMERIC": "fr_FR.UTF-8"}, "en"),
    ],
)
def test_language_from(environ: dict[str, str], expected: str) -> None:
    assert language_from(environ) == expected
