"""Command line: parse, pre-flight the output, run the check, show and save it, exit."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

from . import TOOL_NAME, __version__
from .api import (
    DEVICES,
    TIMEOUT_DEFAULT_S,
    TIMEOUT_MAX_S,
    TIMEOUT_MIN_S,
    InterpreterRejected,
    Options,
    index_in_range,
    interpreter_problem,
    known_device,
    run,
    timeout_in_range,
    validate,
)
from .i18n import ENGLISH, LANGUAGES, Translate, translator
from .report.codes import CODES, EXIT_INTERNAL, EXIT_OUTPUT, EXIT_STDOUT, EXIT_USAGE
from .supervision.process import Interrupted, kill_all
from .terminal import language_asked, line, write

# The modules that read, render and save a report are imported once the check is under way:
# with --host-check the probe starts before them, and a usage error never pays for them.

_SIGNAL_EXIT: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
# SIGHUP: the terminal was closed, or the ssh session dropped (Windows has no such signal).
_SIGHUP = getattr(signal, "SIGHUP", None)
if _SIGHUP is not None:
    _SIGNAL_EXIT[_SIGHUP] = 129
_LIVE_STAGES = ("interpreter", "import", "backend", "device", "compute")
FORMATS = ("text", "json", "markdown")


class UsageError(Exception):
    """Invalid arguments: one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _argument_type(convert: Callable[[str, Translate], Any], t: Translate) -> Callable[[str], Any]:
    """An argparse type: the text converted, then checked by the API's own rule; argparse puts
    the --flag in front of the message ("argument --timeout: must be between...")."""
    def argument(value: str) -> Any:
        try:
            return convert(value, t)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return argument


def _device_text(text: str, t: Translate) -> str:
    # Typed on a command line, the mode's case does not matter (--device CPU); a refusal repeats
    # the text as typed, so that the redaction of what was pasted by mistake still applies.
    lowered = text.strip().lower()
    return known_device(lowered if lowered in DEVICES else text, t, "cli")


def _index_text(text: str, t: Translate) -> int:
    try:
        index = int(text)
    except ValueError:
        raise ValueError(t("cli.index.not_a_number", value=repr(text))) from None
    return index_in_range(index, t)


def _timeout_text(text: str, t: Translate) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(t("cli.timeout.not_a_number", value=repr(text))) from None
    return timeout_in_range(seconds, t)


def _codes_epilog() -> str:
    rows = [f"  {code.name:<22} {code.exit_code:>3}  {code.summary}" for code in CODES.values()]
    return "result codes (name, exit code, meaning):\n" + "\n".join(rows) + "\n\n" + _OUTPUT_EPILOG


_OUTPUT_EPILOG = """\
output:
  --output FILE is written first, then stdout. If stdout is closed or refuses the bytes (a full
  device), the exit code is 15 (STDOUT_WRITE_FAILED) and the file asked for is still saved; a
  reader that leaves (| head) is not a failure. If the file cannot be written the exit code is
  12 (OUTPUT_WRITE_FAILED), and the text's first line says so. The JSON and markdown reports
  keep the check's own code and exit code.
  --output - is refused (exit 2): the JSON report on stdout is --format json; a file really
  named '-' is ./-
  With TERM=dumb or NO_COLOR, no colour; with TERM=dumb the progress line on stderr uses no
  escape sequences (a carriage return and spaces only)."""


def parser(t: Translate = ENGLISH) -> argparse.ArgumentParser:
    p = _Parser(
        prog=TOOL_NAME,
        description="Find the first layer of a PyTorch GPU setup that fails: interpreter and "
                    "import, build backend, device, a tiny verified computation. Also: "
                    f"'{TOOL_NAME} compare A.json B.json', '{TOOL_NAME} summarize PATH...'.",
        epilog=_codes_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("--device", type=_argument_type(_device_text, t), default="gpu",
                   metavar="{gpu,cpu}",
                   help="where to run the check (default gpu; cpu only when asked)")
    p.add_argument("--device-index", type=_argument_type(_index_text, t), default=0,
                   metavar="N", help="index of the GPU among the visible devices (default 0)")
    p.add_argument("--timeout", type=_argument_type(_timeout_text, t),
                   default=float(TIMEOUT_DEFAULT_S), metavar="S",
                   help=f"limit for the whole check, {TIMEOUT_MIN_S}-{TIMEOUT_MAX_S} seconds "
                        f"(default {TIMEOUT_DEFAULT_S})")
    p.add_argument("--output", metavar="FILE",
                   help="also write the JSON report to FILE, which must not exist yet")
    p.add_argument("--host-check", action="store_true",
                   help="also ask nvidia-smi (or amd-smi, rocm-smi) for the driver and memory, "
                        "3 s at most")
    p.add_argument("--python", metavar="PATH",
                   help="diagnose another interpreter (a notebook kernel's, a service's, a "
                        "venv's) without installing anything into it")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="what goes to stdout (default text); --output is always JSON")
    p.add_argument("--lang", choices=LANGUAGES, default=None,
                   help="language of the text (default from LC_ALL, LC_MESSAGES, LANG); "
                        "JSON keeps English")
    p.add_argument("--show-paths", action="store_true",
                   help="also print where the interpreter and torch are, on this terminal only "
                        "(never in a report)")
    p.add_argument("--debug", action="store_true", help="show a traceback if the tool itself fails")
    p.add_argument("--version", action="version", version=f"{TOOL_NAME} {__version__}")
    return p


