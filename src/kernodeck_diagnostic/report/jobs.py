"""The jobs among the reports ``summarize`` reads: the reports of one ``--distributed`` job
grouped by the job's identity (``distributed.job``, facts/launcher.job_digest), each rank's
verdict, the ranks that never reported, and the job's verdict.

Each rank's verdict is its own report's, when its file is among those read (``--output`` with
``{rank}``: every rank writes one); else what rank 0's report says of it (the accounts rank 0
gathered through the job's store: with ``--output`` without ``{rank}``, rank 0's report is the
only file); else the rank never reported. Two runs that share an identity (nothing told them
apart) are told apart by time: a rank reported twice starts another run. The job's verdict is
the worst code of its ranks (``SEVERITY``); its status is ``failed`` when a rank did not pass,
``incomplete`` when none failed but a rank never reported or the ranks disagree on the world
size (no evidence, no pass), ``passed`` when every rank passed. Reports of earlier versions,
without a job's identity, are not grouped: they stay rows of the files' table.

Of each report only a ``Member`` is kept while the files are read (a few numbers and names), and
rank 0's accounts of the others: memory grows by a rank per report, never by a report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple

from ..facts.launcher import JOB_DIGEST_LENGTH, MAX_WORLD_SIZE
from .codes import VERDICTS

_DIGEST = re.compile(f"[0-9a-f]{{{JOB_DIGEST_LENGTH}}}")
_CREATED = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")

# How a rank's verdict is known: its own report, rank 0's account of it, or not at all.
Source = Literal["own", "rank_0"]
Status = Literal["passed", "failed", "incomplete", "partial"]
_STOP = {name: name for name in ("time_limit", "cancelled", "sigterm")}


class Member(NamedTuple):
    """What is kept of one rank's report (picklable: ``summarize`` reads in forked parts)."""

    job: str
    launcher: str
    rank: int
    world_size: int
    code: str
    stage: str
    node: int | None
    name: str  # the file, as summarize shows it
    stopped: bool  # the launcher sent it SIGTERM (``distributed.launcher_stopped``)
    # Rank 0's report only: (rank, code, stage, node) of each rank it gathered.
    seen: tuple[tuple[int, str, str, int | None], ...]
    created_at: str  # when the report was written (ISO 8601, UTC), "" when it does not say
    # Why the launcher stopped it (``distributed.launcher_stop``: time_limit, cancelled,
    # sigterm), "" when it did not or does not say.
    stop: str = ""


def member_of(report: Mapping[str, Any], name: str) -> Member | None:
    """A rank's report as a member of its job; None for a report without a job's identity (no
    ``--distributed``, or a version before ``distributed.job``). Reports come from elsewhere:
    what is kept is checked as it is read (a digest, ranks within the launcher's bounds, codes a
    report can carry), an odd entry left out."""
    block = report.get("distributed")
    if not isinstance(block, dict) or not isinstance(block.get("job"), str) \
            or not _DIGEST.fullmatch(block["job"]):
        return None
    rank, world = _number(block, "rank"), _number(block, "world_size")
    if rank is None or world is None or not rank < world <= MAX_WORLD_SIZE:
        return None
    entries = [entry for entry in block.get("ranks") or () if isinstance(entry, dict)
               and _number(entry, "rank") is not None and entry.get("code") in VERDICTS]
    seen = tuple((entry["rank"], entry["code"], _text(entry.get("stage")),
                  _number(entry, "node")) for entry in entries) if rank == 0 else ()
    own = next((entry for entry in entries if entry["rank"] == rank), {})
    launcher = str(block["launcher"]) if block.get("launcher") in ("torchrun", "slurm") else "-"
    created = report.get("created_at")
    stop = block.get("launcher_stop")
    return Member(block["job"], launcher, rank, world, str(report["code"]),
                  _text(report.get("stage")), _number(own, "node"), name,
                  block.get("launcher_stopped") is True, seen,
                  created if isinstance(created, str) and _CREATED.fullmatch(created) else "",
                  (_STOP.get(stop, "sigterm") if isinstance(stop, str) else "sigterm")
                  if block.get("launcher_stopped") is True else "")


