"""What every command shares: its parser, its common options, and how it ends.

Every command (the check, ``compare``, ``summarize``, ``ramp``, ``resume-check``, ``health-check``)
runs through ``run_command``, so they end alike:

- ``main(argv)`` returns the exit status and never raises ``SystemExit``; ``--help`` and
  ``--version`` print and return 0;
- a usage error is one line on stderr and exit 2; the line repeats what was typed, redacted (a
  secret or a path pasted by mistake is not echoed);
- SIGINT, SIGTERM and SIGHUP stop the command: what it started is killed, one line says so, and
  the exit status is 130, 143 or 129 (128 + the signal's number, as a shell reports a process
  killed by it);
- a stdout that is closed or refuses the result (``>/dev/full``) is one line and exit 15
  (STDOUT_WRITE_FAILED), as for the check: the user's device, not a bug (``print_result``); a
  reader that leaves (``| head``) is no failure;
- a bug of ours is one line, redacted, and exit 1; with ``--debug``, its traceback first.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ..children import Interrupted, kill_all
from ..i18n import LANGUAGES, Translate, language_from, translator
from ..package_data import TOOL_NAME, VERSION
from ..report.codes import (
    CODES,
    EXIT_INTERNAL,
    EXIT_STDOUT,
    EXIT_USAGE,
    INTERRUPT_EXITS,
    command_codes,
)
from ..report.writer import OutputError, show
from ..terminal import discard, language_asked, line, write

FORMATS = ("text", "json", "markdown")

# The signals that stop a command, with the exit status each gives. SIGHUP: the terminal was
# closed, or the ssh session dropped (Windows has no such signal).
SIGNAL_EXIT: dict[int, int] = {int(getattr(signal, name)): status
                               for name, status in INTERRUPT_EXITS.items()
                               if hasattr(signal, name)}
_SIGHUP = getattr(signal, "SIGHUP", None)


class UsageError(Exception):
    """Invalid arguments: one line on stderr, exit 2. A command raises it for what argparse
    cannot check (a value the API refuses, a file that cannot be an interpreter).

    The message is redacted (it may repeat what was typed) unless ``typed`` is False: a
    sentence of the tool's own that names no value typed (``./-`` must stay ``./-``).
    """

    def __init__(self, message: str, *, typed: bool = True) -> None:
        super().__init__(message)
        self.typed = typed


class StdoutFailed(Exception):
    """The result could not be written to stdout: it is closed (``>&-``) or refuses the bytes
    (``>/dev/full``). ``run_command`` says so in one line and exits 15 (STDOUT_WRITE_FAILED)."""

    def __init__(self, error: OutputError) -> None:
        super().__init__(error.reason)
        self.error = error


def print_result(text: str) -> None:
    """Write (part of) a command's result to stdout; StdoutFailed when stdout is closed or
    refuses it. A reader that left (``| head``) is no failure (``terminal.write``)."""
    failed = show(sys.stdout, text)
    if failed is not None:
        raise StdoutFailed(failed)


class _Done(Exception):
    """argparse has finished the command's work (``--help``, ``--version``): return ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, but a paragraph of the description or epilog whose lines are indented (a
    table: the exit statuses) keeps its lines; the others are filled as usual."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join(
            paragraph if paragraph.startswith("  ") or "\n  " in paragraph
            else super(HelpFormatter, self)._fill_text(paragraph, width, indent)
            for paragraph in text.split("\n\n"))


# The process's own exit statuses every command has, besides its verdicts; ``OUTPUT_WRITE_FAILED``
# only for a command that refuses a file it cannot write before running anything.
PROCESS_CODES = ("INTERNAL_ERROR", "USAGE_ERROR", "STDOUT_WRITE_FAILED", "INTERRUPTED")


def statuses_epilog(command: str, t: Translate, *, output: bool = False) -> str:
    """The exit statuses of ``command`` for its ``--help``, from the codes table: its verdicts,
    then how the process ended otherwise (name, exit status, meaning)."""
    process = list(PROCESS_CODES)
    if output:
        process.insert(2, "OUTPUT_WRITE_FAILED")

    def row(name: str, exits: tuple[int, ...]) -> str:
        return f"  {name:<25} {'/'.join(map(str, exits)):<11}  {t(f'code.{name}.summary')}"

    return (t("command.help.statuses") + "\n"
            + "\n".join(row(code.name, code.exit_codes) for code in command_codes(command))
            + "\n\n" + t("command.help.process_statuses") + "\n"
            + "\n".join(row(name, CODES[name].exit_codes) for name in process))


