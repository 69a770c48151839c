"""Secrets kept nowhere: planted in a command's arguments, a Trial's params, messages and the
last line of stderr, searched for in every file and on the terminal.

The shapes are those the public secret-scanning rule sets list (gitleaks, detect-secrets): one
planted case per shape, and the near misses that must stay as they are (a metric, a pinned
version, a commit id, prose). A hostile megabyte of text goes through every rule in bounded time
(in a child with a time limit: no timing assertion, only an end).
"""

from __future__ import annotations

import json
import secrets
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import SRC, clean_env, run_tool
from kernodeck_diagnostic.report.redact import (
    Redactor,
    argument_secrets,
    hidden_options,
    hide_secret_keys,
    is_secret_name,
)

ALNUM = string.ascii_letters + string.digits
REDACTED = "<redacted>"


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def _b64url(length: int) -> str:
    return _random(ALNUM + "-_", length)


# One planted case per shape: the text around it, and the secret part that must be gone.
SHAPES = {
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _b64url(30) + "." + _b64url(43),
    "pem": ("-----BEGIN RSA PRIVATE KEY----- MIIEow" + _random(ALNUM + "+/", 64)
            + " -----END RSA PRIVATE KEY-----"),
    "pem_cut": "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNz" + _random(ALNUM, 40),
    "bearer": "Authorization: Bearer " + _random(ALNUM, 20) + "7",
    "stripe": "sk_live_" + _random(ALNUM, 24),
    "google": "AIza" + _random(ALNUM + "-_", 35),
    "npm": "npm_" + _random(ALNUM, 36),
    "pypi": "pypi-AgEIcHlwaS5vcmc" + _b64url(60),
    "aws_session": "ASIA" + _random(string.ascii_uppercase + string.digits, 16),
    "azure": "AccountKey=" + _random(ALNUM + "+/", 40) + "==",
    "keyword": "password=" + _random(ALNUM, 12),
    "quoted_keyword": "{'api_key': '" + _random(ALNUM, 20) + "'}",
    "variable": "HF_TOKEN=" + _random(ALNUM, 20),
}
# What is hidden of each: the whole shape, or the value after its name.
SECRET_PART = {
    "bearer": lambda text: text.split()[-1],
    "azure": lambda text: text.split("=", 1)[1],
    "keyword": lambda text: text.split("=", 1)[1],
    "quoted_keyword": lambda text: text.split("'")[3],
    "variable": lambda text: text.split("=", 1)[1],
}
NEAR_MISSES = [
    "precision@k", "torch@2.5.1", "recall@10", "3f786850e387550fdab836ed7e6dc881de23001b",
    "the bearer of bad news", "Bearer authentication failed", "max_tokens=512",
    "--max-new-tokens 64", "secret: not found", "ASIA is a continent", "sk_live is a prefix",
    "tokenizer=bert-base", "http://localhost:8080/a@b", "use AccountKey in the portal",
    "-----BEGIN CERTIFICATE-----", "eyJ alone",
]


def _redactor() -> Redactor:
    return Redactor(names={}, folders={})


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_secret_shape_is_hidden_in_a_message(shape: str) -> None:
    planted = SHAPES[shape]
    secret = SECRET_PART.get(shape, lambda text: text)(planted)
    said = _redactor().text(f"RuntimeError: request failed with {planted} (retrying)")
    assert secret not in said, said
    assert "RuntimeError: request failed with" in said  # the message is still the message


def test_a_url_password_holding_a_slash_is_hidden_whole() -> None:
    said = _redactor().text("could not connect to postgres://app:pa/ss@db.example.com/prod")
    assert "pa" not in said.replace("app", "")
    assert "db.example.com/prod" in said  # the host and path stay: a fact
    assert _redactor().text("redis://:s3cr3t-pw@cache:6379") == "redis://<redacted>@cache:6379"


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_stay_as_they_are(text: str) -> None:
    assert _redactor().text(text) == text


