"""Reports people share and read back: ``compare``, ``summarize`` and markdown, as a user runs them.

Every command runs the zipapp in a real interpreter. The reports are real: the JSON snapshots
(tests/snapshots/CASE.json, built by today's code from recorded runs of the real worker: a
fake-GPU pass, the real CUDA build with no driver, a venv without torch, a fake out-of-memory;
see tests/test_snapshots.py) and, marked slow, fresh runs of the real CPU and CUDA torch builds.
Where a case needs data no machine here produces (a device name holding HTML, another cuDNN),
a real report is changed the way a report passed around could be. FIFOs, signals, links and big
files are real ones.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, Result, clean_env, pipe_full, run_tool
from kernodeck_diagnostic.api import Report
from reliability.harness import wait_for

RECORDED = ROOT / "tests" / "snapshots"  # CASE.json: see tests/test_snapshots.py
QUICK_S = 20  # a command that reads a few files: anything near this is a hang
HOSTILE = "<script>alert(1)</script>"

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and POSIX signals")
linux_only = pytest.mark.skipif(not Path("/proc/self/io").exists(),
                                reason="watches the process through /proc")


def recorded(case: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((RECORDED / f"{case}.json").read_text(encoding="utf-8"))
    return report


def save(path: Path, report: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return path


def tool(pyz: Path, *args: str | Path, cwd: Path | None = None) -> Result:
    return run_tool(sys.executable, pyz, [str(arg) for arg in args], cwd=cwd, timeout=QUICK_S)


def changes_of(result: Result) -> list[tuple[str, Any, Any]]:
    data = json.loads(result.stdout)
    return [(change["field"], change["a"], change["b"]) for change in data["changes"]]


def fields_of(result: Result) -> list[str]:
    return [field for field, _, _ in changes_of(result)]


# == item 12: only regular files, bounded; signals end every command like the check ==============

@posix_only
def test_a_fifo_is_refused_at_once_not_waited_for(pyz: Path, tmp_path: Path) -> None:
    """A FIFO with no writer, named *.json in a folder or given directly, blocked summarize
    forever (open() waits for a writer). Now it is 'not a regular file', at once."""
    folder = tmp_path / "reports"
    save(folder / "node-1.json", recorded("gpu_pass"))
    os.mkfifo(folder / "node-2.json")
    os.mkfifo(tmp_path / "pipe.json")

    through_folder = tool(pyz, "summarize", folder, "--list-unreadable")
    assert through_folder.returncode == 22, through_folder.stderr
    assert through_folder.elapsed_s < 10
    lines = through_folder.stdout.splitlines()
    assert lines[lines.index("unreadable (1)") + 1].split() == [
        "node-2.json", "not", "a", "regular", "file"]
    assert lines[-1] == "2 file(s): 1 report(s), 1 passed, 0 failed, 1 unreadable"

    direct = tool(pyz, "summarize", tmp_path / "pipe.json", "--format", "json")
    assert direct.returncode == 23  # SUMMARY_NOTHING_READ: nothing readable at all
    assert json.loads(direct.stdout)["unreadable"] == [
        {"file": "pipe.json", "reason": "not_a_file", "detail": None}]

    compared = tool(pyz, "compare", tmp_path / "pipe.json", folder / "node-1.json")
    assert compared.returncode == 2
    assert compared.stderr == ("kernodeck-diagnostic compare: cannot compare: A (pipe.json): "
                               "not a regular file\n")
    # A device is not read either (/dev/zero would be read forever without the size bound).
    device = tool(pyz, "summarize", "/dev/zero", "--format", "json")
    assert json.loads(device.stdout)["unreadable"][0]["reason"] == "not_a_file"


def _interrupted(process: subprocess.Popen[bytes], signum: int, command: str,
                 group: bool = False) -> None:
    """Send ``signum`` (to the process's group when ``group``: a terminal's Ctrl-C) and check
    the command ends by itself, at once, as the check does."""
    if group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    try:
        # Nobody reads stdout: a command that kept its unwritten output would never exit.
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"{command} did not end after {signal.Signals(signum).name}")
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    assert process.returncode == 128 + signum, stderr
    assert stderr == (f"kernodeck-diagnostic {command}: interrupted by "
                      f"{signal.Signals(signum).name}.\n")


def _start(pyz: Path, *args: str | Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(pyz), *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())


@pytest.fixture(scope="module")
def many_reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two thousand real reports: a table far bigger than a pipe holds."""
    folder = tmp_path_factory.mktemp("many")
    text = json.dumps(recorded("gpu_pass"))
    for index in range(2000):
        (folder / f"node-{index:04d}.json").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def two_long_reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two real reports that differ in three thousand warnings: a long comparison."""
    folder = tmp_path_factory.mktemp("long")
    before, after = recorded("gpu_pass"), recorded("gpu_pass")
    for side, report in (("a", before), ("b", after)):
        report["warnings"] = [{"stage": "import", "category": "UserWarning",
                               "message": f"warning {index} seen in run {side}"}
                              for index in range(3000)]
    return save(folder / "a.json", before), save(folder / "b.json", after)


@posix_only
@linux_only
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["summarize", "compare"])
def test_a_signal_ends_a_command_blocked_on_its_output(
        pyz: Path, many_reports: Path, two_long_reports: tuple[Path, Path], command: str,
        signum: int) -> None:
    """Blocked writing to a reader that stopped reading (a paused pager), the command got
    SIGINT or SIGTERM and said 'internal error'. Now: exit 130 or 143, one line."""
    # summarize's default output is a screenful (issue 46): its export writes a line per report.
    args = ["--format", "jsonl", many_reports] if command == "summarize" \
        else list(two_long_reports)
    process = _start(pyz, command, *args)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], QUICK_S)
        assert ready, "no output"
        wait_for(lambda: pipe_full(process.stdout), QUICK_S, "blocked on a full pipe")
        _interrupted(process, signum, command)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


@pytest.fixture(scope="module")
def big_reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Reports of several megabytes each (tens of thousands of warnings), still under the
    limit: reading and judging them takes a while."""
    folder = tmp_path_factory.mktemp("big")
    report = recorded("gpu_unavailable")
    report["warnings"] = [{"stage": "import", "category": "UserWarning",
                           "message": f"a long and repeated warning, number {index:06d}" * 2}
                          for index in range(45000)]
    text = json.dumps(report)
    assert 5 * 2**20 < len(text) < 8 * 2**20
    for index in range(30):
        (folder / f"node-{index:02d}.json").write_text(text, encoding="utf-8")
    return folder