def entry() -> NoReturn:
    """The console script's and the zipapp's entry point: exit with the check's code."""
    _InterruptOnSignals.process_ends_after = True
    sys.exit(main())


def main(argv: Sequence[str] | None = None) -> int:
    # SIGINT, SIGTERM and SIGHUP stop the check cleanly from the first argument read to the last
    # byte of the report written: the worker's tree is killed, a partial report file removed.
    guard = _InterruptOnSignals()
    with guard:
        try:
            return _main(argv, guard)
        except (Interrupted, KeyboardInterrupt) as exc:
            guard.disarm()
            kill_all()  # what else the front started (the host probe's tool) goes too
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            t = translator(language_asked(sys.argv[1:] if argv is None else argv))
            # After SIGHUP the terminal may be gone: the line is lost, the exit status is not.
            with contextlib.suppress(OSError):
                line(sys.stderr, f"{TOOL_NAME}: " + t("cli.interrupted",
                                                       signal=signal.Signals(signum).name))
            return _SIGNAL_EXIT.get(signal.Signals(signum), 128 + signum)
        finally:
            guard.disarm()


# Commands other than the check, each a module with ``main(argv) -> int`` (imported on use).
SUBCOMMANDS = {"compare": "commands.compare", "summarize": "commands.summarize"}


def _main(argv: Sequence[str] | None, guard: _InterruptOnSignals) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in SUBCOMMANDS:
        import importlib

        command = importlib.import_module(f"{__package__}.{SUBCOMMANDS[arguments[0]]}")
        return int(command.main(arguments[1:]))
    t = translator(language_asked(arguments))
    try:
        args = parser(t).parse_args(arguments)
        if args.python is not None and (problem := interpreter_problem(args.python)):
            raise UsageError("--python: " + t(problem))  # the API would say check(python=...)
        options = validate(device=args.device, device_index=args.device_index,
                           timeout=args.timeout, host_check=args.host_check, python=args.python,
                           translate=t)
    except (UsageError, ValueError) as exc:
        # The message repeats what was typed: a secret or a path pasted by mistake is not echoed.
        from .report.redact import Redactor

        said = Redactor.for_this_machine().text(str(exc))
        line(sys.stderr, f"{TOOL_NAME}: {t('cli.error.prefix')}: {said} "
                          f"({t('cli.error.see_help')})")
        return EXIT_USAGE
    try:
        return _check(args, options, guard, t)
    except Interrupted:
        raise  # not a bug: main() says so in one line
    except InterpreterRejected as exc:  # --python named no Python 3.9+: found by running it
        line(sys.stderr, f"{TOOL_NAME}: {t('cli.error.prefix')}: --python: "
                          f"{t(exc.key, **exc.values)} "
                          f"({t('cli.error.see_help')})")
        return EXIT_USAGE
    except Exception as exc:  # a bug of ours: one line, never a raw traceback unless asked
        if isinstance(exc.__context__, Interrupted):
            # Raised while the interrupt unwound (a terminal closed with SIGHUP refuses the
            # progress line's last write): what happened is the interrupt.
            raise exc.__context__ from None
        if args.debug:
            import traceback  # only for --debug: the front imports no module it can do without

            traceback.print_exc()
        from .report.redact import Redactor

        detail = Redactor.for_this_machine().text(f"{type(exc).__name__}: {exc}")
        line(sys.stderr, f"{TOOL_NAME}: " + t("cli.internal", detail=detail))
        return EXIT_INTERNAL


