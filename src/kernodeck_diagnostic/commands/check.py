"""The check's command: parse, pre-flight the output, run the check, show and save it."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

from ..api import (
    KERNELS_TIMEOUT_DEFAULT_S,
    TIMEOUT_DEFAULT_S,
    TIMEOUT_MAX_S,
    TIMEOUT_MIN_S,
    InterpreterRejected,
    Options,
    index_in_range,
    interpreter_problem,
    known_device,
    progress_text,
    run,
    timeout_in_range,
    validate,
)
from ..i18n import ENGLISH, LANGUAGES, Translate
from ..package_data import TOOL_NAME
from ..report.codes import CODES, EXIT_OUTPUT, EXIT_STDOUT
from ..request import DEVICES, Device, contradiction
from ..terminal import line, write
from . import SUBCOMMANDS
from .runner import FORMATS, InterruptOnSignals, Parser, UsageError, run_command, save_metrics

if TYPE_CHECKING:
    from ..facts.launcher import Launch
    from ..report.shapes import Report as ReportShape
    from ..report.writer import OutputError

# The modules that read, render and save a report are imported once the check is under way:
# with --host-check the probe starts before them, and a usage error never pays for them.

_N = TypeVar("_N", int, float)


def main(argv: Sequence[str] | None = None) -> int:
    """The check, as ``kernodeck-diagnostic [options]``: its exit status."""
    return run_command(TOOL_NAME, sys.argv[1:] if argv is None else argv, parser, _check,
                       interrupted="check.interrupted")


def _argument_type(convert: Callable[[str, Translate], Any], t: Translate) -> Callable[[str], Any]:
    """An argparse type: the text converted, then checked by the API's own rule; argparse puts
    the --flag in front of the message ("argument --timeout: must be between...")."""
    def argument(value: str) -> Any:
        try:
            return convert(value, t)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return argument


def _device_text(text: str, t: Translate) -> Device:
    # Typed on a command line, the mode's case does not matter (--device CPU); a refusal repeats
    # the text as typed, so that the redaction of what was pasted by mistake still applies.
    lowered = text.strip().lower()
    return known_device(lowered if lowered in DEVICES else text, t, "cli")


def _index_text(text: str, t: Translate) -> int:
    return index_in_range(_parsed(text, int, "cli.index.not_a_number", t), t)


def _timeout_text(text: str, t: Translate) -> float:
    return timeout_in_range(_parsed(text, float, "cli.timeout.not_a_number", t), t)


def _parsed(text: str, parse: Callable[[str], _N], key: str, t: Translate) -> _N:
    """``parse(text)``; if it fails, the message ``key`` repeating the text as typed."""
    try:
        return parse(text)
    except ValueError:
        raise ValueError(t(key, value=repr(text))) from None


# What each command is for, in the top-level help: the check (it has no name), then the others.
_COMMAND_LINES = {
    "(none)": "cli.command.check",
    "compare": "cli.command.compare",
    "summarize": "cli.command.summarize",
    "ramp": "cli.command.ramp",
    "resume-check": "cli.command.resume-check",
    "health-check": "cli.command.health-check",
}


# The help's own lines fit a terminal of 80 columns (argparse wraps the options to the terminal).
_HELP_WIDTH = 79


def _commands(h: Translate) -> str:
    """The top-level help's list of every command, one line each (the check has no name)."""
    names = ["(none)", *SUBCOMMANDS]
    return h("check.help.epilog.commands") + "\n" + "\n".join(
        f"  {name:<13} {h(_COMMAND_LINES[name])}" for name in names)


def _codes_epilog(h: Translate) -> str:
    def rows(kind: str) -> str:
        return "\n".join(f"  {code.name:<22} {'/'.join(map(str, code.exit_codes)):<11}  "
                         f"{code.summary}" for code in CODES.values() if code.kind == kind)

    return (h("check.help.epilog.codes") + "\n" + rows("verdict") + "\n\n"
            + h("check.help.epilog.process") + "\n" + rows("process") + "\n\n"
            + h("check.help.epilog.output"))


class _CheckParser(Parser):
    """The check takes no positional argument: a first word that is no option is a command
    misspelt (``sumarize``), said as such, with the nearest command's name."""

    refusals: Translate = ENGLISH

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        words = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(words, namespace)
        if extras and words and extras[0] == words[0] and not words[0].startswith("-"):
            raise UsageError(unknown_command(words[0], self.refusals))
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def unknown_command(word: str, t: Translate) -> str:
    """The usage error of a first word that names no command: the nearest one, else them all."""
    near = difflib.get_close_matches(word.lower(), list(SUBCOMMANDS), n=1, cutoff=0.6)
    if near:
        return t("cli.unknown_command.near", word=repr(word), command=near[0])
    return t("cli.unknown_command", word=repr(word), commands=", ".join(SUBCOMMANDS))