@pytest.mark.long
def test_each_rule_is_bounded_on_a_hostile_megabyte() -> None:
    """Repetitions that make a backtracking rule scan again from each position: every one ends
    (the child's time limit is the bound; linear rules take about a second each)."""
    script = textwrap.dedent("""
        import sys
        from kernodeck_diagnostic.report.redact import Redactor
        redactor = Redactor.for_this_machine()
        size = 2**20
        units = ["a", "a.", "1.", "/a", "a@", "a:", "a://", "eyJ-", "eyJa.", "x_password.",
                 "-----BEGIN PRIVATE KEY-----", "-----BEGIN ", "Bearer ", "password=",
                 "AccountKey=", "postgres://u:p", "sk_live_", "'/a b", "C:\\\\a b", "/home/a b/",
                 "[", "\\u202e", "a-", "--password "]
        for unit in units:
            redactor.text(unit * (size // len(unit)))
        print("done")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=clean_env({"PYTHONPATH": str(SRC)}), timeout=300, check=False)
    assert done.stdout.strip() == "done", done.stderr[-2000:]


# -- arguments and parameters, by name ----------------------------------------------------------

def test_secret_options_are_hidden_by_name_and_their_values_given_to_the_redactor() -> None:
    argv = ["app.py", "--password", "hunter2x", "--api-key=k3yk3yk3y", "-p", "pw0rdpw0rd",
            "--token=t0k3nt0k3n", "--max-tokens", "512", "HF_TOKEN=hfhfhfhf", "--model", "m",
            "--use-auth-token", "--batch", "8", "db.password=dbpwdbpw"]
    assert hidden_options(argv) == [
        "app.py", "--password", "<redacted>", "--api-key=<redacted>", "-p", "<redacted>",
        "--token=<redacted>", "--max-tokens", "512", "HF_TOKEN=<redacted>", "--model", "m",
        "--use-auth-token", "--batch", "8", "db.password=<redacted>"]
    assert argument_secrets(argv) == ["hunter2x", "k3yk3yk3y", "pw0rdpw0rd", "t0k3nt0k3n",
                                      "hfhfhfhf", "dbpwdbpw"]
    assert [is_secret_name(name) for name in ("apiKey", "hf_token", "tokenizer", "max_tokens",
                                              "client_secret", "author")] == [
        True, True, False, False, True, False]


def test_params_named_like_secrets_are_hidden_at_any_depth() -> None:
    params = {"batch": 8, "password": "p", "api_key": "k", "token": "t",
              "db": {"secret": "s", "host": "h"}, "runs": [{"hf_token": "x"}], "max_tokens": 3}
    assert hide_secret_keys(params) == {
        "batch": 8, "password": "<redacted>", "api_key": "<redacted>", "token": "<redacted>",
        "db": {"secret": "<redacted>", "host": "h"}, "runs": [{"hf_token": "<redacted>"}],
        "max_tokens": 3}


def _planted_argv() -> dict[str, str]:
    return {"--password": "pw-" + secrets.token_hex(8), "--api-key=": "key-" + secrets.token_hex(8),
            "-p": "p-" + secrets.token_hex(8), "--token=": "tok-" + secrets.token_hex(8)}


def _argv(planted: dict[str, str]) -> list[str]:
    out: list[str] = []
    for option, value in planted.items():
        out += [option + value] if option.endswith("=") else [option, value]
    return out


# Prints every argument on stderr, then fails: the last line of stderr holds them all.
ECHO_AND_FAIL = "import sys; print('failed with', *sys.argv[1:], file=sys.stderr); sys.exit(3)"


def test_a_ramp_keeps_no_secret_argument(tmp_path: Path) -> None:
    planted = _planted_argv()
    out = tmp_path / "ramp"
    done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["ramp", "--axis", "batch", "--start", "1", "--stop", "2", "--out", str(out),
                     "--", sys.executable, "-c", ECHO_AND_FAIL, "--batch", "{batch}",
                     *_argv(planted)],
                    env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}))
    assert done.returncode == 24, done.stderr  # RAMP_NOTHING_PASSED
    record = json.loads((out / "ramp.json").read_text(encoding="utf-8"))
    assert "<redacted>" in record["command"]
    assert "failed with" in (record["attempts"][0]["error"] or "")
    for where, text in (("ramp.json", (out / "ramp.json").read_text(encoding="utf-8")),
                        ("ramp.md", (out / "ramp.md").read_text(encoding="utf-8")),
                        ("stdout", done.stdout), ("stderr", done.stderr)):
        assert [value for value in planted.values() if value in text] == [], where


def test_resume_check_prints_no_secret_of_the_failing_run(tmp_path: Path) -> None:
    planted = _planted_argv()
    url_password = "urlpw-" + secrets.token_hex(6)
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent(f"""
        import sys
        print("connecting to postgres://app:{url_password}/x@db.example.com", file=sys.stderr)
        print("\\x1b]0;owned\\x07 failed with", *sys.argv[1:], "\\u202e", file=sys.stderr)
        sys.exit(5)
    """), encoding="utf-8")
    for form in ("text", "markdown"):
        done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                        ["resume-check", "--ledger", str(tmp_path / f"{form}.jsonl"),
                         "--stop-after", "30", "--format", form, "--",
                         sys.executable, str(app), *_argv(planted)],
                        env=clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"}))
        assert done.returncode == 30, done.stderr  # RESUME_RUN_FAILED
        assert "failed with" in done.stdout
        shown = done.stdout + done.stderr
        assert [value for value in planted.values() if value in shown] == [], form
        assert url_password not in shown
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in shown, (form, raw)


TRIAL_APP = """
import sys
from kernodeck_diagnostic import Trial
params = {"batch": 8, "password": sys.argv[2], "api_key": sys.argv[3],
          "nested": {"secret": sys.argv[4]}, "token": sys.argv[5]}
with Trial(sys.argv[1], params=params) as trial:
    with trial.stage("call"):
        raise RuntimeError("refused: " + " ".join(sys.argv[6:]))
"""


def test_a_trial_keeps_no_secret_argument_param_or_shape(tmp_path: Path) -> None:
    planted = _planted_argv()
    params = ["par-" + secrets.token_hex(8) for _ in range(4)]
    shapes = [SHAPES["jwt"], SHAPES["pem"], SHAPES["bearer"], SHAPES["stripe"]]
    app = tmp_path / "app.py"
    app.write_text(TRIAL_APP, encoding="utf-8")
    done = subprocess.run([sys.executable, str(app), str(tmp_path / "runs"), *params, *shapes,
                           *_argv(planted)], capture_output=True, text=True, timeout=120,
                          env=clean_env({"PYTHONPATH": str(SRC)}), check=False)
    assert done.returncode == 1, done.stderr[-2000:]
    (folder,) = (entry for entry in (tmp_path / "runs").iterdir() if entry.is_dir())
    attempt = json.loads((folder / "attempt.json").read_text(encoding="utf-8"))
    assert attempt["params"]["password"] == REDACTED
    assert attempt["params"]["nested"] == {"secret": "<redacted>"}
    assert attempt["params"]["batch"] == 8
    for name in ("attempt.json", "events.jsonl"):
        text = (folder / name).read_text(encoding="utf-8")
        kept = [value for value in [*planted.values(), *params] if value in text]
        kept += [shape for shape in shapes if SECRET_PART.get(
            "bearer" if shape.startswith("Authorization") else "", lambda s: s)(shape) in text]
        assert kept == [], name