def _check(args: argparse.Namespace, options: Options, guard: _InterruptOnSignals,
           t: Translate) -> int:
    from .report.writer import OutputError, preflight, show, write_new

    if args.output == "-":
        # Not a file named '-' made by surprise, and not a second report on stdout beside the
        # text: the JSON on stdout is --format json; a file really named '-' is ./-
        line(sys.stderr, f"{TOOL_NAME}: {t('cli.error.prefix')}: {t('cli.output.dash')} "
                          f"({t('cli.error.see_help')})")
        return EXIT_USAGE
    if args.output is not None:
        try:
            preflight(args.output)
        except OutputError as exc:
            line(sys.stderr, f"{TOOL_NAME}: " + t("cli.output.preflight", reason=exc.explain(t),
                                                   exit=EXIT_OUTPUT))
            return EXIT_OUTPUT
    live = _LiveLine(sys.stderr, args.timeout, t)
    try:
        result = run(options, on_progress=live.update)
    finally:
        live.clear()
    report = result.to_dict()
    from .report.build import to_json
    from .report.render import markdown, text, use_colour

    # The file first: it is the product, and it must not depend on what stdout does. Then what
    # is printed can say the exit status the process really ends with.
    exit_code = int(report["exit_code"])
    not_saved: OutputError | None = None
    if args.output is not None:
        try:
            write_new(args.output, to_json(report))
            guard.disarm()  # the report is complete on disk: a late signal no longer undoes it
        except OutputError as exc:
            not_saved, exit_code = exc, EXIT_OUTPUT
    # JSON and markdown are the report to share: the check's own code and exit code. The text is
    # this run on this terminal: its first line says the exit status the process ends with.
    if args.format == "json":
        shown = to_json(report).decode("utf-8")
    elif args.format == "markdown":
        shown = markdown(report, t)
    else:
        paths = result.local_paths if args.show_paths else None
        shown = text(report, colour=use_colour(sys.stdout), translate=t, paths=paths,
                     exit_as="OUTPUT_WRITE_FAILED" if not_saved is not None else None)
    lost = show(sys.stdout, shown)
    if not_saved is not None:
        line(sys.stderr, f"{TOOL_NAME}: " + t("cli.output.not_saved", reason=not_saved.explain(t),
                                               exit=EXIT_OUTPUT))
    if lost is not None:
        saved = args.output is not None and not_saved is None
        exit_code = EXIT_OUTPUT if not_saved is not None else EXIT_STDOUT
        line(sys.stderr, f"{TOOL_NAME}: " + t(
            "cli.stdout.saved" if saved else "cli.stdout.lost", reason=lost.explain(t),
            exit=exit_code, code="OUTPUT_WRITE_FAILED" if not_saved else "STDOUT_WRITE_FAILED"))
    return exit_code


class _InterruptOnSignals:
    """SIGINT, SIGTERM and SIGHUP stop the check (raise Interrupted) instead of killing the
    front.

    Only the first signal raises: a second one (an impatient Ctrl-C) must not break the cleanup
    the first started, so once disarmed the handler ignores signals until the old ones return.
    """

    process_ends_after = False  # set by entry(): nothing of the front runs after main()

    def __init__(self) -> None:
        self._saved: dict[int, Any] = {}
        self._armed = True

    def __enter__(self) -> _InterruptOnSignals:
        for signum in _SIGNAL_EXIT:
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
        self._armed = False

    def _raise(self, signum: int, frame: object) -> None:
        if self._armed:
            self._armed = False
            raise Interrupted(signum)


class _LiveLine:
    """One line on a terminal's stderr naming the current stage and the time used.

    On a terminal that declares itself dumb (``TERM=dumb``: Emacs shells, some CI consoles) no
    escape sequence is sent: a carriage return and spaces over the previous text, which every
    terminal understands.
    """

    def __init__(self, stream: IO[str], limit_s: float, t: Translate = ENGLISH) -> None:
        isatty = getattr(stream, "isatty", None)
        self._stream = stream if isatty and isatty() else None
        self._t = t
        self._limit = f"{limit_s:g} s"
        self._shown = False
        self._dumb = os.environ.get("TERM") == "dumb"
        self._width = 0  # the longest text shown, for the dumb terminal's blanking

    def update(self, stage: str, elapsed_s: float) -> None:
        if self._stream is None or elapsed_s < 0.5:
            return
        label = self._t(f"ui.live.{stage}") if stage in _LIVE_STAGES else stage
        shown = f"{label}... {elapsed_s:.1f} s / {self._limit}"
        if self._dumb:
            self._width = max(self._width, len(shown))
            write(self._stream, "\r" + shown.ljust(self._width))
        else:
            write(self._stream, f"\r\033[K{shown}")
        self._stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._stream is not None and self._shown:
            write(self._stream, "\r" + " " * self._width + "\r" if self._dumb else "\r\033[K")
            self._stream.flush()