@dataclass(frozen=True)
class RankVerdict:
    """One rank of a job: its verdict and where it is known from; all None: never reported."""

    rank: int
    code: str | None
    stage: str | None
    node: int | None
    file: str | None  # its own report, as shown
    source: Source | None
    stopped: bool = False
    stop: str = ""  # why, when it says (``Member.stop``)


@dataclass(frozen=True)
class Job:
    """One job: its verdict first, then each rank's."""

    job: str
    launcher: str
    world_size: int
    world_sizes: tuple[int, ...] | None  # the sizes its reports say, when they disagree
    status: Status
    code: str
    ranks: tuple[RankVerdict, ...]
    run: int = 1  # which run of the job's identity, in time, of ``runs``
    runs: int = 1

    @property
    def never_reported(self) -> list[int]:
        return [entry.rank for entry in self.ranks if entry.source is None]


def jobs(members: Iterable[Member], severity: Mapping[str, int]) -> list[Job]:
    """The jobs of these members, in the order their first report was read, each identity's
    runs in time (``_runs``); ``severity`` ranks the codes, worst first (``summary.RANK``)."""
    grouped: dict[str, list[Member]] = {}
    for member in members:
        grouped.setdefault(member.job, []).append(member)
    found = []
    for group in grouped.values():
        runs = _runs(group)
        found += [replace(_job(run, severity), run=number, runs=len(runs))
                  for number, run in enumerate(runs, start=1)]
    return found


def as_part(found: Sequence[Job]) -> list[Job]:
    """The jobs of reports that are a part of a fleet (``summarize --part``): a job whose
    missing ranks may be in another part is ``partial`` (inconclusive: no evidence of a pass,
    no evidence of a failure either), never ``incomplete``; one whose ranks disagree on the
    world size stays ``incomplete``, a failed one ``failed``."""
    return [replace(job, status="partial") if job.status == "incomplete"
            and job.world_sizes is None and job.never_reported else job for job in found]


def _runs(group: Sequence[Member]) -> list[list[Member]]:
    """The runs among the reports of one identity, in the order they were written. Two runs of
    one command share it when nothing tells them apart (torchrun with neither ``--standalone``
    nor ``--rdzv-id``, the same store's port): a rank reported twice starts another run, so
    that one run's pass never stands for another's rank."""
    runs: list[list[Member]] = [[]]
    for member in sorted(group, key=lambda member: member.created_at):  # stable: files' order
        if any(other.rank == member.rank for other in runs[-1]):
            runs.append([])
        runs[-1].append(member)
    return runs


def _job(group: Sequence[Member], severity: Mapping[str, int]) -> Job:
    sizes = sorted({member.world_size for member in group})
    world = sizes[-1]
    own = {member.rank: member for member in group}  # one report per rank (``_runs``)
    rank_0 = {entry[0]: entry for entry in own[0].seen} if 0 in own else {}
    ranks = tuple(_rank(number, own.get(number), rank_0.get(number)) for number in range(world))
    codes = [entry.code for entry in ranks if entry.code is not None]
    code = min(codes, key=lambda name: (severity.get(name, -1), name))
    failed = any(name not in VERDICTS or not VERDICTS[name].passed for name in codes)
    whole = len(codes) == world and len(sizes) == 1
    status: Status = "failed" if failed else "passed" if whole else "incomplete"
    return Job(group[0].job, group[0].launcher, world,
               tuple(sizes) if len(sizes) > 1 else None, status, code, ranks)


def _rank(number: int, member: Member | None,
          seen: tuple[int, str, str, int | None] | None) -> RankVerdict:
    if member is not None:
        return RankVerdict(number, member.code, member.stage, member.node, member.name, "own",
                           member.stopped, member.stop)
    if seen is not None:
        return RankVerdict(number, seen[1], seen[2], seen[3], None, "rank_0")
    return RankVerdict(number, None, None, None, None, None)


def _number(entry: Mapping[str, Any], key: str) -> int | None:
    value = entry.get(key)
    return value if type(value) is int and value >= 0 else None


def _text(value: Any) -> str:
    """A stage as a report names it, else ``-`` (the summary shows it through ``cell``)."""
    return value if isinstance(value, str) and value.isidentifier() else "-"
