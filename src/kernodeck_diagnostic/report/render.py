"""What a person reads: terminal text and markdown, in the user's language.

The verdict comes first, then the facts, the findings, and the next action last. Codes, stage
names, ids and versions stay as they are in every language; the sentences are translated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import IO, Any

from ..i18n import ENGLISH, Translate, compose
from ..terminal import one_line
from .codes import CODES
from .devices import Copies, copies_named, copies_of, device_name
from .findings import Finding
from .kernel_form import for_report
from .libraries import library_rows
from .markup import code, escape
from .markup import table as markup_table
from .shapes import (
    DeviceCheck,
    Distributed,
    Host,
    Pytorch,
    Report,
    ReportError,
    ReportFinding,
    Runtime,
    System,
)

_GREEN, _RED, _BOLD, _RESET = "\033[32m", "\033[31m", "\033[1m", "\033[0m"
# The words for a report's status, a finding's severity, a host tool that gave no facts, and
# each local path --show-paths shows.
_STATUSES = {"passed": "ui.status.passed", "failed": "ui.status.failed"}
_SEVERITIES = {"error": "ui.severity.error", "warning": "ui.severity.warning",
               "info": "ui.severity.info"}
_HOST_STATUSES = {"not_found": "ui.host.not_found", "timeout": "ui.host.timeout",
                  "failed": "ui.host.failed"}
_PATHS = {"interpreter": "ui.paths.interpreter", "torch": "ui.paths.torch"}


def use_colour(stream: IO[str]) -> bool:
    """Colour only for a terminal, never when NO_COLOR is set (https://no-color.org)."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def text(report: Report, colour: bool = False, translate: Translate = ENGLISH,
         paths: Mapping[str, str | None] | None = None, exit_as: str | None = None, *,
         findings: Sequence[Finding] | None = None) -> str:
    """The terminal report. ``paths`` (``--show-paths``) are local locations, shown only here.

    ``findings`` are the report's findings as the rules gave them (``build.Built``), shown in
    ``translate``'s language; without them, the report's own (English) list, as it holds it.

    ``exit_as`` names the code whose exit status the process ends with instead of the check's
    (``OUTPUT_WRITE_FAILED``: the report file was not saved), so that the first line never
    says "exit 0" for a process that exits 12.
    """
    t = for_report(report, translate)  # from a kernel: advice in a notebook's words
    rows = [*_rows(report, t), *_paths(paths, t)]
    width = max(len(label) for label, _ in rows)
    lines = [_headline(report, t, colour, exit_as), "  " + t(f"code.{report['code']}.summary"),
             ""]
    # Values hold text from the machine (an error's message, a warning, a GPU's name): each is
    # one printable line (``one_line``), so no escape sequence, control or bidi override in it
    # reaches the terminal, as in compare and summarize.
    lines += [f"{label.ljust(width)}  {one_line(value)}" for label, value in rows if value]
    found = _findings(report, t, findings, english=translate is ENGLISH)
    if found:
        lines += ["", t("ui.label.findings")]
        width = max(len(t(key)) for key in _SEVERITIES.values())  # the language's longest word
        for finding in found:
            severity = t(_SEVERITIES[finding["severity"]]).ljust(width)
            lines.append(one_line(f"  {severity}  {finding['id']}: {finding['summary']}"))
            lines.append(one_line(f"  {'':<{width}}  {t('ui.label.do')}: "
                                  f"{finding['next_action']}"))
    lines += ["", f"{t('ui.label.next')}: {_next_action(report, t)}"]
    return "\n".join(lines) + "\n"