def _bytes_read(pid: int) -> int:
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0


@posix_only
@linux_only
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_summarize_busy_reading_big_reports(pyz: Path, big_reports: Path,
                                                           signum: int) -> None:
    process = _start(pyz, "summarize", big_reports)
    try:
        # Busy for real: well into the reports (their bytes read), far from done.
        wait_for(lambda: _bytes_read(process.pid) > 3 * 6 * 2**20, QUICK_S,
                 "reading the reports")
        assert process.poll() is None
        _interrupted(process, signum, "summarize")
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


# Summarize with its reading in parts (forked.in_parts) forced on these 30 reports: four parts of
# a few files, the first in the front, three in forked children, whatever the processors here.
IN_PARTS = """
import runpy, sys
sys.path.insert(0, sys.argv[1])
from kernodeck_diagnostic.commands import summarize
summarize.FILES_PER_PART, summarize.usable_cpus = 1, lambda: 4
sys.argv = ["kernodeck-diagnostic", *sys.argv[2:]]
runpy.run_module("kernodeck_diagnostic", run_name="__main__", alter_sys=True)
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


@posix_only
@linux_only
@pytest.mark.parametrize(("signum", "to"), [(signal.SIGINT, "front"), (signal.SIGTERM, "front"),
                                            (signal.SIGINT, "group")],
                         ids=["SIGINT", "SIGTERM", "Ctrl-C"])
def test_a_signal_ends_summarize_reading_in_parts_and_every_part(
        pyz: Path, big_reports: Path, signum: int, to: str) -> None:
    """Sent to the front alone (``kill``), the front kills and reaps its children; to the whole
    group (Ctrl-C in a terminal), each child dies of it at once and silently. Either way: the
    front's exit status and one line, and no child left reading."""
    process = subprocess.Popen([sys.executable, "-c", IN_PARTS, str(pyz), "summarize",
                                str(big_reports)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(),
                               start_new_session=True)
    children: set[int] = set()

    def started() -> int:
        children.update(_children(process.pid))
        return len(children)

    try:
        wait_for(lambda: started() >= 3, QUICK_S, "three children reading")
        wait_for(lambda: _bytes_read(process.pid) > 6 * 2**20, QUICK_S, "the front reading")
        assert process.poll() is None
        _interrupted(process, signum, "summarize", group=to == "group")
        # Gone already: killed (or dead of the signal) and reaped before the front ended.
        assert [child for child in children if Path(f"/proc/{child}").exists()] == []
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)


