"""Real test environments, built once per machine and cached outside the clone, keyed by version.

    $ python tests/envs.py            # build what is missing, print where each one is
    notorch        .../kernodeck-diagnostic-test-envs/notorch-py3.11
    torch-cpu      .../kernodeck-diagnostic-test-envs/torch-2.13.0-py3.11
    ...

Each is a plain venv made from this interpreter's base Python:
- ``notorch``: no torch at all (a real missing torch);
- ``torch-cpu``: ``torch==2.13.0``, a real CPU-only build;
- ``torch-broken``: a hard-linked copy of ``torch-cpu`` with ``libtorch_cpu.so`` deleted (a real
  import failure; the copy costs no disk space and leaves ``torch-cpu`` intact);
- ``torch-cuda``: ``torch==2.14.1``, a real CUDA 13.0 build (about 5.5 GB), which on a machine with
  no GPU really reports no driver;
- ``torch-cpu-torchvision`` and ``torch-cuda-torchvision``: hard-linked copies of ``torch-cpu``
  and ``torch-cuda`` with ``torchvision==0.29.1`` installed without its dependencies: a real
  extension built for another torch (it declares ``torch>=2.14.0``), and the matching pair;
- ``plot``: ``matplotlib==3.11.2`` and no torch: the front of ``ramp`` drawing its plot;
- ``torch-cpu-frameworks``: a hard-linked copy of ``torch-cpu`` with PyTorch Lightning,
  Transformers and Accelerate (and their dependencies, torch held at 2.13.0): the trial's
  adapters, also in a real Jupyter kernel (``ipykernel``, ``jupyter_client``).
- ``torch-cpu-kernel``: a hard-linked copy of ``torch-cpu`` with ``ipykernel``, ``nbclient`` and
  ``jupyter_client`` (and what they need): real Jupyter kernels next to a real torch.

The fast tier (``scripts/test --fast``, which sets ``KERNODECK_TEST_FAST``) refuses every one of
them: the tests that need one are marked ``slow``.

An environment is built in a temporary folder and renamed into place when complete, under a lock,
so an interrupted build is never mistaken for a finished one. The cache folder is
``$KERNODECK_TEST_ENVS`` or ``~/.cache/kernodeck-diagnostic-test-envs``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

TORCH_CPU_VERSION = "2.13.0"
TORCH_CUDA_VERSION = "2.14.1"
TORCHVISION_VERSION = "0.29.1"  # declares torch>=2.14.0 (issue 15's mismatch)
PIP_TIMEOUT_S = 1800
PY_TAG = f"py{sys.version_info.major}.{sys.version_info.minor}"
BROKEN_LIBRARY = "libtorch_cpu.so"


def cache_root() -> Path:
    configured = os.environ.get("KERNODECK_TEST_ENVS")
    default = Path.home() / ".cache" / "kernodeck-diagnostic-test-envs"
    root = Path(configured) if configured else default
    root.mkdir(parents=True, exist_ok=True)
    return root


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python3*/site-packages"))


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _base_python() -> str:
    # A venv made from inside a venv must start from the real interpreter.
    return getattr(sys, "_base_executable", None) or sys.executable


def _run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, timeout=PIP_TIMEOUT_S, stdin=subprocess.DEVNULL)


FAST_TIER_VARIABLE = "KERNODECK_TEST_FAST"  # set by `scripts/test --fast`


def _build(name: str, make: object) -> Path:
    if os.environ.get(FAST_TIER_VARIABLE):
        # The fast tier runs no real torch environment, built or cached: a test that needs one
        # is marked slow, and this says which test is not.
        raise RuntimeError(f"the fast tier uses no real environment ({name}): mark the test slow")
    root = cache_root()
    final = root / name
    if (final / ".complete").exists():
        return final
    with _locked(root):
        if (final / ".complete").exists():
            return final
        partial = root / (name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)
        make(partial)  # type: ignore[operator]
        (partial / ".complete").write_text("ok\n")
        # A venv records its own location in pyvenv.cfg only through bin/ symlinks: renaming the
        # folder keeps ``bin/python`` working, which is all the tests use.
        partial.rename(final)
    return final


def _venv(folder: Path, *packages: str) -> None:
    _run([_base_python(), "-m", "venv", str(folder)])
    if packages:
        _run([str(python_of(folder)), "-m", "pip", "install", "--quiet", "--no-input", *packages])


def notorch() -> Path:
    return _build(f"notorch-{PY_TAG}", _venv)


def torch_cpu() -> Path:
    return _build(f"torch-{TORCH_CPU_VERSION}-{PY_TAG}",
                  lambda folder: _venv(folder, f"torch=={TORCH_CPU_VERSION}"))


def torch_broken() -> Path:
    source = torch_cpu()

    def make(folder: Path) -> None:
        _run(["cp", "-al", str(source), str(folder)])
        (folder / ".complete").unlink()
        (site_packages(folder) / "torch" / "lib" / BROKEN_LIBRARY).unlink()

    return _build(f"torch-{TORCH_CPU_VERSION}-broken-{PY_TAG}", make)


def torch_cuda() -> Path:
    return _build(f"torch-{TORCH_CUDA_VERSION}-{PY_TAG}",
                  lambda folder: _venv(folder, f"torch=={TORCH_CUDA_VERSION}"))


MATPLOTLIB_VERSION = "3.11.2"


def plot() -> Path:
    """A Python with matplotlib and no torch: the front of ``ramp`` that draws ramp.png."""
    return _build(f"matplotlib-{MATPLOTLIB_VERSION}-{PY_TAG}",
                  lambda folder: _venv(folder, f"matplotlib=={MATPLOTLIB_VERSION}"))


def _with_extension(source: Path, *requirements: str) -> object:
    """A builder: a hard-linked copy of ``source`` (no disk space for torch), then
    ``requirements`` installed into the copy alone with ``--no-deps`` (torch stays as it is).

    ``python -m pip`` of the copy, not its ``bin/pip``: that script's first line names the
    source's interpreter, and would install into the source."""
    def make(folder: Path) -> None:
        _run(["cp", "-al", str(source), str(folder)])
        (folder / ".complete").unlink()
        _run([str(python_of(folder)), "-m", "pip", "install", "--quiet", "--no-input",
              "--no-deps", *requirements])

    return make


