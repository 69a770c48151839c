"""Environments people break: privacy and the API (issue 9, items 15 and 18).

Privacy: values are planted in the environment for real and the real tool is run with them,
with failures that carry them into messages:

- the real torch 2.13.0 CPU build, ``import torch`` failing because ``TORCH_LOGS`` holds
  settings torch does not know: torch's ``ValueError`` quotes the variable's value;
- the fake torch's ``settings_in_messages`` (a library quoting its configuration, host and
  installer in its warnings and its failed import), run as ``sudo`` leaves it (``HOME=/root``,
  ``USER=root``, the real user in ``SUDO_USER``), in a private UTS namespace with a unique host
  name where the machine allows it.

Beside them, the variables real images set whose values equal the report's own facts
(``PYTHON_VERSION``, ``CUDA_VERSION``, ``LANG``, ``TERM``, ``SHELL``...): those facts survive.

The API: ``check()`` is strict on types (``TypeError``) and values (``ValueError``), each message
naming the parameter as a Python caller writes it; the command line keeps its --flag wording.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kernodeck_diagnostic
from conftest import ROOT, Result, assert_valid_report, clean_env, fake_gpu_env, run_tool
from kernodeck_diagnostic.report.redact import Redactor, is_exempt_value

FORMATS = ["text", "json", "markdown"]
# Plain variables, not named like secrets: before, their values went through untouched.
PLANTED = {"DATABASE_HOST": "db.internal:5432", "MY_SETTING": "some-private-value-123",
           "DB_ADDRESS": "10.20.30.40"}
# What Docker's and NVIDIA's images set: values that are facts, or say nothing about anyone.
IMAGE = {"CUDA_VERSION": "12.4.1", "NV_CUDA_CUDART_VERSION": "12.4.127-1",
         "NCCL_VERSION": "2.21.5-1", "LANG": "C.UTF-8", "TERM": "xterm-256color",
         "SHELL": "/bin/bash"}


def facts_of(python: Path) -> dict[str, str]:
    """What the interpreter and its torch really are, asked without the tool."""
    code = ("import platform, torch; print(platform.python_version()); "
            "print(torch.__version__); print(platform.machine())")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                          env=clean_env(), timeout=180, check=True)
    python_version, torch_version, machine = done.stdout.split()
    return {"python_version": python_version, "torch_version": torch_version,
            "machine": machine}


@pytest.fixture(scope="module")
def real_facts(cpu_torch_python: Path) -> dict[str, str]:
    return facts_of(cpu_torch_python)


def image_environment(facts: dict[str, str]) -> dict[str, str]:
    """The variables of a Docker or NVIDIA image, with the versions this interpreter really has."""
    return {**IMAGE, "PYTHON_VERSION": facts["python_version"],
            "PYTORCH_VERSION": facts["torch_version"], "ARCH": facts["machine"]}


def leaks(text: str, private: dict[str, str]) -> list[str]:
    """The names of the private values found in ``text``, in any case."""
    return [name for name, value in private.items() if value.lower() in text.lower()]


def outputs(result: Result, written: Path) -> list[tuple[str, str]]:
    return [("report file", written.read_text(encoding="utf-8")), ("stdout", result.stdout),
            ("stderr", result.stderr)]


# -- environment values in a real failure of the real torch -------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("form", FORMATS)
def test_values_of_plain_variables_leave_a_real_import_failure(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, real_facts: dict[str, str],
        form: str) -> None:
    """TORCH_LOGS set to settings torch does not know: the real ValueError quotes the value."""
    torch_logs = f"{PLANTED['DATABASE_HOST']},{PLANTED['MY_SETTING']}"
    env = clean_env({**PLANTED, **image_environment(real_facts), "TORCH_LOGS": torch_logs})
    out = tmp_path / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--format", form,
                                              "--output", str(out)], env=env)
    assert result.returncode == 4, result.stdout + result.stderr
    report = result.report
    assert report is not None
    assert_valid_report(report)
    assert (report["code"], report["stage"]) == ("TORCH_IMPORT_FAILED", "import")
    for where, text in outputs(result, out):
        assert leaks(text, {**PLANTED, "TORCH_LOGS": torch_logs}) == [], (where, text)
    # What helps survives: torch's own sentence, and the interpreter's facts.
    assert report["error"]["type"] == "ValueError"
    assert report["error"]["message"].startswith("Invalid log settings: <redacted>")
    assert report["runtime"]["python_version"] == real_facts["python_version"]
    assert report["runtime"]["machine"] == real_facts["machine"]


@pytest.mark.slow
def test_facts_equal_to_image_variables_survive_a_real_check(
        cpu_torch_python: Path, pyz: Path, tmp_path: Path, real_facts: dict[str, str]) -> None:
    """PYTHON_VERSION, PYTORCH_VERSION, ARCH... equal the report's facts: they stay facts.

    A guard for the exemptions: redacting every value without them would turn these facts into
    ``<redacted>``.
    """
    env = clean_env({**PLANTED, **image_environment(real_facts)})
    out = tmp_path / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output", str(out)], env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    report = result.report
    assert report is not None
    assert report["runtime"]["python_version"] == real_facts["python_version"]
    assert report["runtime"]["machine"] == real_facts["machine"]
    assert report["pytorch"]["version"] == real_facts["torch_version"]
    assert real_facts["python_version"] in result.stdout
    assert real_facts["torch_version"] in result.stdout
    assert "<redacted>" not in out.read_text(encoding="utf-8")


# -- home, user, host and values in warnings, the error and the findings' evidence ---------------

def with_host_name(host: str, command: list[str]) -> list[str]:
    """``command`` in a private UTS namespace whose host name is ``host`` (root only)."""
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *command]


@pytest.fixture(scope="module")
def private_host_name() -> str | None:
    """A unique host name when this machine lets a test set one, else None (the real one)."""
    host = "zqhost" + secrets.token_hex(3)
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(with_host_name(host, ["hostname"]), capture_output=True, text=True,
                           timeout=30, check=False)
    return host if probe.stdout.strip() == host else None


@pytest.mark.parametrize("form", FORMATS)
def test_home_user_host_and_values_leave_warnings_error_and_evidence(
        pyz: Path, tmp_path: Path, private_host_name: str | None, form: str) -> None:
    """As sudo leaves it: HOME=/root, USER=root, the real user in SUDO_USER."""
    user = "zq" + secrets.token_hex(4)
    env = fake_gpu_env("settings_in_messages", **PLANTED, **IMAGE,
                       KD_PLANTED_VARIABLES=" ".join(PLANTED), HOME="/root", USER="root",
                       LOGNAME="root", SUDO_USER=user,
                       PYTHON_VERSION="{}.{}.{}".format(*sys.version_info[:3]))
    private = {**PLANTED, "SUDO_USER": user}
    if private_host_name is not None:
        private["host"] = private_host_name
    out = tmp_path / "report.json"
    command = [sys.executable, str(pyz), "--format", form, "--output", str(out)]
    if private_host_name is not None:
        command = with_host_name(private_host_name, command)
    completed = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path,
                               timeout=120, stdin=subprocess.DEVNULL, check=False)
    result = Result(completed.returncode, completed.stdout, completed.stderr, 0.0)
    assert result.returncode == 4, result.stdout + result.stderr
    written = out.read_text(encoding="utf-8")
    for where, text in outputs(result, out):
        assert leaks(text, private) == [], (where, text)
        assert "/root" not in text, (where, text)  # not even as <path>/root
    report: dict[str, Any] = json.loads(written)
    assert_valid_report(report)
    warnings = [warning["message"] for warning in report["warnings"]]
    assert warnings == [
        "plugin configured from DATABASE_HOST=<redacted>, MY_SETTING=<redacted>, "
        "DB_ADDRESS=<redacted>; cache in <home>",
        "plugin installed by <user> on <host> from <path>/<user>"]
    message = report["error"]["message"]
    assert message.startswith("libnccl.so.2: cannot open shared object file")
    assert "home <home>; installed by <user> on <host>" in message
    evidence = {finding["id"]: finding["evidence"] for finding in report["findings"]}
    assert "<redacted>" in " ".join(evidence["SHARED_LIBRARY_MISSING"])
    assert report["runtime"]["python_version"] == "{}.{}.{}".format(*sys.version_info[:3])


# -- the rules, one by one ------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "value", "exempt"), [
    ("PYTHON_VERSION", "3.11.7", True),
    ("CUDA_VERSION", "12.4.1", True),
    ("PYTORCH_VERSION", "2.5.1+rocm6.2", True),
    ("TORCH_NIGHTLY", "2.6.0.dev20241112+cu124", True),
    ("NCCL_VERSION", "2.21.5-1", True),
    ("PYTORCH_ROCM_ARCH", "gfx942", True),
    ("ARCH", "x86_64", True),
    ("LANG", "C.UTF-8", True),
    ("LC_ALL", "en_US.UTF-8", True),
    ("TERM", "xterm-256color", True),
    ("SHELL", "/bin/bash", True),
    ("PORT", "5432", True),  # under the minimum length: an ordinary word
    ("NV_CUDNN_VERSION", "9.1.0.70", False),  # four small numbers: read as an IPv4 address
    ("DB_ADDRESS", "10.20.30.40", False),
    ("DATABASE_HOST", "db.internal:5432", False),
    ("MY_SETTING", "some-private-value-123", False),
    ("ACCOUNT", "123456789012", False),
    ("CONDA_DEFAULT_ENV", "acme-fraud-model", False),
    ("VIRTUAL_ENV", "/srv/acme/venv", False),
])
def test_which_values_are_exempt(name: str, value: str, exempt: bool) -> None:
    assert is_exempt_value(name, value) is exempt


def test_values_are_redacted_as_whole_tokens_only() -> None:
    redactor = Redactor.for_this_machine({"MY_SETTING": "private42", "HOST_X": "db.internal"})
    assert redactor.text("private42: private421 db.internal:5432 mydb.internal x_private42") == (
        "<redacted>: private421 <redacted>:5432 mydb.internal x_private42")


def test_a_value_that_is_a_path_goes_whole_and_a_longer_path_keeps_its_last_component() -> None:
    redactor = Redactor.for_this_machine({"VIRTUAL_ENV": "/srv/acme-payments/venv",
                                          "EXTRA": "/opt/acme/lib:/opt/other/lib"})
    assert redactor.text("in '/srv/acme-payments/venv' and /srv/acme-payments/venv/lib/x.so; "
                         "LD=/opt/acme/lib:/opt/other/lib") == (
        "in '<redacted>' and <path>/x.so; LD=<redacted>")


def test_a_users_folder_and_the_sudo_user() -> None:
    redactor = Redactor.for_this_machine({"HOME": "/root", "USER": "root", "SUDO_USER": "ana"})
    assert redactor.text("ana: /home/ana and C:\\Users\\ana; '/root', /mnt/root, root@gpu1") == (
        "<user>: <path>/<user> and <path>\\<user>; '<home>', <path>/root, <user>@<host>")
    # "root" itself is the same word on every machine: left alone
    assert redactor.text("run as root from the root of the tree") == (
        "run as root from the root of the tree")


def test_a_value_in_a_usage_error_is_not_echoed(tmp_path: Path) -> None:
    """A plain value pasted as an argument by mistake is not repeated on the terminal."""
    env = clean_env({"PYTHONPATH": str(ROOT / "src"), **PLANTED})
    result = subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", "--device",
                             PLANTED["MY_SETTING"]], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 2
    assert "<redacted>" in result.stderr
    assert PLANTED["MY_SETTING"] not in result.stderr


# -- the Python API: strict types, messages naming the parameter -------------------------------

WRONG_TYPES: list[dict[str, Any]] = [
    {"timeout": "30"}, {"timeout": True}, {"timeout": [30]},
    {"device_index": "0"}, {"device_index": True}, {"device_index": 1.0}, {"device_index": None},
    {"host_check": "yes"}, {"host_check": 1}, {"host_check": None},
    {"device": None}, {"device": 1}, {"device": b"gpu"},
    {"python": 3}, {"python": b"/usr/bin/python3"},
]
WRONG_VALUES: list[dict[str, Any]] = [
    {"device": "CPU"}, {"device": "GPU"}, {"device": " gpu"}, {"device": "cuda"},
    {"device": "rocm"}, {"device": "tpu"},
    {"device_index": -1},
    {"timeout": 4}, {"timeout": 121}, {"timeout": 4.99}, {"timeout": float("nan")},
    {"timeout": float("inf")},
    # Told without running anything: a missing interpreter, a folder, a file that cannot run.
    {"python": "/nonexistent/bin/python"}, {"python": "/"}, {"python": "/etc/hostname"},
    # Told by running it, within the time limit: a program that is not a Python.
    {"python": "/bin/true"},
]


def _named(arguments: dict[str, Any]) -> str:
    return f"check({next(iter(arguments))}=...)"


@pytest.mark.parametrize("arguments", WRONG_TYPES, ids=repr)
def test_the_api_refuses_a_wrong_type_with_a_type_error(arguments: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match=re.escape(_named(arguments))) as refused:
        kernodeck_diagnostic.check(**arguments)
    message = str(refused.value)
    assert message.startswith(_named(arguments)), message
    assert "--" not in message
    assert "\n" not in message


@pytest.mark.parametrize("arguments", WRONG_VALUES, ids=repr)
def test_the_api_refuses_a_wrong_value_with_a_value_error(arguments: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=re.escape(_named(arguments))) as refused:
        kernodeck_diagnostic.check(**arguments)
    message = str(refused.value)
    assert message.startswith(_named(arguments) + ": "), message
    assert "--" not in message
    assert "\n" not in message


def test_the_api_says_how_to_ask_for_the_gpu_in_its_own_terms() -> None:
    with pytest.raises(ValueError, match=re.escape("use device='gpu' (the default)")):
        kernodeck_diagnostic.check(device="cuda")


def test_the_api_refuses_before_starting_anything(tmp_path: Path) -> None:
    """A user's script: the refusal is the exception raised, and no worker was started."""
    marker = tmp_path / "imported"
    script = tmp_path / "script.py"
    script.write_text(
        "import kernodeck_diagnostic\n"
        "for kwargs in ({'timeout': '30'}, {'device_index': '0'}, {'host_check': 'yes'},\n"
        "               {'device': 'CPU'}, {'timeout': 500}):\n"
        "    try:\n"
        "        kernodeck_diagnostic.check(**kwargs)\n"
        "    except (TypeError, ValueError) as exc:\n"
        "        print(type(exc).__name__, exc)\n")
    env = fake_gpu_env("cuda_pass", KD_FAKE_TORCH_MARKER=str(marker))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env["PYTHONPATH"]])
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "TypeError check(timeout=...) takes seconds as an int or a float; not str",
        "TypeError check(device_index=...) takes an int; not str",
        "TypeError check(host_check=...) takes True or False; not str",
        "ValueError check(device=...): must be gpu or cpu, got 'CPU'",
        "ValueError check(timeout=...): must be between 5 and 120 seconds, got 500"]
    assert not marker.exists()  # no worker imported torch