def parser(t: Translate = ENGLISH) -> Parser:
    """The check's options. ``t`` speaks the refusals of their values; the help is English (the
    catalogs' ``check.help.*``, in every language alike)."""
    h = ENGLISH  # the help's language (check.help.*)
    p = _CheckParser(
        translate=h,
        prog=TOOL_NAME,
        # What the tool is for, then every command, one line each: what a newcomer reads first.
        description=textwrap.fill(h("check.help.description", tool=TOOL_NAME), _HELP_WIDTH)
        + "\n\n" + _commands(h),
        epilog=_codes_epilog(h),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--device", type=_argument_type(_device_text, t), default="gpu",
                   metavar="{gpu,cpu}", help=h("check.help.device"))
    # No default here: an index typed beside --device cpu (or --all-devices, --distributed)
    # contradicts it, even 0; see _refuse_contradiction.
    p.add_argument("--device-index", type=_argument_type(_index_text, t), default=None,
                   metavar="N", help=h("check.help.device_index"))
    # No default here: --kernels has its own (KERNELS_TIMEOUT_DEFAULT_S), see _options.
    p.add_argument("--timeout", type=_argument_type(_timeout_text, t), default=None,
                   metavar="S",
                   help=h("check.help.timeout", low=TIMEOUT_MIN_S, high=TIMEOUT_MAX_S,
                          default=TIMEOUT_DEFAULT_S, kernels=KERNELS_TIMEOUT_DEFAULT_S))
    p.add_argument("--output", metavar="FILE", help=h("check.help.output"))
    p.add_argument("--prometheus", metavar="FILE", help=h("check.help.prometheus"))
    p.add_argument("--host-check", action="store_true", help=h("check.help.host_check"))
    p.add_argument("--distributed", action="store_true", help=h("check.help.distributed"))
    p.add_argument("--all-devices", action="store_true", help=h("check.help.all_devices"))
    p.add_argument("--extensions", action="store_true", help=h("check.help.extensions"))
    p.add_argument("--kernels", action="store_true", help=h("check.help.kernels"))
    p.add_argument("--python", metavar="PATH", help=h("check.help.python"))
    p.add_argument("--format", choices=FORMATS, default="text", help=h("check.help.format"))
    p.add_argument("--lang", choices=LANGUAGES, default=None, help=h("check.help.lang"))
    p.add_argument("--show-paths", action="store_true", help=h("check.help.show_paths"))
    p.refusals = t
    return p


def _options(args: argparse.Namespace, t: Translate) -> Options:
    """What was asked, checked by the API's own rules: ``UsageError`` when it cannot be run."""
    _refuse_contradiction(args, t)
    if args.timeout is None:
        # A cold torch.compile alone takes 20 to 50 s: --kernels' limit suits it.
        args.timeout = float(KERNELS_TIMEOUT_DEFAULT_S if args.kernels else TIMEOUT_DEFAULT_S)
    if args.python is not None and (problem := interpreter_problem(args.python)):
        raise UsageError("--python: " + t(problem))  # the API would say check(python=...)
    if args.distributed:
        from ..facts.launcher import LaunchError, detect

        try:
            # Said here in the command line's words; validate reads it again.
            ignored = detect(os.environ).ignored
        except LaunchError as exc:
            raise UsageError(t(exc.key, **exc.values), typed=False) from None
        if ignored:
            line(sys.stderr, f"{TOOL_NAME}: " + t("cli.distributed.ignored",
                                                   names=", ".join(ignored)))
    try:
        options = validate(device=args.device, device_index=args.device_index or 0,
                           timeout=args.timeout, host_check=args.host_check, python=args.python,
                           distributed=args.distributed, all_devices=args.all_devices,
                           extensions=args.extensions, kernels=args.kernels, translate=t)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.prometheus is not None and not args.prometheus.endswith(".prom"):
        raise UsageError(t("metrics.suffix", suffix=".prom"), typed=False)
    if args.output == "-":
        # Not a file named '-' made by surprise, and not a second report on stdout beside the
        # text: the JSON on stdout is --format json; a file really named '-' is ./-
        raise UsageError(t("cli.output.dash"), typed=False)
    return options


# How the command line writes each option of ``request.contradiction`` in its refusal.
_CLI_WORDS = {"cpu": "--device cpu", "device_index": "--device-index",
              "all_devices": "--all-devices", "distributed": "--distributed"}


def _refuse_contradiction(args: argparse.Namespace, t: Translate) -> None:
    """Two options that contradict each other: one line naming both as typed, never one of
    them silently dropped (``--device cpu --device-index 1`` would check the CPU)."""
    if args.show_paths and args.format != "text":
        raise UsageError(t("cli.contradiction", first="--show-paths",
                           second=f"--format {args.format}",
                           reason=t("arg.contradiction.show_paths.format")), typed=False)
    asked = {name for name, on in (
        ("cpu", args.device == "cpu"), ("device_index", args.device_index is not None),
        ("all_devices", args.all_devices), ("distributed", args.distributed)) if on}
    found = contradiction(asked)
    if found is not None:
        first, second, why = found
        raise UsageError(t("cli.contradiction", first=_CLI_WORDS[first],
                           second=_CLI_WORDS[second], reason=t(why)), typed=False)