# == item 17: names relative to what was given, each real file once, "too large" ================

@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """The same file name on every machine, collected into one folder per machine."""
    save(tmp_path / "fleet" / "node-1" / "report.json", recorded("gpu_pass"))
    save(tmp_path / "fleet" / "node-2" / "report.json", recorded("out_of_memory"))
    save(tmp_path / "fleet" / "node-3" / "report.json", recorded("gpu_unavailable"))
    return tmp_path / "fleet"


def test_same_file_names_in_different_folders_are_told_apart(pyz: Path, fleet: Path) -> None:
    named = tool(pyz, "summarize", fleet / "node-1", fleet / "node-2",
                 fleet / "node-3" / "report.json", "--format", "json")
    assert [row["file"] for row in json.loads(named.stdout)["reports"]] == [
        "node-1/report.json", "node-2/report.json", "node-3/report.json"]
    # Relative paths typed from elsewhere: the same names, never the machine's folders.
    relative = tool(pyz, "summarize", "fleet/node-1/report.json", "fleet/node-2",
                    cwd=fleet.parent)
    assert [line.split()[0] for line in relative.stdout.splitlines()[1:3]] == [
        "node-1/report.json", "node-2/report.json"]
    for result in (named, relative):
        assert str(fleet.parent) not in result.stdout + result.stderr


def test_a_file_named_twice_counts_once(pyz: Path, fleet: Path) -> None:
    (fleet / "latest.json").symlink_to(fleet / "node-2" / "report.json")
    result = tool(pyz, "summarize", fleet, fleet / "node-1" / "report.json",
                  fleet / "node-1" / ".." / "node-1" / "report.json", fleet / "node-3")
    assert result.returncode == 22
    lines = result.stdout.splitlines()
    # Three real files, whatever way each was named (through its folder, directly, a link).
    assert lines[-1] == "3 file(s): 3 report(s), 1 passed, 2 failed, 0 unreadable"
    assert [line.split()[0] for line in lines[1:4]] == [
        "latest.json", "node-1/report.json", "node-3/report.json"]


def test_a_file_over_the_size_limit_is_too_large(pyz: Path, tmp_path: Path) -> None:
    """A real report padded past 8 MiB was 'not a report', which sent people looking at its
    content. It is 'too large', in every language, and JSON says too_large."""
    report = recorded("gpu_pass")
    report["warnings"] = [{"stage": "import", "category": "UserWarning", "message": "w" * 1000}
                          for _ in range(9000)]
    save(tmp_path / "huge.json", report)
    save(tmp_path / "node.json", recorded("gpu_pass"))
    assert (tmp_path / "huge.json").stat().st_size > 8 * 2**20
    said = {language: tool(pyz, "summarize", tmp_path, "--lang", language,
                           "--list-unreadable").stdout
            for language in ("en", "pt", "fr")}
    assert "huge.json  too large to be a report (over 8 MiB)" in said["en"]
    assert "huge.json  grande demais para ser um relatório (mais de 8 MiB)" in said["pt"]
    assert "huge.json  trop grand pour être un rapport (plus de 8 MiB)" in said["fr"]
    data = json.loads(tool(pyz, "summarize", tmp_path, "--format", "json").stdout)
    assert data["unreadable"] == [{"file": "huge.json", "reason": "too_large", "detail": None}]
    compared = tool(pyz, "compare", tmp_path / "huge.json", tmp_path / "node.json")
    assert compared.returncode == 2
    assert "A (huge.json): too large to be a report (over 8 MiB)" in compared.stderr


# == item 14: markdown shows data as text, never as HTML or markup ===============================