def markdown(report: Report, translate: Translate = ENGLISH,
             findings: Sequence[Finding] | None = None) -> str:
    """The report as markdown, ready to paste into a support ticket or a GitHub issue
    (``findings``: as ``text`` takes them).

    Every value is escaped (``markup``): what a report holds (``<path>``, a device name, an error
    message) is shown as the text it is, never taken for HTML or markdown syntax.
    """
    t = for_report(report, translate)  # from a kernel: advice in a notebook's words
    rows = _rows(report, t)
    status = t(_STATUSES[report["status"]])
    lines = [f"### {escape(t('ui.markdown.title'))}", "",
             t("ui.markdown.headline", status=escape(status), code=_in_code(report["code"]),
               exit_code=escape(report["exit_code"]), stage=_in_code(report["stage"]),
               summary=escape(t(f"code.{report['code']}.summary"))),
             "", *markup_table([(escape(t("ui.markdown.field")), escape(t("ui.markdown.value"))),
                                *((escape(label.strip()), escape(value))
                                  for label, value in rows if value)])]
    found = _findings(report, t, findings, english=translate is ENGLISH)
    if found:
        lines += ["", f"**{escape(t('ui.label.findings'))}**", ""]
        for finding in found:
            severity = t(_SEVERITIES[finding["severity"]])
            lines.append(f"- **{escape(severity)}** {code(finding['id'])}: "
                         f"{escape(finding['summary'])}  ")
            lines.append(f"  {escape(t('ui.label.do'))}: {escape(finding['next_action'])}")
    lines += ["", f"**{escape(t('ui.label.next'))}:** {escape(_next_action(report, t))}", "",
              f"<sub>{escape(report['tool']['name'])} {escape(report['tool']['version'])}, "
              f"{escape(report['created_at'])}</sub>"]
    return "\n".join(lines) + "\n"


def _rows(report: Report, t: Translate) -> list[tuple[str, str]]:
    """The facts, one labelled row each, in reading order."""
    return [(t("ui.label.runtime"), _runtime(report["runtime"], t)),
            *_system(report, t),
            (t("ui.label.pytorch"), _pytorch(report["pytorch"], t)),
            *_surroundings(report["pytorch"], t),
            *_devices(report, t),
            (t("ui.label.execution"), _execution(report, t)),
            *library_rows(report.get("libraries"), t),
            *_distributed(report.get("distributed"), t),
            *_host(report["host"], t),
            *_error(report["error"], t),
            *((t("ui.label.warning"), t("ui.warning.during", category=w["category"],
                                        stage=w["stage"], message=w["message"]))
              for w in report["warnings"][:3])]


def _next_action(report: Report, t: Translate) -> str:
    from .distributed import next_action_key

    return t(next_action_key(report))


def _findings(report: Report, t: Translate, findings: Sequence[Finding] | None, *,
              english: bool) -> list[ReportFinding]:
    """The findings the report was built with, never derived again: in ``t``'s language from
    the rules' own (language-free) findings, else as the report holds them, in English (already
    in a notebook's words where it was made from one), which only English may show."""
    if findings is not None:
        return [finding.as_dict(t) for finding in findings]
    if not english:
        raise ValueError("a report is shown in another language from the findings it was built "
                         "with (build.Built.findings)")
    return list(report["findings"])


def _in_code(value: object) -> str:
    """A value the template shows as inline code: one line, and no backtick to end it early."""
    return one_line(str(value)).replace("`", "'")


def _headline(report: Report, t: Translate, colour: bool, exit_as: str | None) -> str:
    status = t(_STATUSES[report["status"]])
    if colour:
        status = (_GREEN if report["status"] == "passed" else _RED) + _BOLD + status + _RESET
    if exit_as is not None:
        return t("ui.headline.exit_as", status=status, code=report["code"],
                 exit_code=CODES[exit_as].exit_code, exit_as=exit_as, stage=report["stage"])
    return t("ui.headline", status=status, code=report["code"], exit_code=report["exit_code"],
             stage=report["stage"])


def _join(*parts: str | None) -> str:
    return " | ".join(part for part in parts if part)


def _runtime(runtime: Runtime, t: Translate) -> str:
    if runtime["python_version"] is None:
        return t("ui.runtime.unknown")
    return _join(f"Python {runtime['python_version']} ({runtime['python_implementation']})",
                 f"{runtime['os_family']} {runtime['machine'] or ''}".strip(),
                 t("ui.runtime.environment", kind=runtime["environment_kind"]))


