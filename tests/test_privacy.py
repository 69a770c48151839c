"""Planted secrets, names and paths never reach the report or the terminal."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

import pytest

from conftest import clean_env, fake_gpu_env, run_tool
from kernodeck_diagnostic.report.redact import Redactor


@pytest.fixture
def planted(tmp_path: Path) -> dict[str, str]:
    user = "zq" + secrets.token_hex(4)
    home = tmp_path / "home" / user
    home.mkdir(parents=True)
    return {
        "KD_PLANTED_USER": user,
        "HOME": str(home),
        "HF_TOKEN": "hf_" + secrets.token_hex(16),
        "AWS_SECRET_ACCESS_KEY": secrets.token_hex(20),
        "MY_SERVICE_PASSWORD": "pw-" + secrets.token_hex(8),
    }


def leaks(text: str, planted: dict[str, str]) -> list[str]:
    return [name for name, value in planted.items() if value in text]


def test_secrets_in_an_import_error_never_reach_report_or_terminal(
        pyz: Path, tmp_path: Path, planted: dict[str, str]) -> None:
    out = tmp_path / "report.json"
    result = run_tool(sys.executable, pyz, ["--output", str(out)],
                      env=fake_gpu_env("import_error_with_secrets", **planted))
    assert result.returncode == 4
    written = out.read_text(encoding="utf-8")
    for text in (written, result.stdout, result.stderr):
        assert leaks(text, planted) == []
        assert str(tmp_path) not in text
    message = result.report["error"]["message"]
    # What helps survives: the library, the file name, the shape of what went wrong.
    assert "libcudart.so.12" in message
    assert "c10.dll" in message
    assert "<redacted>@models.example.com" in message
    assert "hunter2" not in message


@pytest.mark.slow
def test_a_passing_real_check_carries_nothing_private(cpu_torch_python: Path, pyz: Path,
                                                      tmp_path: Path,
                                                      planted: dict[str, str]) -> None:
    work = tmp_path / ("work-" + planted["KD_PLANTED_USER"])
    work.mkdir()
    out = work / "report.json"
    result = run_tool(cpu_torch_python, pyz, ["--device", "cpu", "--output", str(out)],
                      env=clean_env(planted), cwd=work)
    assert result.returncode == 0
    written = out.read_text(encoding="utf-8")
    for text in (written, result.stdout, result.stderr):
        assert leaks(text, planted) == []
        assert str(cpu_torch_python.parent.parent) not in text
        assert "site-packages/" not in text  # the origin category may say site-packages


@pytest.mark.parametrize(("raw", "kept", "gone"), [
    ("cannot open /home/alice/.venv/lib/libcudnn.so.9: no such file", "<path>/libcudnn.so.9",
     "/home/alice"),
    (r"Error loading 'C:\Users\alice\env\Lib\site-packages\torch\lib\c10.dll'", r"<path>\c10.dll",
     "alice"),
    ("see https://bob:s3cret@example.com/repo", "https://<redacted>@example.com/repo", "s3cret"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123 rejected", "<token>", "ghp_abcdef"),
    ("key sk-proj-abcdefghijklmnop0123 rejected", "<token>", "sk-proj"),
    ("login as bob@gpu-node-17.cluster.local", "<user>@<host>", "gpu-node-17"),
    ("ssh root@10.0.0.7 refused", "ssh <user>@<host> refused", "10.0.0.7"),
    # Not a user at a host: a metric, a pinned version (it read <user>@<host> before).
    ("recall@10 fell below 0.9", "recall@10 fell below 0.9", "<user>"),
    ("pinned torch@2.5.1", "pinned torch@2.5.1", "<host>"),
    ("precision@k and ndcg@k fell", "precision@k and ndcg@k fell", "<host>"),
    ("mail a@b.example", "<user>@<host>", "b.example"),
    ("ssh alice@g1 refused", "<user>@<host>", "g1"),
    ("hits@k.", "hits@k.", "<host>"),
    ("file:///home/alice/data/x.bin missing", "file://<path>/x.bin", "alice"),
    ("Found no NVIDIA driver; see http://www.nvidia.com/Download/index.aspx",
     "http://www.nvidia.com/Download/index.aspx", "<path>"),
])
def test_redaction_rules(raw: str, kept: str, gone: str) -> None:
    redacted = Redactor().text(raw)
    assert kept in redacted
    assert gone not in redacted


def test_redaction_of_machine_names_and_secret_variables() -> None:
    redactor = Redactor(secrets=["opaque-secret-value"], names={"gpubox7": "<host>",
                                                                "carol": "<user>"})
    text = redactor.text("carol on gpubox7 sent opaque-secret-value; caroline stays")
    assert text == "<user> on <host> sent <redacted>; caroline stays"
    # A user's name before a number is no user@host, and still the user's name.
    assert redactor.text("carol@7 left") == "<user>@7 left"


def test_secret_variables_are_found_by_name() -> None:
    redactor = Redactor.for_this_machine({"HF_TOKEN": "value-one", "AWS_SECRET_ACCESS_KEY": "two-2",
                                          "WANDB_API_KEY": "three-3", "LANG": "en_US.UTF-8"})
    assert redactor.text("value-one two-2 three-3 en_US.UTF-8") == (
        "<redacted> <redacted> <redacted> en_US.UTF-8")


# The machine's fully qualified name, each row ONE way a message says it (issue 47: every test
# used a dotless host name, so the short name of a qualified one was never checked).
@pytest.mark.parametrize("said", [
    "NCCL WARN connect to gpu-node-17.cluster.local failed",
    "NCCL WARN connect to gpu-node-17 failed",
    "[gpu-node-17:1234] socket closed",
])
def test_a_qualified_host_name_is_hidden_whole_and_short(said: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setattr(socket, "gethostname", lambda: "gpu-node-17.cluster.local")
    hidden = Redactor.for_this_machine(environ={}).text(said)
    assert "gpu-node-17" not in hidden, hidden
    assert "<host>" in hidden, hidden


# A name whose LAST word says it holds a secret, one row per such word (a set member dropped
# would leave its row's value shown).
@pytest.mark.parametrize("name", ["deploy_key", "hubToken", "db-pass", "basic_auth",
                                  "user.session", "url_sig", "request_signature"])
def test_a_secret_named_by_its_last_word(name: str) -> None:
    from kernodeck_diagnostic.report.redact import is_secret_name

    assert is_secret_name(name)


@pytest.mark.parametrize(("argv", "hidden"), [
    (["train.py", "--pw", "hunter2"], ["hunter2"]),  # a two-letter option's name
    (["train.py", "--pw=hunter2"], ["hunter2"]),
    (["train.py", "--db-pass", "hunter2", "--epochs", "3"], ["hunter2"]),
])
def test_a_secret_options_value_is_taken_from_the_command(argv: list[str],
                                                          hidden: list[str]) -> None:
    from kernodeck_diagnostic.report.redact import argument_secrets

    assert argument_secrets(argv) == hidden


def test_a_home_written_with_a_final_slash_still_names_its_user() -> None:
    hidden = Redactor.for_this_machine(environ={"HOME": "/home/zqalice/"}).text(
        "owner zqalice denied")
    assert "zqalice" not in hidden, hidden


def test_a_secret_that_begins_another_hides_the_longer_whole() -> None:
    """Longest first: the shorter secret replaced first would leave the longer one's tail."""
    redactor = Redactor(secrets=["s3cret-value", "s3cret-value-and-more"])
    assert redactor.text("got s3cret-value-and-more") == "got <redacted>"


# unchanged() says a text needs no redaction only when text() would leave it as it is: one row
# per rule it short-cuts.
@pytest.mark.parametrize("said", [
    "epoch 3 done", "got opaque-secret-value here", "Authorization: Bearer abcdefghijklmnop",
    "password=hunter2hunter2", "see https://bob:s3cret@example.com/repo",
    "token ghp_abcdefghijklmnopqrstuvwxyz0123 rejected", "cannot open /home/alice/x.so"])
def test_unchanged_only_when_nothing_would_be_redacted(said: str) -> None:
    redactor = Redactor(secrets=["opaque-secret-value"])
    assert redactor.unchanged([said]) == (redactor.text(said) == said)
