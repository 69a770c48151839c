"""Every secret rule, planted in every file kind and terminal output: none of them keeps it.

One row per rule: each rule of ``report/secret_rules.py`` (gitleaks' and detect-secrets' shapes,
a value drawn at random from the rule's own expression), each value shape the redactor knows
by another rule (a header, a signed URL's query, a cookie, a keyword, a PEM block), and each
option or param name that holds a secret (``--wandb-key``, ``-k``, ``{"wandb_key": ...}``). The
values are planted once in each carrier, beside a marker (``[[R012]]``) that must reach the
record (proof that the text holding the secret was kept, so its absence is the redaction's):

- the check (a fake torch whose import warns and fails with them): the report file, stdout,
  stderr;
- a ``Trial`` (a stage per row named with its value; params; the program's arguments; the first
  error): ``attempt.json``, ``events.jsonl``, ``summary.txt``, its stderr (end line and
  ``summary=True`` table). ``trace.txt`` is local only and not redacted (docs/trial.md), so it
  is not searched;
- ``ramp`` (the program's arguments, which it echoes on stderr as it fails): ``ramp.json``,
  ``ramp.md``, stdout, stderr;
- ``compare`` of two such attempts, and ``summarize`` of the report and the attempts, in text
  and JSON.

Near misses stay as they are: ordinary values named like a secret's neighbours.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import string
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC, clean_env, run_tool
from kernodeck_diagnostic.report.redact import Redactor, hidden_options, is_secret_name
from kernodeck_diagnostic.report.secret_rules import CONTEXT_RULES, PREFIX_RULES

try:
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python 3.9, 3.10
    import sre_constants
    import sre_parse

ALNUM = string.ascii_letters + string.digits
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="fake torch and a shell's argv")


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


# -- a value drawn from a rule's own expression ---------------------------------------------------

_CATEGORIES = {sre_constants.CATEGORY_DIGIT: string.digits,
               sre_constants.CATEGORY_WORD: ALNUM + "_", sre_constants.CATEGORY_SPACE: " \t"}


def _alphabet(items: list[tuple[Any, Any]]) -> str:
    """The characters a class ``[...]`` accepts (of printable ASCII, for a negated one)."""
    negate = bool(items) and items[0][0] is sre_constants.NEGATE
    chosen: set[str] = set()
    for op, value in items[1:] if negate else items:
        if op is sre_constants.LITERAL:
            chosen.add(chr(value))
        elif op is sre_constants.RANGE:
            chosen.update(chr(code) for code in range(value[0], value[1] + 1))
        elif op is sre_constants.CATEGORY:
            chosen.update(_CATEGORIES[value])
    if negate:
        chosen = set(ALNUM) - chosen
    return "".join(sorted(chosen))


def _drawn(parsed: Any) -> str:
    """A string the parsed expression matches: each repeat at its least count (at least once),
    each branch one drawn at random, each character drawn from its class; lookarounds and
    anchors add nothing."""
    out = []
    for op, value in parsed:
        if op is sre_constants.LITERAL:
            out.append(chr(value))
        elif op is sre_constants.IN:
            out.append(secrets.choice(_alphabet(value)))
        elif op is sre_constants.ANY:
            out.append(secrets.choice(ALNUM))
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, high, item = value
            count = low if low else min(high, 1)
            out.append("".join(_drawn(item) for _ in range(count)))
        elif op is sre_constants.SUBPATTERN:
            out.append(_drawn(value[-1]))
        elif op is sre_constants.BRANCH:
            out.append(_drawn(secrets.choice(value[1])))
        elif op in (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            continue
        else:
            raise AssertionError(f"no sample for {op}")
    return "".join(out)


def sample(pattern: str) -> str:
    return _drawn(sre_parse.parse(pattern))


# -- the rows ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    id: str
    text: str  # what is planted (a message's words, an argument)
    secret: str  # what must be nowhere
    name: str = ""  # an option's name: the value is given after it (``--key VALUE``)
    param: str = ""  # a param's name: the value is given under it
    whole_line: bool = False  # the rule hides to the end of the line: planted last


def _shape_rows() -> Iterator[Row]:
    for rule in PREFIX_RULES:
        prefix = rule.prefixes[secrets.randbelow(len(rule.prefixes))]
        rest = sample(rule.rest)
        # The secret is the whole value; what follows the prefix must go with it.
        yield Row("rule:" + rule.rule, prefix + rest, rest if len(rest) >= 8 else prefix + rest)
    for context in CONTEXT_RULES:
        value = sample(context.pattern)
        yield Row("rule:" + context.rule, value, value)


def _value_rows() -> Iterator[Row]:
    """The value shapes of the redactor's other rules, written as people and programs write
    them (not drawn from the expressions)."""
    sig = _random(ALNUM + "%", 43)
    yield Row("azure-sas-sig", "https://acct.blob.core.windows.net/c/b.bin?sv=2022-11-02&ss=b"
              f"&srt=o&sp=r&se=2030-01-01T00:00:00Z&spr=https&sig={sig}", sig)
    amz = _random("0123456789abcdef", 64)
    yield Row("s3-x-amz-signature", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
              f"&X-Amz-Date=20300101T000000Z&X-Amz-Expires=900&X-Amz-Signature={amz}"
              "&X-Amz-SignedHeaders=host", amz)
    token = _random(ALNUM + "/+", 60)
    yield Row("s3-x-amz-security-token", f"https://b.s3.amazonaws.com/k?X-Amz-Security-Token={token}",
              token)
    gcs = _random(ALNUM + "%", 40)
    yield Row("gcs-signature", "https://storage.googleapis.com/b/o?GoogleAccessId=x&Expires=1"
              f"&Signature={gcs}", gcs)
    goog = _random("0123456789abcdef", 64)
    yield Row("gcs-x-goog-signature", "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4"
              f"&X-Goog-Signature={goog}", goog)
    hook = f"T{_random(ALNUM, 10)}/B{_random(ALNUM, 10)}/{_random(ALNUM, 24)}"
    yield Row("slack-webhook", f"https://hooks.slack.com/services/{hook}", hook.rsplit("/", 1)[-1])
    basic = _random(ALNUM + "+/", 28) + "=="
    yield Row("authorization-basic", f"Authorization: Basic {basic}", basic)
    digest = _random(ALNUM, 24)
    yield Row("proxy-authorization", f"Proxy-Authorization: Digest {digest}", digest)
    key = _random(ALNUM, 32)
    yield Row("x-api-key-header", f"x-api-key: {key}", key)
    auth = _random(ALNUM, 30)
    yield Row("x-auth-token-header", f"X-Auth-Token: {auth}", auth)
    private = _random(ALNUM, 20)
    yield Row("private-token-header", f"PRIVATE-TOKEN: {private}", private)
    telegram = f"{_random(string.digits, 9)}:AA{_random(ALNUM + '_-', 33)}"
    yield Row("telegram-bot-token", f"https://api.telegram.org/bot{telegram}/getMe", telegram)
    glsa = f"glsa_{_random(ALNUM, 32)}_{_random('0123456789abcdef', 8)}"
    yield Row("grafana-glsa", glsa, glsa)
    dop = "dop_v1_" + _random("0123456789abcdef", 64)
    yield Row("digitalocean-dop", dop, dop)
    bearer = _random(ALNUM, 30) + "7"
    yield Row("bearer", f"Authorization: Bearer {bearer}", bearer)
    azure = _random(ALNUM + "+/", 86) + "=="
    yield Row("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=a;"
              f"AccountKey={azure};EndpointSuffix=core.windows.net", azure)
    password = _random(ALNUM, 14)
    yield Row("keyword-password", f"password={password}", password)
    quoted = _random(ALNUM, 20)
    yield Row("keyword-quoted-json", f'{{"wandb_key": "{quoted}"}}', quoted)
    url = _random(ALNUM, 12)
    yield Row("url-credentials", f"postgres://app:{url}/x@db.example.com/prod", url)
    jwt = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _random(ALNUM + "-_", 30) + "."
           + _random(ALNUM + "-_", 43))
    yield Row("jwt-in-message", jwt, jwt.split(".", 1)[1])
    pem = _random(ALNUM + "+/", 64)
    yield Row("pem-private-key", f"-----BEGIN RSA PRIVATE KEY----- MIIEow{pem} "
              "-----END RSA PRIVATE KEY-----", pem)
    cookie = _random(ALNUM, 26)
    yield Row("cookie-header", f"Cookie: _sid={cookie}; theme=dark", cookie, whole_line=True)


def _name_rows() -> Iterator[Row]:
    """Options and params named like secrets, each with a value of no secret shape."""
    for option in ("--wandb-key", "-k", "--key", "--openai-key", "--signing-key", "--bearer",
                   "--session", "--pw", "--privkey", "--password", "--api-key", "--token",
                   "-p", "--hf-token", "--client-secret"):
        value = "v" + secrets.token_hex(8)
        yield Row("option:" + option, value, value, name=option)
    for option in ("--signing-key=", "--pw=", "--session="):
        value = "v" + secrets.token_hex(8)
        yield Row("option:" + option, option + value, value)
    for param in ("wandb_key", "openai_key", "signing_key", "bearer", "session", "pw", "privkey",
                  "password", "apiKey", "hf_token", "db.password"):
        value = "v" + secrets.token_hex(8)
        yield Row("param:" + param, value, value, param=param)


ROWS = [*_shape_rows(), *_value_rows(), *_name_rows()]
BY_ID = {row.id: row for row in ROWS}
assert len(BY_ID) == len(ROWS), "one row per rule"


def marker(index: int) -> str:
    return f"[[R{index:03d}]]"


def _messages(rows: list[Row], limit: int) -> list[str]:
    """The message rows (not the names) packed into messages of at most ``limit`` characters,
    each ``marker value`` pair apart; a row whose rule hides to the end of the line last."""
    messages: list[str] = []
    current = ""
    for index, row in enumerate(rows):
        if row.name or row.param:
            continue
        piece = f" {marker(index)} {row.text} ;"
        if current and (len(current) + len(piece) > limit or current.endswith("#")):
            messages.append(current)
            current = ""
        current += piece + (" #" if row.whole_line else "")
    return [*messages, current] if current else messages


# -- the carriers ---------------------------------------------------------------------------------

FAKE_TORCH = """
import json, sys, warnings
messages = json.loads(open({path!r}, encoding="utf-8").read())
for message in messages[:-1]:
    warnings.warn("planted" + message)