def _pytorch(pytorch: Pytorch, t: Translate) -> str:
    if not pytorch["imported"]:
        return t("ui.pytorch.not_imported")
    version = pytorch["version"] or t("ui.pytorch.unknown_version")
    installed = pytorch["distribution_version"]
    if installed and installed not in version:
        version += f" ({t('ui.pytorch.distribution', version=installed)})"
    return _join(version,
                 f"CUDA build {pytorch['cuda_build']}" if pytorch["cuda_build"] else None,
                 f"HIP build {pytorch['hip_build']}" if pytorch["hip_build"] else None,
                 f"XPU build {pytorch['xpu_build']}" if pytorch.get("xpu_build") else None,
                 f"backend {pytorch['backend']}" if pytorch["backend"] else None,
                 f"git {str(pytorch['git_version'])[:10]}" if pytorch.get("git_version")
                 else None,
                 t("ui.pytorch.debug") if pytorch.get("debug_build") else None)


def _devices(report: Report, t: Translate) -> list[tuple[str, str]]:
    pytorch = report["pytorch"]
    label = t("ui.label.gpu")
    if pytorch["gpu_available"] is None:
        if report["request"]["device"] == "cpu" and pytorch["imported"]:
            return [(label, t("ui.gpu.not_queried"))]
        return []
    available = t("ui.gpu.available" if pytorch["gpu_available"] else "ui.gpu.not_available")
    rows = [(label, _join(available, t("ui.gpu.visible",
                                       count=pytorch["visible_device_count"])))]
    for device in pytorch["devices"]:
        memory = device.get("total_memory_bytes")
        rows.append((f"  {device_name(pytorch['backend'], device['index'])}", _join(
            device.get("name"),
            f"capability {device['capability']}" if device.get("capability") else None,
            device.get("gcn_arch"),
            f"{memory / 2**30:.1f} GiB" if isinstance(memory, int) else None,
            device.get("error"),
            _device_check(device.get("check"), t))))
    return rows + _peers(pytorch, t)


def _device_check(check: DeviceCheck | None, t: Translate) -> str | None:
    """One device's own verdict (--all-devices), at the end of its line."""
    if check is None:
        return None
    if check["code"] is None:
        return t("ui.device.not_checked")
    if check["error"] is None:
        duration = check["duration_ms"]
        return t("ui.device.passed", ms=f"{duration:.0f}" if duration is not None else "?")
    return t("ui.device.failed", code=check["code"], where=_where(check["error"]),
             what=_said(check["error"], t))


def _peers(pytorch: Pytorch, t: Translate) -> list[tuple[str, str]]:
    """The copies between devices (--all-devices), ``copies_lines``."""
    copies = copies_of(pytorch)
    lines = copies_lines(copies, t) if copies is not None else []
    return [(f"  {t('ui.label.peers')}" if index == 0 else "", line)
            for index, line in enumerate(lines)]


def copies_lines(copies: Copies, t: Translate) -> list[str]:
    """How many copies were verified and reached their target directly (or that nothing could
    say: never counted as "no"), then each one that failed, then the ones never tried because
    the worker was stopped first."""
    lines = [] if not copies.tried else [_join(
        t("ui.peers.verified", verified=copies.verified, total=copies.tried),
        _peer_access(copies, t))]
    lines += [t("ui.peers.failed", source=device_name(copies.backend, source),
                target=device_name(copies.backend, target), code=verdict)
              for source, target, verdict in copies.failed]
    if copies.untried:
        lines.append(t("ui.peers.not_tried", count=len(copies.untried),
                       copies=copies_named(copies.backend, list(copies.untried))))
    return lines


def _peer_access(copies: Copies, t: Translate) -> str:
    """How many copies reached their target directly, of those tried; the ones that could not
    say (no such question on the backend, a copy that never ended) as unknown."""
    if copies.unknown == copies.tried:
        return t("ui.peers.access_unknown")
    if copies.unknown:
        return t("ui.peers.access_partly", access=copies.access, total=copies.tried,
                 unknown=copies.unknown)
    return t("ui.peers.access", access=copies.access, total=copies.tried)


