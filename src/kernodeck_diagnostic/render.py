"""Terminal text of a report: the verdict first, then the facts, the next action last."""

from __future__ import annotations

import os
from typing import IO, Any

_GREEN, _RED, _BOLD, _RESET = "\033[32m", "\033[31m", "\033[1m", "\033[0m"


def use_colour(stream: IO[str]) -> bool:
    """Colour only for a terminal, never when NO_COLOR is set (https://no-color.org)."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def text(report: dict[str, Any], colour: bool = False) -> str:
    lines = [_headline(report, colour), "  " + report["summary"], ""]
    rows = [
        ("runtime", _runtime(report["runtime"])),
        ("pytorch", _pytorch(report["pytorch"])),
        *_devices(report),
        ("execution", _execution(report)),
        *_host(report["host"]),
        *_error(report["error"]),
        *(("warning", f"{w['category']} during {w['stage']}: {w['message']}")
          for w in report["warnings"][:3]),
    ]
    width = max(len(label) for label, _ in rows)
    lines += [f"{label.ljust(width)}  {value}" for label, value in rows if value]
    lines += _findings(report["findings"])
    lines += ["", f"next: {report['next_action']}"]
    return "\n".join(lines) + "\n"


def _headline(report: dict[str, Any], colour: bool) -> str:
    status = report["status"].upper()
    if colour:
        status = (_GREEN if report["status"] == "passed" else _RED) + _BOLD + status + _RESET
    return f"{status} {report['code']} (exit {report['exit_code']}) at stage {report['stage']}"


def _join(*parts: str | None) -> str:
    return " | ".join(part for part in parts if part)


def _runtime(runtime: dict[str, Any]) -> str:
    if runtime["python_version"] is None:
        return "unknown (the worker did not start)"
    return _join(f"Python {runtime['python_version']} ({runtime['python_implementation']})",
                 f"{runtime['os_family']} {runtime['machine'] or ''}".strip(),
                 f"environment {runtime['environment_kind']}")


def _pytorch(pytorch: dict[str, Any]) -> str:
    if not pytorch["imported"]:
        return "not imported"
    version = pytorch["version"] or "unknown version"
    if pytorch["distribution_version"] and pytorch["distribution_version"] not in version:
        version += f" (installed distribution {pytorch['distribution_version']})"
    return _join(version,
                 f"CUDA build {pytorch['cuda_build']}" if pytorch["cuda_build"] else None,
                 f"HIP build {pytorch['hip_build']}" if pytorch["hip_build"] else None,
                 f"backend {pytorch['backend']}" if pytorch["backend"] else None)


def _devices(report: dict[str, Any]) -> list[tuple[str, str]]:
    pytorch = report["pytorch"]
    if pytorch["gpu_available"] is None:
        if report["request"]["device"] == "cpu" and pytorch["imported"]:
            return [("gpu", "not queried in CPU mode")]
        return []
    rows = [("gpu", _join("available" if pytorch["gpu_available"] else "not available",
                          f"{pytorch['visible_device_count']} visible"))]
    for device in pytorch["devices"]:
        memory = device.get("total_memory_bytes")
        rows.append((f"  cuda:{device['index']}", _join(
            device.get("name"),
            f"capability {device['capability']}" if device.get("capability") else None,
            f"{memory / 2**30:.1f} GiB" if isinstance(memory, int) else None,
            device.get("error"))))
    return rows


def _execution(report: dict[str, Any]) -> str:
    execution = report["execution"]
    if execution["device"] is None:
        return "not reached"

    def mark(ok: bool) -> str:
        return "ok" if ok else "NOT verified"

    loss = execution["loss"]
    return _join(f"on {execution['device']}",
                 f"product {mark(execution['product_verified'])}",
                 f"gradient {mark(execution['gradient_verified'])}",
                 f"loss {loss:g}" if isinstance(loss, (int, float)) else None,
                 "synchronized" if execution["synchronized"] else None,
                 f"{execution['duration_ms']:.0f} ms" if execution["duration_ms"] is not None
                 else None)


def _host(host: dict[str, Any] | None) -> list[tuple[str, str]]:
    if host is None:
        return []
    if host["status"] != "ok":
        words = {"not_found": "not found", "timeout": "timed out (3 s)", "failed": "failed"}
        return [("host", f"{host['tool']} {words.get(host['status'], host['status'])}")]
    slices = host.get("mig_devices")
    rows = [("host", _join(host["tool"], f"driver {host['driver_version']}",
                           f"{slices} MIG device(s)" if slices else None))]
    for gpu in host["gpus"]:
        memory = gpu.get("memory_total_mib")
        rows.append(("  gpu", _join(gpu.get("name") or "unnamed",
                                    f"{memory} MiB" if memory is not None else None)))
    return rows


def _findings(findings: list[dict[str, Any]]) -> list[str]:
    """Each finding: its severity, id and summary, then what to do, indented under it."""
    if not findings:
        return []
    lines = ["", "findings"]
    for finding in findings:
        lines.append(f"  {finding['severity']:<7}  {finding['id']}: {finding['summary']}")
        lines.append(f"  {'':<7}  do: {finding['next_action']}")
    return lines


def _error(error: dict[str, Any] | None) -> list[tuple[str, str]]:
    if error is None:
        return []
    where = error["stage"] + (f" ({error['step']})" if error.get("step") else "")
    what = f"{error['type']}: {error['message']}" if error.get("type") else error["message"]
    return [("error", f"at {where}: {what}")]
