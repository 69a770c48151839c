"""The docs name only what the code has, and the code has nothing the docs leave out.

Three kinds of names, each taken from the code itself, never from a list kept here:

- flags: the options of the real argparse parsers of the check, ``compare`` and ``summarize``
  (the commands ``cli`` dispatches to), and of the repository's other programs the docs show
  (the worker, ``benchmarks/run.py``, ``scripts/build_pyz.py``);
- result codes: ``report.codes.CODES``, with their exit codes (the check's, and each other
  command's own); the ``--help`` tables too;
- finding ids: those the English message catalog can say (``finding.<ID>.summary``): a rule's
  finding is rendered from there, so a finding without those keys cannot be shown.

A doc is README.md or docs/*.md. Each test fails on a name the docs give that the code lacks,
and on a name of the code the docs never give.
"""

from __future__ import annotations

import argparse
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT
from kernodeck_diagnostic import cli
from kernodeck_diagnostic.facts.system import CONFIGURATION_VARIABLES
from kernodeck_diagnostic.i18n import ENGLISH
from kernodeck_diagnostic.i18n.en import MESSAGES
from kernodeck_diagnostic.report.codes import CODES
from kernodeck_diagnostic.trial.folder import (
    AXIS_NAME_VARIABLE,
    AXIS_VALUE_VARIABLE,
    RUN_DIR_VARIABLE,
)

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# The shape of a code or a finding id. Other names of that shape the docs give (environment
# variables, constants, symbols) are listed below, so that a stale or misspelt id is caught.
ID = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
# Names the code itself gives: the environment variables the repository's code reads
# (os.environ.get("NAME"), getenv...), and the constants the package defines (NAME = ...).
READS_VARIABLE = re.compile(
    r"(?:environ(?:\.get)?\(|getenv\(|environ\[)\s*[\"']([A-Z][A-Z0-9_]+)[\"']")
DEFINES_CONSTANT = re.compile(r"^([A-Z][A-Z0-9_]+)\s*(?::[^=\n]+)?=", re.MULTILINE)
NOT_IDS = {
    # environment variables the tool redacts or tells about (those it reads are found below)
    "AWS_SECRET_ACCESS_KEY", "CONDA_PREFIX", "CUDA_VERSION",
    "DATABASE_HOST", "DB_ADDRESS", "DYLD_LIBRARY_PATH", "GITHUB_TOKEN",
    "HIP_VISIBLE_DEVICES", "LC_ALL", "LC_MESSAGES", "LD_LIBRARY_PATH", "LD_PRELOAD",
    "MY_SETTING", "NCCL_VERSION", "NO_COLOR", "PIP_DISABLE_PIP_VERSION_CHECK", "PYTHON_VERSION",
    "PYTORCH_VERSION", "ROCR_VISIBLE_DEVICES", "SUDO_USER", "TORCH_LOGS", "WANDB_API_KEY",
    "TRITON_CACHE_DIR",  # the compiler cache --kernels moves unless set (worker/kernels.py)
    "TORCH_DEVICE_BACKEND_AUTOLOAD",  # torch's, named by TORCH_BACKEND_PLUGIN_FAILED's advice
    # a variable the test suite sets for the processes it starts
    "KD_RUN_TAG",
    # threading and dispatch variables a test sets to values their libraries refuse
    "ATEN_CPU_CAPABILITY", "KMP_AFFINITY", "MKL_THREADING_LAYER", "OMP_PROC_BIND",
    # variables the node block names (facts/node.py: names only), their values, their advice
    "COMPUTE_PROFILE", "CUDA_AUTO_BOOST", "CUDA_COREDUMP_FILE", "CUDA_DEVICE_WAITS_ON_EXCEPTION",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_INJECTION32_PATH", "CUDA_INJECTION64_PATH",
    "CUDA_PROFILE", "DCGM_FR_BAD_CUDA_ENV", "FASTEST_FIRST", "GPU_DEVICE_ORDINAL",
    "NSIGHT_CUDA_DEBUGGER", "NVIDIA_DRIVER_CAPABILITIES", "PCI_BUS_ID", "TRITON_LIBCUDA_PATH",
    # the launchers' variables --distributed reads by name (facts/launcher.py), one Slurm sets
    # for batch scripts, and scripts/gpu-smoke.sh's time limits
    "GROUP_RANK", "LOCAL_RANK", "MASTER_PORT", "SLURM_JOB_NODELIST", "SLURM_LOCALID",
    "SLURM_NODEID", "SLURM_NTASKS", "SLURM_STEP_NODELIST", "SLURM_SUBMIT_DIR",
    "BUDGET_S", "TIMEOUT_S", "WORLD_SIZE",
    # the interface variables --distributed checks by name (facts/network.py), never their value
    "GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME",
    # what facts/system.py reads of the system: a confstr name, an os-release key
    "CS_GNU_LIBC_VERSION", "VERSION_ID",
    # constants of the system, a symbol version, a way of writing names
    "PATH_MAX", "PR_SET_CHILD_SUBREAPER", "RLIMIT_AS", "RLIMIT_DATA", "GLIBCXX_3",
    "UPPER_SNAKE_CASE",
}
# A row of the README's code tables: | `NAME` | 130 / 143 / 129 | ...
# A code's row: the check's tables start with it, the other commands' with the command's name.
CODE_ROW = re.compile(r"^\|(?: `[a-z-]+` \|)? `([A-Z][A-Z0-9_]+)` \| ([0-9][0-9 /]*) \|",
                      re.MULTILINE)
