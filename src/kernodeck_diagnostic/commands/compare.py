"""``kernodeck-diagnostic compare A.json B.json``: what changed between two attempts.

    $ kernodeck-diagnostic compare before.json after.json
    code changed: GPU_CHECK_PASSED -> OUT_OF_MEMORY
    field                        A (before.json)  B (after.json)
    status                       passed           failed
    exit_code                    0                9
    error.type                   null             OutOfMemoryError
    error.step                   null             allocate
    execution.product_verified   true             false
    execution.gradient_verified  true             false

Every fact of the two reports is compared, whatever block it is in, and only what differs is
shown, most important first (what is compared and in which order: ``report/compare.py``). The
exit status is the comparison's verdict (the codes table's ``COMPARE_*``, ``report/codes.py``):
0 (COMPARE_SAME) when the verdict is the same, 20 (COMPARE_CHANGED) when it changed but is no
regression, 21 (COMPARE_REGRESSION) for a regression (a pass that fails; an attempt that no
longer completes, a contract that fails or is gone), each named under the headline. 2 when an
argument is not a readable report (one line says which and why; only file names are shown,
never the folders they are in), 15 when stdout is closed or refuses the result (a full device),
1 only for a bug of the tool.

Two trial attempts (their folders, their ``attempt.json``, or a folder holding only the
``events.jsonl`` of a process killed first) are compared the same way, headed by their status
instead of a code (what is compared: ``trial/compare.py``). A report and an attempt are not
compared with each other (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Sequence

from ..i18n import Translate
from ..report.compare import Comparison, compare, render_markdown, render_text
from ..report.load import Loaded, load
from ..terminal import json_text, line
from ..trial import compare as attempts
from .runner import (
    InterruptOnSignals,
    Parser,
    add_common_options,
    print_result,
    run_command,
    statuses_epilog,
)

PROG = "kernodeck-diagnostic compare"
EXIT_UNREADABLE = 2
HELP_WIDTH = 78


def main(argv: Sequence[str]) -> int:
    return run_command(PROG, argv, _parser, _act)


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=textwrap.fill(
        t("compare.help.description"), HELP_WIDTH), epilog=statuses_epilog("compare", t),
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", metavar="A.json", help=t("compare.help.a"))
    parser.add_argument("b", metavar="B.json", help=t("compare.help.b"))
    add_common_options(parser, t)
    return parser


def _load(path: str) -> Loaded:
    """A report, else a trial attempt (a folder, or a file of the attempt's format)."""
    loaded = load(path)
    if loaded.reason in ("not_a_report", "not_a_file"):
        attempt = attempts.load(path)
        if attempt.report is not None or os.path.isdir(path):
            return attempt
    return loaded


def _act(args: argparse.Namespace, t: Translate, _guard: InterruptOnSignals) -> int:
    a, b = _load(args.a), _load(args.b)
    if a.report is None or b.report is None:
        parts = [t("compare.argument", which=which, name=loaded.name, reason=loaded.why(t))
                 for which, loaded in (("A", a), ("B", b)) if loaded.report is None]
        line(sys.stderr, f"{PROG}: " + t("compare.cannot_read", what="; ".join(parts)))
        return EXIT_UNREADABLE
    kinds = [attempts.is_attempt_document(loaded.report) for loaded in (a, b)]
    if kinds[0] != kinds[1]:
        report, attempt = (a, b) if kinds[1] else (b, a)
        line(sys.stderr, f"{PROG}: " + t("compare.mixed", a=report.name, b=attempt.name))
        return EXIT_UNREADABLE
    result = (attempts.compare if kinds[0] else compare)(a.report, b.report)
    print_result(_render(args.format, result, a, b, t))
    return result.exit_code


def _render(form: str, result: Comparison, a: Loaded, b: Loaded, t: Translate) -> str:
    if form == "json":
        return json_text(json.dumps(result.as_json(), indent=2, ensure_ascii=False)) + "\n"
    if form == "markdown":
        return render_markdown(result, a.name, b.name, t)
    return render_text(result, a.name, b.name, t)