def _execution(report: Report, t: Translate) -> str:
    execution = report["execution"]
    if execution["device"] is None:
        return t("ui.execution.not_reached")

    def mark(ok: bool) -> str:
        return t("ui.execution.verified" if ok else "ui.execution.not_verified")

    loss = execution["loss"]
    duration = execution["duration_ms"]
    return _join(t("ui.execution.on", device=execution["device"]),
                 t("ui.execution.product", state=mark(execution["product_verified"])),
                 t("ui.execution.gradient", state=mark(execution["gradient_verified"])),
                 f"loss {loss:g}" if isinstance(loss, (int, float)) else None,
                 t("ui.execution.synchronized") if execution["synchronized"] else None,
                 f"{duration:.0f} ms" if duration is not None else None)


def _distributed(block: Distributed | None, t: Translate) -> list[tuple[str, str]]:
    """--distributed: the job, the collective, each rank that did not pass, the missing ranks,
    and the launcher stopping the job (its SIGTERM: not this rank's failure)."""
    if block is None:
        return []
    collective = block["collective"]
    observed = collective["observed"]
    duration = collective["duration_ms"]
    rows = [(t("ui.label.distributed"), _join(
        t("ui.distributed.job", launcher=block["launcher"], rank=block["rank"],
          world_size=block["world_size"]),
        block["backend"],
        # A sum that is not the expected one is never shown as a passed collective.
        t("ui.distributed.collective_wrong_sum", observed=observed,
          expected=collective["expected"])
        if collective["status"] == "passed" and observed != collective["expected"] else
        t("ui.distributed.collective", status=collective["status"],
          observed="-" if observed is None else observed, expected=collective["expected"]),
        f"{duration:.0f} ms" if duration is not None else None))]
    for entry in block["ranks"]:
        if not CODES[entry["code"]].passed:
            rows.append(("  " + t("ui.distributed.rank", rank=entry["rank"]), t(
                "ui.distributed.rank_entry", code=entry["code"], stage=entry["stage"],
                node=entry["node"], local_rank=entry["local_rank"])))
    if block["missing_ranks"]:
        rows.append(("  " + t("ui.label.distributed"), t(
            "ui.distributed.missing", ranks=", ".join(map(str, block["missing_ranks"])))))
    if block.get("launcher_stopped"):  # absent from reports of earlier versions
        # Why, where it is known (absent from earlier versions: only "SIGTERM").
        key = {"time_limit": "ui.distributed.launcher_stop.time_limit",
               "cancelled": "ui.distributed.launcher_stop.cancelled"}.get(
                   str(block.get("launcher_stop")), "ui.distributed.launcher_stopped")
        rows.append(("  " + t("ui.label.distributed"), t(key)))
    return rows


def _host(host: Host | None, t: Translate) -> list[tuple[str, str]]:
    if host is None:
        return []
    label = t("ui.label.host")
    if host["status"] != "ok":
        return [(label, t(_HOST_STATUSES[host["status"]], tool=host["tool"]))]
    slices = host.get("mig_devices")
    rows = [(label, _join(host["tool"],
                          t("ui.host.driver", version=host["driver_version"]),
                          t("ui.host.mig", count=slices) if slices else None))]
    for gpu in host["gpus"]:
        memory = gpu.get("memory_total_mib")
        rows.append(("  gpu", _join(gpu.get("name") or "-",
                                    f"{memory} MiB" if memory is not None else None)))
    return rows


def _surroundings(pytorch: Pytorch, t: Translate) -> list[tuple[str, str]]:
    """The CUDA libraries' wheels next to torch and the packages torch works with, one line each
    (only what is installed): ``cudnn 9.24.0.43, cublas 13.1.1.3...``."""
    libraries = []
    for entry in pytorch.get("cuda_libraries") or []:
        name = re.sub(r"^nvidia[-_]|[-_]cu\d+$", "", str(entry.get("name")))
        other = f" ({t('ui.libraries.other')}: {entry.get('loaded_file')})" \
            if entry.get("loaded") == "other" else ""
        libraries.append(f"{name} {entry.get('version')}{other}")
    packages = [f"{name} {pytorch.get(name + '_version')}" for name in
                ("numpy", "triton", "torchvision", "torchaudio") if pytorch.get(name + "_version")]
    return [(label, ", ".join(items)) for label, items in
            ((t("ui.label.cuda_libraries"), libraries), (t("ui.label.packages"), packages))
            if items]


