"""Command line: parse, pre-flight the output, run the check, show and save it, exit."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import traceback
from collections.abc import Sequence
from typing import IO, Any, NoReturn

from . import __version__
from .codes import CODES, EXIT_INTERNAL, EXIT_OUTPUT, EXIT_USAGE
from .host import HostProbe
from .output import OutputError, preflight, write_new
from .redact import Redactor
from .render import text, use_colour
from .report import TOOL_NAME, Request, build, to_json
from .supervisor import Interrupted, run_worker, user_path0

TIMEOUT_MIN_S, TIMEOUT_MAX_S, TIMEOUT_DEFAULT_S = 5, 120, 30
_SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
_LIVE_LABELS = {"interpreter": "starting Python", "import": "importing torch",
                "backend": "reading the build", "device": "querying the GPU",
                "compute": "computing"}


class UsageError(Exception):
    """Invalid arguments: one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _timeout(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not TIMEOUT_MIN_S <= seconds <= TIMEOUT_MAX_S:
        raise argparse.ArgumentTypeError(
            f"must be between {TIMEOUT_MIN_S} and {TIMEOUT_MAX_S} seconds, got {value}")
    return seconds


def _device_index(value: str) -> int:
    try:
        index = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if index < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return index


def _device(value: str) -> str:
    name = value.strip().lower()
    if name in ("rocm", "hip", "cuda"):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a device mode: ROCm and CUDA builds of PyTorch both use the 'cuda' "
            "device name, so use --device gpu (the default)")
    if name not in ("gpu", "cpu"):
        raise argparse.ArgumentTypeError(f"must be gpu or cpu, got {value!r}")
    return name


def _codes_epilog() -> str:
    rows = [f"  {code.name:<22} {code.exit_code:>3}  {code.summary}" for code in CODES.values()]
    return "result codes (name, exit code, meaning):\n" + "\n".join(rows)


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=TOOL_NAME,
        description="Find the first layer of a PyTorch GPU setup that fails: interpreter and "
                    "import, build backend, device, a tiny verified computation.",
        epilog=_codes_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("--device", type=_device, default="gpu", metavar="{gpu,cpu}",
                   help="where to run the check (default gpu; cpu only when asked)")
    p.add_argument("--device-index", type=_device_index, default=0, metavar="N",
                   help="index of the GPU among the visible devices (default 0)")
    p.add_argument("--timeout", type=_timeout, default=float(TIMEOUT_DEFAULT_S), metavar="S",
                   help=f"limit for the whole check, {TIMEOUT_MIN_S}-{TIMEOUT_MAX_S} seconds "
                        f"(default {TIMEOUT_DEFAULT_S})")
    p.add_argument("--output", metavar="FILE",
                   help="also write the JSON report to FILE, which must not exist yet")
    p.add_argument("--host-check", action="store_true",
                   help="also ask nvidia-smi for the driver version and memory (3 s at most)")
    p.add_argument("--debug", action="store_true", help="show a traceback if the tool itself fails")
    p.add_argument("--version", action="version", version=f"{TOOL_NAME} {__version__}")
    return p


def entry() -> NoReturn:
    """The console script's and the zipapp's entry point: exit with the check's code."""
    sys.exit(main())


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
    except UsageError as exc:
        _line(sys.stderr, f"{TOOL_NAME}: error: {exc} (see --help)")
        return EXIT_USAGE
    try:
        return _check(args)
    except (Interrupted, KeyboardInterrupt) as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        name = signal.Signals(signum).name
        _line(sys.stderr, f"{TOOL_NAME}: interrupted by {name}; the check was stopped and "
                          "no report was written.")
        return _SIGNAL_EXIT.get(signal.Signals(signum), 128 + signum)
    except Exception as exc:  # a bug of ours: one line, never a raw traceback unless asked
        if args.debug:
            traceback.print_exc()
        detail = Redactor.for_this_machine().text(f"{type(exc).__name__}: {exc}")
        _line(sys.stderr, f"{TOOL_NAME}: internal error ({detail}); please report it "
                          "with the command you ran.")
        return EXIT_INTERNAL


def _check(args: argparse.Namespace) -> int:
    if args.output is not None:
        try:
            preflight(args.output)
        except OutputError as exc:
            _line(sys.stderr, f"{TOOL_NAME}: cannot write the report to the file asked for: "
                              f"{exc.reason}. Nothing was run (exit {EXIT_OUTPUT}).")
            return EXIT_OUTPUT
    request = Request(args.device, args.device_index, args.timeout, args.host_check)
    host = HostProbe().start() if args.host_check else None
    live = _LiveLine(sys.stderr, args.timeout)
    with _InterruptOnSignals():
        try:
            run = run_worker(sys.executable, device=args.device, device_index=args.device_index,
                             timeout_s=args.timeout, on_progress=live.update,
                             path0=user_path0())
        finally:
            live.clear()
    report = build(request, run, host.result() if host else None, Redactor.for_this_machine())
    _write(sys.stdout, text(report, colour=use_colour(sys.stdout)))
    if args.output is not None:
        try:
            write_new(args.output, to_json(report))
        except OutputError as exc:
            _line(sys.stderr, f"{TOOL_NAME}: the report was NOT saved: {exc.reason} "
                              f"(exit {EXIT_OUTPUT}, OUTPUT_WRITE_FAILED).")
            return EXIT_OUTPUT
    return int(report["exit_code"])


class _InterruptOnSignals:
    """While the worker runs, SIGINT and SIGTERM stop the check instead of killing the front."""

    def __enter__(self) -> None:
        self._saved: dict[int, Any] = {}
        for signum in _SIGNAL_EXIT:
            # Outside the main thread (an embedding host) signals cannot be caught: keep its own.
            with contextlib.suppress(ValueError):
                self._saved[signum] = signal.signal(signum, self._raise)

    def __exit__(self, kind: object, value: object, trace: object) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)

    @staticmethod
    def _raise(signum: int, frame: object) -> None:
        raise Interrupted(signum)


class _LiveLine:
    """One line on a terminal's stderr naming the current stage and the time used."""

    def __init__(self, stream: IO[str], limit_s: float) -> None:
        isatty = getattr(stream, "isatty", None)
        self._stream = stream if isatty and isatty() else None
        self._limit = f"{limit_s:g} s"
        self._shown = False

    def update(self, stage: str, elapsed_s: float) -> None:
        if self._stream is None or elapsed_s < 0.5:
            return
        label = _LIVE_LABELS.get(stage, stage)
        _write(self._stream, f"\r\033[K{label}... {elapsed_s:.1f} s / {self._limit}")
        self._stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._stream is not None and self._shown:
            _write(self._stream, "\r\033[K")
            self._stream.flush()


def _line(stream: IO[str], message: str) -> None:
    _write(stream, message + "\n")


def _write(stream: IO[str], message: str) -> None:
    """Write, degrading characters the console cannot encode instead of failing."""
    try:
        stream.write(message)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(message.encode(encoding, "replace").decode(encoding, "replace"))
    stream.flush()