def _check(args: argparse.Namespace, t: Translate, guard: InterruptOnSignals) -> int:
    options = _options(args, t)
    from ..report.writer import OutputError, preflight, write_new

    launch = _as_rank(options.launch, args, guard, t)
    if args.output is not None:
        try:
            preflight(args.output)
        except OutputError as exc:
            line(sys.stderr, f"{TOOL_NAME}: " + t("cli.output.preflight", reason=exc.explain(t),
                                                   exit=EXIT_OUTPUT))
            return EXIT_OUTPUT
    live = _LiveLine(sys.stderr, args.timeout, t)
    try:
        result = run(options, on_progress=live.update, command_line=True)
    except InterpreterRejected as exc:  # --python named no Python 3.9+: found by running it
        raise UsageError(f"--python: {t(exc.key, **exc.values)}", typed=False) from None
    finally:
        live.clear()
    report = result.to_dict()
    if launch is not None and isinstance(report.get("distributed"), dict):
        # The launcher's SIGTERM (held: see _as_rank) is the job being stopped, not this rank's
        # failure: said in the block, beside what this rank knew of the others.
        report["distributed"].update(_launcher_stop(guard.sigterm_held))
    from ..report.build import to_json
    from ..report.render import markdown, text, use_colour

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
    metrics_lost = args.prometheus is not None and not _metrics_saved(args.prometheus, report, t)
    exit_code = EXIT_OUTPUT if metrics_lost else exit_code
    # JSON and markdown are the report to share: the check's own code and exit code. The text is
    # this run on this terminal: its first line says the exit status the process ends with.
    if args.format == "json":
        shown = to_json(report).decode("utf-8")
    elif args.format == "markdown":
        shown = markdown(cast("ReportShape", report), t, findings=result.found)
    else:
        paths = result.local_paths if args.show_paths else None
        shown = text(cast("ReportShape", report), colour=use_colour(sys.stdout), translate=t,
                     paths=paths,
                     exit_as="OUTPUT_WRITE_FAILED" if not_saved is not None else None,
                     findings=result.found)
    lost = _show(shown, launch, report, t)
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


def _metrics_saved(path: str, report: dict[str, Any], t: Translate) -> bool:
    """--prometheus: the verdict as metrics (``report/prometheus.py``), replaced atomically."""
    from ..report.prometheus import check_metrics

    return save_metrics(path, check_metrics(report), t)


def _launcher_stop(held: bool) -> dict[str, Any]:
    """Whether the launcher's SIGTERM came, and why (the job cancelled, its time limit, or only
    "SIGTERM": facts/launcher.stop_reason, read as it came, or Slurm's controller's answer)."""
    if not held:
        return {"launcher_stopped": False}
    from ..supervision.supervisor import launcher_stop_reason

    return {"launcher_stopped": True, "launcher_stop": launcher_stop_reason()}


def _as_rank(launch: Launch | None, args: argparse.Namespace,
             guard: InterruptOnSignals, t: Translate) -> Launch | None:
    """--distributed: this rank's file for --output (see ``Launch.output_path``; a rank that
    writes none says so), and SIGTERM held: a launcher stops every rank with it as soon as one
    ends with a failure (torchrun does), and rank 0 must still print the job's report. The check
    stays bounded by its limit."""
    if launch is not None:
        if args.output is not None and launch.output_path(args.output) is None:
            # report-$SLURM_PROCID.json, expanded by the shell: every name is rank 0's.
            line(sys.stderr, f"{TOOL_NAME}: " + t("cli.distributed.no_file", rank=launch.rank,
                                                   placeholder="{rank}"))
        from ..supervision.supervisor import launcher_stopping

        # The worker hears it too, and cuts what is left of its collective stage: rank 0's
        # report is written before the launcher's kill (supervision/supervisor.py).
        guard.hold_sigterm(on_held=launcher_stopping)
        args.output = launch.output_path(args.output) if args.output is not None else None
    return launch


def _show(shown: str, launch: Launch | None, report: dict[str, Any],
          t: Translate) -> OutputError | None:
    """Print the report; under --distributed only rank 0 does (the job's report), the others
    say their verdict in one line on stderr. What stdout refused, if anything."""
    from ..report.writer import show

    if launch is None or launch.rank == 0:
        return show(sys.stdout, shown)
    line(sys.stderr, f"{TOOL_NAME}: " + t(
        "cli.distributed.rank_verdict", rank=launch.rank, world_size=launch.world_size,
        code=report["code"], exit=report["exit_code"]))
    return None


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
        self._limit = limit_s
        self._shown = False
        self._dumb = os.environ.get("TERM") == "dumb"
        self._width = 0  # the longest text shown, for the dumb terminal's blanking

    def update(self, stage: str, elapsed_s: float) -> None:
        if self._stream is None or elapsed_s < 0.5:
            return
        shown = progress_text(stage, elapsed_s, self._limit, self._t)
        if self._dumb:
            self._width = max(self._width, len(shown))
            write(self._stream, "\r" + shown.ljust(self._width))
        else:
            write(self._stream, f"\r\033[K{shown}")
        self._shown = True

    def clear(self) -> None:
        if self._stream is not None and self._shown:
            write(self._stream, "\r" + " " * self._width + "\r" if self._dumb else "\r\033[K")