def hostile(case: str) -> dict[str, Any]:
    """A real report whose machine data holds HTML, table pipes and markdown syntax."""
    report = recorded(case)
    pytorch = report["pytorch"]
    pytorch["version"] = "2.7.0+cu128|<b>x</b>"
    pytorch["distribution_version"] = "2.7.0 & <i>later</i>"
    pytorch["cudnn_version"] = "9.1|*bold*"
    if pytorch["devices"]:
        pytorch["devices"][0]["name"] = f"NVIDIA a|b {HOSTILE} `code` [link](http://x) _em_"
    report["runtime"]["python_version"] = "3.11.2 <script>"
    report["error"] = {"stage": "device", "kind": "gpu_unavailable", "type": "RuntimeError",
                       "message": f"<path>/libcudnn.so.9: cannot open | {HOSTILE}\nline two"}
    report["warnings"] = [{"stage": "import", "category": "UserWarning",
                           "message": f"at <path>/tensor_numpy.cpp {HOSTILE} **x**"}]
    for finding in report["findings"]:
        finding["evidence"] = [f"<path>/libcudnn.so.9 {HOSTILE}"]
        finding["summary"] = f"{finding['summary']} {HOSTILE} a|b"
    report["tool"]["version"] = f"1.0.0 {HOSTILE}"
    return report


def assert_no_html(markdown: str, own_tags: tuple[str, ...] = ()) -> None:
    """No '<' reaches the markdown but the tool's own tags; data is escaped, not lost."""
    rest = markdown
    for tag in own_tags:
        rest = rest.replace(tag, "")
    assert "<" not in rest, markdown
    assert "&lt;script&gt;" in markdown or "&lt;path&gt;" in markdown


def assert_table_cells(markdown: str) -> None:
    """Every table row has the header's number of cells: no data pipe split a cell."""
    columns = 0
    for line in markdown.splitlines():
        if not line.startswith("|"):
            columns = 0
            continue
        cells = len(re.split(r"(?<!\\)\|", line)) - 2
        if columns == 0:
            columns = cells
        assert cells == columns, line


def test_summarize_markdown_escapes_report_data(pyz: Path, tmp_path: Path) -> None:
    save(tmp_path / "a|b<i>.json", hostile("gpu_pass"))
    save(tmp_path / "node.json", hostile("gpu_unavailable"))
    save(tmp_path / "1. a|b.json", {"schema_version": f"2{HOSTILE}", "code": "X"})
    in_one_line = tool(pyz, "summarize", tmp_path, "--format", "markdown")
    assert in_one_line.returncode == 22
    assert_no_html(in_one_line.stdout)  # the unreadable files' kinds, from the file, escaped
    result = tool(pyz, "summarize", tmp_path, "--format", "markdown", "--list-unreadable")
    assert result.returncode == 22
    out = result.stdout
    assert_no_html(out)
    assert_table_cells(out)
    assert "2.7.0+cu128\\|&lt;b&gt;x&lt;/b&gt;" in out  # shown as it is, escaped
    assert "| a\\|b&lt;i&gt;.json |" in out  # a file name is data too
    assert "- 1\\. a\\|b.json: schema version" in out  # not a numbered list inside the list


def test_compare_markdown_escapes_report_data(pyz: Path, tmp_path: Path) -> None:
    before = save(tmp_path / "before.json", recorded("gpu_pass"))
    after = save(tmp_path / "after.json", hostile("gpu_pass"))
    result = tool(pyz, "compare", before, after, "--format", "markdown")
    assert result.returncode == 0
    out = result.stdout
    assert_no_html(out)
    assert_table_cells(out)
    assert "NVIDIA a\\|b &lt;script&gt;alert(1)&lt;/script&gt; \\`code\\` \\[link\\]" in out
    assert "&lt;path&gt;/libcudnn.so.9: cannot open \\| &lt;script&gt;" in out
    assert "\\nline two" in out  # a line break in data does not end the row


@pytest.mark.parametrize("case", ["gpu_pass", "gpu_unavailable", "out_of_memory"])
def test_notebook_markdown_escapes_report_data(case: str) -> None:
    """What Jupyter renders for a Report (``_repr_markdown_``): HTML from the machine is text."""
    shown = Report(hostile(case))._repr_markdown_()
    assert_no_html(shown, own_tags=("<sub>", "</sub>"))
    assert_table_cells(shown)
    assert "&lt;path&gt;/libcudnn.so.9: cannot open \\| &lt;script&gt;" in shown
    assert "kernodeck-diagnostic 1.0.0 &lt;script&gt;alert(1)&lt;/script&gt;, " in shown