raise ImportError("planted" + messages[-1])
"""

TRIAL_APP = """
import json, sys
from kernodeck_diagnostic import Trial
planted = json.loads(open(sys.argv[2], encoding="utf-8").read())
with Trial(sys.argv[1], params=planted["params"], summary=True) as trial:
    for name in planted["stages"]:
        with trial.stage(name):
            pass
    trial.expect("planted contract", False, planted["stages"][0])
    with trial.stage("last"):
        raise RuntimeError("planted" + planted["error"])
"""

ECHO_AND_FAIL = "import sys; print('failed with', *sys.argv[1:], file=sys.stderr); sys.exit(3)"


@dataclass
class Outputs:
    files: dict[str, str]  # where -> text: every file and stream the tool wrote or printed


# Where each kind of row's marker must be: the texts that held the value were kept.
MESSAGE_CARRIERS = ("check report", "trial a attempt.json", "trial a events.jsonl", "ramp.json")
OPTION_CARRIERS = ("trial a attempt.json", "ramp.json")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _argv(rows: list[Row]) -> list[str]:
    argv: list[str] = []
    for index, row in enumerate(rows):
        if row.param:
            continue
        # A message row as one argument with its marker; an option's value after its name.
        if row.name:
            argv += [marker(index), row.name, row.text]
        elif row.id.startswith("option:"):  # --name=value, as one argument
            argv += [marker(index), row.text]
        else:
            argv.append(f"{marker(index)} {row.text}")
    return argv


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    tmp = tmp_path_factory.mktemp("planted")
    env = clean_env({"PYTHONPATH": str(SRC), "LC_ALL": "C.UTF-8"})
    files: dict[str, str] = {}
    # The check: 20 warnings (the worker keeps 20 per stage) and the error (2000 characters).
    (tmp / "messages.json").write_text(json.dumps(_messages(ROWS, 1800)), encoding="utf-8")
    messages = json.loads(_read(tmp / "messages.json"))
    assert len(messages) <= 21, len(messages)
    fake = tmp / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(FAKE_TORCH.format(path=str(tmp / "messages.json")),
                                      encoding="utf-8")
    metadata = fake.parent / "torch-2.7.0.dist-info"  # as pip install --target leaves it
    metadata.mkdir()
    (metadata / "INSTALLER").write_text("pip\n", encoding="utf-8")
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.7.0\n",
                                       encoding="utf-8")
    check = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                     ["--output", str(tmp / "report.json")], cwd=tmp,
                     env={**env, "PYTHONPATH": os.pathsep.join([str(fake.parent), str(SRC)])})
    assert check.report is not None, check.stderr
    files.update({"check report": _read(tmp / "report.json"), "check stdout": check.stdout,
                  "check stderr": check.stderr})
    # Two Trials: a stage per message row, a param per param row, the arguments of the rest.
    stages = [f"{marker(index)} {row.text}" for index, row in enumerate(ROWS)
              if not (row.name or row.param)]
    params = {"batch": 8, **{row.param: row.text for row in ROWS if row.param},
              **{f"note_{index}": f"{marker(index)} {row.text}" for index, row in enumerate(ROWS)
                 if not (row.name or row.param)}}
    (tmp / "trial.json").write_text(json.dumps({"stages": stages, "params": params,
                                                "error": messages[-1]}), encoding="utf-8")
    (tmp / "app.py").write_text(TRIAL_APP, encoding="utf-8")
    for run in ("a", "b"):
        done = subprocess.run([sys.executable, str(tmp / "app.py"), str(tmp / "runs" / run),
                               str(tmp / "trial.json"), *_argv(ROWS)], capture_output=True,
                              text=True, env=env, timeout=180, check=False)
        assert done.returncode == 1, done.stderr[-3000:]
        (folder,) = (entry for entry in (tmp / "runs" / run).iterdir() if entry.is_dir())
        for name in ("attempt.json", "events.jsonl", "summary.txt"):
            if (folder / name).exists():
                files[f"trial {run} {name}"] = _read(folder / name)
        # Python's own traceback of the program's error is the program's, not the tool's.
        files[f"trial {run} stderr"] = done.stderr.split("Traceback (most recent call last)")[0]
    # A ramp of the same program's arguments, echoed by the program as it fails.
    out = tmp / "ramp"
    ramp = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                    ["ramp", "--axis", "batch", "--start", "1", "--stop", "2", "--out", str(out),
                     "--", sys.executable, "-c", ECHO_AND_FAIL, "--batch", "{batch}",
                     *_argv(ROWS)], env=env)
    assert ramp.returncode == 24, ramp.stderr[-3000:]  # RAMP_NOTHING_PASSED
    files.update({"ramp.json": _read(out / "ramp.json"), "ramp.md": _read(out / "ramp.md"),
                  "ramp stdout": ramp.stdout, "ramp stderr": ramp.stderr})
    # compare and summarize of what the tool wrote.
    attempts = [next(entry for entry in (tmp / "runs" / run).iterdir() if entry.is_dir())
                for run in ("a", "b")]
    for form in ("text", "json"):
        done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                        ["compare", str(attempts[0]), str(attempts[1]), "--format", form], env=env)
        files[f"compare {form}"] = done.stdout + done.stderr
        done = run_tool(sys.executable, ["-m", "kernodeck_diagnostic"],
                        ["summarize", str(tmp / "report.json"), str(tmp / "runs"),
                         "--format", form], env=env)
        files[f"summarize {form}"] = done.stdout + done.stderr
    return Outputs(files)


def _message_row(row: Row) -> bool:
    return not (row.name or row.param)


@posix_only
@pytest.mark.parametrize("row_id", sorted(BY_ID))
def test_no_planted_secret_reaches_any_file_or_terminal(outputs: Outputs, row_id: str) -> None:
    row = BY_ID[row_id]
    index = ROWS.index(row)
    assert len(row.secret) >= 8, row  # a value long enough not to be found by chance
    kept = [where for where, text in outputs.files.items() if row.secret in text]
    assert kept == [], (row, kept)
    # The texts that held it were kept (its marker is there): its absence is the redaction's.
    if row.param:
        for run in ("a", "b"):
            params = json.loads(outputs.files[f"trial {run} attempt.json"])["params"]
            assert params[row.param] == "<redacted>", params
        return
    for where in MESSAGE_CARRIERS if _message_row(row) else OPTION_CARRIERS:
        assert marker(index) in outputs.files[where], (row, where)


# -- the rules themselves, without a process -----------------------------------------------------

@pytest.mark.parametrize("row_id", sorted(row.id for row in ROWS if _message_row(row)))
def test_each_message_shape_is_hidden_and_the_message_kept(row_id: str) -> None:
    row = BY_ID[row_id]
    said = Redactor(names={}, folders={}).text(f"RuntimeError: request failed: {row.text} (retry)")
    assert row.secret not in said, said
    assert said.startswith("RuntimeError: request failed:"), said


@pytest.mark.parametrize("row_id", sorted(row.id for row in ROWS if row.name))
def test_each_secret_option_hides_its_value(row_id: str) -> None:
    row = BY_ID[row_id]
    assert hidden_options(["app.py", row.name, row.text, "--batch", "8"]) == [
        "app.py", row.name, "<redacted>", "--batch", "8"]


# Ordinary names and values: what is kept, and the one false redaction chosen (a name whose
# last word is ``key``, ``token``, ``pass``, ``auth`` or ``session`` hides its value: privacy
# first; a name that goes on after the word does not).
KEPT_NAMES = ["--key-dim", "--num-key-value-heads", "--keys", "--token-limit", "--max-tokens",
              "--max-new-tokens", "tokenizer", "--pass-count", "auth_type", "--session-name",
              "--batch-size", "--model", "author", "--hotkey", "--monkey", "--signature-check",
              "--sig-figs", "--keyframe", "--passes"]
HIDDEN_NAMES = ["--key", "--sort-key", "--first-pass", "--no-auth", "--session", "--sig"]


@pytest.mark.parametrize("name", KEPT_NAMES)
def test_ordinary_options_keep_their_values(name: str) -> None:
    assert not is_secret_name(name.lstrip("-"))
    assert hidden_options(["app.py", name, "64"]) == ["app.py", name, "64"]


@pytest.mark.parametrize("name", HIDDEN_NAMES)
def test_names_ending_with_a_secrets_word_hide_their_values(name: str) -> None:
    assert hidden_options(["app.py", name, "64"]) == ["app.py", name, "<redacted>"]


NEAR_MISSES = [
    "batch_size=64", "model=meta-llama/Llama-3.1-8B", "key_dim=64", "max_tokens=512",
    "--key-dim 64", "X-Request-Id: 3f2a", "the key: value store", "secret: not found",
    "3f786850e387550fdab836ed7e6dc881de23001b",  # a commit id, not a Sourcegraph token
    "550e8400-e29b-41d4-a716-446655440000",  # a UUID, not Heroku's old key
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "torch 2.5.1+cu124 on sm_90", "ACCEPTED", "SKIPPED 12 tests", "API-version 2",
    "pass 3 of 8", "a|b", "took 12:34", "Signature of forward() changed",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_ordinary_values_stay_as_they_are(text: str) -> None:
    assert Redactor(names={}, folders={}).text(text) == text


def test_every_rule_has_a_row() -> None:
    ids = {rule.rule for rule in PREFIX_RULES} | {rule.rule for rule in CONTEXT_RULES}
    assert len(ids) == len(PREFIX_RULES) + len(CONTEXT_RULES), "one id per rule"
    assert {"rule:" + rule for rule in ids} <= set(BY_ID)


@pytest.mark.long
def test_the_rules_are_bounded_on_hostile_text() -> None:
    """Repetitions of each rule's start: every search ends (the child's limit is the bound)."""
    script = textwrap.dedent("""
        from kernodeck_diagnostic.report.redact import Redactor
        from kernodeck_diagnostic.report.secret_rules import PREFIX_RULES
        redactor = Redactor(names={}, folders={})
        units = sorted({prefix for rule in PREFIX_RULES for prefix in rule.prefixes})
        units += ["1:", "1111111111:", "aQ~", "a.atlasv1.", "a_mmk", "1|", "a.webhook.office.com",
                  "M" + "a" * 24 + ".", "x-a-", "x-api-key:", "Cookie:", "a=", "a.b=", "'a':",
                  "_-", "Authorization: Basic "]
        for unit in units:
            redactor.text(unit * (2**18 // len(unit)))
        print("done")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=clean_env({"PYTHONPATH": str(SRC)}), timeout=600, check=False)
    assert done.stdout.strip() == "done", done.stderr[-2000:]


def test_a_secret_named_variable_is_hidden_everywhere() -> None:
    value = "w" + secrets.token_hex(10)
    redactor = Redactor.for_this_machine({"WANDB_KEY": value, "PWD": "/srv/x", "HOME": "/root"})
    assert value not in redactor.text(f"login with {value}x failed")
    assert re.search("/srv/x", redactor.text("in /srv/x")) is None  # a folder: still a path