@pytest.mark.parametrize("arguments", [
    {"timeout": 30}, {"timeout": 5}, {"timeout": 120}, {"timeout": 30.5},
    {"device_index": 0}, {"host_check": False}, {"device": "cpu"}, {"python": None},
    {"python": Path(sys.executable)},
])
def test_the_api_accepts_its_types(arguments: dict[str, Any]) -> None:
    from kernodeck_diagnostic.api import validate

    given = {"device": "gpu", "device_index": 0, "timeout": 30, **arguments}
    options = validate(**given)
    assert options.device == given["device"]
    assert options.timeout_s == float(given["timeout"])


# -- the command line: the same rules, its own --flag words -------------------------------------

@pytest.mark.parametrize(("argv", "said"), [
    (["--timeout", "30s"], "argument --timeout: not a number of seconds: '30s'"),
    (["--timeout", "4"], "argument --timeout: must be between 5 and 120 seconds, got 4"),
    (["--timeout", "nan"], "argument --timeout: must be between 5 and 120 seconds, got nan"),
    (["--device-index", "1.5"], "argument --device-index: not a whole number: '1.5'"),
    (["--device-index", "-1"], "argument --device-index: must be 0 or more, got -1"),
    (["--device", "tpu"], "argument --device: must be gpu or cpu, got 'tpu'"),
    (["--device", "ROCm"], "so use --device gpu (the default)"),
])
def test_the_command_line_keeps_its_own_words(argv: list[str], said: str) -> None:
    env = clean_env({"PYTHONPATH": str(ROOT / "src")})
    result = subprocess.run([sys.executable, "-m", "kernodeck_diagnostic", *argv],
                            capture_output=True, text=True, env=env, timeout=60,
                            stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 2
    assert said in result.stderr
    assert "check(" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_the_command_line_reads_the_device_in_any_case(tmp_path: Path) -> None:
    """Typed text is converted first: --device CPU is the cpu mode, as it always was."""
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                      ["--device", "CPU", "--output", str(out)],
                      env=fake_gpu_env("cuda_pass", PYTHONPATH=os.pathsep.join(
                          [str(ROOT / "src"), str(ROOT / "tests" / "fakes")])))
    assert result.report is not None, result.stderr
    assert result.report["request"]["device"] == "cpu"


