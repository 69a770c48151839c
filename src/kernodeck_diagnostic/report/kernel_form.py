"""Advice in a notebook's words, for a report made from a Jupyter kernel (``runtime.caller``).

In a kernel, ``%pip install`` installs into the kernel's own interpreter, where ``!python -m
pip`` runs whichever ``python`` comes first on the PATH, often another one; and the check is a
call, ``check(device="gpu")``, not a command line with flags. The report's sentences are the
catalog's: this only swaps a sentence written for the command line for its notebook form, and
the pip command for the magic, in every language. Advice that is a command is a line a cell runs
as printed (``%pip install numpy``: a magic takes the rest of its line as its arguments, so no
words follow it); advice about a module that shadows torch adds that the kernel must restart (it
keeps a module it imported).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..i18n import Translate
from .findings.core import Finding, sentences
from .shapes import EMPTY, Report

# A sentence that names the command line's flags, and its notebook form.
NOTEBOOK_SENTENCES = {
    "code.CPU_CHECK_PASSED.next_action": "notebook.next_action.cpu_passed",
    "finding.NUMPY_MISSING.next_action": "notebook.finding.NUMPY_MISSING.next_action",
}
# check(python=...) from a kernel: the check is called again with the same python=; pip runs with
# that interpreter, not the kernel's (its command line form kept).
OTHER_INTERPRETER_SENTENCES = {
    "code.CPU_CHECK_PASSED.next_action": "notebook.next_action.cpu_passed_other",
}
# Advice after which a kernel must restart: it keeps the modules it imported (a torch.py too).
RESTART_AFTER = frozenset({"TORCH_SHADOWED"})
# The command line's words and their notebook form, in this order: pip through the kernel's own
# interpreter (``%pip``; an uninstall answers its own question, a cell has no prompt), and the
# check's flags as check()'s arguments.
_PIP_FORMS = 2  # the first two forms: pip's
_NOTEBOOK_FORMS = (
    (re.compile(r"\bpython -m pip uninstall (?!-y\b)"), "%pip uninstall -y "),
    (re.compile(r"\bpython -m pip "), "%pip "),
    (re.compile(r"--timeout (\d+)"), r"timeout=\1"),
    (re.compile(r"--device-index (\d+)"), r"device_index=\1"),
    (re.compile(r"--device (cpu|gpu)\b"), r'device="\1"'),
    (re.compile(r"--show-paths\b"), "report.local_paths"),
)


def from_kernel(report: Report) -> bool:
    """Whether the report was made by check() in a Jupyter kernel: of the kernel's own
    interpreter (``runtime.caller.kernel``) or of another one, ``check(python=...)``
    (``runtime.called_from_kernel``)."""
    runtime = report.get("runtime") or EMPTY
    return kernel_checked(report) or runtime.get("called_from_kernel") is True


def kernel_checked(report: Report) -> bool:
    """Whether the interpreter checked is the kernel's own: ``%pip`` installs into it."""
    caller = (report.get("runtime") or EMPTY).get("caller")
    return isinstance(caller, dict) and caller.get("kernel") is True


def in_notebook_words(text: str, *, own: bool = True) -> str:
    """``python -m pip install X`` as ``%pip install X`` (the kernel's own interpreter, ``own``;
    for another interpreter the command stays its own: ``%pip`` would install into the
    kernel's), and the check's flags as check()'s arguments (``--timeout 120`` as
    ``timeout=120``)."""
    for pattern, form in _NOTEBOOK_FORMS[0 if own else _PIP_FORMS:]:
        text = pattern.sub(form, text)
    return text


def for_report(report: Report, translate: Translate) -> Translate:
    """``translate`` itself, or, for a report made from a kernel, its notebook form."""
    if not from_kernel(report):
        return translate
    own = kernel_checked(report)
    sentences_of = NOTEBOOK_SENTENCES if own else OTHER_INTERPRETER_SENTENCES

    def notebook_form(key: str, **values: Any) -> str:
        text = in_notebook_words(translate(sentences_of.get(key, key), **values), own=own)
        kind, _, rest = key.partition(".")
        if own and kind == "finding" and rest.partition(".")[0] in RESTART_AFTER \
                and key.endswith(".next_action"):
            text += " " + translate("notebook.restart_kernel")
        return text

    return notebook_form


def notebook_advice(report: Report, found: Sequence[Finding]) -> None:
    """The report's own next action and its findings' advice (English; ``found``: the findings
    ``report["findings"]`` was made of, in order) in the notebook's words, when it was made
    from a kernel; unchanged otherwise."""
    if not from_kernel(report):
        return
    from ..i18n import ENGLISH
    from .distributed import next_action_key

    form = for_report(report, ENGLISH)
    report["next_action"] = form(next_action_key(report))
    for finding, shown in zip(found, report["findings"]):
        shown["next_action"] = form(sentences(finding.id, finding.variant)[1], **finding.values)
