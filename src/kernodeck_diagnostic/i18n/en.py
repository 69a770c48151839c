"""English messages: the reference catalog. JSON reports always carry these texts.

Keys: ``code.<CODE>.summary|next_action``, ``finding.<ID>[.<variant>].summary|next_action``,
``ui.*`` for the terminal and markdown, ``cli.*`` for the command line's own messages. Values are
``str.format`` templates; every language must have the same keys and the same placeholders.
"""

from __future__ import annotations

INSTALL = ("python -m pip install --force-reinstall torch --index-url "
           "https://download.pytorch.org/whl/cu128 (NVIDIA; pick the CUDA version your driver "
           "supports) or --index-url https://download.pytorch.org/whl/rocm6.4 (AMD)")

MESSAGES = {
    # -- result codes ----------------------------------------------------------------------------
    "code.GPU_CHECK_PASSED.summary": "Product and gradient verified on the chosen GPU.",
    "code.GPU_CHECK_PASSED.next_action": "Move to a small input of your application.",
    "code.CPU_CHECK_PASSED.summary": "Product and gradient verified on the CPU only.",
    "code.CPU_CHECK_PASSED.next_action":
        "Conclude nothing about CUDA or ROCm: run without --device cpu to check the GPU.",
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
        "This PyTorch build declares neither CUDA nor HIP (a CPU-only build).",
    "code.GPU_BACKEND_ABSENT.next_action":
        "Install the PyTorch build that matches your GPU (CUDA or ROCm).",
    "code.GPU_UNAVAILABLE.summary": "The GPU is not usable from this process.",
    "code.GPU_UNAVAILABLE.next_action":
        "Check the card's exposure to this process, the driver and permissions.",
    "code.DEVICE_INDEX_INVALID.summary": "The device index is outside the visible devices.",
    "code.DEVICE_INDEX_INVALID.next_action": "Ask for an index below the visible device count.",
    "code.CHECK_FAILED.summary": "The fixed computation gave a wrong result.",
    "code.CHECK_FAILED.next_action": "Read the flagged stage before running the full model.",
    "code.OUT_OF_MEMORY.summary": "Allocation on the device failed: out of memory.",
    "code.OUT_OF_MEMORY.next_action":
        "Read the flagged stage; check what else holds memory on that device.",
    "code.RUNTIME_ERROR.summary": "A backend operation failed.",
    "code.RUNTIME_ERROR.next_action":
        "Read the flagged stage and the error before running the full model.",
    "code.TIMEOUT.summary": "The check was stopped by the time limit.",
    "code.TIMEOUT.next_action":
        "Treat the control as failed; examine the environment at the stage shown.",
    "code.WORKER_FAILED.summary": "The check ended without a usable report.",
    "code.WORKER_FAILED.next_action":
        "Treat the control as failed; examine the environment at the stage shown.",
    "code.OUTPUT_WRITE_FAILED.summary": "The report was not saved where asked.",
    "code.OUTPUT_WRITE_FAILED.next_action": "Use a new file name in a folder you can write to.",
    "code.STDOUT_WRITE_FAILED.summary": "The result could not be written to stdout.",
    "code.STDOUT_WRITE_FAILED.next_action":
        "Send stdout to a terminal, a pipe or a file with room; keep the report with --output.",
    "code.INTERRUPTED.summary":
        "Stopped by a signal: Ctrl-C (SIGINT), SIGTERM, or SIGHUP (the terminal was closed).",
    "code.INTERRUPTED.next_action": "Run it again when ready.",

    # -- findings ---------------------------------------------------------------------------------
    "finding.CPU_ONLY_BUILD.summary":
        "The installed PyTorch is a CPU-only build: it cannot use any GPU.",
    "finding.CPU_ONLY_BUILD.next_action":
        "Install a GPU build into this interpreter: " + INSTALL + ".",
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
        "Install a ROCm build for the AMD GPU: python -m pip install --force-reinstall torch "
        "--index-url https://download.pytorch.org/whl/rocm6.4 (pick the ROCm version your driver "
        "supports).",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.summary":
        "This PyTorch is a ROCm build, for AMD GPUs, but this machine's GPU is an NVIDIA one: the "
        "build cannot use it.",
    "finding.BUILD_FOR_OTHER_VENDOR.nvidia.next_action":
        "Install a CUDA build for the NVIDIA GPU: python -m pip install --force-reinstall torch "
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
    "finding.TORCH_SHADOWED.pythonpath.summary":
        "'import torch' would load {module} from a folder on PYTHONPATH instead of an installed "
        "PyTorch package.",
    "finding.TORCH_SHADOWED.pythonpath.next_action":
        "Remove that folder from PYTHONPATH (or unset PYTHONPATH), or rename {module} there; "
        "--show-paths prints where it is, on your terminal only.",
    "finding.TORCH_SHADOWED.stray.summary":
        "'import torch' would load {module}, a stray copy, instead of an installed PyTorch "
        "package.",
    "finding.TORCH_SHADOWED.stray.next_action":
        "Remove the stray {module} (--show-paths prints where it is, on your terminal only), then "
        "reinstall PyTorch: python -m pip install --force-reinstall torch.",
    "finding.LOCAL_MODULE_SHADOWS.summary":
        "Modules in the folder your program starts from hide ones it needs: {names}.",
    "finding.LOCAL_MODULE_SHADOWS.next_action":
        "Rename them (and delete the __pycache__ folder beside them), or run your program from "
        "another folder: python app.py there imports them instead of the standard library's or "
        "torch's own.",
    "finding.TORCH_DUPLICATE_INSTALL.summary":
        "More than one PyTorch install is visible to this interpreter; the one imported may not "
        "be the one you installed.",
    "finding.TORCH_DUPLICATE_INSTALL.next_action":
        "Run python -m pip uninstall torch until pip says torch is not installed (each run removes "
        "the first install on the path, the user site-packages' too; a copy pip will not touch, on "
        "PYTHONPATH for instance, goes by taking its folder off the path), then install one build.",
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
        "Restore {library}: it comes with the nvidia-* wheels torch depends on: python -m pip "
        "install --force-reinstall torch. Also check that LD_LIBRARY_PATH does not point "
        "elsewhere.",
    "finding.SHARED_LIBRARY_MISSING.system.summary":
        "import torch needs {library}, which cannot be found.",
    "finding.SHARED_LIBRARY_MISSING.system.next_action":
        "Restore {library}: reinstall torch (python -m pip install --force-reinstall torch); if "
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
        "The active conda environment's lib folder supplies a {library} that this torch cannot "
        "load (often an older libstdc++ than torch needs).",
    "finding.LIBRARY_PATH_OVERRIDE.conda.next_action":
        "Update that library in the environment (for libstdc++: conda install -c conda-forge "
        "libstdcxx-ng), or run the program from an environment whose libraries match torch.",
    "finding.WINDOWS_DLL_LOAD_FAILED.summary":
        "Windows could not load {dll} or one of its dependencies.",
    "finding.WINDOWS_DLL_LOAD_FAILED.next_action":
        "Install the latest Microsoft Visual C++ Redistributable (x64), then reinstall torch "
        "(python -m pip install --force-reinstall torch).",
    "finding.ROCM_KFD_ACCESS.absent.summary":
        "/dev/kfd is absent: the AMD GPU driver (amdgpu) is not loaded or not exposed here.",
    "finding.ROCM_KFD_ACCESS.absent.next_action":
        "Load the driver (sudo modprobe amdgpu) or, in a container, pass --device=/dev/kfd "
        "--device=/dev/dri.",
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
        "The process ran out of host (CPU) memory: std::bad_alloc or MemoryError.",
    "finding.HOST_MEMORY_EXHAUSTED.next_action":
        "Free memory, or raise the process's limit: ulimit -v (address space), the container's "
        "memory limit (docker run --memory), the job's memory request; importing torch alone "
        "needs about 1 GB of address space.",
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

    # -- the tool's own sentences in error.message (error.message_key) -----------------------
    "error.backend_absent": "the build declares neither CUDA nor HIP",
    "error.torch_shadowed":
        "'import torch' would load {module} (origin: {origin}), not an installed PyTorch "
        "package: it was not imported",
    "error.torch_incomplete":
        "'import torch' gave a module without {missing}: not a PyTorch build",
    "error.gpu_unavailable": "torch.cuda.is_available() is False",
    "error.gpu_unavailable.reason": "torch.cuda.is_available() is False: {reason}",
    "error.no_visible_device": "no visible device",
    "error.no_visible_device.reason": "no visible device: {reason}",
    "error.device_index_invalid": "device index {index} of {count} visible",
    "error.check_failed": "wrong {what}",
    "error.no_verified_result": "the worker reported no verified result",
    "error.unreadable_log":
        "the worker's event log held {count} unreadable line(s) and no verified result",
    "error.timeout": "no result within {seconds} s; the worker was stopped during {at}",
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
    "ui.severity.error": "error",
    "ui.severity.warning": "warning",
    "ui.severity.info": "info",
    "ui.markdown.headline": "**{status}** `{code}` (exit {exit_code}), stage `{stage}`: {summary}",
    "ui.markdown.title": "kernodeck-diagnostic report",
    "ui.markdown.result": "Result",
    "ui.markdown.field": "Field",
    "ui.markdown.value": "Value",

    # -- the command line's own messages ---------------------------------------------------------
    "command.usage_error": "error: {message} (see --help)",
    "cli.timeout.not_a_number": "not a number of seconds: {value}",
    "arg.timeout.range": "must be between {low} and {high} seconds, got {value}",
    "cli.index.not_a_number": "not a whole number: {value}",
    "arg.index.negative": "must be 0 or more, got {value}",
    "cli.device.rocm":
        "{value} is not a device mode: ROCm and CUDA builds of PyTorch both use the 'cuda' device "
        "name, so use --device gpu (the default)",
    "arg.device.unknown": "must be gpu or cpu, got {value}",
    # -- the Python API's own words for the same rules (check(...), never a --flag) -------------
    "api.argument": "check({parameter}=...): {reason}",
    "api.device.rocm":
        "{value} is not a device mode: ROCm and CUDA builds of PyTorch both use the 'cuda' device "
        "name, so use device='gpu' (the default)",
    "api.type.device": "check(device=...) takes a str, 'gpu' or 'cpu'; not {type}",
    "api.type.device_index": "check(device_index=...) takes an int; not {type}",
    "api.type.timeout": "check(timeout=...) takes seconds as an int or a float; not {type}",
    "api.type.host_check": "check(host_check=...) takes True or False; not {type}",
    "api.type.python":
        "check(python=...) takes the interpreter's path as a str or an os.PathLike, or None; "
        "not {type}",
    "arg.python.missing":
        "no such file; give the interpreter's path (in a virtual environment, "
        "bin/python, or Scripts\\python.exe on Windows)",
    "arg.python.dangling":
        "that is a link to an interpreter that no longer exists: the Python this "
        "virtual environment was made from was removed or upgraded; make the environment again",
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
    "output.reason.no_folder": "its folder does not exist",
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
    "reports.help.format": "output format: text (default), json or markdown (to paste in an issue)",
    "reports.help.lang": "language of the text and markdown output (default here: {default})",
    "compare.help.description":
        "Show what changed between two reports of the check: code, stage, versions, devices, "
        "findings and stage timings (a timing counts when it moved by 100 ms and 20 percent or "
        "more). Exit 0 when both have the same code, 1 when the code changed, 2 when a file is "
        "not a readable report.",
    "compare.help.a": "the earlier report (JSON written with --output)",
    "compare.help.b": "the later report",
    "compare.argument": "{which} ({name}): {reason}",
    "compare.cannot_read": "cannot compare: {what}",
    "compare.same_code": "same code: {code}",
    "compare.code_changed": "code changed: {a} -> {b}",
    "compare.nothing_else": "nothing else changed",
    "compare.header.field": "field",
    "compare.findings_added": "findings added in B: {ids}",
    "compare.findings_removed": "findings gone in B: {ids}",
    "summarize.help.description":
        "Summarize many reports of the check, e.g. collected from many machines: one line per "
        "report, then the count of each code, worst first, then the files that are not readable "
        "reports and why.",
    "summarize.help.paths": "a report file, or a folder searched recursively for *.json",
    "summarize.help.epilog":
        "Order of the codes, worst first: {order}. Exit 0 when every report passed and every "
        "file was readable, 1 when a report failed or a file was unreadable, 2 on a usage error "
        "or when no readable report was found.",
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
    "summarize.total":
        "{files} file(s): {reports} report(s), {passed} passed, {failed} failed, "
        "{unreadable} unreadable",
    "summarize.nothing_found": "no file to read in the paths given",
}