# One row per renderer's syntax planted in a value: (the value, how it is written, a written form
# that renderers read as a link or LaTeX and must not appear).
LINKS_AND_MATH = [
    ("see https://evil.example/x", "see https\\://evil.example/x", "https://"),
    ("FTP://evil.example", "FTP\\://evil.example", "FTP://"),
    ("go to www.evil.example now", "go to www\\.evil.example now", "www."),
    ("mail bob@evil.example", "mail bob\\@evil.example", "bob@"),
    ("paid $5 and $6", "paid `$`5 and `$`6", "$5"),
    ("$$x^2$$", "`$$`x^2`$$`", "$x"),
]


@pytest.mark.parametrize(("value", "written", "never"), LINKS_AND_MATH,
                         ids=[row[0] for row in LINKS_AND_MATH])
def test_markdown_makes_no_link_nor_latex_of_data(value: str, written: str, never: str) -> None:
    """Before: GitHub, JupyterLab and VS Code made a link of an attacker's URL in an error
    message, and notebooks LaTeX of ``$...$``. The ``:``, ``.`` or ``@`` that starts a link is
    escaped; ``$`` is inline code (math never starts in code; Jupyter and VS Code disagree on
    a backslash's). A trial's summary in a notebook uses the same escaping."""
    from kernodeck_diagnostic.report.markup import escape
    from kernodeck_diagnostic.trial.notebook import markdown as attempt_markdown

    assert escape(value) == written
    assert never not in escape(value)
    # Backslashes and code spans removed: the text as it is (CommonMark's reading).
    assert re.sub(r"\\(.)|`", r"\1", written) == value
    shown = attempt_markdown({"status": "failed", "first_error": {
        "stage": "load", "type": "RuntimeError", "message": value}}, "runs/a")
    assert written in shown
    assert never not in shown


@pytest.mark.slow
def test_check_markdown_keeps_the_path_placeholder_visible(pyz: Path,
                                                           cuda_torch_python: Path) -> None:
    """The real CUDA build without a driver warns '...Triggered internally at <path>/...': the
    placeholder vanished on GitHub and in Jupyter as an unknown HTML tag."""
    result = run_tool(cuda_torch_python, pyz, ["--format", "markdown"])
    assert result.returncode != 0
    assert "&lt;path&gt;/" in result.stdout, result.stdout
    assert_no_html(result.stdout, own_tags=("<sub>", "</sub>"))
    assert_table_cells(result.stdout)


# == item 16: compare shows every fact that changed, most important first ========================

MUTATIONS: list[tuple[str, Any]] = [
    ("runtime.visibility.CUDA_VISIBLE_DEVICES", "hides_all"),
    ("pytorch.distribution_version", "2.6.0"),
    ("pytorch.numpy_present", False),
    ("pytorch.numpy_version", None),
    ("pytorch.init_error", "CUDA driver initialization failed"),
    ("pytorch.cudnn_version", "90100"),
    ("pytorch.nccl_version", "2.21.5"),
    ("pytorch.arch_list", ["sm_80", "sm_90"]),
    ("pytorch.devices[0].capability", "8.6"),
    ("pytorch.devices[0].total_memory_bytes", 8 * 2**30),
    ("tool.version", "1.1.0"),
]


def _set(report: dict[str, Any], path: str, value: Any) -> None:
    keys = [int(key) if key.isdigit() else key for key in re.split(r"\.|\[(\d+)\]\.?", path)
            if key]
    holder: Any = report
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] = value


@pytest.mark.parametrize(("path", "value"), MUTATIONS, ids=[path for path, _ in MUTATIONS])
def test_compare_shows_a_fact_that_changed(pyz: Path, tmp_path: Path, path: str,
                                           value: Any) -> None:
    before = recorded("gpu_pass")
    before["pytorch"]["numpy_present"], before["pytorch"]["numpy_version"] = True, "2.1.3"
    before["pytorch"]["nccl_version"] = "2.26.2"
    after = copy.deepcopy(before)
    _set(after, path, value)
    after["created_at"] = "2026-12-01T08:00:00Z"  # written later: not a change
    a, b = save(tmp_path / "a.json", before), save(tmp_path / "b.json", after)
    result = tool(pyz, "compare", a, b, "--format", "json")
    assert result.returncode == 0
    assert [field for field, _, _ in changes_of(result)] == [path]
    text = tool(pyz, "compare", a, b)
    assert text.stdout.splitlines()[2].split()[0] == path