def test_the_callers_import_path_never_reaches_a_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check() in its caller's own interpreter gives the worker the caller's import path (a
    notebook's folders) and its first one: in a file of the worker's private folder,
    owner-only, never on a command line, which any user of the machine reads in
    /proc/<pid>/cmdline."""
    from kernodeck_diagnostic import api
    from kernodeck_diagnostic.supervision import supervisor

    planted = tmp_path / f"home-{secrets.token_hex(6)}" / "project"
    planted.mkdir(parents=True)
    monkeypatch.syspath_prepend(str(planted))
    seen: list[list[str]] = []
    modes: list[int] = []
    supervise = supervisor._supervise

    def spying(started: Any, request: list[str], **given: Any) -> Any:
        argv = [*started.argv, *request]  # the worker's whole command line
        seen.append(argv)
        places = argv[argv.index("--places") + 1]
        modes.append(os.stat(places).st_mode & 0o777)
        assert str(planted) in Path(places).read_text(encoding="utf-8")
        return supervise(started, request, **given)

    monkeypatch.setattr(supervisor, "_supervise", spying)
    report = api.check(device="cpu", timeout=30)
    assert report.code  # a verdict, whatever this interpreter's torch
    assert seen, "the worker was not started"
    assert not [arg for arg in seen[0] if planted.name in arg or str(planted.parent) in arg]
    assert modes == [0o600]


def test_the_callers_state_stays_in_the_report_when_the_worker_hangs_at_import(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """check() from a program: what the front knows of its caller (a kernel or not, the torch
    it holds) is in the report even when the worker never ends its import (here a torch whose
    import takes longer than the limit): the notebook's advice depends on it."""
    from conftest import FAKES
    from kernodeck_diagnostic import api

    monkeypatch.syspath_prepend(str(FAKES))
    monkeypatch.setenv("KD_FAKE_TORCH", "cuda_pass")
    monkeypatch.setenv("KD_FAKE_TORCH_IMPORT_DELAY", "60")
    report = api.check(device="cpu", timeout=5).to_dict()
    assert (report["code"], report["stage"]) == ("TIMEOUT", "import")
    assert report["runtime"]["caller"] == {"kernel": False, "torch_imported": False,
                                           "torch_version": None, "torch_origin": None,
                                           "torch_same": None}
    assert "CALLER_TORCH_DIFFERS" not in {finding["id"] for finding in report["findings"]}