FINDING_ROW = re.compile(r"^\| `([A-Z_0-9]+)` \|", re.MULTILINE)  # docs/findings.md's table
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
# A code span: a run of backticks, then the text up to a run of as many (``a `quoted' b``).
SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
HELP_ROW = re.compile(r"^  ([A-Z][A-Z0-9_]+) +([0-9]+(?:/[0-9]+)*) ", re.MULTILINE)


# -- what the code has ---------------------------------------------------------------------------

def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings
            if option.startswith("--")}


def _command_parsers() -> Iterator[argparse.ArgumentParser]:
    """The parser of every command the entry point dispatches to: the check and the others."""
    for module_name in (cli.CHECK, *cli.SUBCOMMANDS.values()):
        module = importlib.import_module(f"kernodeck_diagnostic.{module_name}")
        builders = [getattr(module, name) for name in ("parser", "_parser")
                    if callable(getattr(module, name, None))]
        assert builders, f"no parser builder in kernodeck_diagnostic.{module_name}"
        yield builders[0](ENGLISH)


def _declared_flags(path: Path) -> set[str]:
    """The flags a program of the repository declares (its source read, not run: the worker and
    the benchmark build their parsers inside ``main``), with argparse's own ``--help``."""
    source = path.read_text(encoding="utf-8")
    return {"--help", *re.findall(r"add_argument\(\s*\"(--[a-z0-9-]+)\"", source)}


TOOL_FLAGS = set().union(*(_options(parser) for parser in _command_parsers()))
OTHER_PROGRAMS = {
    "worker": _declared_flags(ROOT / "src" / "kernodeck_diagnostic" / "worker" / "stages.py"),
    "benchmarks/run.py": _declared_flags(ROOT / "benchmarks" / "run.py"),
    "scripts/build_pyz.py": _declared_flags(ROOT / "scripts" / "build_pyz.py"),
    "scripts/mutants": _declared_flags(ROOT / "scripts" / "mutants.py"),
}
FINDING_IDS = {key.split(".")[1] for key in MESSAGES
               if key.startswith("finding.") and key.endswith(".summary")}
CODE_NAMES = {name for folder in ("src", "tests", "scripts", "benchmarks")
              for path in (ROOT / folder).rglob("*.py")
              for name in READS_VARIABLE.findall(path.read_text(encoding="utf-8"))} | {
    name for path in (ROOT / "src").rglob("*.py")
    for name in DEFINES_CONSTANT.findall(path.read_text(encoding="utf-8"))} | set(
    CONFIGURATION_VARIABLES)  # the variables the system block reports by name (an allow-list)


