"""English messages: the reference catalog. JSON reports always carry these texts.

Keys: ``code.<CODE>.summary|next_action``, ``finding.<ID>[.<variant>].summary|next_action``,
``ui.*`` for the terminal and markdown, ``cli.*`` for the command line's own messages. Values are
``str.format`` templates; every language must have the same keys and the same placeholders.
"""

from __future__ import annotations

INSTALL = ("python -m pip install --force-reinstall {torch} --index-url "
           "https://download.pytorch.org/whl/cu128 (NVIDIA; pick the CUDA version your driver "
           "supports), --index-url https://download.pytorch.org/whl/rocm6.4 (AMD) or "
           "--index-url https://download.pytorch.org/whl/xpu (Intel)")

MESSAGES = {
    # -- result codes ----------------------------------------------------------------------------
    "code.GPU_CHECK_PASSED.summary": "Product and gradient verified on the chosen GPU.",
    "code.GPU_CHECK_PASSED.next_action": "Move to a small input of your application.",
    "code.CPU_CHECK_PASSED.summary": "Product and gradient verified on the CPU only.",
    "code.CPU_CHECK_PASSED.next_action":
        "Conclude nothing about CUDA or ROCm: run without --device cpu to check the GPU.",
    "notebook.next_action.cpu_passed_other":
        'Conclude nothing about CUDA or ROCm: call check() again with the same python= and '
        'device="gpu" to check the GPU.',
    "notebook.next_action.cpu_passed":
        'Conclude nothing about CUDA or ROCm: run check(device="gpu") to check the GPU.',
    "notebook.finding.NUMPY_MISSING.next_action": "%pip install numpy",
    "notebook.restart_kernel":
        "Then restart the kernel (Kernel > Restart): it keeps the modules it imported, a "
        "wrong torch included.",
    "code.INTERNAL_ERROR.summary": "The diagnostic itself failed (a bug in the tool).",
    "code.INTERNAL_ERROR.next_action": "Report it with the command you ran.",
    "code.USAGE_ERROR.summary": "Invalid arguments.",
    "code.USAGE_ERROR.next_action": "Read the one-line message, then see --help.",
    "code.TORCH_MISSING.summary": "PyTorch is not installed in this Python.",
    "code.TORCH_MISSING.next_action":
        "Check which interpreter runs your project, then install PyTorch into it.",
    "code.TORCH_IMPORT_FAILED.summary": "import torch failed.",
    "code.TORCH_IMPORT_FAILED.next_action":
        "Check the interpreter, the PyTorch package and its dependencies.",
    "code.GPU_BACKEND_ABSENT.summary":
        "This PyTorch build declares no GPU backend: neither CUDA, HIP, XPU nor MPS (a CPU-only "
        "build).",
    "code.GPU_BACKEND_ABSENT.next_action":
        "Install the PyTorch build that matches your GPU (CUDA, ROCm or XPU; on a Mac, the "
        "standard build has MPS).",
    "code.GPU_UNAVAILABLE.summary": "The GPU is not usable from this process.",
    "code.GPU_UNAVAILABLE.next_action":
        "Check the card's exposure to this process, the driver and permissions.",
    "code.DEVICE_INDEX_INVALID.summary": "The device index is outside the visible devices.",
    "code.DEVICE_INDEX_INVALID.next_action": "Ask for an index below the visible device count.",
    "code.CHECK_FAILED.summary": "The fixed computation gave a wrong result.",
    "code.CHECK_FAILED.next_action": "Read the flagged stage before running the full model.",
    "code.OUT_OF_MEMORY.summary": "Allocation on the device failed: out of memory.",
    "code.OUT_OF_MEMORY.next_action":
        "Read the flagged stage and the findings; with none that names a cause, check what "
        "else holds memory on that device.",
    "code.RUNTIME_ERROR.summary": "A backend operation failed.",
    "code.RUNTIME_ERROR.next_action":
        "Read the flagged stage and the error before running the full model.",
    "code.TIMEOUT.summary": "The check was stopped by the time limit.",
    "code.TIMEOUT.next_action":
        "Treat the control as failed; examine the environment at the stage shown.",
    "code.WORKER_FAILED.summary": "The check ended without a usable report.",
    "code.WORKER_FAILED.next_action":
        "Treat the control as failed; examine the environment at the stage shown.",
    "code.COLLECTIVE_FAILED.summary":
        "This rank's check passed, but the job is not healthy: a rank failed or never reported, "
        "or the collective failed, timed out or gave a wrong sum.",
    "code.COLLECTIVE_FAILED.next_action":
        "See the ranks named in the distributed block: check each failed or missing rank on its "
        "own node first.",
    "code.EXTENSION_FAILED.summary":
        "A torch extension failed to import (or its import hung); torch itself passed.",
    "code.EXTENSION_FAILED.next_action":
        "See the extension named in the error and the finding: usually it was built for another "
        "torch or CUDA; install both from one index, pinned together.",
    "code.OUTPUT_WRITE_FAILED.summary": "The report was not saved where asked.",
    "code.OUTPUT_WRITE_FAILED.next_action": "Use a new file name in a folder you can write to.",
    "code.STDOUT_WRITE_FAILED.summary": "The result could not be written to stdout.",
    "code.STDOUT_WRITE_FAILED.next_action":
        "Send stdout to a terminal, a pipe or a file with room; keep the report with --output.",
    "code.INTERRUPTED.summary":
        "Stopped by a signal: Ctrl-C (SIGINT), SIGTERM, or SIGHUP (the terminal was closed).",
    "code.INTERRUPTED.next_action": "Run it again when ready.",

    # -- findings ---------------------------------------------------------------------------------
    "code.COMPARE_SAME.summary":
        "The same verdict (code or status, contracts, first error); other facts may "
        "differ, listed",
    "code.COMPARE_SAME.next_action":
        "Read the facts listed as changed, if any.",
    "code.COMPARE_CHANGED.summary":
        "The verdict changed, but is no regression (a failure fixed, one failure for "
        "another)",
    "code.COMPARE_CHANGED.next_action":
        "Read the headline and the facts that changed.",
    "code.COMPARE_REGRESSION.summary":
        "A regression (a pass that fails, an attempt that no longer completes, a "
        "contract failing or gone), named under the headline",
    "code.COMPARE_REGRESSION.next_action":
        "Read the regression lines, then the first error and contracts of B.",
    "finding.CPU_ONLY_BUILD.summary":
        "The installed PyTorch is a CPU-only build: it cannot use any GPU.",
    "finding.CPU_ONLY_BUILD.next_action":
        "Install a GPU build into this interpreter: " + INSTALL + ".",
    "finding.CPU_ONLY_BUILD.macos.summary":
        "The installed PyTorch is a CPU-only build: it cannot use this Mac's GPU (MPS).",
    "finding.CPU_ONLY_BUILD.macos.next_action":
        "Install the standard macOS build into this interpreter (python -m pip install "
        "--force-reinstall {torch}), which includes MPS, from a native arm64 Python.",
    "finding.MPS_UNAVAILABLE.rosetta.summary":
        "This PyTorch has MPS, but this Python runs as x86_64 (under Rosetta 2 on an Apple "
        "silicon Mac), where MPS is not available.",
    "finding.MPS_UNAVAILABLE.rosetta.next_action":
        "Install a native arm64 Python (python.org's universal installer, an arm64 conda or "
        "Homebrew in /opt/homebrew), then PyTorch into it: python -m pip install torch.",
    "finding.MPS_UNAVAILABLE.macos_too_old.summary":
        "This PyTorch has MPS, but macOS {version} is too old for it: MPS needs macOS 12.3 or "
        "newer, PyTorch 2.5 and later need macOS 13, the latest releases macOS 14.",
    "finding.MPS_UNAVAILABLE.macos_too_old.next_action":
        "Update macOS (to 14 or newer), or install an older PyTorch that supports macOS "
        "{version}.",
    "finding.MPS_UNAVAILABLE.no_device.summary":
        "This PyTorch has MPS, but no Metal GPU it can use is visible (a virtual machine, a CI "
        "runner or a remote session without GPU access, or an Intel Mac).",
    "finding.MPS_UNAVAILABLE.no_device.next_action":
        "Run on the Mac itself with Apple silicon, outside a virtual machine; check that "
        "python -c \"import torch; print(torch.backends.mps.is_available())\" prints True.",
    "finding.NVIDIA_DRIVER_MISSING.summary":
        "No NVIDIA driver is reachable from this process (none installed, or a container started "
        "without the GPU runtime).",
    "finding.NVIDIA_DRIVER_MISSING.next_action":
        "On a host: install the NVIDIA driver (nvidia-smi must work). In a container: start it "
        "with the GPU runtime, e.g. docker run --gpus all (NVIDIA Container Toolkit).",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.summary":
        "This PyTorch is a CUDA build, for NVIDIA GPUs, but this machine's GPU is an AMD one: the "
        "build cannot use it.",
    "finding.BUILD_FOR_OTHER_VENDOR.amd.next_action":
        "Install a ROCm build for the AMD GPU: python -m pip install --force-reinstall {torch} "
        "--index-url https://download.pytorch.org/whl/rocm6.4 (pick the ROCm version your driver "
        "supports).",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.summary":
        "This PyTorch is a ROCm build, for AMD GPUs, but this machine's GPU is an NVIDIA one: the "
        "build cannot use it.",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.next_action":
        "Install a CUDA build for the NVIDIA GPU: python -m pip install --force-reinstall {torch} "
        "--index-url https://download.pytorch.org/whl/cu128 (pick the CUDA version your driver "
        "supports).",
    "finding.DRIVER_TOO_OLD.summary":
        "The NVIDIA driver is too old for this PyTorch build (CUDA {build}).",
    "finding.DRIVER_TOO_OLD.next_action":
        "Update the driver (at least {minimum} on Linux for CUDA {major}.x), or install a torch "
        "build for the CUDA version the driver supports, e.g. --index-url "
        "https://download.pytorch.org/whl/cu126.",
    "finding.DRIVER_TOO_OLD.forward_compat.summary":
        "The NVIDIA driver ({driver}) is older than CUDA {major}.x needs ({minimum}), yet it ran "
        "this CUDA {build} build: a CUDA forward-compatibility package (cuda-compat, as in NGC "
        "containers) is in use.",
    "finding.DRIVER_TOO_OLD.forward_compat.next_action":
        "Nothing to fix for this check. Forward compatibility works only on data-center GPUs (and "
        "a few certified RTX cards and Jetson boards), and only with the cuda-compat package that "
        "matches the build; to run without it, update the driver to at least {minimum}.",
    "finding.ARCH_NOT_IN_BUILD.summary":
        "This PyTorch build has no code for this GPU's architecture.",
    "finding.ARCH_NOT_IN_BUILD.next_action":
        "Install a build that lists this GPU's sm_XY in torch.cuda.get_arch_list() (newer GPUs "
        "need newer CUDA builds, e.g. --index-url https://download.pytorch.org/whl/cu128 for "
        "Blackwell), or build PyTorch with TORCH_CUDA_ARCH_LIST set for it.",
    "finding.ARCH_PTX_ONLY.summary":
        "This GPU runs PyTorch only through PTX compiled just in time: the first calls are slow.",
    "finding.ARCH_PTX_ONLY.next_action":
        "Install a build with native code (sm_XY) for this GPU; meanwhile keep the JIT cache "
        "(CUDA_CACHE_MAXSIZE, ~/.nv/ComputeCache) between runs.",
    "finding.DEVICES_HIDDEN.summary":
        "A device-visibility variable hides every GPU from this process.",
    "finding.DEVICES_HIDDEN.next_action":
        "Unset it (unset {variable}) or list the GPUs to use, e.g. {variable}=0.",
    "finding.FABRIC_MANAGER_NOT_READY.summary":
        "The GPUs are not ready: on NVSwitch systems the Fabric Manager is not running "
        "(CUDA 802).",
    "finding.FABRIC_MANAGER_NOT_READY.next_action":
        "Install nvidia-fabricmanager of exactly the driver's version, then start it: sudo "
        "systemctl enable --now nvidia-fabricmanager; check systemctl status "
        "nvidia-fabricmanager.",
    "finding.DRIVER_LIBRARY_MISMATCH.summary":
        "The kernel driver and the user-space driver library (libcuda) have different versions "
        "(CUDA 803).",
    "finding.DRIVER_LIBRARY_MISMATCH.next_action":
        "Reboot after a driver update, or reinstall the driver so both match; in a container, do "
        "not ship libcuda in the image (let the GPU runtime mount the host's).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.summary":
        "A CUDA forward-compatibility library is in use on a GPU that does not support it "
        "(CUDA 804).",
    "finding.FORWARD_COMPAT_UNSUPPORTED.next_action":
        "Remove the cuda-compat libraries from LD_LIBRARY_PATH (or the image), or update the "
        "driver so that it supports this build's CUDA directly.",
    "finding.CUDA_UNKNOWN_ERROR.summary":
        "The CUDA driver reports an unknown error (999), often after a suspend and resume.",
    "finding.CUDA_UNKNOWN_ERROR.next_action":
        "Reload the unified memory module (sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm) or "
        "reboot; then run the check again.",
    "finding.MIG_SLICE.summary":
        "A MIG slice is in use: it has a fraction of the GPU's memory and compute.",
    "finding.MIG_SLICE.next_action":
        "Size your work for the slice, not the whole card; address a slice by its UUID from "
        "nvidia-smi -L in CUDA_VISIBLE_DEVICES.",
    "finding.NUMPY_MISSING.summary":
        "NumPy is not installed next to torch: tensor.numpy() and most data loading will fail.",
    "finding.NUMPY_MISSING.next_action": "python -m pip install numpy (with the same interpreter).",
    "finding.NUMPY_ABI_MISMATCH.summary":
        "NumPy's version does not match the one this torch (or an extension) was compiled with.",
    "finding.NUMPY_ABI_MISMATCH.next_action":
        'python -m pip install "numpy<2" for a build compiled against NumPy 1.x, or upgrade '
        "torch and the extension to builds made for NumPy 2.",
    "finding.WARNING_AS_ERROR.summary":
        "The interpreter's warning filters turn warnings into errors, and a {category} stopped "
        "the check: your program fails the same way when started like this.",
    "finding.WARNING_AS_ERROR.next_action":
        "Drop -W error (or PYTHONWARNINGS=error) for this program, or let this warning through "
        "with an ignore filter after it: -W error -W ignore::{category} "
        "(PYTHONWARNINGS=error,ignore::{category}), naming its module if you can.",
    "finding.TRACEMALLOC_ON.summary":
        "Python's tracemalloc is on in this interpreter ({frames} frame(s) per allocation): it "
        "records every allocation, which makes importing torch many times slower (2.3 s became "
        "27 s with 5 frames for a CUDA build on a test machine).",
    "finding.TRACEMALLOC_ON.next_action":
        "Unset PYTHONTRACEMALLOC (and drop -X tracemalloc) unless you are tracing memory on "
        "purpose; if you are, give the check more time (--timeout 120).",
    "finding.CALLER_TORCH_DIFFERS.kernel.summary":
        "This kernel runs torch {loaded}, imported before the check, which is not what "
        "'import torch' finds now: the verdict is about the kernel's next start.",
    "finding.CALLER_TORCH_DIFFERS.kernel.next_action":
        "Restart the kernel (Kernel > Restart), then run the check again before importing torch: "
        "a kernel keeps the torch it imported first.",
    "finding.CALLER_TORCH_DIFFERS.program.summary":
        "This program runs torch {loaded}, imported before the check, which is not what "
        "'import torch' finds now: the verdict is about the program's next start.",
    "finding.CALLER_TORCH_DIFFERS.program.next_action":
        "Start the program again: a process keeps the torch it imported first.",
    "finding.TORCH_SHADOWED.local_file.summary":
        "'import torch' would load {module} instead of an installed PyTorch package.",
    "finding.TORCH_SHADOWED.local_file.next_action":
        "Rename {module} (e.g. a script of yours to torch_demo.py) or move it out of that folder, "
        "and delete the __pycache__ folder beside it; or run your program from another folder.",
    "finding.TORCH_SHADOWED.local_folder.summary":
        "'import torch' would load the folder {module} instead of an installed PyTorch package.",
    "finding.TORCH_SHADOWED.local_folder.next_action":
        "Rename the {module} folder (or move it away), or run your program from another folder.",
    "finding.TORCH_SHADOWED.checkout.summary":
        "'import torch' would load the torch/ folder of a PyTorch source checkout, which is not "
        "built here, instead of an installed PyTorch package.",
    "finding.TORCH_SHADOWED.checkout.next_action":
        "Run your program from another folder (cd ..), or build and install the checkout into "
        "this interpreter (python -m pip install -e . -v --no-build-isolation).",
    "finding.TORCH_SHADOWED.pythonpath_checkout.summary":
        "'import torch' would load the torch/ folder of a PyTorch source checkout, which is not "
        "built here, found through a folder on PYTHONPATH, instead of an installed PyTorch "
        "package.",
    "finding.TORCH_SHADOWED.pythonpath_checkout.next_action":
        "Take the checkout's folder off PYTHONPATH (unset PYTHONPATH if it holds nothing else "
        "you need); changing folders does not help, PYTHONPATH is searched from anywhere. To "
        "use the checkout itself, build and install it into this interpreter (python -m pip "
        "install -e . -v --no-build-isolation, in the checkout).",
    "finding.TORCH_SHADOWED.pythonpath.summary":
        "'import torch' would load {module} from a folder on PYTHONPATH instead of an installed "
        "PyTorch package.",
    "finding.TORCH_SHADOWED.pythonpath.next_action":
        "Remove that folder from PYTHONPATH (or unset PYTHONPATH), or rename {module} there; "
        "--show-paths prints where it is, on your terminal only.",
    "finding.TORCH_SHADOWED.stray.summary":
        "'import torch' would load {module}, a stray copy, instead of an installed PyTorch "
        "package.",
    "finding.TORCH_SHADOWED.pythonpath_build.summary":
        "torch {loaded} is loaded from a folder on PYTHONPATH instead of this environment's own "
        "torch {installed}, which it hides: the check judged {loaded}.",
    "finding.TORCH_SHADOWED.pythonpath_build.next_action":
        "Take that folder off PYTHONPATH (unset PYTHONPATH if it holds nothing else you need); "
        "the environment's torch {installed} is then the one imported. Reinstalling torch would "
        "not help: pip changes the hidden one. --show-paths prints the folder, on your terminal "
        "only.",
    "finding.TORCH_SHADOWED.other_build.summary":
        "torch {loaded} is loaded from a copy that is not this environment's installed torch "
        "{installed}, which it hides: the check judged {loaded}.",
    "finding.TORCH_SHADOWED.other_build.next_action":
        "Remove or rename that copy of torch (--show-paths prints where it is, on your terminal "
        "only) so that the installed torch {installed} is imported; reinstalling torch would not "
        "help, as pip changes the hidden one.",
    "finding.TORCH_PARTIAL_INSTALL.package_gone.summary":
        "A half-finished uninstall: the metadata of torch {version} is installed but its package "
        "is gone, so pip answers a plain install with \"Requirement already satisfied\".",
    "finding.TORCH_PARTIAL_INSTALL.package_gone.next_action":
        "Reinstall that version over what is left, with this interpreter: {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.metadata_gone.summary":
        "torch {version} is in this environment without its metadata (a half-finished "
        "uninstall, or a copied package): pip does not see it and may install another copy "
        "over it.",
    "finding.TORCH_PARTIAL_INSTALL.metadata_gone.next_action":
        "Reinstall that version, with this interpreter, so that pip knows it: {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.damaged.summary":
        "The installed torch {version} is damaged: 'import torch' runs its own files, which "
        "give no torch.__version__ (an emptied or truncated file); it is a PyTorch install, "
        "broken.",
    "finding.TORCH_PARTIAL_INSTALL.damaged.next_action":
        "Reinstall that version over it, with this interpreter: {reinstall}.",
    "finding.TORCH_PARTIAL_INSTALL.library_damaged.summary":
        "The installed torch {version} is damaged: {files} (a compiled library cut short or "
        "overwritten, by an interrupted copy or download, or a full disk); loading it kills "
        "'import torch' or makes it fail.",
    "finding.TORCH_PARTIAL_INSTALL.library_damaged.next_action":
        "Reinstall that version over it, with this interpreter: {reinstall}.",
    "finding.LOCAL_MODULE_SHADOWS.breaks_import.summary":
        "import torch failed in {module}: your own {file}, which Python imports first, in "
        "place of the {module} torch needs (modules of yours that hide others: {names}).",
    "finding.LOCAL_MODULE_SHADOWS.breaks_import.next_action":
        "Rename {file} (and delete the __pycache__ folder beside it), then run the check "
        "again: torch then imports its own {module}.",
    "finding.SHM_TOO_SMALL.absent.summary":
        "There is no shared-memory folder /dev/shm: DataLoader workers (num_workers > 0), "
        "torch.multiprocessing and NCCL cannot share memory between processes.",
    "finding.SHM_TOO_SMALL.absent.next_action":
        "Mount one, as root: mkdir -p /dev/shm && mount -t tmpfs -o size=8g tmpfs /dev/shm (a "
        "container: docker run --ipc=host or --shm-size=8g; Kubernetes: a memory-backed emptyDir "
        "at /dev/shm).",
    "finding.TORCH_BACKEND_PLUGIN_FAILED.summary":
        "import torch failed in the device plugin {plugin}, which torch loads as it is imported "
        "(entry point group torch.backends): {cause}.",
    "finding.TORCH_BACKEND_PLUGIN_FAILED.next_action":
        "Give the plugin what it needs (its device's runtime, above), or, if you do not use that "
        "device, remove it (python -m pip uninstall {distribution}); "
        "TORCH_DEVICE_BACKEND_AUTOLOAD=0 python app.py confirms torch works without it.",
    "finding.PYTHONHOME_SET.summary":
        "PYTHONHOME is set: the interpreter checked looks for its standard library under that "
        "folder, finds none of its own there, and cannot start. Its value is not shown here.",
    "finding.PYTHONHOME_SET.next_action":
        "Unset it (env -u PYTHONHOME python app.py, or unset PYTHONHOME in the shell, the job "
        "script or the module that sets it) and run the check again: a venv's Python never needs "
        "it.",
    "finding.TORCH_LOGS_INVALID.summary":
        "TORCH_LOGS holds a name torch does not know (a typo, or one of another version): "
        "import torch refuses it. Its value is not shown here.",
    "finding.TORCH_LOGS_INVALID.next_action":
        "Unset it (env -u TORCH_LOGS python app.py), or correct it: TORCH_LOGS=help python -c "
        "'import torch' lists the names this torch takes (dynamo, inductor, graph_breaks...).",
    "finding.TORCH_ON_NOEXEC_MOUNT.summary":
        "torch is installed on a file system mounted noexec: the loader may not map its "
        "libraries from there, so import torch fails, whole as they are.",
    "finding.TORCH_ON_NOEXEC_MOUNT.next_action":
        "Put the environment on a file system that allows execution (a home or project folder, "
        "not a noexec /tmp or scratch mount), or have it remounted with exec (as root: mount -o "
        "remount,exec on that mount point); findmnt -T on torch's folder shows the mount.",
    "finding.TORCH_FILES_UNREADABLE.summary":
        "import torch cannot read {file}, a file of the installed torch: permission denied to "
        "this user (installed by another user with a closed umask, or its mode changed).",
    "finding.TORCH_FILES_UNREADABLE.next_action":
        "Have the install's owner (or root) open it to every user, with this environment's "
        "python: chmod -R a+rX {folder}.",
    "finding.TORCH_PATH_NOT_UTF8.summary":
        "The path of the folder torch is installed in is not UTF-8 (a folder named in another "
        "encoding): torch encodes it as UTF-8 as it is imported, and fails.",
    "finding.TORCH_PATH_NOT_UTF8.next_action":
        "Rename that folder with a UTF-8 name (convmv -f latin1 -t utf8 converts such names), or "
        "create the environment again under a UTF-8 path.",
    "finding.TORCH_FOR_OTHER_PYTHON.other_tag.summary":
        "torch's compiled part is built for another Python ({built}), not for this interpreter "
        "({own}): installed with another Python's pip.",
    "finding.TORCH_FOR_OTHER_PYTHON.other_tag.next_action":
        "Reinstall torch with this interpreter's own pip (the Python that runs your project): "
        "{reinstall}.",
    "finding.TORCH_FOR_OTHER_PYTHON.no_extension.summary":
        "torch has no compiled part for this interpreter ({own}): torch/_C is missing, so its "
        "message about a source checkout misleads.",
    "finding.TORCH_FOR_OTHER_PYTHON.no_extension.next_action":
        "Reinstall torch with this interpreter's own pip (the Python that runs your project): "
        "{reinstall}.",
    "finding.TORCH_FOR_OTHER_PYTHON.pythonpath.summary":
        "torch comes from a folder on PYTHONPATH and its compiled part is not built for this "
        "interpreter ({own}; torch/_C there: {built}): that folder holds another Python's "
        "packages.",
    "finding.TORCH_FOR_OTHER_PYTHON.pythonpath.next_action":
        "Take that folder off PYTHONPATH (unset PYTHONPATH if it holds nothing else you need; a "
        "module system's 'module load' often sets it): this interpreter then imports its own "
        "torch, or says it has none. Reinstalling torch would not help: pip installs into this "
        "environment, which PYTHONPATH comes before.",
    "finding.WORKING_FOLDER_MISSING.summary":
        "The folder the check was started in no longer exists (it was removed or renamed "
        "meanwhile): torch's loader fails on it, whatever is installed.",
    "finding.WORKING_FOLDER_MISSING.next_action":
        "Change to a folder that exists (cd ~, or cd back into your project), then run your "
        "program and the check again; nothing needs reinstalling.",
    "finding.TORCH_SHADOWED.stray.next_action":
        "Remove the stray {module} (--show-paths prints where it is, on your terminal only), then "
        "reinstall PyTorch: {reinstall}.",
    "finding.LOCAL_MODULE_SHADOWS.summary":
        "Modules in the folders your program imports from first (the working folder and the "
        "calling script's own) hide ones it needs: {names}.",
    "finding.LOCAL_MODULE_SHADOWS.next_action":
        "Rename them (and delete the __pycache__ folder beside them): your program imports them "
        "instead of the standard library's or torch's own.",
    "finding.LOCAL_MODULE_SHADOWS.working_folder.summary":
        "Modules in the working folder, which a program started here imports from first, hide "
        "ones it needs: {names}.",
    "finding.LOCAL_MODULE_SHADOWS.working_folder.next_action":
        "Rename them (and delete the __pycache__ folder beside them), or run your program from "
        "another folder: python app.py there imports them instead of the standard library's or "
        "torch's own.",
    "finding.LOCAL_MODULE_SHADOWS.script_folder.summary":
        "Modules in the folder of the script that called the check, which Python searches first "
        "for that script, hide ones it needs: {names}.",
    "finding.LOCAL_MODULE_SHADOWS.script_folder.next_action":
        "Rename them (and delete the __pycache__ folder beside them), or move your script to a "
        "folder of its own: Python imports them for it, wherever it is run from, instead of the "
        "standard library's or torch's own.",
    "finding.PYTHONPATH_MODULE_BREAKS_IMPORT.summary":
        "import torch failed in {module}, loaded from a folder on PYTHONPATH: Python searches it "
        "before this environment's own packages, so that copy replaced the one installed with "
        "torch.",
    "finding.PYTHONPATH_MODULE_BREAKS_IMPORT.next_action":
        "Run the check again without it (env -u PYTHONPATH, or python -E); if it passes, take "
        "that folder off PYTHONPATH (a module system's 'module load' or a shell profile often "
        "points it at another Python's packages).",
    "finding.TORCH_DUPLICATE_INSTALL.summary":
        "More than one PyTorch install is visible to this interpreter; the one imported may not "
        "be the one you installed.",
    "finding.TORCH_DUPLICATE_INSTALL.next_action":
        "Run python -m pip uninstall torch until pip says torch is not installed (each run removes "
        "the first install on the path, the user site-packages' too; a copy pip will not touch, on "
        "PYTHONPATH for instance, goes by taking its folder off the path), then install one build.",
    "finding.TORCH_HIDDEN_BY_SETTING.no_site.summary":
        "torch is installed in this interpreter's site-packages, but python -S keeps that "
        "folder off the import path: pip, run without -S, says torch is installed.",
    "finding.TORCH_HIDDEN_BY_SETTING.no_site.next_action":
        "Run Python without -S (take it out of the command or of the script's #! line); "
        "installing torch again would not help.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_variable.summary":
        "torch is installed in your user site-packages (pip install --user), but "
        "PYTHONNOUSERSITE keeps that folder off the import path (pip, run with it set, does not "
        "see it either and would install a second copy).",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_variable.next_action":
        "unset PYTHONNOUSERSITE (or remove it where it is set: a job script, a module file, a "
        "shell profile); installing torch again would not help.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_flag.summary":
        "torch is installed in your user site-packages (pip install --user), but python "
        "{setting} keeps that folder off the import path: pip says torch is installed.",
    "finding.TORCH_HIDDEN_BY_SETTING.user_site_flag.next_action":
        "Run Python without {setting} (take it out of the command or of the script's #! line), "
        "or install torch where this interpreter looks (a virtual environment); installing it "
        "again as it is would not help.",
    "finding.TORCH_ORPHAN_METADATA.summary":
        "The folder {orphan} beside torch is the metadata of an install whose files are gone "
        "(an interrupted upgrade): pip counts it as torch and cannot remove it (\"No files were "
        "found to uninstall\", at every run).",
    "finding.TORCH_ORPHAN_METADATA.next_action":
        "Remove that folder with the Python that runs your project: rm -r \"$(python -c 'import "
        "os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')/{orphan}\" (on "
        "Windows, delete the folder {orphan} next to the torch folder); the installed torch is "
        "untouched.",
    "finding.SHARED_LIBRARY_MISSING.driver.summary":
        "import torch needs {library}, a library of the NVIDIA driver, which cannot be found.",
    "finding.SHARED_LIBRARY_MISSING.driver.next_action":
        "{library} comes with the NVIDIA driver, never with a Python package (reinstalling torch "
        "cannot bring it back): on a host, install the driver (nvidia-smi must work); in a "
        "container, start it with the GPU runtime (docker run --gpus all, NVIDIA Container "
        "Toolkit), which mounts the host's driver libraries.",
    "finding.SHARED_LIBRARY_MISSING.cuda.summary":
        "import torch needs {library}, which cannot be found.",
    "finding.SHARED_LIBRARY_MISSING.cuda.next_action":
        "Restore {library}: it comes with the nvidia-* wheels torch depends on: {reinstall}. "
        "Also check that LD_LIBRARY_PATH does not point "
        "elsewhere.",
    "finding.SHARED_LIBRARY_MISSING.system.summary":
        "import torch needs {library}, which cannot be found.",
    "finding.SHARED_LIBRARY_MISSING.system.next_action":
        "Restore {library}: reinstall torch ({reinstall}); if "
        "the library belongs to the system, install it with the system's package manager. Also "
        "check that LD_LIBRARY_PATH does not point elsewhere.",
    "finding.UNDEFINED_SYMBOL.summary":
        "{library} does not match the code that loads it (undefined symbol {symbol}): two builds "
        "are mixed.",
    "finding.UNDEFINED_SYMBOL.next_action":
        "Unset LD_LIBRARY_PATH (it often points at another CUDA or cuDNN), then reinstall torch "
        "and its extensions from one index.",
    "finding.LIBRARY_PATH_OVERRIDE.variable.summary":
        "A folder on {variable} supplies a {library} that this torch cannot load (wrong version, "
        "empty or damaged file, or built for another architecture).",
    "finding.LIBRARY_PATH_OVERRIDE.variable.next_action":
        "Unset {variable} for this program, or remove that folder from it; env -u {variable} "
        "python app.py confirms it.",
    "finding.LIBRARY_PATH_OVERRIDE.conda.summary":
        "The conda environment's lib folder (the active one, or the checked Python's) supplies "
        "a {library} that this torch cannot load (often an older libstdc++ than torch needs).",
    "finding.LIBRARY_PATH_OVERRIDE.conda.next_action":
        "Update that library in the environment (for libstdc++: conda install -c conda-forge "
        "libstdcxx-ng), or run the program from an environment whose libraries match torch.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library.summary":
        "A folder on {variable} holds {library}, one of torch's own libraries (a C++ libtorch, "
        "say): the loader takes it before torch's own copy, so import torch mixes two builds "
        "and fails.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library.next_action":
        "Take that folder off {variable} for Python programs (env -u {variable} python app.py "
        "confirms it); set it only for the C++ program that needs that libtorch. Reinstalling "
        "torch would not help.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library_loaded.summary":
        "torch's own {library} was loaded from outside torch's lib/ folder (a C++ libtorch on "
        "{variable}, say): two builds share this process, which works only while they are the "
        "same build.",
    "finding.LIBRARY_PATH_OVERRIDE.torch_library_loaded.next_action":
        "Take that folder off {variable} for Python programs (env -u {variable} python app.py "
        "loads torch's own copy); set it only for the C++ program that needs that libtorch.",
    "finding.CUDA_TOOLKIT_MISMATCH.summary":
        "The CUDA toolkit that extensions would be compiled with (nvcc {toolkit}, found via "
        "{via}) has another major version than CUDA {build}, which this torch was built for: "
        "building a CUDA extension will fail.",
    "finding.CUDA_TOOLKIT_MISMATCH.next_action":
        "Point CUDA_HOME at a CUDA toolkit with the build's major version (or put its nvcc first "
        "on PATH), or install a torch build for CUDA {toolkit}. torch's own runtime is "
        "unaffected.",
    "finding.CUDA_LIBRARY_SHADOWED.library_path.summary":
        "This process loaded {library} from a folder on LD_LIBRARY_PATH, not the {wheel} wheel "
        "installed next to torch: torch runs with a library it was not built against (the classic"
        " cuDNN version mismatch).",
    "finding.CUDA_LIBRARY_SHADOWED.library_path.next_action":
        "Remove that folder from LD_LIBRARY_PATH for this program (or put the wheel's folder "
        "first), then run the check again.",
    "finding.CUDA_LIBRARY_SHADOWED.elsewhere.summary":
        "This process loaded {library} from a folder outside the {wheel} wheel installed next to "
        "torch (a second copy earlier on the search path): torch runs with a library it was not "
        "built against.",
    "finding.CUDA_LIBRARY_SHADOWED.elsewhere.next_action":
        "Remove the other copy (a pip install --target folder or a PYTHONPATH entry holding "
        "nvidia/...), or reinstall it at the version torch requires; --show-paths and pip list "
        "help find it.",
    "finding.CUDA_LAUNCH_BLOCKING_ON.summary":
        "CUDA_LAUNCH_BLOCKING=1 is set: every GPU kernel launch waits for the GPU to finish, "
        "which makes training and inference much slower.",
    "finding.CUDA_LAUNCH_BLOCKING_ON.next_action":
        "Unset CUDA_LAUNCH_BLOCKING outside debugging (unset CUDA_LAUNCH_BLOCKING).",
    "finding.HSA_OVERRIDE_ON_SUPPORTED_GPU.summary":
        "HSA_OVERRIDE_GFX_VERSION={value} is set although this ROCm build has code for the GPU's "
        "own architecture: the override makes the runtime pick code built for another GPU.",
    "finding.HSA_OVERRIDE_ON_SUPPORTED_GPU.next_action":
        "Unset HSA_OVERRIDE_GFX_VERSION (unset HSA_OVERRIDE_GFX_VERSION) and run the check again.",
    "finding.WINDOWS_DLL_LOAD_FAILED.summary":
        "Windows could not load {dll} or one of its dependencies.",
    "finding.WINDOWS_DLL_LOAD_FAILED.next_action":
        "Install the latest Microsoft Visual C++ Redistributable (x64), then reinstall torch "
        "({reinstall}).",
    "finding.SILENT_DATA_CORRUPTION.wrong.summary":
        "{device} computed a wrong {values} without any error: the signature of silent data "
        "corruption (a faulty GPU, its memory or its compute units).",
    "finding.SILENT_DATA_CORRUPTION.wrong.next_action":
        "Run the check again; wrong once is still a faulty device. Run the vendor's own diagnostic "
        "(NVIDIA: dcgmi diag -r 3 and nvidia-smi -q -d ECC; AMD: rvs, the ROCm Validation Suite); "
        "if it fails or the result is wrong again, take the node out of service and report the "
        "GPU to its operator.",
    "finding.SILENT_DATA_CORRUPTION.non_finite.summary":
        "{device} computed NaN or infinity in the {values} of a small exact product, without any "
        "error: the signature of silent data corruption (a faulty GPU, its memory or its compute "
        "units).",
    "finding.SILENT_DATA_CORRUPTION.non_finite.next_action":
        "Run the check again; wrong once is still a faulty device. Run the vendor's own diagnostic "
        "(NVIDIA: dcgmi diag -r 3 and nvidia-smi -q -d ECC; AMD: rvs, the ROCm Validation Suite); "
        "if it fails or the result is wrong again, take the node out of service and report the "
        "GPU to its operator.",
    "finding.VISIBLE_DEVICE_UNMATCHED.summary":
        "CUDA_VISIBLE_DEVICES names {count} GPU UUID(s) that no GPU of this machine has: CUDA "
        "gives no device for them.",
    "finding.VISIBLE_DEVICE_UNMATCHED.next_action":
        "List this machine's GPUs with nvidia-smi -L and set CUDA_VISIBLE_DEVICES to their UUIDs "
        "(or unset it); a UUID copied from another machine or an ended job selects nothing.",
    "finding.HUNG_IN.summary":
        "The check hung in {package} ({place}) at the {stage} stage until the time limit ended "
        "it.",
    "finding.HUNG_IN.next_action":
        "See what {package} waits for at {place} (a device, a lock, the network, an input); "
        "update it, fix it if it is yours, or remove it, then run the check again.",
    "finding.HUNG_IN.torch_backend.summary":
        "import torch hung in the device plugin {package} ({place}), which torch loads as it is "
        "imported (entry point group torch.backends), until the time limit ended it.",
    "finding.HUNG_IN.torch_backend.next_action":
        "TORCH_DEVICE_BACKEND_AUTOLOAD=0 python app.py runs torch without loading its device "
        "plugins; if you do not use that device, remove the plugin (python -m pip uninstall "
        "{distribution}), else see what it waits for at {place} (its device, its runtime).",
    "finding.TIME_LIMIT_REACHED.summary":
        "The check was still working at the {stage} stage when its {seconds} s limit ended it: "
        "slow, not stuck.",
    "finding.TIME_LIMIT_REACHED.next_action":
        "Run the check again with --timeout {maximum} (the most it takes); if it still runs out, "
        "see what slows this machine down (a CPU limit, a cold cache, a slow file system).",
    "finding.TIME_LIMIT_REACHED.at_maximum.summary":
        "The check was still working at the {stage} stage when its {seconds} s limit, the "
        "largest, ended it: slow, not stuck.",
    "finding.TIME_LIMIT_REACHED.at_maximum.next_action":
        "See what slows this machine down (a CPU limit, a cold cache, a slow file system) and "
        "run the check again once it is removed.",
    "finding.CPU_LIMITED.affinity.summary":
        "This process may use {usable} of the machine's {logical} logical CPUs (its CPU affinity).",
    "finding.CPU_LIMITED.affinity.next_action":
        "Run it without the affinity that limits it (taskset, numactl, a job's or container's "
        "cpuset), or ask the scheduler for more CPUs.",
    "finding.CPU_LIMITED.quota.summary":
        "This process may use {usable} CPU(s) of time of the machine's {logical} logical CPUs "
        "(its cgroup's CPU quota).",
    "finding.CPU_LIMITED.quota.next_action":
        "Run it with a larger CPU quota or none (a container's --cpus, a job's CPU request, "
        "systemd's CPUQuota), at least one whole CPU.",
    "finding.ROCM_KFD_ACCESS.absent.summary":
        "/dev/kfd is absent: the AMD GPU driver (amdgpu) is not loaded or not exposed here.",
    "finding.ROCM_KFD_ACCESS.absent.next_action":
        "Load the driver (sudo modprobe amdgpu) or, in a container, pass --device=/dev/kfd "
        "--device=/dev/dri.",
    "finding.ROCM_KFD_ACCESS.wsl.summary":
        "ROCm on WSL 2 finds no GPU: WSL has no /dev/kfd, and ROCm reaches the GPU through "
        "/dev/dxg only with AMD's WSL support installed.",
    "finding.ROCM_KFD_ACCESS.wsl.next_action":
        "Do not load amdgpu or pass /dev/kfd (WSL has neither). On Windows, install AMD's "
        "Adrenalin driver that supports WSL; inside WSL, install ROCm for WSL "
        "(amdgpu-install -y --usecase=wsl,rocm --no-dkms), then run the check again.",
    "finding.ROCM_KFD_ACCESS.no_access.summary": "/dev/kfd exists but this user cannot open it.",
    "finding.ROCM_KFD_ACCESS.no_access.next_action":
        "Add the user to the render and video groups (sudo usermod -aG render,video $USER), then "
        "log in again; in a container, also pass --group-add video.",
    "finding.ROCM_GFX_UNSUPPORTED.summary":
        "This ROCm build has no code for this GPU's gfx architecture.",
    "finding.ROCM_GFX_UNSUPPORTED.next_action":
        "Install a ROCm build that supports this GPU; for a consumer card whose architecture is "
        "close to a supported one, HSA_OVERRIDE_GFX_VERSION (e.g. 11.0.0 for gfx110x) is the "
        "known workaround.",
    "finding.SLOW_FIRST_CALL.summary":
        "The first computation took {seconds} s: kernels were probably compiled just in time "
        "(PTX) or the device woke slowly.",
    "finding.SLOW_FIRST_CALL.next_action":
        "Run the check again: if it is fast the second time, the delay was JIT compilation (now "
        "cached); install a build with native code for this GPU to avoid it.",
    "finding.HOST_MEMORY_EXHAUSTED.summary":
        "The process ran out of host (CPU) memory: std::bad_alloc, MemoryError, or the loader "
        "could not allocate.",
    "finding.HOST_MEMORY_EXHAUSTED.next_action":
        "Free memory, or raise the process's limit: ulimit -v (address space), the container's "
        "memory limit (docker run --memory), the job's memory request; importing torch alone "
        "needs about 1 GB of address space.",
    "finding.HOST_MEMORY_EXHAUSTED.limited.summary":
        "The process ran out of memory under a limit set on it ({command}: {limit}): importing "
        "torch alone maps about 1 GB, and a GPU's driver reserves far more address space.",
    "finding.HOST_MEMORY_EXHAUSTED.limited.next_action":
        "Raise or remove the limit for this program ({command} unlimited in the shell that starts "
        "it), or change the setting of the job, container or login node that imposes it (Slurm "
        "passes the submitting shell's limits on to the job); then run the check again.",
    "finding.HOST_MEMORY_EXHAUSTED.cuda_reservation.summary":
        "CUDA could not start under the address-space limit set on this process ({command}: "
        "{limit}): its \"out of memory\" means the driver could not reserve the host address "
        "space it maps the GPUs' memory into (at least as large as that memory, and never really "
        "used). The GPU's own memory did not run out.",
    "finding.HOST_MEMORY_EXHAUSTED.cuda_reservation.next_action":
        "Remove the limit for this program ({command} unlimited in the shell that starts it; "
        "limit memory with the job's or container's memory request instead, which CUDA does not "
        "trip on), or change the setting of the job or login node that imposes it (Slurm passes "
        "the submitting shell's limits on to the job); then run the check again.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.summary":
        "The check ran in the tool's own pipx environment, which has no torch: it says nothing "
        "about your project's Python.",
    "finding.TOOL_ISOLATED_INSTALL.pipx.next_action":
        "Check your project's interpreter instead: kernodeck-diagnostic --python "
        "/path/to/project/bin/python (nothing is installed into it), or run the single-file "
        "download with it: /path/to/project/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.summary":
        "The check ran in the tool's own uv tool environment, which has no torch: it says nothing "
        "about your project's Python.",
    "finding.TOOL_ISOLATED_INSTALL.uv_tool.next_action":
        "Check your project's interpreter instead: kernodeck-diagnostic --python "
        "/path/to/project/bin/python (nothing is installed into it), or run the single-file "
        "download with it: /path/to/project/bin/python kernodeck-diagnostic-v1.pyz.",
    "finding.TOOL_ISOLATED_INSTALL.venv.summary":
        "The check ran in the virtual environment that holds the kernodeck-diagnostic command, "
        "and torch is not installed there.",
    "finding.TOOL_ISOLATED_INSTALL.venv.next_action":
        "If your project uses another environment, check that one: kernodeck-diagnostic --python "
        "/path/to/project/bin/python, or /path/to/project/bin/python -m kernodeck_diagnostic "
        "(with the package installed there), or that Python with the single-file download. If "
        "this is your project's environment, install torch in it.",

    "finding.SLOW_FIRST_CALL.persistence_off.summary":
        "The first computation took {seconds} s, and persistence mode is off: the GPU was "
        "probably initialised for this process (seconds per GPU), on top of any just-in-time "
        "(PTX) compilation.",
    "finding.SLOW_FIRST_CALL.persistence_off.next_action":
        "Enable persistence (sudo systemctl enable --now nvidia-persistenced, or sudo nvidia-smi "
        "-pm 1) and run the check again; if it is still slow the second time, install a build "
        "with native code for this GPU.",
    # -- the node, the GPUs' health and the variables (report/findings/, facts/node.py) -------
    "finding.MASTER_PORT_IN_USE.summary":
        "The job's store port (MASTER_PORT) was already taken on rank 0's node: the store cannot "
        "start (\"Address already in use\"), and every rank waits for it.",
    "finding.MASTER_PORT_IN_USE.next_action":
        "Set MASTER_PORT to a free port, or end what holds it (often a rank 0 left over from an "
        "earlier job).",
    "finding.DUPLICATE_GPU_PER_RANK.summary":
        "Two ranks of one node use the same GPU: NCCL refuses the group (\"Duplicate GPU "
        "detected\").",
    "finding.DUPLICATE_GPU_PER_RANK.next_action":
        "Start at most one rank per GPU (--nproc-per-node no more than the GPUs, or one GPU per "
        "task from the scheduler), and pick each rank's device from LOCAL_RANK.",
    "finding.NCCL_P2P_BROKEN.summary":
        "A direct copy between two GPUs that each compute correctly arrived wrong or never "
        "ended: peer-to-peer transfers are broken on this node (often PCIe ACS or the IOMMU), and "
        "NCCL uses them between these GPUs.",
    "finding.NCCL_P2P_BROKEN.next_action":
        "Disable PCIe ACS (BIOS or setpci) or run the IOMMU in passthrough (iommu=pt), or ask the "
        "provider to; meanwhile NCCL_P2P_DISABLE=1 makes NCCL route through host memory.",
    "finding.NCCL_SOCKET_IFNAME_MISSING.summary":
        "{variables} names no network interface of this node: NCCL (or gloo) finds no socket "
        "interface and the group cannot form.",
    "finding.NCCL_SOCKET_IFNAME_MISSING.next_action":
        "Name an interface that exists on every node (see ip link; a prefix such as eth or ib "
        "matches eth0 or ib0), or unset the variable.",
    "finding.MEMLOCK_LOW.summary":
        "RDMA devices are present but locked memory is limited: NCCL cannot register its "
        "buffers (\"ibv_reg_mr failed: Cannot allocate memory\").",
    "finding.MEMLOCK_LOW.next_action":
        "Raise the limit to unlimited for the job (ulimit -l unlimited; memlock in "
        "/etc/security/limits.conf; PropagateResourceLimits or the container's --ulimit "
        "memlock=-1).",
    "finding.SHM_TOO_SMALL.small.summary":
        "The shared-memory folder /dev/shm has only {size_mib} MiB: DataLoader workers die with "
        "\"Bus error\" and NCCL cannot create its segments.",
    "finding.SHM_TOO_SMALL.small.next_action":
        "Give the container more: docker run --shm-size=8g (or --ipc=host); on Kubernetes mount "
        "a memory-backed emptyDir (medium: Memory) at /dev/shm.",
    "finding.SHM_TOO_SMALL.read_only.summary":
        "This user cannot write to the shared-memory folder /dev/shm: DataLoader workers and "
        "NCCL cannot share memory between processes.",
    "finding.SHM_TOO_SMALL.read_only.next_action":
        "Mount a writable /dev/shm (a tmpfs, or docker run --ipc=host / --shm-size=8g; on "
        "Kubernetes a memory-backed emptyDir).",
    "finding.DEVICE_ORDER_MISMATCH.summary":
        "GPUs of different models and an index in CUDA_VISIBLE_DEVICES: CUDA numbers the fastest "
        "GPU first, nvidia-smi by PCI bus, so the same index names different cards.",
    "finding.DEVICE_ORDER_MISMATCH.next_action":
        "export CUDA_DEVICE_ORDER=PCI_BUS_ID (so CUDA's indices are nvidia-smi's), or select "
        "GPUs by UUID (nvidia-smi -L).",
    "finding.MIG_MULTIPLE_LISTED.summary":
        "CUDA_VISIBLE_DEVICES lists {count} MIG devices, but a CUDA process uses only the first "
        "one it can reach.",
    "finding.MIG_MULTIPLE_LISTED.next_action":
        "Give each process one MIG device (CUDA_VISIBLE_DEVICES=MIG-<uuid>); run one process per "
        "slice.",
    "finding.NVIDIA_MODULE_NOT_LOADED.summary":
        "An NVIDIA GPU is on the PCI bus, but the NVIDIA kernel module is not loaded.",
    "finding.NVIDIA_MODULE_NOT_LOADED.next_action":
        "Load it (sudo modprobe nvidia; dmesg says why it fails); after a kernel update rebuild "
        "it for the running kernel (DKMS: sudo dkms autoinstall); with Secure Boot, enroll the "
        "module's signing key (mokutil) or sign it; or install the driver.",
    "finding.NOUVEAU_BOUND.summary":
        "{count} NVIDIA GPU(s) are held by nouveau, the open-source driver, which CUDA cannot "
        "use.",
    "finding.NOUVEAU_BOUND.next_action":
        "Blacklist nouveau (blacklist nouveau and options nouveau modeset=0 in "
        "/etc/modprobe.d/), rebuild the initramfs (sudo update-initramfs -u or dracut -f), "
        "reboot, and load the NVIDIA driver.",
    "finding.CONTAINER_NO_COMPUTE_CAPABILITY.summary":
        "The NVIDIA devices and NVML (nvidia-smi's library) are here but libcuda.so.1 is not: "
        "the container runtime gave the driver's utility libraries without its compute ones.",
    "finding.CONTAINER_NO_COMPUTE_CAPABILITY.next_action":
        "Start the container with NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all), or "
        "--gpus 'all,\"capabilities=compute,utility\"'; in Compose, capabilities: [gpu] or "
        "[compute, utility].",
    "finding.WSL_LINUX_DRIVER_INSTALLED.system.summary":
        "This is WSL 2, and the loader finds a Linux driver's libcuda.so.1 before WSL's own: a "
        "Linux NVIDIA driver (or toolkit package) was installed in the distribution.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.system.next_action":
        "Use only the Windows driver: remove the Linux driver's packages from the distribution "
        "(e.g. sudo apt remove --purge 'libnvidia-compute-*' 'nvidia-driver-*'; install the "
        "toolkit with cuda-toolkit-12-x, never the cuda or cuda-drivers meta-packages), then sudo "
        "ldconfig.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.library_path.summary":
        "This is WSL 2, and a folder of LD_LIBRARY_PATH supplies a libcuda.so.1 before WSL's "
        "own driver library.",
    "finding.WSL_LINUX_DRIVER_INSTALLED.library_path.next_action":
        "Remove that folder from LD_LIBRARY_PATH (WSL's libcuda.so.1 is in /usr/lib/wsl/lib), "
        "and remove any Linux driver libraries from it.",
    "finding.LIBCUDA_LINK_MISSING.summary":
        "libcuda.so.1 is found but no libcuda.so beside it: torch.compile (Triton) links with "
        "-lcuda and fails with \"libcuda.so cannot found\".",
    "finding.LIBCUDA_LINK_MISSING.next_action":
        "Create the link in the driver's folder (sudo ln -s libcuda.so.1 libcuda.so there, then "
        "sudo ldconfig), or set TRITON_LIBCUDA_PATH to a folder holding libcuda.so.",
    "finding.GPU_NODES_MISMATCH.summary":
        "This process can reach fewer GPUs than the NVIDIA driver has: a scheduler's or a "
        "container's device limits keep the others from it.",
    "finding.GPU_NODES_MISMATCH.next_action":
        "Ask the scheduler for the GPUs (Slurm: --gres=gpu:N or --gpus=N; Kubernetes: "
        "nvidia.com/gpu) instead of exposing devices by hand; outside a job, check the device "
        "nodes' permissions (ls -l /dev/nvidia*).",
    "finding.GPU_MEMORY_HELD.summary":
        "Before the check, only {free} GiB of {device}'s {total} GiB were free: other processes "
        "hold most of its memory.",
    "finding.GPU_MEMORY_HELD.next_action":
        "Find the holders (nvidia-smi lists them) and stop them, or pick a free GPU "
        "(--device-index, CUDA_VISIBLE_DEVICES).",
    "finding.GPU_BUSY.summary":
        "The GPU is busy or unavailable: in an exclusive or prohibited compute mode, another "
        "process has it, or no process may create a context on it.",
    "finding.GPU_BUSY.next_action":
        "Use a free GPU, stop the process holding it, or ask an administrator to set the compute "
        "mode back to default (sudo nvidia-smi -c DEFAULT).",
    "finding.ECC_UNCORRECTABLE.summary":
        "The GPU reports uncorrectable ECC memory errors: a hardware fault, not a software one.",
    "finding.ECC_UNCORRECTABLE.next_action":
        "Drain the GPU (no new jobs), reset it (sudo nvidia-smi -r) or reboot; if the errors "
        "come back, call the provider or the vendor to replace it.",
    "finding.GPU_NEEDS_RESET.summary":
        "Memory pages or rows are waiting to be retired or remapped: the GPU needs a reset "
        "before they take effect.",
    "finding.GPU_NEEDS_RESET.next_action":
        "Drain the GPU, then reset it (sudo nvidia-smi -r -i N) or reboot the node; if it keeps "
        "happening, call the provider.",
    "finding.GPU_LOST.summary":
        "A GPU is lost: the driver cannot reach it (Xid 79, fallen off the bus), a hardware or "
        "power fault.",
    "finding.GPU_LOST.next_action":
        "The node needs attention: drain it, reboot it, and check the GPU's power and seating "
        "(dmesg shows the Xid); call the provider if it happens again.",
    "finding.PERSISTENCE_MODE_OFF.summary":
        "Persistence mode is off and the start was slow: without it the driver initialises the "
        "GPUs for each process (1-3 s per GPU) and tears them down after.",
    "finding.PERSISTENCE_MODE_OFF.next_action":
        "Enable it: sudo systemctl enable --now nvidia-persistenced (or sudo nvidia-smi -pm 1).",
    "finding.DEBUG_INJECTION_SET.summary":
        "Variables that change CUDA's behaviour (debuggers, profilers, injection, core dumps) are "
        "set: {names}.",
    "finding.DEBUG_INJECTION_SET.next_action":
        "Unset them for production runs (unset {names}); keep them only while debugging or "
        "profiling.",
    "finding.ROCM_VISIBILITY_CONFLICT.summary":
        "HIP_VISIBLE_DEVICES is set together with {variables}, and they select differently: "
        "ROCr applies ROCR_VISIBLE_DEVICES first and HIP indexes what is left.",
    "finding.ROCM_VISIBILITY_CONFLICT.next_action":
        "Use one variable (ROCR_VISIBLE_DEVICES on Linux) and unset the others.",

    # -- the library layer (--extensions, --kernels; docs/libraries.md) -------------------------
    "finding.EXTENSION_TORCH_MISMATCH.declared.summary":
        "{name} {version} requires torch{wants}, but torch {torch} is installed: it was built for "
        "another torch.",
    "finding.EXTENSION_TORCH_MISMATCH.declared.next_action":
        "Install torch and {name} together, pinned, from one index, so that pip picks the {name} "
        "built for that torch: {command}; or upgrade torch to what {name} requires.",
    "finding.EXTENSION_TORCH_MISMATCH.built.summary":
        "{name} {version} was built for another torch than the installed {torch}: its import "
        "fails with the signs of it.",
    "finding.EXTENSION_TORCH_MISMATCH.built.next_action":
        "Install torch and {name} together, pinned, from one index, so that pip picks the {name} "
        "built for that torch: {command}.",
    "finding.EXTENSION_CUDA_MISMATCH.summary":
        "{name} {version} was built for {theirs}, torch {torch} for {ours}.",
    "finding.EXTENSION_CUDA_MISMATCH.next_action":
        "Reinstall {name} from the index of torch's build, with torch pinned: {command}.",
    "finding.EXTENSION_IMPORT_FAILED.failed.summary":
        "{name} {version} fails to import: {what}",
    "finding.EXTENSION_IMPORT_FAILED.failed.next_action":
        "Import it alone to see the whole error (python -c \"import {module}\"), then reinstall "
        "it for this torch and this Python, with what it is missing.",
    "finding.EXTENSION_IMPORT_FAILED.timeout.summary":
        "Importing {name} {version} did not finish within {seconds} s: it waits on something (a "
        "lock, the network, a driver) or is very slow.",
    "finding.EXTENSION_IMPORT_FAILED.timeout.next_action":
        "Import it alone to see where it waits: python -X importtime -c \"import {module}\" "
        "(or py-spy dump on the hanging process).",
    "finding.DTYPE_UNSUPPORTED.summary":
        "{device} has no native {dtype}: the {dtype} matrix product is unsupported there.",
    "finding.DTYPE_UNSUPPORTED.next_action":
        "Use {instead} instead (mixed precision: torch.autocast(device_type=\"cuda\", "
        "dtype=torch.float16) with torch.amp.GradScaler), or a device with native {dtype} "
        "(bfloat16: NVIDIA Ampere, sm_80, or newer).",
    "finding.COMPILER_MISSING.cpp.summary":
        "torch.compile found no working C++ compiler: on the CPU it compiles the code it "
        "generates with one.",
    "finding.COMPILER_MISSING.cpp.next_action":
        "Install one (Debian, Ubuntu: sudo apt install g++; Fedora: sudo dnf install gcc-c++; "
        "conda: conda install -c conda-forge cxx-compiler; Windows: Visual Studio Build Tools) "
        "or set CXX to one that works; check it with g++ --version.",
    "finding.COMPILER_MISSING.cxx_not_found.summary":
        "torch.compile could not run the C++ compiler CXX names: CXX is set to a program "
        "this PATH cannot run, and on the CPU torch.compile uses that one and no other.",
    "finding.COMPILER_MISSING.cxx_not_found.next_action":
        "Unset CXX (env -u CXX python app.py, or unset CXX in the shell or the job script that "
        "sets it) or point it at a compiler that runs here; check it with $CXX --version.",
    "finding.COMPILER_MISSING.triton.summary":
        "torch.compile found no working Triton: on a GPU it generates Triton kernels.",
    "finding.COMPILER_MISSING.triton.next_action":
        "Install the Triton torch was built with (python -m pip install triton at the version "
        "torch requires; it comes with torch's Linux CUDA wheels; ROCm: pytorch-triton-rocm; "
        "Windows: triton-windows).",
    "finding.COMPILE_CACHE_UNUSABLE.not_a_folder.summary":
        "torch.compile will fail in your programs: its cache folder, torchinductor_<your user"
        " name> in the temporary folder, is a file.",
    "finding.COMPILE_CACHE_UNUSABLE.not_a_folder.next_action":
        'Remove that file (rm "${{TMPDIR:-/tmp}}/torchinductor_$(whoami)"), or set '
        "TORCHINDUCTOR_CACHE_DIR to a folder of yours.",
    "finding.COMPILE_CACHE_UNUSABLE.not_writable.summary":
        "torch.compile will fail in your programs: its cache folder, torchinductor_<your user"
        " name> in the temporary folder, is one you cannot write (left by a run as another "
        "user, such as sudo -E, or made by another user).",
    "finding.COMPILE_CACHE_UNUSABLE.not_writable.next_action":
        'Have its owner remove it (sudo rm -r "${{TMPDIR:-/tmp}}/torchinductor_$(whoami)"), '
        "or set TORCHINDUCTOR_CACHE_DIR to a folder of yours; never make it writable for all:"
        " another user's files there would run in your programs.",
    "finding.FUSED_ATTENTION_UNAVAILABLE.summary":
        "scaled_dot_product_attention cannot use {backends} here: it falls back to slower "
        "kernels.",
    "finding.FUSED_ATTENTION_UNAVAILABLE.next_action":
        "Nothing is broken. The evidence gives torch's reason for each backend (an older GPU "
        "architecture, a dtype or head size it does not take, a build without it); flash "
        "attention needs an NVIDIA Ampere (sm_80) or newer GPU.",

    # -- the tool's own sentences in error.message (error.message_key) -----------------------
    "error.backend_absent": "the build declares no GPU backend (neither CUDA, HIP, XPU nor MPS)",
    "error.torch_shadowed":
        "'import torch' would load {module} (origin: {origin}), not an installed PyTorch "
        "package: it was not imported",
    "error.torch_incomplete":
        "'import torch' gave a module without {missing}: not a PyTorch build",
    "error.gpu_unavailable": "torch.cuda.is_available() is False",
    "error.gpu_unavailable.reason": "torch.cuda.is_available() is False: {reason}",
    "error.backend_unavailable": "{call} is False",
    "error.backend_unavailable.reason": "{call} is False: {reason}",
    "error.no_visible_device": "no visible device",
    "error.no_visible_device.reason": "no visible device: {reason}",
    "error.device_index_invalid": "device index {index} of {count} visible",
    "error.extension_failed":
        "{count} of {total} torch extension(s) failed to import; first: {name} {version}: {what}",
    "error.extension_failed.timeout":
        "{count} of {total} torch extension(s) failed to import; first: {name} {version}, whose "
        "import did not finish within {seconds} s",
    "error.extension_failed.skipped":
        "the check's time ran out before {count} of {total} torch extension(s) were imported: "
        "give a longer --timeout",
    "error.kernel_wrong":
        "kernel {kernel} gave a wrong result (largest difference from the known answer: "
        "{difference})",
    "error.check_failed": "wrong {what}",
    "error.no_verified_result": "the worker reported no verified result",
    "error.unreadable_log":
        "the worker's event log held {count} unreadable line(s) and no verified result",
    "error.timeout_hung_in":
        "no result within {seconds} s; the worker was stopped during {at}, hung in {package} "
        "({place})",
    "error.timeout": "no result within {seconds} s; the worker was stopped during {at}",
    "error.launcher_stop.time_limit":
        "the job reached its Slurm time limit during {at}: Slurm stopped it (SIGTERM) before a "
        "result, not this rank's failure",
    "error.launcher_stop.cancelled":
        "the job was cancelled during {at} (scancel, srun interrupted, a failed task under "
        "--kill-on-bad-exit, a preemption): stopped before a result, not this rank's failure",
    "error.launcher_stop.sigterm":
        "the launcher stopped the job during {at} (SIGTERM: cancelled, or its time limit) before "
        "a result, not this rank's failure",
    "error.collective.missing_ranks":
        "rank(s) {ranks} never reported within the time limit (collective: {status})",
    "error.collective.store_unresolvable":
        "MASTER_ADDR does not resolve to an address: the job's store was never reached",
    "error.collective.store_refused":
        "nothing listens at the store's address and port (connection refused): rank 0 never "
        "served the store there, or MASTER_ADDR / MASTER_PORT differ between the ranks",
    "error.collective.store_unreachable":
        "the store's address does not answer (no route, or no reply in time): an address from "
        "another network, or a firewall",
    "error.collective.store_silent":
        "a program that is not the job's store holds the store's port: the store never answered",
    "error.collective.store_in_use":
        "rank 0 could not serve the store: its port is in use by another program",
    "error.collective.store_foreign":
        "rank 0 could not serve the store: another job's store holds its port (two jobs on one "
        "MASTER_PORT)",
    "error.collective.duplicated_ranks":
        "rank(s) {ranks} joined twice: two processes were started as the same rank (RANK or "
        "SLURM_PROCID alike on two processes, or two jobs on one store)",
    "error.collective.launcher_tasks":
        "the launcher started {tasks} task(s) but the ranks formed a world of {world_size}: "
        "torchrun's variables exported into an srun step place every task alone",
    "next.launcher_stopped":
        "Nothing was proven on this node, nor against it: the job was stopped before the check "
        "ended. Run it again in a job whose time limit is above --timeout, and look in the "
        "launcher's log for who stopped it.",
    "next.collective.duplicated_ranks":
        "Give every process its own rank (RANK from 0 to WORLD_SIZE - 1, once each), and one "
        "MASTER_PORT per job.",
    "next.collective.launcher_tasks":
        "Do not export RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT into an srun "
        "step: let each task take its rank from Slurm (SLURM_PROCID), or run torchrun under srun.",
    "error.collective.world_sizes":
        "the ranks disagree on the world size ({sizes}): set WORLD_SIZE (or srun -n) alike for "
        "every rank",
    "error.collective.missing_ranks_slurm":
        "rank(s) {ranks} never reported within the time limit (collective: {status}); srun waits "
        "for a stopped task by default: run srun --kill-on-bad-exit=1",
    "next.collective.store":
        "Check MASTER_ADDR and MASTER_PORT on every rank: the address must resolve and reach rank "
        "0's node from every node, and the port be free there when the job starts.",
    "next.collective.world_sizes":
        "Give every rank the same world size (torchrun's --nnodes and --nproc-per-node, or srun "
        "-n); do not export WORLD_SIZE for some ranks of a job only.",
    "next.collective.missing_slurm":
        "Run srun with --kill-on-bad-exit=1 (by default it waits for a stopped task), then read "
        "the missing ranks' own reports and the job's log for why they stopped.",
    "error.collective.failed_ranks": "rank(s) {ranks} failed (collective: {status})",
    "error.collective.wrong_sum": "the all-reduce gave {observed}, expected {expected}",
    "error.collective.status":
        "the collective ended with status {status} ({backend}, {world_size} ranks)",
    "error.collective.not_gathered":
        "the ranks' results never reached this rank (collective: {status})",
    "error.timeout_at_start":
        "the interpreter had not started within {seconds} s: it hangs at start-up, or starts more "
        "slowly than the time limit allows (a wrapper script, a slow file system, a site hook)",
    "error.worker_ended.signal":
        "the worker was killed by signal {signal} during {at}, without a final result",
    "error.worker_ended.exit":
        "the worker exited with code {code} during {at}, without a final result",
    "error.worker_ended.status":
        "the worker ended with status {status} during {at}, without a final result",
    "error.worker_ended.running":
        "the worker was still running when stopped during {at}, without a final result",
    "error.worker_ended.signal_stderr":
        "the worker was killed by signal {signal} during {at}, without a final result; its last "
        "line on stderr: {stderr}",
    "error.worker_ended.exit_stderr":
        "the worker exited with code {code} during {at}, without a final result; its last line "
        "on stderr: {stderr}",
    "error.worker_ended.status_stderr":
        "the worker ended with status {status} during {at}, without a final result; its last "
        "line on stderr: {stderr}",
    "error.worker_ended.running_stderr":
        "the worker was still running when stopped during {at}, without a final result; its last "
        "line on stderr: {stderr}",
    "error.not_started.worker_missing":
        "the worker could not be started: the tool's own worker module is missing from its "
        "install ({detail}); reinstall the tool",
    "error.not_started.temp_folder":
        "the worker could not be started: no private temporary folder ({detail})",
    "error.not_started.temp_not_writable":
        "the worker could not be started: the temporary folder is not writable ({detail})",
    "error.not_started.file_size_limit":
        "the worker could not be started: a file-size limit on this process (ulimit -f) refused "
        "its files in the temporary folder ({detail}); raise or remove the limit",
    "error.not_started.interpreter":
        "the worker could not be started: the interpreter could not be started ({detail})",

    # -- terminal and markdown -------------------------------------------------------------------
    "ui.status.passed": "PASSED",
    "ui.status.failed": "FAILED",
    "ui.headline": "{status} {code} (exit {exit_code}) at stage {stage}",
    "ui.headline.exit_as": "{status} {code} (exit {exit_code}, {exit_as}) at stage {stage}",
    "ui.label.runtime": "runtime",
    "ui.label.pytorch": "pytorch",
    "ui.label.gpu": "gpu",
    "ui.label.execution": "execution",
    "ui.label.host": "host",
    "ui.label.distributed": "distributed",
    "ui.distributed.job": "{launcher}, rank {rank} of {world_size}",
    "ui.distributed.collective": "collective {status}: sum {observed} (expected {expected})",
    "ui.distributed.collective_wrong_sum":
        "collective summed wrong: {observed} (expected {expected})",
    "ui.distributed.rank": "rank {rank}",
    "ui.distributed.rank_entry": "{code} at {stage}, node {node}, local rank {local_rank}",
    "ui.distributed.missing": "missing ranks: {ranks}",
    "ui.distributed.launcher_stopped":
        "the launcher stopped the job during the check (SIGTERM): not this rank's failure",
    "ui.distributed.launcher_stop.time_limit":
        "the job reached its Slurm time limit during the check (SIGTERM): not this rank's failure",
    "ui.distributed.launcher_stop.cancelled":
        "the job was cancelled during the check (SIGTERM before its time limit): not this rank's "
        "failure",
    "ui.label.error": "error",
    "ui.label.warning": "warning",
    "ui.label.findings": "findings",
    "ui.label.next": "next",
    "ui.label.do": "do",
    "ui.label.paths": "paths",
    "ui.runtime.unknown": "unknown (the worker did not start)",
    "ui.runtime.environment": "environment {kind}",
    "ui.pytorch.not_imported": "not imported",
    "ui.pytorch.unknown_version": "unknown version",
    "ui.pytorch.distribution": "installed distribution {version}",
    "ui.gpu.not_queried": "not queried in CPU mode",
    "ui.gpu.available": "available",
    "ui.gpu.not_available": "not available",
    "ui.gpu.visible": "{count} visible",
    "ui.device.passed": "passed in {ms} ms",
    "ui.device.failed": "{code} at {where}: {what}",
    "ui.device.not_checked": "not checked: the worker was stopped before this device",
    "ui.label.peers": "peers",
    "ui.peers.verified": "{verified} of {total} copies verified",
    "ui.peers.access": "peer access {access} of {total}",
    "ui.peers.access_unknown": "peer access unknown",
    "ui.peers.access_partly": "peer access {access} of {total}, {unknown} unknown",
    "ui.peers.not_tried": "{count} copies not tried (the worker was stopped first): {copies}",
    "ui.peers.failed": "{source} -> {target}: {code}",
    "ui.execution.not_reached": "not reached",
    "ui.execution.on": "on {device}",
    "ui.execution.product": "product {state}",
    "ui.execution.gradient": "gradient {state}",
    "ui.execution.verified": "ok",
    "ui.execution.not_verified": "NOT verified",
    "ui.execution.synchronized": "synchronized",
    "ui.host.not_found": "{tool} not found",
    "ui.host.timeout": "{tool} timed out (3 s)",
    "ui.host.failed": "{tool} failed",
    "ui.host.driver": "driver {version}",
    "ui.host.mig": "{count} MIG device(s)",
    "ui.label.system": "machine",
    "ui.label.driver": "driver",
    "ui.label.toolkit": "toolkit",
    "ui.label.configuration": "config",
    "ui.label.cuda_libraries": "cuda libs",
    "ui.label.packages": "packages",
    "ui.system.kernel": "kernel {kernel}",
    "ui.system.cpus": "{count} logical CPUs",
    "ui.system.cpus_usable": "{count} logical CPUs, {usable} usable by this process",
    "ui.system.driver": "NVIDIA {version} (kernel module)",
    "ui.system.toolkit":
        "nvcc {version} (via {via}), for building extensions, not torch's runtime",
    "ui.system.toolkit.default_location": "the default location",
    "ui.system.toolkit_not_found": "no CUDA toolkit found (for building extensions)",
    "ui.system.toolkit_failed": "nvcc did not answer",
    "ui.pytorch.debug": "debug build",
    "ui.libraries.other": "another copy loaded",
    "ui.error.at": "at {where}: {what}",
    "ui.warning.during": "{category} during {stage}: {message}",
    "ui.paths.interpreter": "interpreter {path}",
    "ui.paths.torch": "torch {path}",
    "ui.paths.note": "(shown on this terminal only, never saved in a report)",
    "ui.live.interpreter": "starting Python",
    "ui.live.import": "importing torch",
    "ui.live.backend": "reading the build",
    "ui.live.device": "querying the GPU",
    "ui.live.compute": "computing",
    "ui.live.extensions": "importing torch extensions",
    "ui.live.kernels": "running kernels",
    "ui.label.extensions": "extensions",
    "ui.label.kernels": "kernels",
    "ui.libraries.none": "none installed",
    "ui.libraries.not_reached": "not reached",
    "ui.libraries.status.passed": "ok",
    "ui.libraries.status.failed": "FAILED",
    "ui.libraries.status.timeout": "TIMED OUT",
    "ui.libraries.status.skipped": "skipped",
    "ui.libraries.status.unsupported": "unsupported",
    "ui.libraries.requires": "requires torch{wants}",
    "ui.libraries.bandwidth": "{to_device} GB/s to the device, {to_host} GB/s back",
    "ui.libraries.compile": "compiled in {ms} ms",
    "ui.libraries.wrong": "wrong result (largest difference {difference})",
    "ui.live.collective": "joining the other ranks",
    "ui.live.done": "check done in {seconds} s",
    "ui.severity.error": "error",
    "ui.severity.warning": "warning",
    "ui.severity.info": "info",
    "ui.markdown.headline": "**{status}** `{code}` (exit {exit_code}), stage `{stage}`: {summary}",
    "ui.markdown.title": "kernodeck-diagnostic report",
    "ui.markdown.field": "Field",
    "ui.markdown.value": "Value",

    # -- the command line's own messages ---------------------------------------------------------
    "command.usage_error": "error: {message} (see --help)",
    "cli.timeout.not_a_number": "not a number of seconds: {value}",
    "arg.timeout.range": "must be between {low} and {high} seconds, got {value}",
    "cli.index.not_a_number": "not a whole number: {value}",
    "arg.index.negative": "must be 0 or more, got {value}",
    "cli.contradiction": "{first} contradicts {second}: {reason}; give one of them",
    "arg.contradiction.all_devices.cpu": "every GPU is checked, and the CPU mode uses none",
    "arg.contradiction.all_devices.distributed":
        "each rank checks the device of its own local rank, not every GPU",
    "arg.contradiction.all_devices.device_index": "every GPU is checked, not one chosen GPU",
    "arg.contradiction.distributed.device_index":
        "each rank checks the device of its own local rank, not one chosen GPU",
    "arg.contradiction.cpu.device_index": "the CPU mode uses no GPU, so no GPU index applies",
    "arg.contradiction.show_paths.format":
        "the paths are shown in the text output only, never in JSON or markdown",
    "cli.device.rocm":
        "{value} is not a device mode: ROCm and CUDA builds of PyTorch both use the 'cuda' device "
        "name, so use --device gpu (the default)",
    "arg.device.unknown": "must be gpu or cpu, got {value}",
    # -- the Python API's own words for the same rules (check(...), never a --flag) -------------
    "api.argument": "check({parameter}=...): {reason}",
    "api.contradiction": "check({first}, {second}): these contradict each other: {reason}",
    "api.device.rocm":
        "{value} is not a device mode: ROCm and CUDA builds of PyTorch both use the 'cuda' device "
        "name, so use device='gpu' (the default)",
    "api.type.device": "check(device=...) takes a str, 'gpu' or 'cpu'; not {type}",
    "api.type.device_index": "check(device_index=...) takes an int; not {type}",
    "api.type.progress": "check(progress=...) takes a function or None; not {type}",
    "api.type.timeout": "check(timeout=...) takes seconds as an int or a float; not {type}",
    "api.type.host_check": "check(host_check=...) takes True or False; not {type}",
    "api.type.flag": "check({parameter}=...) takes True or False; not {type}",
    "api.type.all_devices": "check(all_devices=...) takes True or False; not {type}",
    "api.type.distributed": "check(distributed=...) takes True or False; not {type}",
    "api.type.python":
        "check(python=...) takes the interpreter's path as a str or an os.PathLike, or None; "
        "not {type}",
    "arg.python.missing":
        "no such file; give the interpreter's path (in a virtual environment, "
        "bin/python, or Scripts\\python.exe on Windows)",
    "arg.python.dangling":
        "that is a link to an interpreter that no longer exists: the Python this "
        "virtual environment was made from was removed or upgraded; make the environment again",
    "arg.python.no_access":
        "that interpreter exists but this user cannot reach it: a folder on its way is closed "
        "to you (permission denied; another user's home, say); ask its owner to open the "
        "folders (chmod o+x on each), or use a Python of your own",
    "arg.python.folder":
        "that is a folder; give the interpreter inside it (in a virtual environment, "
        "bin/python, or Scripts\\python.exe on Windows)",
    "arg.python.not_executable":
        "that file is not executable; give the interpreter itself (in a virtual "
        "environment, bin/python)",
    "arg.python.not_runnable":
        "the system cannot start that file (a script whose own interpreter is missing, "
        "or a program for another system or processor)",
    "arg.python.not_python":
        "that program is not a Python interpreter: it ran, but did not answer as one",
    "arg.python.too_old":
        "that interpreter is Python {version}; the minimum is {minimum}",
    "cli.distributed.no_launcher":
        "--distributed runs under a launcher: torchrun (sets {torchrun}) or Slurm's srun (sets "
        "{slurm}); none of these variables is set",
    "cli.distributed.missing": "--distributed under {launcher}: {names} not set",
    "cli.distributed.invalid": "--distributed: the variable {name} does not hold a valid value",
    "cli.distributed.rank_range":
        "--distributed: rank {rank} is not below the world size "
        "{world_size}",
    "cli.distributed.ignored":
        "warning: --distributed under Slurm: {names} set without the rest of torchrun's variables "
        "(a batch script's export?): ignored, Slurm's own variables place this rank",
    "cli.distributed.no_file":
        "rank {rank} writes no file: --output without {placeholder} names rank 0's report alone "
        "(the job's); put {placeholder} in the name for one file per rank",
    "cli.distributed.rank_verdict":
        "rank {rank} of {world_size}: {code} (exit {exit}); the job's report is rank 0's",
    "cli.output.dash":
        "--output - would create a file named '-': for the JSON report on stdout use "
        "--format json; for a file really named '-' write ./-",
    "cli.output.preflight":
        "cannot write the report to the file asked for: {reason}. Nothing was run (exit {exit}).",
    "cli.output.not_saved":
        "the report was NOT saved: {reason} (exit {exit}, OUTPUT_WRITE_FAILED).",
    "cli.stdout.saved":
        "the report was saved to the file asked for, but could not be written to stdout: "
        "{reason} (exit {exit}, {code}).",
    "cli.stdout.lost": "the result could not be written to stdout: {reason} (exit {exit}, {code}).",
    "output.reason.empty": "the file name is empty",
    "output.reason.exists_file": "a file of that name already exists; it is never overwritten",
    "output.reason.exists_link":
        "a symbolic link of that name already exists; it is never overwritten",
    "output.reason.exists_folder": "a folder of that name already exists",
    "output.reason.exists_device":
        "that name is a device, not a regular file; the report is only written to a new file",
    "output.reason.exists_fifo":
        "that name is a named pipe (FIFO), not a regular file; the report is only written to a "
        "new file",
    "output.reason.exists_socket":
        "that name is a socket, not a regular file; the report is only written to a new file",
    "output.reason.no_working_folder":
        "the working folder no longer exists, so a relative name has no folder; change to an "
        "existing folder or give a full path",
    "output.reason.no_folder": "its folder does not exist",
    "output.reason.pseudo_filesystem":
        "its folder is on {kind}, a file system of the kernel that holds no files of its own",
    "output.reason.not_a_folder": "the path of its folder is not a folder",
    "output.reason.not_writable": "its folder is not writable",
    "output.reason.name_too_long": "the file name is too long",
    "output.reason.permission": "permission denied",
    "output.reason.no_space": "no space left on the device",
    "output.reason.too_large": "the file is larger than allowed (file size limit)",
    "output.reason.quota": "disk quota exceeded",
    "output.reason.read_only": "the file system is read-only",
    "output.reason.loop": "too many levels of symbolic links",
    "output.reason.nul":
        "the file name contains a NUL character",
    "output.reason.trailing_separator":
        "the name ends with a folder separator: give a file name",
    "output.reason.unencodable":
        "the file name cannot be encoded for this file system",
    "output.reason.no_folder_tilde":
        "its folder does not exist (a leading ~ is not your home folder here: the shell did not "
        "expand it; write the path in full)",
    "output.reason.closed": "it is closed",
    "output.reason.other": "the system refused the write ({detail})",
    "check.interrupted":
        "interrupted by {signal}; the check was stopped and no report was written.",
    # -- the check's --help (commands/check.py; printed in English, whatever the language) ---------
    "check.help.description":
        "Find the first layer of a PyTorch GPU setup that fails: interpreter and import, build "
        "backend, device, a tiny verified computation. Without a command, {tool} runs this check; "
        "a command named first runs instead (each has its own --help).",
    "check.help.epilog.codes":
        "result codes: the report's code and the exit code (name, exit code, meaning):",
    "check.help.epilog.process": "exit codes of the process alone, never a report's code:",
    "check.help.epilog.output":
        "output:\n"
        "  --output FILE is written first, then stdout. If stdout is closed or refuses the bytes "
        "(a full\n"
        "  device), the exit code is 15 (STDOUT_WRITE_FAILED) and the file asked for is still "
        "saved; a\n"
        "  reader that leaves (| head) is not a failure. If the file cannot be written the exit "
        "code is\n"
        "  12 (OUTPUT_WRITE_FAILED), and the text's first line says so. The JSON and markdown "
        "reports\n"
        "  keep the check's own code and exit code.\n"
        "  --output - is refused (exit 2): the JSON report on stdout is --format json; a file "
        "really\n"
        "  named '-' is ./-\n"
        "  With TERM=dumb or NO_COLOR, no colour; with TERM=dumb the progress line on stderr uses "
        "no\n"
        "  escape sequences (a carriage return and spaces only).",
    "check.help.device": "where to run the check (default gpu; cpu only when asked)",
    "check.help.device_index": "index of the GPU among the visible devices (default 0)",
    "check.help.timeout":
        "limit for the whole check, {low}-{high} seconds (default {default}; {kernels} with "
        "--kernels)",
    "check.help.output": "also write the JSON report to FILE, which must not exist yet",
    "check.help.host_check":
        "also ask nvidia-smi (or amd-smi, rocm-smi) for the driver and memory, 3 s at most",
    "check.help.distributed":
        "under torchrun or Slurm's srun: check this rank's device (its local rank), then a "
        "collective (all-reduce, barrier) over every rank; rank 0 prints the job's report. "
        "--output may hold {{rank}}: every rank then writes its own report (see docs/scale.md)",
    "check.help.all_devices":
        "check every visible GPU in one run, each with its own result, and a verified copy "
        "between each pair; the code is that of the lowest-index GPU that failed",
    "check.help.extensions":
        "also import every installed torch extension (torchvision, flash-attn...), each bounded, "
        "and check the torch it declares; a failure is EXTENSION_FAILED (see docs/libraries.md)",
    "check.help.kernels":
        "also verify, on the same device, float16/bfloat16/TF32 matrix products, a convolution, "
        "attention, torch.compile and (GPU) a host-device copy; its limit is 120 s "
        "unless --timeout says otherwise",
    "check.help.python":
        "diagnose another interpreter (a notebook kernel's, a service's, a venv's) without "
        "installing anything into it",
    "check.help.format": "what goes to stdout (default text); --output is always JSON",
    "check.help.lang":
        "language of the text (default from LC_ALL, LC_MESSAGES, LANG); JSON keeps English",
    "check.help.show_paths":
        "also print where the interpreter and torch are, on this terminal only (never in a "
        "report)",
    # -- every command (the check, compare, summarize) -----------------------------------------
    "command.interrupted": "interrupted by {signal}.",
    "command.internal_error":
        "internal error ({detail}); please report it with the command you ran.",
    "command.help.debug": "show a traceback if the tool itself fails",

    # -- compare and summarize (reports read back; JSON output keeps ids, not these texts) -------
    "reports.reason.not_found": "not found",
    "reports.reason.not_a_file": "not a regular file",
    "reports.reason.permission": "permission denied",
    "reports.reason.unreadable": "cannot be read",
    "reports.reason.not_json": "not JSON",
    "reports.reason.schema_version":
        "schema version {version} (this version of the tool reads version 1)",
    "reports.reason.not_a_report": "not a report",
    "reports.reason.too_large": "too large to be a report (over {limit})",
    "reports.reason.link_not_followed":
        "a link to a folder, not followed (what it holds is not read)",
    "reports.help.format": "output format: text (default), json or markdown (to paste in an issue)",
    "reports.help.lang": "language of the text and markdown output (default here: {default})",
    "compare.help.description":
        "Show what changed between two reports of the check: code, stage, versions, devices, "
        "findings and stage timings (a timing counts when it moved by 100 ms and 20 percent or "
        "more). The exit status is the verdict: 0 the same, 20 changed, 21 a regression (a pass "
        "that fails, an attempt that no longer completes, a contract failing or gone); 2 when a "
        "file is not a readable report, 15 when stdout refuses the result. Two trial attempts "
        "(their folders, attempt.json files, or a folder with only events.jsonl) are compared the "
        "same way, by their status: parameters, versions, last stage, first error, contracts, "
        "memory and timing per stage (the slowest pass named).",
    "compare.help.a": "the earlier report (JSON written with --output), or trial attempt",
    "compare.help.b": "the later report, or trial attempt",
    "compare.argument": "{which} ({name}): {reason}",
    "compare.cannot_read": "cannot compare: {what}",
    "trial.adapter.framework_missing":
        "{name} is not installed: this adapter needs {name} {minimum} or newer ({install})",
    "trial.adapter.framework_too_old":
        "{name} {found} is too old: this adapter needs {name} {minimum} or newer ({install})",
    "compare.same_code": "same code: {code}",
    "compare.code_changed": "code changed: {a} -> {b}",
    "compare.same_status": "same status: {code}",
    "compare.status_changed": "status changed: {a} -> {b}",
    "compare.mixed": "{a} is a check report and {b} a trial attempt: compare two of a kind",
    "compare.nothing_else": "nothing else changed",
    "compare.header.field": "field",
    "compare.findings_added": "findings added in B: {ids}",
    "compare.findings_removed": "findings gone in B: {ids}",
    "compare.regression":
        "regression: {what}",
    "compare.regression.passed_to_failed":
        "A passed ({a}), B failed ({b})",
    "compare.regression.passed_to":
        "A passed, B {b}: {why}",
    "compare.regression.stage_stopped":
        "stage {stage}: {a} calls completed in A, {b} in B",
    "compare.regression.contract_failing":
        "contract {name} passed in A, fails in B",
    "compare.regression.contract_lost":
        "contract {name} passed in A, is missing in B",
    "compare.regression.contract_new_failing":
        "contract {name} fails in B (not checked in A)",
    "compare.last_started":
        "last started stage in {which}: {stage}",
    "compare.last_started_pass":
        "last started stage in {which}: {stage} (pass {index})",
    "summarize.help.description":
        "Summarize many reports of the check, e.g. collected from many machines: the jobs of "
        "--distributed reports first (the job's verdict, each rank's, the ranks that never "
        "reported), one line per report, then the count of each code, worst first, then the "
        "files that are not readable reports and why.",
    "summarize.help.paths": "a report file, or a folder searched recursively for *.json",
    "summarize.help.epilog": "Order of the codes, worst first: {order}.",
    "summarize.header.report": "report",
    "summarize.header.code": "code",
    "summarize.header.exit": "exit",
    "summarize.header.stage": "stage",
    "summarize.header.python": "python",
    "summarize.header.torch": "torch",
    "summarize.header.backend": "backend",
    "summarize.header.devices": "devices",
    "summarize.header.count": "count",
    "summarize.counts": "counts per code, worst first",
    "summarize.unreadable": "unreadable ({count})",
    "summarize.jobs": "jobs: the job's verdict, then each rank's",
    "summarize.job": "job {job} ({launcher}, {world_size} rank(s)): {status}, {code}",
    "summarize.job.run": "{job}, run {run} of {runs}",
    "summarize.job.passed": "passed",
    "summarize.job.failed": "failed",
    "summarize.job.incomplete": "incomplete",
    "summarize.job.never_reported": "never reported: rank(s) {ranks}",
    "summarize.job.world_sizes": "the reports disagree on the world size: {sizes}",
    "summarize.header.rank": "rank",
    "summarize.header.node": "node",
    "summarize.job.in_rank_0": "in rank 0's report",
    "summarize.job.no_report": "never reported",
    "summarize.job.stopped": "{file} (stopped by the launcher)",
    "summarize.every_device":
        "devices of --all-devices: each report's verdict, then each device's and the copies'",
    "summarize.every_device.copies": "copies",
    "summarize.header.device": "device",
    "summarize.header.step": "step",
    "summarize.unreadable.line": "unreadable: {count} file(s), {kinds}",
    "summarize.unreadable.hint": "(--list-unreadable lists them)",
    "summarize.help.list_unreadable":
        "list every file that is not a readable report, with why (by default: one line with "
        "their count and kinds)",
    "summarize.total":
        "{files} file(s): {reports} report(s), {passed} passed, {failed} failed, "
        "{unreadable} unreadable",
    "summarize.attempts":
        "trial attempts and ramp attempts",
    "summarize.attempts_total":
        "{attempts} attempt(s): {passed} passed, {failed} failed, {ramp} from a ramp (not counted)",
    "summarize.header.attempt":
        "attempt",
    "summarize.header.status":
        "status",
    "summarize.header.error_stage":
        "first error stage",
    "summarize.header.contracts":
        "contracts",
    "summarize.header.peak":
        "peak memory",
    "summarize.header.last_started":
        "last started stage",
    "summarize.help.only":
        "print only the failing reports, every one of them, one line each (for scripts)",
    "summarize.help.part":
        "these reports are a part of a fleet (xargs): a job's missing ranks may be in another "
        "part (inconclusive, not incomplete)",
    "summarize.help.prometheus":
        "also write the counts as Prometheus metrics to FILE (*.prom, replaced atomically)",
    "summarize.prometheus_suffix":
        "--prometheus: the file's name must end in .prom (node_exporter reads only those)",
    "summarize.stdin_twice":
        "- (stdin) may be given once",
    "summarize.job.in_part":
        "partial (its other ranks may be in another part)",
    "summarize.job.not_among":
        "not among these reports: rank(s) {ranks}",
    "summarize.job.stop.time_limit":
        "stopped by the launcher, the job's Slurm time limit: rank(s) {ranks} (not their failure)",
    "summarize.job.stop.cancelled":
        "stopped by the launcher, the job cancelled (scancel): rank(s) {ranks} (not their failure)",
    "summarize.job.stop.sigterm":
        "stopped by the launcher (SIGTERM): rank(s) {ranks} (not their failure)",
    "summarize.fleet.groups":
        "failing reports by code, stage and cause (the first {few} of each named)",
    "summarize.fleet.group":
        "{code}  {stage}  {cause}: {count}",
    "summarize.fleet.more":
        "… and {count} more (--only failed lists them all)",
    "summarize.fleet.more_groups":
        "… and {groups} more group(s), {count} report(s)",
    "summarize.fleet.jobs":
        "jobs: {jobs}, {passed} passed; those that did not:",
    "summarize.fleet.jobs_all_passed":
        "jobs: {jobs}, every one passed",
    "summarize.fleet.rank":
        "rank {rank}: {code} ({file})",
    "summarize.fleet.more_jobs":
        "… and {count} more job(s) that did not pass (--format json)",
    "summarize.fleet.every_device":
        "--all-devices reports that did not pass: {count}",
    "summarize.nothing_found": "no file to read in the paths given",
    # -- ramp (docs/operating-range.md); outcomes stay ids (passed, out_of_memory...) ---------
    "ramp.help.description":
        "Grow one axis of your application (batch, length, concurrency, processes) until it "
        "fails, one process per attempt, and record the measured operating range: ramp.json, "
        "ramp.md and, with matplotlib, ramp.png in --out. Give the application's command after "
        "--; {{NAME}} in it is replaced by the value.",
    "ramp.help.epilog":
        "Each attempt also gets KERNODECK_AXIS_NAME, KERNODECK_AXIS_VALUE and KERNODECK_RUN_DIR "
        "(where a Trial puts its attempt folder). Run the same command with the same --out to "
        "resume: recorded attempts are never rerun. When stdout is closed or refuses the result, "
        "the record is in --out all the same.",
    "ramp.help.axis": "the axis's name, as the {{NAME}} placeholder of the command",
    "ramp.help.start": "the first value (an integer, at least 1)",
    "ramp.help.stop": "the largest value to try",
    "ramp.help.factor": "growth factor between two values (default 2)",
    "ramp.help.bisect":
        "after the first failure, bisect between the last pass and it, to integer resolution",
    "ramp.help.attempt_timeout": "time limit of one attempt, in seconds (default 600)",
    "ramp.help.out": "folder of the ramp's files (default runs/ramp-NAME); the same one resumes",
    "ramp.no_command": "give the application's command after -- (e.g. -- python app.py)",
    "ramp.bad_axis": "--axis {axis}: a name of letters, digits and _ (e.g. batch)",
    "ramp.bad_range": "--start {start} --stop {stop}: need 1 <= start <= stop",
    "ramp.bad_factor": "--factor {factor}: must be greater than 1",
    "ramp.bad_timeout": "--attempt-timeout {timeout}: must be a positive number of seconds",
    "ramp.bad_out": "--out cannot hold the ramp: {reason}",
    "ramp.other_ramp":
        "--out holds a ramp with other settings ({settings}); choose another --out, or run the "
        "same command to resume it",
    "ramp.resuming": "resuming: {count} attempt(s) already recorded in ramp.json are not rerun",
    "ramp.progress": "[{index}] {axis}={value}: {outcome} in {duration} s, peak memory {peak}",
    "ramp.header.value": "{axis}",
    "ramp.header.outcome": "outcome",
    "ramp.header.duration": "duration",
    "ramp.header.peak": "peak memory",
    "ramp.header.detail": "detail",
    "ramp.range":
        "{axis}: {passed} passed{between}; last pass {last}, first failure {first} ({kind})",
    "ramp.all_passed":
        "{axis}: {passed} passed{between}; no failure up to {value} (no limit found)",
    "ramp.none_passed": "{axis}: the first value, {value}, already failed ({kind})",
    "ramp.written": "written in the --out folder: {files}",
    "ramp.no_plot":
        "no plot: matplotlib is not installed in the Python that runs this command (install it "
        "there: python -m pip install matplotlib, with that Python)",
    "ramp.plot.duration": "duration (s)",
    "ramp.plot.memory": "peak memory (MiB)",
    "ramp.interrupted":
        "interrupted by {signal}; the running attempt was stopped, ramp.json kept: run the same "
        "command again to resume.",
    # -- resume-check ------------------------------------------------------------------------------
    "resume.help.description":
        "Run your application, stop it once the ledger holds N records (or after S seconds), run "
        "it again to its end, then verify the ledger: every expected id exactly once, every line a "
        "whole record, every record what it must be. Or verify a ledger as it is "
        "(--verify-ledger). Exit 0 only when a resume was proven and nothing is lost, duplicated "
        "or bad.",
    "resume.help.ledger": "the application's output ledger (JSON Lines; must not exist yet)",
    "resume.help.stop_after_records": "stop the first run once the ledger holds N records",
    "resume.help.stop_after": "stop the first run after this many seconds",
    "resume.help.expect_ids":
        "file of the expected ids, one per line (default: the ledger header's expected_ids)",
    "resume.help.grace":
        "seconds between SIGINT and SIGTERM, and between SIGTERM and SIGKILL (default 10)",
    "resume.help.timeout":
        "time limit of each run, and of the record check, in seconds (default 3600)",
    "resume.not_positive": "{option} must be a positive number",
    "resume.ledger_exists":
        "the ledger already exists: the check starts from an empty ledger (move it aside)",
    "resume.unsafe_ledger": "--ledger cannot be used: {reason}",
    "files.unsafe.link":
        "a symbolic link owned by another user is in the way (refused, never followed)",
    "files.unsafe.owner": "the folder belongs to another user",
    "files.unsafe.writable": "other users can write in the folder and it has no sticky bit",
    "files.unsafe.not_folder": "not a folder",
    "files.unsafe.not_file": "not a regular file",
    "files.unsafe.file_owner": "the file belongs to another user",
    "files.unsafe.hard_link": "the file has other hard links",
    "resume.bad_expect_ids": "--expect-ids cannot be read: {reason}",
    "resume.first_run":
        "first run stopped with {records} record(s) in the ledger ({remaining} expected id(s) "
        "left); running again",
    "resume.not_stopped": "first run ended by itself (exit {exit}) before the stop; running again",
    "resume.intact": "RESUME OK: nothing lost, nothing counted twice",
    "resume.not_intact": "RESUME FAILED (exit {exit}, {code})",
    "resume.second_failed": "the second run did not end well (exit {exit}): {error}",
    "resume.expected": "{count} expected id(s)",
    "resume.lost": "lost ({count}): {ids}",
    "resume.duplicated": "duplicated ({count}): {ids}",
    "resume.unexpected": "not expected ({count}): {ids}",
    "resume.half_records": "half records ({count}) at line(s): {lines}",
    "code.SUMMARY_ALL_PASSED.summary": "Every report passed and every file was read.",
    "code.SUMMARY_ALL_PASSED.next_action": "Nothing to do.",
    "code.SUMMARY_SOME_FAILED.summary":
        "A report failed, a job is incomplete, or a file is not a readable report.",
    "code.SUMMARY_SOME_FAILED.next_action":
        "Read the failed reports and the jobs' ranks that never reported; --list-unreadable "
        "names the unreadable files.",
    "code.SUMMARY_NOTHING_READ.summary": "No readable report was found in the paths given.",
    "code.SUMMARY_NOTHING_READ.next_action":
        "Check the paths: report files, or folders holding them.",
    "code.RAMP_RANGE_MEASURED.summary":
        "A value passed at least: the operating range was measured.",
    "code.RAMP_RANGE_MEASURED.next_action": "Stay below the first failure (ramp.md).",
    "code.RAMP_NOTHING_PASSED.summary": "Even the first value failed: the program's own failure.",
    "code.RAMP_NOTHING_PASSED.next_action": "Start lower, or read the first attempt's stderr.txt.",
    "code.RAMP_INCONCLUSIVE.summary":
        "Nothing was measured: no attempt ran the program, the axis changed nothing, or the "
        "first value that did not pass was inconclusive.",
    "code.RAMP_INCONCLUSIVE.next_action":
        "Check the command after -- and that the program uses the value (its Trial's parameters).",
    "code.RESUME_INTACT.summary":
        "Stopped with work left and resumed: every expected id once, every record whole and valid.",
    "code.RESUME_INTACT.next_action": "Nothing to do.",
    "code.RESUME_RECORDS_LOST.summary": "Expected ids have no record after the resume.",
    "code.RESUME_RECORDS_LOST.next_action":
        "Make each record durable before counting it done (OutputLedger).",
    "code.RESUME_RECORDS_DUPLICATED.summary":
        "Ids were written more than once, or redone: written again by the second run though the "
        "ledger held them at the stop.",
    "code.RESUME_RECORDS_DUPLICATED.next_action":
        "Skip the ids already in the ledger when the program starts (done_ids).",
    "code.RESUME_BAD_RECORD.summary":
        "A line is no whole record, or a record breaks its rules (dimension, finite values, "
        "--record-check), or its id was never expected.",
    "code.RESUME_BAD_RECORD.next_action": "See the lines and ids named.",
    "code.RESUME_INCONCLUSIVE.summary":
        "Nothing was proven: not stopped with work left, a second run with nothing to do, or no "
        "expected ids.",
    "code.RESUME_INCONCLUSIVE.next_action":
        "Stop it earlier, give it more work, or give the expected ids.",
    "code.RESUME_RUN_FAILED.summary":
        "A run of the program failed for another reason (its exit status, the time limit).",
    "code.RESUME_RUN_FAILED.next_action": "Read the run's last error line named.",
    "code.HEALTH_PASSED.summary": "Every GPU of this node passed the check.",
    "code.HEALTH_PASSED.next_action": "Nothing to do.",
    "code.HEALTH_NODE_FAULT.summary":
        "A GPU of this node or its driver failed the check: unusable, a wrong result, a backend"
        " error.",
    "code.HEALTH_NODE_FAULT.next_action":
        "Drain the node (--slurm does) and run the check on the GPU named.",
    "code.HEALTH_ENVIRONMENT_FAULT.summary":
        "The software failed, not the node: PyTorch missing, broken or without a GPU backend, "
        "or the devices hidden by a setting.",
    "code.HEALTH_ENVIRONMENT_FAULT.next_action":
        "Fix the image or venv the check ran with; do not drain the node for it.",
    "code.HEALTH_INCONCLUSIVE.summary":
        "Nothing was proven about the node: the time limit (a busy node), memory held by a job,"
        " or a check that ended without a result.",
    "code.HEALTH_INCONCLUSIVE.next_action":
        "Run it again when the node is idle; do not drain the node for it.",
    "cli.command.health-check": "a node's GPUs checked for Slurm, NHC or node-problem-detector",
    "health.help.description":
        "The check on every GPU of this node, for a node's health check: whose fault a failure "
        "is (the node's, the environment's, or nothing proven), one reason line, an exit status"
        " the host understands, and with --slurm the node drained or resumed.",
    "health.help.epilog":
        "Exit profiles: native (the statuses below), npd (node-problem-detector: 0 OK, 1 a "
        "problem, 2 unknown), prolog (a Slurm prolog or NHC: 1 for the node's own fault only, "
        "else 0, so that a tool's bug never drains a node).",
    "health.help.timeout": "seconds the whole check may take, 5-120 (default {default})",
    "health.help.python": "the interpreter to check (default: this one)",
    "health.help.output": "also write the check's JSON report to this new file",
    "health.help.prometheus":
        "write the verdict as Prometheus metrics to this *.prom file (replaced atomically)",
    "health.help.slurm":
        "drain this node on its own fault, resume it on a pass only if this command drained it",
    "health.help.node":
        "the Slurm node's name (default: SLURMD_NODENAME, else the short host name)",
    "health.help.exit_profile": "the exit statuses: native, npd or prolog (see below)",
    "health.help.format": "text (default) or json (one object)",
    "health.timeout_range": "--timeout must be between {low} and {high} seconds",
    "metrics.suffix":
        "--prometheus: node_exporter's textfile collector reads only files ending in {suffix}",
    "metrics.not_saved": "{what} was not saved: {reason}",
    "health.fault.passed": "HEALTHY",
    "health.fault.node": "NODE FAULT",
    "health.fault.environment": "ENVIRONMENT",
    "health.fault.inconclusive": "INCONCLUSIVE",
    "health.next.node": "the GPU or its driver failed: drain the node and check the GPU named",
    "health.next.environment":
        "the software failed, not the node: fix the image or venv; the node is not drained",
    "health.next.inconclusive": "nothing proven about the node: run it again when it is idle",
    "health.slurm.drained": "drained this node with that reason",
    "health.slurm.already_drained": "already drained with that reason: left as it is",
    "health.slurm.resumed": "resumed this node (it had drained it itself)",
    "health.slurm.left_operator_drain":
        "the node is drained for another reason (an operator's): left as it is",
    "health.slurm.not_drained": "not drained: not the node's fault",
    "health.slurm.nothing": "nothing to do",
    "health.slurm.unknown_node": "scontrol does not know this node: nothing done (--node NAME)",
    "health.slurm.scontrol_failed": "scontrol update failed: nothing done",
    "health.passed": "{code}: {count} GPU(s) checked",
    "check.help.prometheus":
        "also write the verdict as Prometheus metrics to FILE (*.prom, replaced atomically)",
    "command.help.statuses": "exit statuses (name, exit status, meaning):",
    "command.help.process_statuses": "how the process ended otherwise:",
    "check.help.epilog.commands": "commands (the first argument; none runs the check):",
    "cli.command.check": "the check: the first layer of a PyTorch GPU setup that fails",
    "cli.command.compare": "what changed between two reports, or two trial attempts",
    "cli.command.summarize": "many reports at a glance: one line each, the count of each code",
    "cli.command.ramp": "your program's operating range: one axis grown until it fails",
    "cli.command.resume-check": "stop your program, rerun it: no output lost or written twice",
    "cli.unknown_command":
        "unknown command {word}: the commands are {commands}, or none for the check",
    "cli.unknown_command.near": "unknown command {word}: did you mean {command}?",
    "ramp.help.value_from_env":
        "the program reads its value from KERNODECK_AXIS_VALUE: the command need not hold {{NAME}}",
    "ramp.no_placeholder":
        "the command never says {placeholder}, so every attempt would run the same command{found}; "
        "put {placeholder} where the value goes, or give --value-from-env if the program reads "
        "KERNODECK_AXIS_VALUE",
    "ramp.placeholder_found": " (it has {found})",
    "ramp.never_started": "{axis}: the program never started ({error}): nothing was measured",
    # Issue 41: one judge; what a ramp measured, said whole.
    "ramp.between_not_tried":
        " (values between were not tried)",
    "ramp.no_single_limit":
        "{axis}: no single limit: {failed} failed below a value that passed ({passed} "
        "passed){between}",
    "ramp.flaky":
        "{axis}: flaky: {values} both passed and failed; no limit can be given",
    "ramp.axis_ignored":
        "{axis}: {why}; nothing was measured",
    "ramp.inconclusive_at":
        "{axis}: {passed} passed; at {value} inconclusive ({why}): no limit known",
    "ramp.unfinished":
        "{axis}: the ramp did not reach its end; {passed} passed so far",
    "ramp.program_changed":
        "the program's files changed since --out's ramp.json was written ({files}): its "
        "attempts would be stale; choose another --out, or remove ramp.json to start again",
    "ramp.help.repeat":
        "run the last passing and the first failing values N times in all (default 1): a value "
        "that both passed and failed is flaky",
    "ramp.bad_repeat":
        "--repeat {repeat}: give a count from 1 to 100",
    "code.RAMP_NO_SINGLE_LIMIT.summary":
        "A value failed below a value that passed: there is no single limit.",
    "code.RAMP_NO_SINGLE_LIMIT.next_action":
        "Read the failing attempts' folders: the failure depends on more than the axis.",
    "code.RAMP_FLAKY.summary":
        "A value both passed and failed (--repeat): the limit is flaky.",
    "code.RAMP_FLAKY.next_action":
        "Run the flaky values again, and keep well below them.",
    "code.SUMMARY_INCONCLUSIVE.summary":
        "Nothing failed, but an attempt or a ramp could not be judged (it never ended, or "
        "nothing was measured).",
    "code.SUMMARY_INCONCLUSIVE.next_action":
        "Read the inconclusive rows: run them again to the end.",
    "summarize.inconclusive":
        "{count} attempt(s) or ramp(s) inconclusive: no evidence of a pass",
    "resume.help.verify_ledger":
        "verify this ledger as it is (a job stopped for real), running nothing",
    "resume.help.stop_signal":
        "how the first run is stopped: SIGKILL at once, as a preemption or the OOM killer (the "
        "default: a hard stop proves that what the program counted done was on disk); SIGINT as "
        "Ctrl-C, then SIGTERM, then SIGKILL, --grace apart; or SIGTERM, then SIGKILL",
    "resume.help.record_check":
        "a function imported from the current folder (as python -m), called as FUNCTION(record_id, "
        "record) on every record: a record fails when it raises or returns False",
    "resume.run_only": "{option} is for a run of the program, not for --verify-ledger",
    "resume.verify_no_command": "--verify-ledger runs nothing: give no command after --",
    "resume.no_stop":
        "give --stop-after-records N or --stop-after SECONDS: when to stop the first run",
    "resume.bad_record_check_spec":
        "--record-check {spec}: give MODULE:FUNCTION (e.g. checks:unit_norm)",
    "resume.bad_record_check": "--record-check {spec} cannot be used: {reason}",
    "resume.bad_verify_ledger": "--verify-ledger cannot be read: {reason}",
    "resume.ledger_preflight":
        "cannot use the ledger asked for: {reason}. Nothing was run (exit {exit}).",
    "resume.inconclusive_head": "RESUME INCONCLUSIVE (exit {exit}, {code})",
    "resume.first_failed": "the first run failed before it was stopped (exit {exit}): {error}",
    "resume.inconclusive.no_expected_ids":
        "no expected ids (give --expect-ids, or expected_ids to OutputLedger): lost ids cannot be "
        "checked",
    "resume.inconclusive.never_stopped":
        "the first run ended by itself before the stop: nothing was resumed (stop it earlier)",
    "resume.inconclusive.stopped_before_any_record":
        "the first run was stopped before it wrote any record: nothing was there to skip, so no "
        "resume was exercised (stop it later)",
    "resume.inconclusive.first_run_finished":
        "the first run had finished its work when it ended: {records} record(s), no expected id "
        "left; nothing was resumed (stop it earlier, or give it more work)",
    "resume.inconclusive.second_run_idle":
        "the second run ended well and wrote no record: no resume was exercised",
    "resume.inconclusive.record_check_unfinished":
        "the record check did not finish ({error}): the records it did not see are unchecked",
    "resume.misplaced_header":
        "the ledger's header is on line {line}, not line 1: its expected ids are not used",
    "resume.not_records": "not records ({count}) at line(s): {lines}",
    "resume.not_record.binary": "binary bytes, not UTF-8 text",
    "resume.not_record.not_json": "text that is not JSON",
    "resume.not_record.no_id": "JSON without an id",
    "resume.bad_records": "bad records ({count}): {ids}",
    "resume.intact_after_stop":
        "RESUME OK after a stop by {signal}: nothing lost, nothing redone, nothing counted twice",
    "resume.stopped_by":
        "the first run was stopped by {signal} with {records} record(s) in the ledger "
        "({remaining} expected id(s) left)",
    "resume.first_time_limit":
        "the first run was ended by its time limit ({timeout} s, --timeout) before the stop",
    "resume.second_time_limit":
        "the second run was ended by its time limit ({timeout} s, --timeout): it hung (a stale "
        "lock, a wait that never ends) or needs more time",
    "resume.refused_duplicate":
        "the ledger refused an id it already held: the program does not skip the ids in "
        "done_ids() when it starts",
    "resume.rewrote":
        "the second run did not keep the ledger as the stop left it (truncated or replaced): it "
        "started over instead of resuming",
    "resume.redone":
        "redone ({count}): held by the ledger at the stop, written again by the second run: {ids}",
    "resume.gentle_stop":
        "{signal} is a gentle stop: the program could flush what it still held; prove the resume "
        "against a hard stop too (--stop-signal SIGKILL, the default)",
    "resume.no_record_check":
        "only the ledger's lines were verified: when each id has an output of its own (a file "
        "written after append), verify it with --record-check MODULE:FUNCTION "
        "(examples/resume_record_check.py)",
    # -- the tool's own needs (issue 44: supervision/tool_needs.py) -----------------------------
    "code.TOOL_RESOURCES.summary":
        "The tool could not get what it needs from this process's limits (open files, "
        "processes, memory): nothing is concluded about the machine.",
    "code.TOOL_RESOURCES.next_action":
        "Raise the limit the error names, as it says, and run the check again.",
    "error.tool_needs.open_files":
        "the tool ran out of open files during {at}: this process may open {limit} (ulimit -n), "
        "fewer than the tool needs; run `ulimit -n {suggested}` first, then check again",
    "error.tool_needs.open_files_system":
        "the tool ran out of open files during {at}: the system's table of open files is full "
        "(fs.file-max); close programs or raise it, then check again",
    "error.tool_needs.processes":
        "the system refused the tool a process or a thread during {at}: the limit on processes "
        "(ulimit -u, a cgroup's pids.max) is reached; allow at least {suggested} more "
        "(`ulimit -u`, pids.max), then check again",
    "error.tool_needs.memory":
        "the worker was killed by the kernel's OOM killer during {at}: the memory cgroup of the "
        "check allows {limit} MB (memory.max), which torch and the tool together exceeded; give "
        "it at least {suggested} MB (a container's --memory, Slurm's --mem), then check again",
    "error.tool_needs.memory_unknown":
        "the worker was killed by the kernel's OOM killer during {at}: a memory cgroup of the "
        "check counted the kill; give it at least {suggested} MB (a container's --memory, "
        "Slurm's --mem), then check again",
}
