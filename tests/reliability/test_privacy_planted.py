"""Privacy: private data is planted everywhere it can come from, then searched for everywhere.

Planted: environment variables named like real secrets (HF_TOKEN, AWS_SECRET_ACCESS_KEY,
GITHUB_TOKEN, WANDB_API_KEY) with random values; a home folder and a working folder with unique
names; the host name (a real one, set in a private UTS namespace); and warning and exception
messages carrying absolute POSIX and Windows paths through those folders, user@host, URLs with
credentials and token-shaped strings (hf_, ghp_, sk-). Searched: the JSON file, the terminal text
(in English and French), the JSON and markdown formats on stdout, and stderr. None may appear,
and the useful part must survive: the library's file name in the failed import.
"""

from __future__ import annotations

import secrets
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, fake_gpu_env

FORMATS = [["--format", "text"], ["--format", "text", "--lang", "fr"], ["--format", "json"],
           ["--format", "markdown"]]


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


@pytest.fixture
def planted(tmp_path: Path) -> dict[str, str]:
    """Unique values, and the folders that carry the unique names."""
    user = "zq" + secrets.token_hex(4)
    home = tmp_path / "home" / user
    home.mkdir(parents=True)
    work = tmp_path / ("work-zq" + secrets.token_hex(4))
    work.mkdir()
    alnum = string.ascii_letters + string.digits
    return {
        "user": user,
        "host": "zqhost" + secrets.token_hex(3),
        "home": str(home),
        "work": str(work),
        "work_name": work.name,
        "tmp_path": str(tmp_path),
        "HF_TOKEN": secrets.token_hex(16),
        "AWS_SECRET_ACCESS_KEY": secrets.token_urlsafe(30),
        "GITHUB_TOKEN": secrets.token_hex(20),
        "WANDB_API_KEY": secrets.token_hex(20),
        "hf_shape": "hf_" + _random(alnum, 34),
        "ghp_shape": "ghp_" + _random(alnum, 36),
        "sk_shape": "sk-proj-" + _random(alnum, 48),
        "password_in_url": "hunter2-",
        "venv_path": "venvs/gpu/lib",
        "windows_path": "AppData\\Local",
    }


def environment(planted: dict[str, str]) -> dict[str, str]:
    secrets_env = {name: planted[name] for name in
                   ("HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "WANDB_API_KEY")}
    return fake_gpu_env("private_data_in_messages", HOME=planted["home"],
                        KD_PLANTED_USER=planted["user"], KD_PLANTED_HOST=planted["host"],
                        KD_PLANTED_SHAPES=" ".join(planted[key] for key in
                                                   ("hf_shape", "ghp_shape", "sk_shape")),
                        **secrets_env)


def with_host_name(host: str, command: list[str]) -> list[str]:
    """``command`` in a private UTS namespace whose host name is ``host`` (root only)."""
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *command]


@pytest.fixture
def can_set_host_name() -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(with_host_name("zqprobe", ["hostname"]), capture_output=True,
                           text=True, timeout=30, check=False)
    if probe.stdout.strip() != "zqprobe":
        pytest.skip("a private host name needs root: " + probe.stderr.strip())


def leaks(text: str, planted: dict[str, str]) -> list[str]:
    return [name for name, value in planted.items() if value.lower() in text.lower()]


@pytest.mark.slow
@pytest.mark.usefixtures("can_set_host_name")
@pytest.mark.parametrize("form", FORMATS, ids=lambda form: "-".join(form[1::2]))
def test_planted_private_data_reaches_no_output(pyz: Path, planted: dict[str, str],
                                                form: list[str]) -> None:
    """Nothing planted in any output; the failed library's file name survives."""
    work = Path(planted["work"])
    out = work / "report.json"
    command = with_host_name(planted["host"],
                             [sys.executable, str(pyz), *form, "--output", str(out)])
    result = subprocess.run(command, capture_output=True, text=True, env=environment(planted),
                            cwd=work, timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 4, result.stdout + result.stderr
    written = out.read_text(encoding="utf-8")
    for where, text in (("report file", written), ("stdout", result.stdout),
                        ("stderr", result.stderr)):
        assert leaks(text, planted) == [], (where, text)
    for text in (written, result.stdout):
        assert "libcudnn.so.9" in text
        assert "cudnn64_9.dll" in text
    assert "<cwd>" in written  # the working folder itself, named by its label only
    assert "mirror.example.com" in written  # the host of a URL is kept, its credentials not


@pytest.mark.usefixtures("can_set_host_name")
def test_a_passing_check_carries_nothing_planted(pyz: Path, planted: dict[str, str]) -> None:
    """The same environment, a check that passes: the report holds nothing planted either."""
    env = environment(planted)
    env["KD_FAKE_TORCH"] = "cuda_pass"
    work = Path(planted["work"])
    command = with_host_name(planted["host"], [sys.executable, str(pyz), "--format", "json"])
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=work,
                            timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 0, result.stderr
    assert leaks(result.stdout + result.stderr, planted) == []


def test_secrets_in_arguments_do_not_echo_back_in_a_usage_error(pyz: Path,
                                                                planted: dict[str, str]) -> None:
    """A secret pasted by mistake as an argument is not repeated on the terminal."""
    env = clean_env({"HF_TOKEN": planted["HF_TOKEN"]})
    result = subprocess.run([sys.executable, str(pyz), "--device", planted["HF_TOKEN"]],
                            capture_output=True, text=True, env=env, timeout=60,
                            stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 2
    assert planted["HF_TOKEN"] not in result.stderr
