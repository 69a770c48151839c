"""Command line: parse, pre-flight the output, run the check, show and save it, exit."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

from . import TOOL_NAME, __version__
from .api import (
    TIMEOUT_DEFAULT_S,
    TIMEOUT_MAX_S,
    TIMEOUT_MIN_S,
    Options,
    run,
    validate,
    validate_device,
    validate_device_index,
    validate_timeout,
)
from .codes import CODES, EXIT_INTERNAL, EXIT_OUTPUT, EXIT_USAGE
from .i18n import ENGLISH, LANGUAGES, Translate, translator
from .process import Interrupted, kill_all
from .terminal import language_asked, line, write

# The modules that read, render and save a report are imported once the check is under way:
# with --host-check the probe starts before them, and a usage error never pays for them.

_SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
_LIVE_STAGES = ("interpreter", "import", "backend", "device", "compute")
FORMATS = ("text", "json", "markdown")


class UsageError(Exception):
    """Invalid arguments: one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _argument_type(validate: Callable[[str, Translate], Any], t: Translate) -> Callable[[str], Any]:
    """An argparse type from one of the API's validators: the same rules, the same messages."""
    def convert(value: str) -> Any:
        try:
            return validate(value, t)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return convert


def _codes_epilog() -> str:
    rows = [f"  {code.name:<22} {code.exit_code:>3}  {code.summary}" for code in CODES.values()]
    return "result codes (name, exit code, meaning):\n" + "\n".join(rows)


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
    p.add_argument("--device", type=_argument_type(validate_device, t), default="gpu",
                   metavar="{gpu,cpu}",
                   help="where to run the check (default gpu; cpu only when asked)")
    p.add_argument("--device-index", type=_argument_type(validate_device_index, t), default=0,
                   metavar="N", help="index of the GPU among the visible devices (default 0)")
    p.add_argument("--timeout", type=_argument_type(validate_timeout, t),
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
    # SIGINT and SIGTERM stop the check cleanly from the first argument read to the last byte of
    # the report written: the worker's tree is killed, a partial report file removed.
    guard = _InterruptOnSignals()
    with guard:
        try:
            return _main(argv, guard)
        except (Interrupted, KeyboardInterrupt) as exc:
            guard.disarm()
            kill_all()  # what else the front started (the host probe's tool) goes too
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            t = translator(language_asked(sys.argv[1:] if argv is None else argv))
            line(sys.stderr, f"{TOOL_NAME}: " + t("cli.interrupted",
                                                   signal=signal.Signals(signum).name))
            return _SIGNAL_EXIT.get(signal.Signals(signum), 128 + signum)
        finally:
            guard.disarm()


# Commands other than the check, each a module with ``main(argv) -> int`` (imported on use).
SUBCOMMANDS = {"compare": "compare", "summarize": "summarize"}


def _main(argv: Sequence[str] | None, guard: _InterruptOnSignals) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in SUBCOMMANDS:
        import importlib

        command = importlib.import_module(f"{__package__}.{SUBCOMMANDS[arguments[0]]}")
        return int(command.main(arguments[1:]))
    t = translator(language_asked(arguments))
    try:
        args = parser(t).parse_args(arguments)
        options = validate(device=args.device, device_index=args.device_index,
                           timeout=args.timeout, host_check=args.host_check, python=args.python,
                           translate=t)
    except (UsageError, ValueError) as exc:
        # The message repeats what was typed: a secret or a path pasted by mistake is not echoed.
        from .redact import Redactor

        said = Redactor.for_this_machine().text(str(exc))
        line(sys.stderr, f"{TOOL_NAME}: {t('cli.error.prefix')}: {said} "
                          f"({t('cli.error.see_help')})")
        return EXIT_USAGE
    try:
        return _check(args, options, guard, t)
    except Interrupted:
        raise  # not a bug: main() says so in one line
    except Exception as exc:  # a bug of ours: one line, never a raw traceback unless asked
        if args.debug:
            import traceback  # only for --debug: the front imports no module it can do without

            traceback.print_exc()
        from .redact import Redactor

        detail = Redactor.for_this_machine().text(f"{type(exc).__name__}: {exc}")
        line(sys.stderr, f"{TOOL_NAME}: " + t("cli.internal", detail=detail))
        return EXIT_INTERNAL


def _check(args: argparse.Namespace, options: Options, guard: _InterruptOnSignals,
           t: Translate) -> int:
    from .output import OutputError, preflight, write_new

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
    from .render import markdown, text, use_colour
    from .report import to_json

    if args.format == "json":
        write(sys.stdout, to_json(report).decode("utf-8"))
    elif args.format == "markdown":
        write(sys.stdout, markdown(report, t))
    else:
        paths = result.local_paths if args.show_paths else None
        write(sys.stdout, text(report, colour=use_colour(sys.stdout), translate=t, paths=paths))
    if args.output is not None:
        try:
            write_new(args.output, to_json(report))
            guard.disarm()  # the report is complete on disk: a late signal no longer undoes it
        except OutputError as exc:
            line(sys.stderr, f"{TOOL_NAME}: " + t("cli.output.not_saved", reason=exc.explain(t),
                                                   exit=EXIT_OUTPUT))
            return EXIT_OUTPUT
    return int(report["exit_code"])


class _InterruptOnSignals:
    """SIGINT and SIGTERM stop the check (raise Interrupted) instead of killing the front.

    Only the first signal raises: a second one (an impatient Ctrl-C) must not break the cleanup
    the first started, so once disarmed the handler ignores signals until the old ones return.
    """

    process_ends_after = False  # set by entry(): nothing of the front runs after main()

    def __init__(self) -> None:
        self._saved: dict[int, Any] = {}
        self._armed = True

    def __enter__(self) -> _InterruptOnSignals:
        for signum in _SIGNAL_EXIT:
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
    """One line on a terminal's stderr naming the current stage and the time used."""

    def __init__(self, stream: IO[str], limit_s: float, t: Translate = ENGLISH) -> None:
        isatty = getattr(stream, "isatty", None)
        self._stream = stream if isatty and isatty() else None
        self._t = t
        self._limit = f"{limit_s:g} s"
        self._shown = False

    def update(self, stage: str, elapsed_s: float) -> None:
        if self._stream is None or elapsed_s < 0.5:
            return
        label = self._t(f"ui.live.{stage}") if stage in _LIVE_STAGES else stage
        write(self._stream, f"\r\033[K{label}... {elapsed_s:.1f} s / {self._limit}")
        self._stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._stream is not None and self._shown:
            write(self._stream, "\r\033[K")
            self._stream.flush()

