"""What the rules of every layer share: the finding, the rule and how a layer registers it, and the
readings of the report that rules of more than one layer make.

Each rule is a pure function of the (already redacted) report: it returns a finding or nothing,
and never changes the result code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from ...i18n import ENGLISH, Translate
from .. import shapes
from ..codes import VERDICTS, Verdict
from ..shapes import EMPTY, Device, HostGpu, Node, ReportFinding

Report = shapes.Report  # what every rule reads: the report as the schema has it
Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    """A finding's facts; its sentences come from the message catalog (``finding.<id>.*``)."""

    id: str
    severity: Severity
    evidence: tuple[str, ...]
    values: Mapping[str, Any] = field(default_factory=dict)  # the sentences' placeholders
    variant: str | None = None  # for a finding whose advice depends on the case

    def as_dict(self, translate: Translate = ENGLISH) -> ReportFinding:
        summary, next_action = sentences(self.id, self.variant)
        return {"id": self.id, "severity": self.severity,
                "summary": translate(summary, **self.values),
                "next_action": translate(next_action, **self.values),
                "evidence": list(self.evidence)}


def sentences(finding_id: str, variant: str | None = None) -> tuple[str, str]:
    """The catalog keys of a finding's summary and next action: one pair per id, and per variant
    for a finding whose advice depends on the case (each rule declares its ids and variants)."""
    stem = f"finding.{finding_id}" + (f".{variant}" if variant else "")
    return f"{stem}.summary", f"{stem}.next_action"