def torch_cpu_torchvision() -> Path:
    """torch 2.13.0 (CPU) with torchvision 0.29.1, which declares torch>=2.14: a real mismatch
    ("operator torchvision::nms does not exist" on import)."""
    return _build(f"torch-{TORCH_CPU_VERSION}-torchvision-{TORCHVISION_VERSION}-{PY_TAG}",
                  _with_extension(torch_cpu(), f"torchvision=={TORCHVISION_VERSION}"))


def torch_cuda_torchvision() -> Path:
    """torch 2.14.1 (CUDA) with torchvision 0.29.1: the matching pair, with the two packages
    torchvision imports (NumPy and Pillow, which need nothing else)."""
    return _build(f"torch-{TORCH_CUDA_VERSION}-torchvision-{TORCHVISION_VERSION}-{PY_TAG}",
                  _with_extension(torch_cuda(), f"torchvision=={TORCHVISION_VERSION}",
                                  "numpy==2.4.6", "pillow==12.3.0"))


IPYKERNEL_VERSION = "7.4.0"
NBCLIENT_VERSION = "0.11.0"
JUPYTER_CLIENT_VERSION = "8.10.0"


LIGHTNING_VERSION = "2.6.6"
TRANSFORMERS_VERSION = "5.17.0"
ACCELERATE_VERSION = "1.15.0"


def _with_frameworks(source: Path, *requirements: str) -> object:
    """A builder: a hard-linked copy of ``source`` with ``requirements`` and their dependencies
    installed, ``torch`` named among them at the version already there: pip keeps it and
    refuses any dependency that would want another torch (a CUDA build above all)."""
    def make(folder: Path) -> None:
        _run(["cp", "-al", str(source), str(folder)])
        (folder / ".complete").unlink()
        _run([str(python_of(folder)), "-m", "pip", "install", "--quiet", "--no-input",
              f"torch=={TORCH_CPU_VERSION}", *requirements])

    return make


def torch_cpu_frameworks() -> Path:
    """torch 2.13.0 (CPU) with the training frameworks the trial's adapters meet: PyTorch
    Lightning, Hugging Face Transformers and Accelerate, with what they need, and a Jupyter
    kernel to run them in (a notebook's training)."""
    versions = (f"pytorch-lightning=={LIGHTNING_VERSION}",
                f"transformers=={TRANSFORMERS_VERSION}", f"accelerate=={ACCELERATE_VERSION}",
                f"ipykernel=={IPYKERNEL_VERSION}", f"jupyter_client=={JUPYTER_CLIENT_VERSION}")
    name = "-".join(v.replace("==", "-") for v in versions)
    return _build(f"torch-{TORCH_CPU_VERSION}-{name}-{PY_TAG}",
                  _with_frameworks(torch_cpu(), *versions))


def torch_cpu_kernel() -> Path:
    """torch 2.13.0 (CPU) with a real Jupyter kernel and the clients that drive one: notebooks
    executed end to end (nbclient), kernels driven cell by cell (jupyter_client)."""
    return _build(f"torch-{TORCH_CPU_VERSION}-ipykernel-{IPYKERNEL_VERSION}-nbclient-"
                  f"{NBCLIENT_VERSION}-jupyter_client-{JUPYTER_CLIENT_VERSION}-{PY_TAG}",
                  _with_frameworks(torch_cpu(), f"ipykernel=={IPYKERNEL_VERSION}",
                                   f"nbclient=={NBCLIENT_VERSION}",
                                   f"jupyter_client=={JUPYTER_CLIENT_VERSION}"))


ALL = {"notorch": notorch, "torch-cpu": torch_cpu, "torch-broken": torch_broken,
       "torch-cuda": torch_cuda, "torch-cpu-torchvision": torch_cpu_torchvision,
       "torch-cuda-torchvision": torch_cuda_torchvision, "plot": plot,
       "torch-cpu-frameworks": torch_cpu_frameworks, "torch-cpu-kernel": torch_cpu_kernel}


def main() -> int:
    for name, build in ALL.items():
        print(f"{name:<14} {build()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
