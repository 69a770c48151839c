"""Findings: the cause behind the failing layer, from facts the check already collected.

Each rule is a pure function of the (already redacted) report: it returns a finding or nothing,
and never changes the result code. A finding says what is wrong, the exact next step, and the
evidence it stands on, so a user can check the reasoning.

The rules live by the layer their cause belongs to, one module each, in the method's order:
``interpreter`` (interpreter and import), ``build``, ``device`` (driver and device), ``node``
(node and host), ``libraries``, ``distributed``, ``application``; ``core`` holds the finding, the
registration and the readings of the report several layers share. Each module registers its
rules (``@layer.rule(rank, "ID")``); the rank, not the module, decides where a rule's findings
come among those of the same severity.
"""

from __future__ import annotations

from ...i18n import ENGLISH, Translate
from ..shapes import ReportFinding
from . import application, build, device, distributed, interpreter, libraries, node
from .core import SEVERITY_ORDER, Finding, Layer, Report, Rule, Severity, in_order
from .interpreter import numpy_missing  # a rule the snapshot tests replace by name
from .node import SHM_MINIMUM_BYTES

__all__ = ["LAYERS", "RULES", "SHM_MINIMUM_BYTES", "Finding", "Report", "Rule", "Severity",
           "derive", "find", "numpy_missing"]

LAYERS: tuple[Layer, ...] = (interpreter.layer, build.layer, device.layer, node.layer,
                             libraries.layer, distributed.layer, application.layer)
RULES: tuple[Rule, ...] = in_order(LAYERS)


def find(report: Report) -> tuple[Finding, ...]:
    """Every finding the rules see in ``report``, the most severe first, as the rules give them:
    ids, variants and values, in no language yet.

    Called once per report, when it is assembled (``report.build``): the report's JSON keeps
    them in English, and the terminal and markdown show the same findings in their language
    (``Finding.as_dict``), never deriving them again.
    """
    found = [finding for rule in RULES if (finding := rule(report)) is not None]
    found.sort(key=lambda finding: SEVERITY_ORDER[finding.severity])
    return tuple(found)


def derive(report: Report, translate: Translate = ENGLISH) -> list[ReportFinding]:
    """The findings of ``report`` as the report's JSON holds them, in ``translate``'s language."""
    return [finding.as_dict(translate) for finding in find(report)]