Rule = Callable[[Report], "Finding | None"]
RuleT = TypeVar("RuleT", bound=Rule)
SEVERITY_ORDER: dict[Severity, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Registration:
    """A rule, where its findings come among those of the same severity (``rank``: the lower,
    the earlier), the ids of the findings it can give and their variants (None: the plain one)."""

    rank: int
    rule: Rule
    ids: tuple[str, ...]
    variants: tuple[str | None, ...] = (None,)


class Layer:
    """The rules of one layer, each registered by its module with ``@layer.rule(rank, "ID")``:
    the ids of the findings it can give, and its rank among every layer's rules (a new rule
    takes the highest rank plus 10, unless its findings should come before others'). A rule
    whose finding has variants names them all (``variants=(None, "macos")``: None is the plain
    finding); each has its sentences in the catalog (``sentences``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.registered: list[Registration] = []

    def rule(self, rank: int, *ids: str,
             variants: tuple[str | None, ...] = (None,)) -> Callable[[RuleT], RuleT]:
        def register(rule: RuleT) -> RuleT:
            self.registered.append(Registration(rank, rule, ids, variants))
            return rule
        return register


def in_order(layers: Iterable[Layer]) -> tuple[Rule, ...]:
    """Every layer's rules by rank: the order their findings take within a severity. Two rules
    of one rank would make that order depend on the layers' order: refused."""
    registered = sorted((entry for layer in layers for entry in layer.registered),
                        key=lambda entry: entry.rank)
    ranks = [entry.rank for entry in registered]
    if len(set(ranks)) != len(ranks):
        shared = sorted({rank for rank in ranks if ranks.count(rank) > 1})
        raise ValueError(f"two rules share a rank: {shared}")
    return tuple(entry.rule for entry in registered)


# -- what the rules read --------------------------------------------------------------------------

def messages(report: Report, stages: Iterable[str] | None = None) -> list[str]:
    """The backend's own initialisation message, the error and the warnings, in that order: the
    first text that matches is the one a finding quotes."""
    wanted = set(stages) if stages is not None else None
    texts = []
    init_error = report["pytorch"].get("init_error")
    if init_error and (wanted is None or "device" in wanted):
        texts.append(init_error)
    error = report.get("error")
    if error and (wanted is None or error.get("stage") in wanted):
        message = error.get("message") or ""
        texts.append(f"{error['type']}: {message}" if error.get("type") else message)
    texts += [str(w.get("message") or "") for w in report.get("warnings", [])
              if wanted is None or w.get("stage") in wanted]
    return texts


def pattern(text: str) -> re.Pattern[str]:
    """``text`` compiled as ``search`` reads it (case ignored). A rule's fixed pattern is compiled
    once, at import: the front imports the rules while the worker imports torch
    (``api._READS_THE_RESULT``), not once the worker has ended."""
    return re.compile(text, re.IGNORECASE)


def search(said: re.Pattern[str] | str, texts: Iterable[str]) -> tuple[str, re.Match[str]] | None:
    """The first of ``texts`` that ``said`` matches, and the match; a ``str`` (a pattern built
    from the report) is compiled as ``pattern`` compiles one."""
    compiled = pattern(said) if isinstance(said, str) else said
    for text in texts:
        match = compiled.search(text)
        if match:
            return text, match
    return None


def gpu_mode(report: Report) -> bool:
    return bool(report["request"]["device"] == "gpu")


def gpu_failed(report: Report) -> bool:
    return gpu_mode(report) and report["code"] in (
        Verdict.GPU_UNAVAILABLE, Verdict.DEVICE_INDEX_INVALID, Verdict.RUNTIME_ERROR,
        Verdict.WORKER_FAILED, Verdict.TIMEOUT)


def check_passed(report: Report) -> bool:
    """The check passed: the report's code is a passing verdict of the codes table."""
    code = VERDICTS.get(str(report["code"]))
    return code is not None and code.passed


def quote(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def version_tuple(text: object) -> tuple[int, ...]:
    """The first three numbers of a version ("12.8" -> (12, 8)); () for anything else."""
    return tuple(int(part) for part in re.findall(r"\d{1,9}", text)[:3]) \
        if isinstance(text, str) else ()


def other_vendor(report: Report) -> Literal["amd", "nvidia"] | None:
    """The vendor of the only GPU hardware the Linux device nodes show, when the build is for the
    other one: "amd" for a CUDA build where /dev/kfd exists and no NVIDIA node does, "nvidia" for
    a ROCm build where NVIDIA's nodes exist and /dev/kfd does not. None when it cannot be told:
    not Linux, no nodes read, both vendors' nodes, or none."""
    nodes = report["runtime"].get("device_nodes") or EMPTY
    if report["runtime"].get("os_family") != "linux" or not nodes:
        return None
    amd = nodes.get("kfd") in ("ok", "no_access")
    # /dev/dxg is WSL 2's paravirtualised GPU, whatever its vendor: it rules out "AMD only" for a
    # CUDA build, and proves nothing about NVIDIA for a ROCm one.
    nvidia = any(nodes.get(name) for name in ("nvidiactl", "proc_driver_nvidia"))
    backend = report["pytorch"].get("backend")
    if backend == "cuda" and amd and not nvidia and not nodes.get("dxg"):
        return "amd"
    if backend == "rocm" and nvidia and not amd:
        return "nvidia"
    return None


def other_build_loaded(report: Report) -> bool:
    """torch was imported from a build that is not the environment's installed distribution (a
    copy on PYTHONPATH, say) and that distribution is another version or variant: what the check
    judged is not what pip shows, and the advice for the loaded build would reinstall the hidden
    one."""
    pytorch = report["pytorch"]
    version, installed = pytorch.get("version"), pytorch.get("distribution_version")
    return bool(pytorch.get("imported") and pytorch.get("module_kind") == "unverified"
                and version and installed and version != installed)


# The index of PyTorch's own builds, by the local part of a version (2.13.0+cpu, 2.8.0+cu128).
WHEEL_INDEX = "https://download.pytorch.org/whl/"
_VARIANT = re.compile(r"(cpu|cu\d{2,3}|rocm\d+(?:\.\d+)*|xpu)")


def reinstall_command(version: object, *, deps: bool = True) -> str:
    """The forced reinstall of the very build installed: its version pinned, and where the
    version's local part names a variant (+cpu, +cu128, +rocm6.4, +xpu), that variant's index,
    so that following it never swaps a CPU build for a CUDA one nor upgrades torch. Unpinned
    when the version is not known."""
    text = str(version) if isinstance(version, str) else ""
    if not re.fullmatch(r"\d+(?:\.\d+)*(?:[a-z]+\d*)?(?:\.\w+)*(?:\+[\w.]+)?", text):
        return "python -m pip install --force-reinstall " + ("" if deps else "--no-deps ") + \
            "torch"
    command = "python -m pip install --force-reinstall " + ("" if deps else "--no-deps ") + \
        f"torch=={text}"
    local = text.partition("+")[2]
    if _VARIANT.fullmatch(local):
        command += f" --index-url {WHEEL_INDEX}{local}"
    return command


def pinned_requirement(version: object) -> str:
    """``torch==2.13.0`` for a build of another variant at the installed version (its local part
    dropped: the index chosen says the variant), so that a new variant never upgrades torch;
    ``torch`` when the version is not a release's."""
    text = str(version) if isinstance(version, str) else ""
    release = text.partition("+")[0]
    return f"torch=={release}" if re.fullmatch(r"\d+\.\d+(?:\.\d+)?", release) else "torch"


def installed_version(report: Report) -> str | None:
    """The installed torch's version: its distribution's, else what the build says it is."""
    pytorch = report["pytorch"]
    version = pytorch.get("distribution_version") or pytorch.get("version")
    return str(version) if version else None


def working_folder_missing(report: Report) -> bool:
    """The check was started in a folder that no longer exists (a shell left in a removed
    folder): the loaders of torch and its libraries fail on it, whatever is installed."""
    return report["runtime"].get("working_folder_missing") is True


def node_block(report: Report) -> Node | Mapping[str, Any]:
    node = report.get("node")
    return node if isinstance(node, dict) else EMPTY


def host_gpus(report: Report) -> list[HostGpu]:
    """``nvidia-smi``'s GPUs, in its order (its index), with the health fields it gave."""
    host = report.get("host") or EMPTY
    if host.get("tool") != "nvidia-smi":
        return []
    gpus: list[HostGpu] = host.get("gpus") or []
    return [gpu for gpu in gpus if isinstance(gpu, dict)]


def cuda_or_unknown(report: Report) -> bool:
    return report["pytorch"].get("backend") in ("cuda", None)


def requested_device(report: Report) -> Device | Mapping[str, Any]:
    """The requested device's entry in ``pytorch.devices`` ({} when it has none)."""
    index = report["request"]["device_index"]
    return next((device for device in report["pytorch"].get("devices") or []
                 if device.get("index") == index), EMPTY)


def configuration_variables(report: Report) -> Mapping[str, str]:
    """The allow-listed configuration variables that are set (``system.configuration``)."""
    return ((report.get("system") or EMPTY).get("configuration")) or EMPTY


def mib(size: int) -> str:
    return f"{size / 2**20:.0f}"