class Parser(argparse.ArgumentParser):
    """argparse for every command: errors raise ``UsageError``, ``--help`` and ``--version``
    return instead of exiting, and every command has ``--debug`` and ``--version``.

    ``translate`` gives the help of the options added here, in the language of the command's
    own help.
    """

    def __init__(self, *, translate: Translate, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(allow_abbrev=False, **kwargs)
        self.add_argument("--debug", action="store_true",
                          help=_help(translate("command.help.debug")))
        self.add_argument("--version", action="version", version=f"{TOOL_NAME} {VERSION}")

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            write(sys.stderr, message)
        raise _Done(status)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # "--output=--" gives the value "--". Before Python 3.11.9 and 3.12.3, argparse drops it
        # and hands over an empty list instead (CPython gh-109475), which no option takes.
        if arg_strings == ["--"] and action.option_strings and action.nargs is None:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)


def add_common_options(parser: argparse.ArgumentParser, t: Translate,
                       exports: tuple[str, ...] = ()) -> None:
    """``--format`` and ``--lang`` of the commands that read reports; ``exports``: the formats a
    command offers besides ``FORMATS`` (summarize's jsonl and csv)."""
    default = language_from(os.environ)
    parser.add_argument("--format", choices=(*FORMATS, *exports), default="text",
                        help=_help(t("reports.help.format")))
    parser.add_argument("--lang", choices=LANGUAGES, default=default,
                        help=_help(t("reports.help.lang", default=default)))


Act = Callable[[argparse.Namespace, Translate, "InterruptOnSignals"], int]


def run_command(prog: str, argv: Sequence[str], build: Callable[[Translate], Parser], act: Act,
                interrupted: str = "command.interrupted") -> int:
    """Parse ``argv`` with ``build``'s parser and ``act``: a command's ``main``.

    ``act`` gets the parsed arguments, the translator of the language asked for, and the signal
    guard (to disarm once its product is safe on disk). ``interrupted`` is the message key of
    the line said on a signal (placeholder ``signal``).
    """
    arguments = list(argv)
    t = translator(language_asked(arguments))
    # From the first argument read to the last byte written, a signal stops the command cleanly:
    # what it started is killed, a partial file removed.
    guard = InterruptOnSignals()
    with guard:
        try:
            return _parse_and_act(prog, arguments, build=build, act=act, guard=guard, t=t)
        except (Interrupted, KeyboardInterrupt) as exc:
            guard.disarm()
            # What else the command started (the host probe's tools) goes too, and what a
            # thread of it would start next, when the process ends after this.
            kill_all(for_good=InterruptOnSignals.process_ends_after)
            signum = exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)
            if InterruptOnSignals.process_ends_after:
                # What was not yet written to stdout goes nowhere: a reader that stopped
                # reading cannot hold the exit.
                discard(sys.stdout)
            # After SIGHUP the terminal may be gone: the line is lost, the exit status is not.
            with contextlib.suppress(OSError):
                line(sys.stderr, f"{prog}: " + t(interrupted, signal=_signal_name(signum)))
            return SIGNAL_EXIT.get(signum, 128 + signum)
        finally:
            guard.disarm()