# -- what the docs say ---------------------------------------------------------------------------

def _units(text: str) -> Iterator[str]:
    """The text outside fenced blocks, in the pieces a code span cannot cross: each table row,
    each paragraph."""
    for paragraph in re.split(r"\n\s*\n", text):
        rows = [line for line in paragraph.splitlines() if line.startswith("|")]
        yield from rows
        yield "\n".join(line for line in paragraph.splitlines() if not line.startswith("|"))


def _command_segments(text: str) -> Iterator[str]:
    """Every piece of text that may hold a flag: each command of a fenced block's lines and of
    each inline code span, then each flag of the prose around them."""
    codes = [line.split(" #", 1)[0] for block in FENCE.findall(text)
             for line in block.splitlines()]
    prose = []
    for unit in _units(FENCE.sub("\n\n", text)):
        codes += [span.replace("\n", " ") for _, span in SPAN.findall(unit)]
        prose.append(SPAN.sub(" ", unit))
    for code in codes:
        # A command after `--` is another program's (ramp's, resume-check's): its own segment.
        yield from re.split(r"\s*(?:&&|\|\||[|;]|\s--\s)\s*", code)
    for piece in prose:
        yield from FLAG.findall(piece)


def _program(segment: str) -> str:
    """Whose flags a command's are: ``tool``, a program of the repository, ``lone`` for a flag
    written by itself (`--output FILE`), or the name of another program (pip, docker...)."""
    words = segment.split()
    while words and (words[0] in ("sudo", "env", "exec")
                     or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
        words.pop(0)
    if not words or words[0].startswith("--"):
        return "lone"
    first = words[0]
    if _is_the_tool(first) or first in cli.SUBCOMMANDS:  # `compare --format markdown`
        return "tool"
    if not re.fullmatch(r"(?:\S*/)?python[0-9.]*", first):
        return first.rsplit("/", 1)[-1]
    rest = words[1:]
    while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
        rest = rest[2:] if rest[0] in ("-X", "-W") else rest[1:]  # the interpreter's options
    if not rest or rest[0] == "-c":
        return "python"
    if rest[0] == "-m":  # python -m kernodeck_diagnostic, python -m pip...
        module = rest[1] if rest[1:] else "python"
        return "tool" if module == "kernodeck_diagnostic" else module
    return "tool" if _is_the_tool(rest[0]) else rest[0]


def _is_the_tool(program: str) -> bool:
    """The command, the single-file download, or the console script run by a Python."""
    return "kernodeck-diagnostic" in program or program.endswith(".pyz")


def documented_flags() -> Iterator[tuple[str, str, str]]:
    """(doc, flag, program) for every flag the docs give."""
    for doc in DOCS:
        for segment in _command_segments(doc.read_text(encoding="utf-8")):
            program = _program(segment)
            for flag in FLAG.findall(segment):
                yield doc.name, flag, program


# -- the tests -----------------------------------------------------------------------------------

def test_every_flag_the_docs_give_exists() -> None:
    ours = TOOL_FLAGS.union(*OTHER_PROGRAMS.values())
    wrong = set()
    for doc, flag, program in documented_flags():
        if program == "tool":
            known = TOOL_FLAGS
        elif program in OTHER_PROGRAMS:
            known = OTHER_PROGRAMS[program]
        elif program == "lone":
            known = ours  # `--output FILE`, `--watch-front`: one of the repository's programs
        else:
            continue  # another program's flag: pip's, docker's, nvidia-smi's...
        if flag not in known:
            wrong.add(f"{doc}: {flag} ({program})")
    assert sorted(wrong) == []


def test_every_flag_of_every_command_is_documented() -> None:
    assert {"--device", "--output", "--format", "--lang", "--help"} <= TOOL_FLAGS  # parsers found
    documented = {flag for _, flag, program in documented_flags() if program in ("tool", "lone")}
    assert sorted(TOOL_FLAGS - documented) == []


def _readme_codes() -> dict[str, frozenset[int]]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = CODE_ROW.findall(readme)
    assert len(rows) >= 10, "the README's code tables were not found"
    table = {name: frozenset(int(n) for n in exits.split("/")) for name, exits in rows}
    assert len(table) == len(rows), "a code has two rows"
    return table


def test_the_readme_code_tables_are_the_code_table() -> None:
    assert _readme_codes() == {name: frozenset(code.exit_codes)
                                   for name, code in CODES.items()}


def test_help_lists_the_codes_the_readme_lists() -> None:
    # Each command's --help lists its own statuses (the check: its verdicts and the process's;
    # the others: their "command" codes and the process's): together, the README's tables.
    listed: dict[str, frozenset[int]] = {}
    for parser in _command_parsers():
        for name, exits in HELP_ROW.findall(parser.format_help()):
            statuses = frozenset(int(n) for n in exits.split("/"))
            assert listed.setdefault(name, statuses) == statuses, name
    assert listed == _readme_codes()


def test_each_command_lists_its_own_codes_in_the_readme() -> None:
    # A command code's row names its command: | `summarize` | `SUMMARY_ALL_PASSED` | 0 |.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for code in CODES.values():
        if code.kind == "command":
            row = f"\n| `{code.command}` | `{code.name}` | {code.exit_code} |"
            assert row in readme, code.name


def test_the_findings_table_is_the_catalog() -> None:
    assert len(FINDING_IDS) >= 20, "no finding found in the catalog"
    table = FINDING_ROW.findall((ROOT / "docs" / "findings.md").read_text(encoding="utf-8"))
    assert sorted(table) == sorted(FINDING_IDS)  # each once, none missing, none extra


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.name)
def test_every_code_and_finding_the_docs_name_exists(doc: Path) -> None:
    named = set(ID.findall(doc.read_text(encoding="utf-8")))
    unknown = named - set(CODES) - FINDING_IDS - CODE_NAMES - NOT_IDS
    assert sorted(unknown) == [], "not a code, not a finding (another name? add it to NOT_IDS)"