def test_compare_shows_the_error_message_that_changed(pyz: Path, tmp_path: Path) -> None:
    before = recorded("gpu_unavailable")
    after = copy.deepcopy(before)
    reason = "CUDA driver version is insufficient for CUDA runtime version"
    after["error"]["message"] = f"torch.cuda.is_available() is False: {reason}"
    after["error"]["message_values"] = {"reason": reason}
    after["pytorch"]["init_error"] = reason
    result = tool(pyz, "compare", save(tmp_path / "a.json", before),
                  save(tmp_path / "b.json", after))
    assert result.returncode == 0
    rows = result.stdout.splitlines()
    # Long messages that differ late are shown from where they differ, not cut the same way.
    assert rows[2].startswith("error.message ")
    assert "insufficient" in rows[2]
    assert rows[3].startswith("pytorch.init_error ")
    assert len(rows) == 4


def test_compare_orders_changes_by_importance(pyz: Path, tmp_path: Path) -> None:
    before, after = recorded("gpu_pass"), recorded("out_of_memory")
    for path, value in MUTATIONS:
        _set(after, path, value)
    after["warnings"] = [{"stage": "import", "category": "UserWarning", "message": "new"}]
    after["findings"][0]["evidence"] = ["numpy 1.26 next to a build for NumPy 2"]
    after["request"]["timeout_s"] = 60
    after["timings_ms"]["compute"] = before["timings_ms"]["compute"] + 5000
    result = tool(pyz, "compare", save(tmp_path / "a.json", before),
                  save(tmp_path / "b.json", after), "--format", "json")
    assert result.returncode == 21  # a pass that fails: COMPARE_REGRESSION
    fields = fields_of(result)
    assert fields[:3] == ["code", "status", "exit_code"]  # both stopped at stage compute
    order = ["code", "status", "exit_code", "error.", "request.timeout_s",
             "runtime.visibility.", "pytorch.distribution_version", "pytorch.arch_list",
             "pytorch.cudnn_version", "pytorch.init_error", "pytorch.devices[0].capability",
             "execution.",
             "findings[NUMPY_MISSING].evidence", "warnings[0].", "tool.version",
             "timings_ms.compute"]
    firsts = [next(i for i, field in enumerate(fields) if field.startswith(prefix))
              for prefix in order]
    assert firsts == sorted(firsts), fields
    assert "created_at" not in fields
    assert not any(field.startswith(("summary", "next_action")) for field in fields)


@pytest.fixture(scope="module")
def real_pair(pyz: Path, cpu_torch_python: Path, cuda_torch_python: Path,
              tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Real reports: the CPU build checked on the CPU, the CUDA build on a machine without a
    driver (the same project, two environments)."""
    folder = tmp_path_factory.mktemp("pair")
    cpu = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output", str(folder / "cpu.json")])
    assert cpu.report is not None, cpu.stdout + cpu.stderr
    cuda = run_tool(cuda_torch_python, pyz, ["--output", str(folder / "cuda.json")])
    assert cuda.report is not None, cuda.stdout + cuda.stderr
    return folder / "cpu.json", folder / "cuda.json"


@pytest.mark.slow
def test_compare_two_real_environments(pyz: Path, real_pair: tuple[Path, Path]) -> None:
    cpu, cuda = real_pair
    result = tool(pyz, "compare", cpu, cuda, "--format", "json")
    assert result.returncode == 21  # CPU_CHECK_PASSED, then GPU_UNAVAILABLE: COMPARE_REGRESSION
    changed = {field: (a, b) for field, a, b in changes_of(result)}
    assert changed["pytorch.distribution_version"] == ("2.13.0+cpu", "2.14.1")
    assert changed["pytorch.init_error"][0] is None
    assert "NVIDIA driver" in changed["pytorch.init_error"][1]
    assert changed["request.device"] == ("cpu", "gpu")
    assert "error.message" in changed
    fields = list(changed)
    assert fields.index("error.message") < fields.index("pytorch.version") \
        < fields.index("pytorch.init_error")
    # The same environment checked twice: only noise differs, and noise is not a change.
    again = tool(pyz, "compare", cpu, cpu, "--format", "json")
    assert json.loads(again.stdout)["changes"] == []