def _parse_and_act(prog: str, arguments: list[str], *, build: Callable[[Translate], Parser],
                   act: Act, guard: InterruptOnSignals, t: Translate) -> int:
    debug = "--debug" in arguments  # read before parsing: a bug in the parsing shows it too
    try:
        args = build(t).parse_args(arguments)
        debug = bool(args.debug)
        return act(args, t, guard)
    except _Done as done:
        return done.status
    except StdoutFailed as exc:
        line(sys.stderr, f"{prog}: " + t("cli.stdout.lost", reason=exc.error.explain(t),
                                          exit=EXIT_STDOUT, code="STDOUT_WRITE_FAILED"))
        return EXIT_STDOUT
    except UsageError as exc:
        # The message repeats what was typed: a secret or a path pasted by mistake is not echoed.
        said = _redacted(str(exc)) if exc.typed else str(exc)
        line(sys.stderr, f"{prog}: " + t("command.usage_error", message=said))
        return EXIT_USAGE
    except Interrupted:
        raise  # not a bug: run_command says so in one line
    except Exception as exc:  # a bug of ours: one line, never a raw traceback unless asked
        if isinstance(exc.__context__, Interrupted):
            # Raised while the interrupt unwound (a terminal closed with SIGHUP refuses the
            # progress line's last write): what happened is the interrupt.
            raise exc.__context__ from None
        if debug and sys.stderr is not None:  # closed (2>&-): print_exc would fall back to stdout
            import traceback  # only for --debug: the front imports no module it can do without

            traceback.print_exc()
        if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
            # Out of descriptors in the front itself: the tool's own need, not a bug of it.
            from ..supervision.tool_needs import open_files

            key, values = open_files(exc.errno)
            line(sys.stderr, f"{prog}: " + t(key, at="start", **values))
            return CODES["TOOL_RESOURCES"].exit_code
        detail = _redacted(f"{type(exc).__name__}: {exc}")
        line(sys.stderr, f"{prog}: " + t("command.internal_error", detail=detail))
        return EXIT_INTERNAL


class InterruptOnSignals:
    """SIGINT, SIGTERM and SIGHUP stop the command (raise ``Interrupted``) instead of killing
    the process.

    Only the first signal raises: a second one (an impatient Ctrl-C) must not break the cleanup
    the first started, so once disarmed the handler ignores signals until the old ones return.
    """

    process_ends_after = False  # set by cli.entry(): nothing of the front runs after main()

    def __init__(self) -> None:
        self._saved: dict[int, Any] = {}
        self._armed = True

    def __enter__(self) -> InterruptOnSignals:
        for signum in SIGNAL_EXIT:
            if signum == _SIGHUP and signal.getsignal(signum) is signal.SIG_IGN:
                continue  # started under nohup (or trap '' HUP): asked to outlive the terminal
            # Outside the main thread (an embedding host) signals cannot be caught: keep its own.
            with contextlib.suppress(ValueError):
                self._saved[signum] = signal.signal(signum, self._raise)
        return self

    def __exit__(self, kind: object, value: object, trace: object) -> None:
        self._armed = False
        for signum, handler in self._saved.items():
            # When the process ends right after, a late signal must not turn the clean exit
            # into a death by signal (or a KeyboardInterrupt traceback) on the way out.
            signal.signal(signum, signal.SIG_IGN if self.process_ends_after else handler)

    def disarm(self) -> None:
        """From now on a signal no longer stops the command (its product is safe)."""
        self._armed = False

    def hold_sigterm(self, on_held: Callable[[], None] | None = None) -> None:
        """From now on SIGTERM no longer stops the command, which ends within its own time limit
        (``--distributed``: see commands/check.py), and calls ``on_held`` instead; SIGINT and
        SIGHUP still stop it."""
        self._held = True
        self._on_held = on_held

    _on_held: Callable[[], None] | None = None

    _held = False
    # A held SIGTERM arrived: the launcher is stopping the job (another rank ended first).
    sigterm_held = False

    def _raise(self, signum: int, frame: object) -> None:
        if self._held and signum == int(signal.SIGTERM):
            self.sigterm_held = True
            if self._on_held is not None:
                self._on_held()
            return
        if self._armed:
            self._armed = False
            raise Interrupted(signum)


def _redacted(text: str) -> str:
    from ..report.redact import Redactor  # only when there is something to say

    return Redactor.for_this_machine().text(text)


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def _help(text: str) -> str:
    return text.replace("%", "%%")  # argparse formats help with %


def save_metrics(path: str, text: str, t: Translate) -> bool:
    """--prometheus (the check's, summarize's): ``text`` written atomically for node_exporter's
    textfile collector (``report/prometheus.write``); False, said on stderr, when it could not
    be."""
    from ..report.prometheus import write as replace_atomically
    from ..safe_files import UnsafePath
    from ..supervision.start import reason

    try:
        replace_atomically(path, text)
    except OSError as exc:
        said = t(exc.key) if isinstance(exc, UnsafePath) else reason(exc)
        line(sys.stderr, f"{TOOL_NAME}: " + t("metrics.not_saved", what="--prometheus",
                                               reason=said))
        return False
    return True