def test_the_other_names_are_still_in_the_docs() -> None:
    # NOT_IDS must not hide an id: it holds no code or finding, and nothing the docs dropped.
    named = set().union(*(ID.findall(doc.read_text(encoding="utf-8")) for doc in DOCS))
    assert NOT_IDS & (set(CODES) | FINDING_IDS) == set()
    assert CODE_NAMES & (set(CODES) | FINDING_IDS) == set()
    assert sorted(NOT_IDS - named) == []
    assert sorted(NOT_IDS & CODE_NAMES) == []  # found without the list


def test_the_docs_give_the_variables_the_ramp_sets_as_the_code_names_them() -> None:
    # trial/folder.py names them once; the ramp's guide and --help give all three, the trial's
    # guide the one a Trial reads.
    ramp = (ROOT / "docs" / "operating-range.md").read_text(encoding="utf-8")
    trial = (ROOT / "docs" / "trial.md").read_text(encoding="utf-8")
    for name in (AXIS_NAME_VARIABLE, AXIS_VALUE_VARIABLE, RUN_DIR_VARIABLE):
        assert f"`{name}`" in ramp
        assert name in MESSAGES["ramp.help.epilog"]
    assert f"`{RUN_DIR_VARIABLE}`" in trial


def test_no_file_cites_a_document_the_repository_lacks() -> None:
    # The design notes the code was written from are not in the repository: what the code
    # relies on is explained in README.md and docs/, and nothing may send a reader elsewhere.
    cited = re.compile(r"\bDESIGN\b")
    places = [*DOCS, *(ROOT / "src").rglob("*.py"), *(ROOT / "tests").rglob("*.py"),
              *(ROOT / "scripts").iterdir(), *(ROOT / "benchmarks").rglob("*.py")]
    found = [str(path.relative_to(ROOT)) for path in places
             if path.is_file() and path != Path(__file__).resolve()
             and cited.search(path.read_text(encoding="utf-8", errors="replace"))]
    assert found == []
