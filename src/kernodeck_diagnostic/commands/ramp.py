"""``kernodeck-diagnostic ramp``: grow one axis of the user's application until it fails, and record
the measured operating range.

    $ kernodeck-diagnostic ramp --axis batch --start 1 --stop 4096 --bisect \\
          -- python app.py --batch {batch}

Each attempt is the application's own process (no shell), with ``{batch}`` replaced by the value
in its arguments and ``KERNODECK_AXIS_NAME``, ``KERNODECK_AXIS_VALUE`` and ``KERNODECK_RUN_DIR``
set; its stdout and stderr, and the attempt folder of a ``Trial`` inside it, go to
``<out>/<axis>-<value>/``. Values: ``ramp/plan.py``;
outcomes: ``ramp/outcome.py``; ``ramp.json``, ``ramp.md`` and ``ramp.png``: ``ramp/record.py``.
One progress line per attempt goes to stderr. Ctrl-C stops the running attempt gently (SIGINT,
then SIGTERM, then SIGKILL) and keeps ``ramp.json``: the same command with the same ``--out``
resumes, and never runs a recorded value again.

The value reaches the program through ``{NAME}`` in its command: a command without it would run
the same thing at every value and "find no limit", so it is refused (a usage error) unless
``--value-from-env`` says the program reads ``KERNODECK_AXIS_VALUE`` instead.

Each attempt is judged by the one judge (``trial/judge.py``) from all its evidence: its exit,
every Trial folder it wrote, the OOM kills of its run, the axis value held to the Trial's own
parameters. ``--repeat N`` runs the last passing and first failing values N times in all: a
value that both passed and failed is flaky. A re-run whose program's files changed since
``ramp.json`` was written is refused (its attempts would be stale).

Exit statuses (the codes table's ``RAMP_*``, chosen by ``record.verdict``): 0 when a range was
measured (values passed, none failed below a pass); 24 when even ``--start`` failed (the
program's own failure: an exit status, a signal, an out-of-memory, a contract, the time limit);
25 (inconclusive) when nothing was measured: no attempt ran the program, the axis changed nothing
(the Trial's own parameters name another value), or the first value not passed was
inconclusive; 31 when a value failed below one that passed (no single limit); 32 when a value
both passed and failed (flaky); 2 on a usage error (an
``--out`` that cannot hold the ramp included: another user's link or folder in the way, see
``safe_files``); 15 when stdout is closed or refuses the result (the record is in ``--out`` all
the same); 130/143/129 when interrupted; 1 a bug of the tool.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from ..children import Interrupted
from ..i18n import Translate
from ..ramp import record
from ..ramp.outcome import INCONCLUSIVE, PASSED, classify
from ..ramp.plan import explore
from ..ramp.record import values_text
from ..report.codes import CODES
from ..report.redact import Redactor, argument_secrets, redact_argv
from ..report.tables import table
from ..safe_files import PARTIAL, Folder, UnsafePath, check_file
from ..supervision.application import run_application
from ..terminal import json_text, line
from ..trial.folder import AXIS_NAME_VARIABLE, AXIS_VALUE_VARIABLE, RUN_DIR_VARIABLE
from .runner import (
    InterruptOnSignals,
    Parser,
    UsageError,
    add_common_options,
    print_result,
    run_command,
    statuses_epilog,
)

PROG = "kernodeck-diagnostic ramp"
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
DEFAULT_FACTOR = 2.0
DEFAULT_ATTEMPT_TIMEOUT_S = 600.0
STOP_GRACE_S = 5.0  # after SIGINT (then SIGTERM), before the attempt's tree is killed
AXIS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PROGRAM_FILE_BYTES = 64 * 2**20  # a larger file the command names is keyed by size and time
MAX_PROGRAM_FILES = 32


def main(argv: Sequence[str]) -> int:
    options, command = split_command(argv)
    return run_command(PROG, options, _parser,
                       lambda args, t, guard: _act(args, command, t, guard),
                       interrupted="ramp.interrupted")


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """The command's own options, and the application's command after the first ``--``."""
    arguments = list(argv)
    if "--" not in arguments:
        return arguments, []
    index = arguments.index("--")
    return arguments[:index], arguments[index + 1:]


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=t("ramp.help.description"),
                    usage=f"{PROG} --axis NAME --start N --stop N [options] -- COMMAND...",
                    epilog=t("ramp.help.epilog") + "\n\n" + statuses_epilog("ramp", t))
    parser.add_argument("--axis", required=True, metavar="NAME", help=t("ramp.help.axis"))
    parser.add_argument("--start", required=True, type=int, metavar="N",
                        help=t("ramp.help.start"))
    parser.add_argument("--stop", required=True, type=int, metavar="N", help=t("ramp.help.stop"))
    parser.add_argument("--factor", type=float, default=DEFAULT_FACTOR, metavar="F",
                        help=t("ramp.help.factor"))
    parser.add_argument("--bisect", action="store_true", help=t("ramp.help.bisect"))
    parser.add_argument("--attempt-timeout", type=float, default=DEFAULT_ATTEMPT_TIMEOUT_S,
                        metavar="SECONDS", help=t("ramp.help.attempt_timeout"))
    parser.add_argument("--out", metavar="FOLDER", help=t("ramp.help.out"))
    parser.add_argument("--value-from-env", action="store_true",
                        help=t("ramp.help.value_from_env"))
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help=t("ramp.help.repeat"))
    add_common_options(parser, t)
    return parser


def _validate(args: argparse.Namespace, command: list[str], t: Translate) -> None:
    if not command:
        raise UsageError(t("ramp.no_command"), typed=False)
    if not AXIS_NAME.fullmatch(args.axis):
        raise UsageError(t("ramp.bad_axis", axis=args.axis))
    if args.start < 1 or args.stop < args.start:
        raise UsageError(t("ramp.bad_range", start=args.start, stop=args.stop))
    if not args.factor > 1 or args.factor != args.factor or args.factor == float("inf"):
        raise UsageError(t("ramp.bad_factor", factor=args.factor))
    if not 0 < args.attempt_timeout < float("inf"):
        raise UsageError(t("ramp.bad_timeout", timeout=args.attempt_timeout))
    if not 1 <= args.repeat <= 100:
        raise UsageError(t("ramp.bad_repeat", repeat=args.repeat))
    placeholder = "{" + args.axis + "}"
    if not args.value_from_env and not any(placeholder in part for part in command):
        # Every attempt would run the same command: "no limit found" would be no evidence.
        others = sorted({found for part in command for found in PLACEHOLDER.findall(part)})
        raise UsageError(t("ramp.no_placeholder", placeholder=placeholder,
                           found=t("ramp.placeholder_found", found=", ".join(others))
                           if others else ""))


def _act(args: argparse.Namespace, command: list[str], t: Translate,
         _guard: InterruptOnSignals) -> int:
    _validate(args, command, t)
    out = args.out or os.path.join("runs", f"ramp-{args.axis}")
    redactor = Redactor.for_this_machine(secrets=argument_secrets(command))
    ramp = record.Ramp(axis=args.axis, start=args.start, stop=args.stop, factor=args.factor,
                       bisect=args.bisect, attempt_timeout_s=args.attempt_timeout,
                       command=redact_argv(command, redactor),
                       command_sha256=record.command_sha256(command), repeat=args.repeat,
                       program_files=program_files(command, redactor))
    try:
        folder = Folder.open(out, create=True)
    except (OSError, ValueError) as exc:
        raise UsageError(t("ramp.bad_out", reason=_reason(exc, t)), typed=False) from None
    try:
        return _ramp(ramp, command, folder, redactor, form=args.format, t=t)
    except UnsafePath as exc:  # a link planted in --out while the ramp ran: never followed
        raise UsageError(t("ramp.bad_out", reason=_reason(exc, t)), typed=False) from None
    finally:
        folder.close()


def _ramp(ramp: record.Ramp, command: list[str], out: Folder, redactor: Redactor, *,
          form: str, t: Translate) -> int:
    try:
        _check_names(out)
        saved = record.load(out)
    except (OSError, ValueError) as exc:
        raise UsageError(t("ramp.bad_out", reason=_reason(exc, t)), typed=False) from None
    if saved is not None:
        differ = record.same_ramp(saved, ramp)
        if differ == ["program_files"]:  # its attempts ran another program: stale
            raise UsageError(t("ramp.program_changed", files=", ".join(
                record.changed_files(saved, ramp))), typed=False)
        if differ:
            raise UsageError(t("ramp.other_ramp", settings=", ".join(differ)), typed=False)
        ramp.attempts = [item for item in saved["attempts"] if isinstance(item, dict)]
        line(sys.stderr, t("ramp.resuming", count=len(ramp.attempts)))

    def run_once(value: int) -> dict[str, Any]:
        done = _attempt(ramp, value, command, out, redactor=redactor,
                        run=len(ramp.runs(value)) + 1)
        ramp.attempts.append(done)
        record.save(ramp, out)
        _progress(ramp, done, t)
        return done

    def passes(value: int) -> bool | None:
        done = ramp.recorded(value) or run_once(value)
        return None if done["outcome"] == INCONCLUSIVE else bool(done["outcome"] == PASSED)

    try:
        explore(ramp.start, ramp.stop, ramp.factor, ramp.bisect, passes)
        # --repeat: the values around the limit again, until each ran that many times.
        for value in boundary(ramp):
            while len(ramp.runs(value)) < ramp.repeat:
                run_once(value)
    except Interrupted:
        ramp.status = "interrupted"
        record.save(ramp, out)
        raise
    ramp.status = "complete"
    record.save(ramp, out)
    document = ramp.as_json()
    _finish(ramp, out, form, t)
    return CODES[document["verdict"]["code"]].exit_code


def boundary(ramp: record.Ramp) -> list[int]:
    """The values around the limit: the last that passed and the first that did not (the
    largest value tried when none failed)."""
    first = ramp.first_failing
    last = ramp.last_passing_value
    return [value for value in (last, None if first is None else int(first["value"]))
            if value is not None]


def program_files(command: list[str], redactor: Redactor) -> list[dict[str, str]]:
    """Each regular file the command names (its script, its configuration; the interpreter
    when given by its path), by its last component and a SHA-256 of its content (a file over
    PROGRAM_FILE_BYTES: of its size and modification time): a ramp's attempts are those of
    this program only. Arguments holding a placeholder are the axis, not a file."""
    found: list[dict[str, str]] = []
    for argument in command:
        if PLACEHOLDER.search(argument) or len(found) >= MAX_PROGRAM_FILES:
            continue
        candidate = argument.split("=", 1)[1] if argument.startswith("-") and "=" in argument \
            else argument
        try:
            info = os.stat(candidate)
            if not os.path.isfile(candidate):
                continue
            digest = hashlib.sha256()
            if info.st_size > PROGRAM_FILE_BYTES:
                digest.update(f"{info.st_size}:{info.st_mtime_ns}".encode())
            else:
                with open(candidate, "rb") as file:
                    for chunk in iter(lambda: file.read(2**20), b""):
                        digest.update(chunk)
        except (OSError, ValueError):
            continue
        found.append({"name": redactor.text(os.path.basename(candidate)),
                      "sha256": digest.hexdigest()})
    return found


def _check_names(out: Folder) -> None:
    """Before anything runs: each name the ramp writes in ``--out`` is free or a file of its
    own, never a link (another user's, in a folder others can write)."""
    for name in (record.RECORD, record.TABLE, record.PLOT):
        for each in (name, name + PARTIAL):
            found = out.lstat(each)
            if found is not None:
                check_file(found, out.child(each))


def _attempt(ramp: record.Ramp, value: int, command: list[str], out: Folder, *,
             redactor: Redactor, run: int = 1) -> dict[str, Any]:
    """Run the application once with ``value`` (its ``run``-th time); its attempt record."""
    name = f"{ramp.axis}-{value}" + (f".run-{run}" if run > 1 else "")
    _set_aside(out, name)
    with out.subfolder(name) as folder:
        placeholder = "{" + ramp.axis + "}"
        argv = [part.replace(placeholder, str(value)) for part in command]
        # Besides the environment it inherits unchanged (the application must see what it sees
        # when run by hand): the axis and value it runs with, where a Trial in it puts its folder.
        env = {**os.environ, AXIS_NAME_VARIABLE: ramp.axis, AXIS_VALUE_VARIABLE: str(value),
               RUN_DIR_VARIABLE: os.path.abspath(folder.path)}
        ending = run_application(argv, env=env, captures=folder, stdout_name="stdout.txt",
                                 stderr_name="stderr.txt", timeout_s=ramp.attempt_timeout_s,
                                 grace_s=STOP_GRACE_S)
    result = classify(ending, folder.path, folder.child("stderr.txt"), redactor,
                      axis=(ramp.axis, value))
    return {"value": value, "run": run, "outcome": result.outcome,
            "exit_code": ending.returncode if ending.signal_name is None else None,
            "signal": result.signal, "duration_s": round(ending.duration_s, 3),
            "peak_memory_bytes": result.peak_memory_bytes,
            "peak_memory_source": result.peak_memory_source, "oom": result.oom,
            "contracts_failed": result.contracts_failed, "error": result.error,
            "trial": result.trial, "folder": name,
            "last_started_stage": result.last_started_stage, "trials": result.trials,
            "reasons": result.reasons}


def _set_aside(out: Folder, name: str) -> None:
    """An attempt that was interrupted left its folder: keep it, under another name."""
    if out.lstat(name) is None:
        return
    number = 1
    while out.lstat(f"{name}.interrupted-{number}") is not None:
        number += 1
    out.rename(name, f"{name}.interrupted-{number}")


def _progress(ramp: record.Ramp, attempt: dict[str, Any], t: Translate) -> None:
    detail = record.detail(attempt)
    line(sys.stderr, t("ramp.progress", index=len(ramp.attempts), axis=ramp.axis,
                       value=attempt["value"], outcome=attempt["outcome"],
                       duration=f"{attempt['duration_s']:.2f}",
                       peak=record.size(attempt["peak_memory_bytes"]))
         + (f" ({detail})" if detail else ""))


def conclusion(document: dict[str, Any], t: Translate) -> str:
    """One sentence: what the attempts measured (``record.verdict``), naming the values tried."""
    found = document.get("verdict") or record.verdict(document)
    axis, kind = document["axis"], found["kind"]
    passed = values_text(found["passed"])
    between = t("ramp.between_not_tried") if found["not_tried"] else ""
    attempts = document.get("attempts") or []
    said = {
        "never_started": lambda: t("ramp.never_started", axis=axis,
                                   error=attempts[0].get("error") or "-"),
        "axis_ignored": lambda: t("ramp.axis_ignored", axis=axis, why=found.get("reason") or "-"),
        "flaky": lambda: t("ramp.flaky", axis=axis, values=values_text(found["flaky"])),
        "no_single_limit": lambda: t(
            "ramp.no_single_limit", axis=axis, passed=passed, between=between,
            failed=values_text([value for value in found["failed"]
                                if value < max(found["passed"])])),
        "unfinished": lambda: t("ramp.unfinished", axis=axis, passed=passed),
        "all_passed": lambda: t("ramp.all_passed", axis=axis, passed=passed,
                                value=max(found["passed"]), between=between),
    }.get(kind)
    if said is not None:
        return str(said())
    return _limit(document, found, t, passed=passed, between=between)


def _limit(document: dict[str, Any], found: dict[str, Any], t: Translate, *, passed: str,
           between: str) -> str:
    """The sentence of a ramp whose first value not passed is its limit (or inconclusive)."""
    axis, first = document["axis"], document["first_failing"] or {}
    why = str(first.get("outcome")) + (f", {first['phase']}" if first.get("phase") else "") + (
        f", {first['signal']}" if first.get("signal") else "")
    if found["kind"] == "inconclusive":
        reasons = [str(reason.get("text")) for item in document.get("attempts") or []
                   if item["value"] == first.get("value")
                   for reason in item.get("reasons") or [] if isinstance(reason, dict)]
        return t("ramp.inconclusive_at", axis=axis, value=first.get("value"), passed=passed,
                 why=reasons[0] if reasons else why)
    if found["kind"] == "none_passed":
        return t("ramp.none_passed", axis=axis, value=first.get("value"), kind=why)
    return t("ramp.range", axis=axis, last=document["last_passing_value"],
             first=first.get("value"), kind=why, passed=passed, between=between)


def _finish(ramp: record.Ramp, out: Folder, form: str, t: Translate) -> None:
    document = ramp.as_json()
    header = tuple(t(column, axis=ramp.axis)
                   for column in ("ramp.header.value", "ramp.header.outcome",
                                  "ramp.header.duration", "ramp.header.peak", "ramp.header.detail"))
    said = conclusion(document, t)
    out.replace(record.TABLE, record.markdown(document, header, said).encode("utf-8"))
    labels = {"duration": t("ramp.plot.duration"), "memory": t("ramp.plot.memory"),
              "title": said}
    image = record.plot(document, labels)
    if image is not None:
        out.replace(record.PLOT, image)
    plotted = image is not None
    files = [record.RECORD, record.TABLE, *([record.PLOT] if plotted else [])]
    try:
        if form == "json":
            print_result(json_text(json.dumps(document, indent=2, ensure_ascii=False)) + "\n")
        elif form == "markdown":
            print_result(record.markdown(document, header, said))
        else:
            print_result("\n".join([*table([header, *record.rows(document)]), "", said]) + "\n")
    finally:  # said even when stdout failed: the record is in its folder all the same
        line(sys.stderr, t("ramp.written", files=", ".join(files)))
        if not plotted:
            line(sys.stderr, t("ramp.no_plot"))


def _reason(exc: Exception, t: Translate) -> str:
    if isinstance(exc, UnsafePath):
        return t(exc.key)
    if isinstance(exc, OSError):
        return (exc.strerror or type(exc).__name__).lower()
    return str(exc)
