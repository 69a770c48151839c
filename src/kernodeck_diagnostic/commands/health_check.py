"""``kernodeck-diagnostic health-check``: the check on every GPU of this node, for the programs
that test nodes (Slurm's ``HealthCheckProgram`` and prolog, NHC, node-problem-detector).

    $ kernodeck-diagnostic health-check --slurm
    NODE FAULT  kernodeck: RUNTIME_ERROR gpu 1: CUDA error: uncorrectable ECC error encountered
    slurm       drained this node with that reason

It runs the check with ``--all-devices`` within ``--timeout`` (40 s by default: Slurm kills a
health check at 60 s), says whose fault a failure is (``report/health.py``: the node's, the
environment's, or nothing proven) in one line of at most 80 characters that names no host, and
ends with the status the host understands (``--exit-profile``). With ``--slurm`` it drains this
node (``scontrol update ... State=DRAIN Reason="kernodeck: ..."``) on the node's own fault only,
once (a node already drained with the same reason is left as it is), and on a pass resumes it
only when the drain was its own (the reason starts with ``kernodeck:``): an operator's drain, or
one for another reason, is never undone. An environment's fault or an inconclusive check drains
nothing: a busy node is not a bad GPU. ``--output`` writes the check's report (a new file) and
``--prometheus`` the verdict as metrics for node_exporter's textfile collector.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
from collections.abc import Sequence

from ..api import (
    TIMEOUT_MAX_S,
    TIMEOUT_MIN_S,
    InterpreterRejected,
    interpreter_problem,
    run,
    validate,
)
from ..children import run_bounded
from ..i18n import Translate
from ..report.health import (
    PROFILES,
    Health,
    Profile,
    exit_status,
    judge_health,
    process_exit_status,
    slurm_action,
)
from ..terminal import line
from .runner import (
    FORMATS,
    InterruptOnSignals,
    Parser,
    UsageError,
    print_result,
    run_command,
    statuses_epilog,
)

PROG = "kernodeck-diagnostic health-check"
DEFAULT_TIMEOUT_S = 40.0  # Slurm kills a HealthCheckProgram at 60 s; the host probe runs beside
SCONTROL_TIMEOUT_S = 5.0
# `scontrol show node` ends the reason with who set it and when: "Reason=... [root@2026-12-06...]".
_REASON = re.compile(r"\bReason=(.*?)(?: \[[^\]]*@[^\]]*\])?(?: \w+=|$)")
_STATE = re.compile(r"\bState=(\S+)")
_PROFILE_FLAG = "--exit-profile"


def main(argv: Sequence[str]) -> int:
    profile = _profile_asked(argv)
    decided: int | None = None

    def act(args: argparse.Namespace, t: Translate, guard: InterruptOnSignals) -> int:
        nonlocal decided
        decided = _act(args, t, guard)
        return decided

    status = run_command(PROG, argv, _parser, act)
    # The verdict is already in the profile's words (_act); any other status is how the process
    # ended (a usage error, a bug, an interrupt, stdout lost): never one that drains a node.
    return status if status == decided else process_exit_status(status, profile)


def _profile_asked(argv: Sequence[str]) -> Profile:
    """The ``--exit-profile`` asked for, read before the parser (whose own errors it governs)."""
    found: str = "native"
    for index, word in enumerate(argv):
        if word == _PROFILE_FLAG and index + 1 < len(argv):
            found = argv[index + 1]
        elif word.startswith(_PROFILE_FLAG + "="):
            found = word.split("=", 1)[1]
    for profile in PROFILES:
        if found == profile:
            return profile
    return "native"


def _parser(t: Translate) -> Parser:
    parser = Parser(translate=t, prog=PROG, description=t("health.help.description"),
                    epilog=t("health.help.epilog") + "\n\n"
                    + statuses_epilog("health-check", t, output=True))
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                        help=t("health.help.timeout", default=int(DEFAULT_TIMEOUT_S)))
    parser.add_argument("--python", metavar="PATH", help=t("health.help.python"))
    parser.add_argument("--output", metavar="FILE", help=t("health.help.output"))
    parser.add_argument("--prometheus", metavar="FILE", help=t("health.help.prometheus"))
    parser.add_argument("--slurm", action="store_true", help=t("health.help.slurm"))
    parser.add_argument("--node", metavar="NAME", help=t("health.help.node"))
    parser.add_argument(_PROFILE_FLAG, choices=PROFILES, default="native",
                        help=t("health.help.exit_profile"))
    parser.add_argument("--format", choices=[f for f in FORMATS if f != "markdown"],
                        default="text", help=t("health.help.format"))
    return parser


def _act(args: argparse.Namespace, t: Translate, guard: InterruptOnSignals) -> int:
    from ..report.prometheus import SUFFIX

    if not TIMEOUT_MIN_S <= args.timeout <= TIMEOUT_MAX_S:
        raise UsageError(t("health.timeout_range", low=int(TIMEOUT_MIN_S),
                           high=int(TIMEOUT_MAX_S)), typed=False)
    if args.python is not None and (problem := interpreter_problem(args.python)):
        raise UsageError("--python: " + t(problem))
    if args.prometheus is not None and not args.prometheus.endswith(SUFFIX):
        raise UsageError(t("metrics.suffix", suffix=SUFFIX), typed=False)
    if args.output is not None:
        from ..report.writer import OutputError, preflight

        try:
            preflight(args.output)
        except OutputError as exc:
            raise UsageError("--output: " + exc.explain(t), typed=False) from None
    try:
        options = validate(device="gpu", device_index=0, timeout=args.timeout,
                           host_check=True, python=args.python, all_devices=True, translate=t)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        report = run(options).to_dict()
    except InterpreterRejected as exc:
        raise UsageError(f"--python: {t(exc.key, **exc.values)}", typed=False) from None
    health = judge_health(report)
    profile: Profile = args.exit_profile
    status = exit_status(health, profile)
    slurm = _slurm(health, args.node) if args.slurm else None
    saved = _save(report, health, args, t)
    guard.disarm()
    print_result(_shown(health, slurm, args.format, status, t))
    return status if saved else process_exit_status(_output_failed(), profile)


def _output_failed() -> int:
    from ..report.codes import EXIT_OUTPUT

    return EXIT_OUTPUT


def _save(report: dict[str, object], health: Health, args: argparse.Namespace,
          t: Translate) -> bool:
    """The report and the metrics, each where asked; False (said on stderr) when one failed."""
    saved = True
    if args.output is not None:
        from ..report.build import to_json
        from ..report.writer import OutputError, write_new

        try:
            write_new(args.output, to_json(report))
        except OutputError as exc:
            line(sys.stderr, f"{PROG}: " + t("metrics.not_saved", what="--output",
                                              reason=exc.explain(t)))
            saved = False
    if args.prometheus is not None:
        from ..report.prometheus import check_metrics, write
        from ..safe_files import UnsafePath
        from ..supervision.start import reason

        try:
            write(args.prometheus, check_metrics(report, health))
        except OSError as exc:
            said = t(exc.key) if isinstance(exc, UnsafePath) else reason(exc)
            line(sys.stderr, f"{PROG}: " + t("metrics.not_saved", what="--prometheus",
                                              reason=said))
            saved = False
    return saved


# -- Slurm ----------------------------------------------------------------------------------------

def _slurm(health: Health, node: str | None) -> str:
    """Drain or resume this node as ``health`` says (``slurm_action``), through ``scontrol``;
    what was done, as a message key of ``health.slurm.*``."""
    name = node or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    shown = run_bounded(["scontrol", "show", "node", name, "--oneliner"], SCONTROL_TIMEOUT_S)
    if shown.returncode != 0 or not shown.stdout.strip():
        return "unknown_node"
    state_found, reason_found = _STATE.search(shown.stdout), _REASON.search(shown.stdout)
    drained = state_found is not None and "DRAIN" in state_found.group(1).upper()
    action = slurm_action(health, drained, reason_found.group(1).strip() if reason_found
                          else None)
    if action == "drain":
        return _scontrol(name, "State=DRAIN", f"Reason={health.reason}", done="drained")
    if action == "resume":
        return _scontrol(name, "State=RESUME", done="resumed")
    return action


def _scontrol(node: str, *settings: str, done: str) -> str:
    result = run_bounded(["scontrol", "update", f"NodeName={node}", *settings],
                         SCONTROL_TIMEOUT_S)
    return done if result.returncode == 0 else "scontrol_failed"


# -- what is printed ------------------------------------------------------------------------------

_HEADLINES = {"passed": "health.fault.passed", "node": "health.fault.node",
              "environment": "health.fault.environment",
              "inconclusive": "health.fault.inconclusive"}
_NEXT = {"node": "health.next.node", "environment": "health.next.environment",
         "inconclusive": "health.next.inconclusive"}
_SLURM = {"drained": "health.slurm.drained", "already_drained": "health.slurm.already_drained",
          "resumed": "health.slurm.resumed",
          "left_operator_drain": "health.slurm.left_operator_drain",
          "not_drained": "health.slurm.not_drained", "nothing": "health.slurm.nothing",
          "unknown_node": "health.slurm.unknown_node",
          "scontrol_failed": "health.slurm.scontrol_failed"}


def _shown(health: Health, slurm: str | None, form: str, status: int, t: Translate) -> str:
    if form == "json":
        return json.dumps({"fault": health.fault, "code": health.code, "device": health.device,
                           "reason": health.reason or None, "slurm": slurm,
                           "exit_code": status}, ensure_ascii=True) + "\n"
    headline = t(_HEADLINES[health.fault])
    said = health.reason or t("health.passed", code=health.code, count=health.devices)
    text = f"{headline:<12}{said}\n"
    if health.fault in _NEXT:
        text += f"{'':<12}{t(_NEXT[health.fault])}\n"
    if slurm is not None:
        text += f"{'slurm':<12}{t(_SLURM[slurm])}\n"
    return text