def _cpus(system: System, t: Translate) -> str:
    """The machine's logical CPUs and, when less, what this process may use (its affinity, its
    cgroup's CPU quota): "2 logical CPUs" said nothing of a process allowed 5% of one."""
    cpus = system.get("logical_cpus")
    usable = cpu_allowance(system)
    if usable is None or not isinstance(cpus, int) or usable >= cpus:
        return t("ui.system.cpus", count=cpus)
    return t("ui.system.cpus_usable", count=cpus, usable=f"{usable:g}")


def cpu_allowance(system: Mapping[str, Any]) -> float | None:
    """The CPUs this process may really use: the smaller of its affinity and its CPU quota."""
    known = [value for value in (system.get("usable_cpus"), system.get("cpu_quota"))
             if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0]
    return float(min(known)) if known else None


def _system(report: Report, t: Translate) -> list[tuple[str, str]]:
    """The machine (operating system, kernel, C library, processor, memory), the NVIDIA kernel
    module's driver, the CUDA toolkit extensions build with, the configuration variables set."""
    system = report.get("system")
    if not system:
        return []
    memory = system.get("memory_total_bytes")
    cpus = system.get("logical_cpus")
    rows = [(t("ui.label.system"), _join(
        " ".join(str(part) for part in (system.get("os_name"), system.get("os_version")) if part),
        t("ui.system.kernel", kernel=system["kernel"]) if system.get("kernel") else None,
        system.get("libc"),
        ", ".join(str(part) for part in (system.get("cpu_model"),
                                         _cpus(system, t) if cpus else None)
                  if part),
        f"{memory / 2**30:.1f} GiB" if isinstance(memory, int) else None))]
    if system.get("nvidia_driver_version"):
        rows.append((t("ui.label.driver"),
                     t("ui.system.driver", version=system["nvidia_driver_version"])))
    toolkit = system.get("cuda_toolkit") or {}
    status = toolkit.get("status")
    if status == "ok":
        via: str | None = toolkit.get("found_via")
        if via == "default_location":
            via = t("ui.system.toolkit.default_location")
        rows.append((t("ui.label.toolkit"), t("ui.system.toolkit", version=toolkit.get("version"),
                                              via=via)))
    elif status in ("not_found", "timeout", "failed") and report["pytorch"].get("cuda_build"):
        rows.append((t("ui.label.toolkit"), t("ui.system.toolkit_not_found" if status ==
                                              "not_found" else "ui.system.toolkit_failed")))
    configuration = system.get("configuration") or {}
    if configuration:
        rows.append((t("ui.label.configuration"),
                     ", ".join(f"{name}={value}" for name, value in configuration.items())))
    return rows


def _error(error: ReportError | None, t: Translate) -> list[tuple[str, str]]:
    if error is None:
        return []
    return [(t("ui.label.error"), t("ui.error.at", where=_where(error), what=_said(error, t)))]


def _where(error: ReportError) -> str:
    return str(error["stage"]) + (f" ({error['step']})" if error.get("step") else "")


def _said(error: ReportError, t: Translate) -> str:
    """An error's message in the user's language when it is one of the tool's own sentences,
    after its exception's type."""
    message = error["message"]
    if error.get("message_key"):
        message = compose(error["message_key"], error.get("message_values") or {}, t) or message
    return f"{error['type']}: {message}" if error.get("type") else str(message)


def _paths(paths: Mapping[str, str | None] | None, t: Translate) -> list[tuple[str, str]]:
    if not paths:
        return []
    label = t("ui.label.paths")
    rows = [(label, t("ui.paths.note"))]
    rows += [("", t(_PATHS[name], path=value)) for name, value in paths.items() if value]
    return rows
