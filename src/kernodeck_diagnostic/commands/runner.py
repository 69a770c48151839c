"""What every command that reads reports shares: parsing, its options, and how it ends.

A usage error is one line and exit 2; a signal ends a command like the check (one line, exit
128 + the signal's number); a bug of ours is one line, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ..i18n import LANGUAGES, Translate, language_from, translator
from ..report.codes import EXIT_INTERNAL, EXIT_USAGE
from ..supervision.process import Interrupted
from ..terminal import discard, language_asked, line

FORMATS = ("text", "json", "markdown")


class UsageError(Exception):
    """Invalid arguments: one line on stderr, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def add_common_options(parser: argparse.ArgumentParser, t: Translate) -> None:
    default = language_from(os.environ)
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help=_help(t("reports.help.format")))
    parser.add_argument("--lang", choices=LANGUAGES, default=default,
                        help=_help(t("reports.help.lang", default=default)))


def run_command(prog: str, argv: Sequence[str],
                build: Callable[[Translate], argparse.ArgumentParser],
                act: Callable[[argparse.Namespace, Translate], int]) -> int:
    """Parse ``argv`` and act, as a command's ``main``: usage errors and bugs as one line."""
    t = translator(language_asked(argv))
    try:
        args = build(t).parse_args(list(argv))
    except UsageError as exc:
        line(sys.stderr, t("reports.usage_error", prog=prog, message=exc))
        return EXIT_USAGE
    except SystemExit as exc:  # --help: argparse printed it and wants to exit
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    t = translator(args.lang)
    try:
        return act(args, t)
    except (Interrupted, KeyboardInterrupt) as exc:
        # Like the check: a signal ends the command, it is not a bug. What was not yet written
        # to stdout goes nowhere, so a reader that stopped reading cannot hold the exit.
        signum = exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)
        discard(sys.stdout)
        line(sys.stderr, t("reports.interrupted", prog=prog, signal=_signal_name(signum)))
        return 128 + signum
    except Exception as exc:  # a bug of ours: one line, never a traceback
        from ..report.redact import Redactor

        detail = Redactor.for_this_machine().text(f"{type(exc).__name__}: {exc}")
        line(sys.stderr, t("reports.internal_error", prog=prog, detail=detail))
        return EXIT_INTERNAL


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _help(text: str) -> str:
    return text.replace("%", "%%")  # argparse formats help with %
