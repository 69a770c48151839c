"""Interpreter and import: what ``import torch`` loads in the interpreter checked, and why it
fails there (control 1 of the method): torch shadowed or installed twice, NumPy missing or built
for another ABI, a shared library or a DLL the loader cannot find or rejects, the check run in the
tool's own isolated install.
"""

from __future__ import annotations

import re

from ..codes import Verdict
from ..shapes import EMPTY
from .core import (
    Finding,
    Layer,
    Report,
    check_passed,
    installed_version,
    messages,
    other_build_loaded,
    pattern,
    quote,
    reinstall_command,
    search,
    working_folder_missing,
)

layer = Layer("interpreter and import")

# What ``import torch`` found instead of the installed package (pytorch.module_kind): how the
# evidence names it, and the name the sentences use.
_SHADOWS = {"file": ("a file torch.py", "torch.py"),
            "compiled": ("a compiled torch.pyc", "torch.pyc"),
            "extension": ("a compiled extension module torch", "torch"),
            "package": ("a package folder torch/", "torch/"),
            "folder": ("a folder torch/ without __init__.py", "torch/"),
            "source-checkout": ("a PyTorch source checkout (torch/ beside setup.py)", "torch/")}
_LOCAL_FOLDERS = ("working-folder", "script-folder")


@layer.rule(140, "TORCH_SHADOWED", variants=(
    "checkout", "pythonpath", "pythonpath_checkout", "local_folder", "local_file", "stray",
    "pythonpath_build", "other_build"))
def torch_shadowed(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    kind, origin = pytorch.get("module_kind"), pytorch.get("origin") or "elsewhere"
    if other_build_loaded(report):
        return _other_build(report)
    if kind not in _SHADOWS:
        return None
    described, module = _SHADOWS[kind]
    installed = pytorch.get("distribution_version")
    evidence = (f"import torch would load {described} (origin: {origin})",
                f"the installed torch distribution is {installed}" if installed
                else "no torch distribution is installed")
    if kind == "source-checkout":
        # Found through PYTHONPATH, no working folder to leave: the entry is the cause.
        variant = "pythonpath_checkout" if origin == "pythonpath" else "checkout"
    elif origin == "pythonpath":
        variant = "pythonpath"
    elif origin in _LOCAL_FOLDERS:
        variant = "local_folder" if module == "torch/" else "local_file"
    else:
        variant = "stray"
    return Finding("TORCH_SHADOWED", "error", evidence,
                   {"module": module, "reinstall": reinstall_command(installed)},
                   variant=variant)


def _other_build(report: Report) -> Finding:
    """torch imported from a build that is not the environment's own, which it hides: the check
    judged the loaded build, and advice for it (reinstall a GPU build) would only touch the hidden
    one."""
    pytorch = report["pytorch"]
    origin = pytorch.get("origin") or "elsewhere"
    loaded, installed = pytorch.get("version"), pytorch.get("distribution_version")
    where = "a folder on PYTHONPATH" if origin == "pythonpath" else f"{origin} (not the " \
        "installed distribution's files)"
    evidence = (f"torch {loaded} was loaded from {where}",
                f"this environment's own torch {installed} is installed, hidden under it")
    passed = check_passed(report)
    return Finding("TORCH_SHADOWED", "warning" if passed else "error", evidence,
                   {"loaded": loaded, "installed": installed},
                   variant="pythonpath_build" if origin == "pythonpath" else "other_build")


@layer.rule(145, "CALLER_TORCH_DIFFERS", variants=("kernel", "program"))
def caller_torch_differs(report: Report) -> Finding | None:
    """check() called from a program (a notebook's kernel above all) that had imported torch
    already: the module it holds is not what the check found now (another file, another
    version, or none that imports). A kernel keeps its first torch until it restarts: the
    verdict is about the next start, the cells still run the old one."""
    caller = report["runtime"].get("caller") or EMPTY
    if caller.get("torch_imported") is not True or caller.get("torch_origin") is None:
        return None  # no torch in the caller, or the worker never compared (a hang, a crash)
    pytorch = report["pytorch"]
    theirs, ours = caller.get("torch_version"), pytorch.get("version")
    # Differs: another file, another version, or an import that failed from a file other than
    # the caller's (or from none found). The caller's very file failing to import now is not
    # another torch: the import's own failure, with its findings, says why.
    same = caller.get("torch_same")
    differs = (same is False or (pytorch.get("imported") is not True and same is not True)
               or (isinstance(theirs, str) and isinstance(ours, str) and theirs != ours))
    if not differs:
        return None
    who = "kernel" if caller.get("kernel") is True else "program"
    evidence = (f"this {who} imported torch {theirs or 'of unknown version'} before the check "
                f"(origin: {caller.get('torch_origin') or 'unknown'})",
                f"the check imported torch {ours} (origin: {pytorch.get('origin') or 'unknown'})"
                if pytorch.get("imported") is True
                else "the check could not import torch from the same import path")
    return Finding("CALLER_TORCH_DIFFERS", "warning", evidence,
                   {"loaded": str(theirs or "?")}, variant=who)


# What a Python says when it finds no standard library where PYTHONHOME sends it.
_NO_STANDARD_LIBRARY = re.compile(r"No module named '?encodings'?|init_fs_encoding|Could not find "
                                  r"platform (?:in)?dependent libraries")


@layer.rule(104, "PYTHONHOME_SET")
def python_home_set(report: Report) -> Finding | None:
    """The interpreter checked did not start, and PYTHONHOME is set: a Python looks for its
    standard library under that folder whichever Python it is (a setting for embedding one
    Python, left in a shell, a module file or a job script), and a venv's or another version's
    finds none there. Nothing is installed wrong: the variable is the cause."""
    if report["runtime"].get("python_home_set") is not True or check_passed(report) \
            or report["stage"] != "interpreter":
        return None
    evidence = ["PYTHONHOME is set (its value, a path, is not shown)"]
    said = search(_NO_STANDARD_LIBRARY, messages(report))
    if said:
        evidence.append(quote(said[0]))
    return Finding("PYTHONHOME_SET", "error", tuple(evidence))


@layer.rule(105, "WORKING_FOLDER_MISSING")
def working_folder_gone(report: Report) -> Finding | None:
    """The check was started in a folder that was removed meanwhile: torch's loader (and Intel
    oneMKL's) resolves paths from it and fails, whatever is installed."""
    if not working_folder_missing(report):
        return None
    passed = check_passed(report)
    return Finding("WORKING_FOLDER_MISSING", "warning" if passed else "error",
                   ("the working folder the check was started in no longer exists",))


_DAMAGE = {"truncated": "is shorter than its ELF header says (truncated)",
           "not_elf": "does not start with an ELF header (zeroed or overwritten)"}


@layer.rule(165, "TORCH_PARTIAL_INSTALL", variants=("package_gone", "metadata_gone", "damaged",
                                                    "library_damaged"))
def torch_partial_install(report: Report) -> Finding | None:
    """A half-finished uninstall (or install): torch's metadata left and its package gone, which
    pip answers "Requirement already satisfied" to a plain install; or its package left in the
    environment's own packages and its metadata gone, which pip no longer sees; or its files
    damaged (a compiled library cut short or overwritten, an emptied ``__init__.py``). A forced
    reinstall of the version named puts them back."""
    pytorch = report["pytorch"]
    installed = pytorch.get("distribution_version")
    damaged = [entry for entry in pytorch.get("damaged_libraries") or []
               if isinstance(entry, dict) and entry.get("damage") in _DAMAGE]
    if damaged and installed:
        # Read before the import: a truncated library kills it (SIGBUS, SIGSEGV) unannounced.
        return Finding("TORCH_PARTIAL_INSTALL", "warning" if check_passed(report) else "error",
                       tuple(f"{entry['name']} {_DAMAGE[entry['damage']]}" for entry in damaged),
                       {"version": installed, "files": ", ".join(str(entry["name"])
                                                                 for entry in damaged),
                        "reinstall": reinstall_command(installed, deps=False)},
                       variant="library_damaged")
    if report["code"] == Verdict.TORCH_MISSING and installed:
        return Finding("TORCH_PARTIAL_INSTALL", "error",
                       (f"the metadata of torch {installed} is installed (pip lists it)",
                        "its package torch/ is not: import torch finds no module"),
                       {"version": installed,
                        "reinstall": reinstall_command(installed, deps=False)},
                       variant="package_gone")
    error = report.get("error") or EMPTY
    if (report["code"] == Verdict.TORCH_IMPORT_FAILED and installed
            and error.get("message_key") == "error.torch_incomplete"
            and pytorch.get("module_kind") == "installed"):
        # The installed distribution's own torch/__init__.py ran and gave no torch.__version__:
        # its files are damaged (emptied, truncated), not another program's torch module.
        return Finding("TORCH_PARTIAL_INSTALL", "error",
                       (f"import torch ran the installed torch {installed}'s own package",
                        "it gave no " + str((error.get("message_values") or {}).get("missing")
                                            or "torch.__version__")),
                       {"version": installed,
                        "reinstall": reinstall_command(installed, deps=False)},
                       variant="damaged")
    version = pytorch.get("version")
    if (pytorch.get("imported") and version and not installed
            and pytorch.get("module_kind") == "unverified"
            and pytorch.get("origin") in ("site-packages", "user-site")):
        return Finding("TORCH_PARTIAL_INSTALL", "warning",
                       (f"torch {version} is imported from the environment's own packages",
                        "no torch distribution is installed: pip does not list it"),
                       {"version": version,
                        "reinstall": reinstall_command(version, deps=False)},
                       variant="metadata_gone")
    return None


@layer.rule(167, "TORCH_FOR_OTHER_PYTHON", variants=("other_tag", "no_extension", "pythonpath"))
def torch_for_other_python(report: Report) -> Finding | None:
    """import torch failed and its compiled ``_C`` is built for another Python (another ABI tag),
    or missing: torch's own message then speaks of a source checkout's torch/_C folder. Found
    through PYTHONPATH (another Python's site-packages, as a module system sets it), a reinstall
    goes into this environment and changes nothing: the folder is to come off the path."""
    pytorch = report["pytorch"]
    tags, own = pytorch.get("extension_tags"), pytorch.get("interpreter_tag")
    if report["code"] != Verdict.TORCH_IMPORT_FAILED or tags is None or not own or own in tags:
        return None
    built = ", ".join(str(tag) for tag in tags)
    evidence = [f"torch/_C is built for {built}" if tags else "torch has no compiled torch/_C",
                f"this interpreter loads extensions tagged {own}"]
    version = pytorch.get("distribution_version")
    if pytorch.get("origin") == "pythonpath":
        evidence.append("torch was found in a folder on PYTHONPATH")
        variant = "pythonpath"
    else:
        variant = "other_tag" if tags else "no_extension"
    return Finding("TORCH_FOR_OTHER_PYTHON", "error", tuple(evidence),
                   {"built": built or "-", "own": own,
                    "reinstall": reinstall_command(version, deps=False)},
                   variant=variant)


@layer.rule(166, "TORCH_HIDDEN_BY_SETTING", variants=(
    "no_site", "user_site_variable", "user_site_flag"))
def torch_hidden_by_setting(report: Report) -> Finding | None:
    """No module named torch, while torch is installed where a setting of the interpreter keeps
    the import system from looking: python -S (no site-packages), or PYTHONNOUSERSITE, -s, -I
    (no user site-packages). pip runs without that setting and says torch is installed."""
    setting = report["pytorch"].get("hidden_by")
    if report["code"] != Verdict.TORCH_MISSING or not setting:
        return None
    where = "site-packages" if setting == "-S" else "user site-packages"
    return Finding("TORCH_HIDDEN_BY_SETTING", "error",
                   (f"torch is installed in this interpreter's {where}",
                    f"{setting} keeps that folder off the import path"),
                   {"setting": str(setting)},
                   variant="no_site" if setting == "-S" else "user_site_variable"
                   if setting == "PYTHONNOUSERSITE" else "user_site_flag")


@layer.rule(168, "TORCH_ORPHAN_METADATA")
def torch_orphan_metadata(report: Report) -> Finding | None:
    """Metadata of a torch whose files are gone (an interrupted upgrade) beside the install that
    works: pip counts it as torch and cannot remove it, "No files were found to uninstall" at
    every run, so uninstalling until pip says torch is gone never ends."""
    orphans = [str(name) for name in report["pytorch"].get("orphan_metadata") or []]
    if not orphans:
        return None
    installed = report["pytorch"].get("distribution_version")
    evidence = tuple(f"{name} lists no file that exists (it has no install left)"
                     for name in orphans)
    if installed:
        evidence += (f"the installed torch is {installed}, with its own metadata",)
    return Finding("TORCH_ORPHAN_METADATA", "warning", evidence, {"orphan": orphans[0]})


@layer.rule(160, "PYTHONPATH_MODULE_BREAKS_IMPORT")
def pythonpath_module_breaks_import(report: Report) -> Finding | None:
    """``import torch`` failed inside a module found in a PYTHONPATH folder, which the import
    system searches before the environment's own packages: a stale copy (another Python's
    packages, a module system's setting) replaces the one installed with torch. The message's
    path is redacted, so without this the clue is gone. torch itself found there is
    TORCH_SHADOWED's or TORCH_DUPLICATE_INSTALL's case."""
    origin = report["pytorch"].get("import_error_origin") or EMPTY
    if not (report["code"] == Verdict.TORCH_IMPORT_FAILED and origin.get("place") == "pythonpath"
            and origin.get("module") != "torch"):
        return None
    module = origin.get("module")
    evidence = [f"the import failed in {module or 'a module'}, found in a folder on PYTHONPATH "
                "(searched before this environment's own packages)"]
    message = (report.get("error") or EMPTY).get("message")
    if message:
        evidence.append(quote(str(message)))
    return Finding("PYTHONPATH_MODULE_BREAKS_IMPORT", "error", tuple(evidence),
                   {"module": module or "a module"})


@layer.rule(162, "TORCH_BACKEND_PLUGIN_FAILED")
def torch_backend_plugin_failed(report: Report) -> Finding | None:
    """A device plugin (entry point group ``torch.backends``) raised as torch imported it: torch
    says only "Failed to load the backend extension"; the plugin's own error (a missing vendor
    library, most often) is the cause, read back by the worker (``pytorch.backend_plugin``)."""
    plugin = report["pytorch"].get("backend_plugin")
    if report["code"] != Verdict.TORCH_IMPORT_FAILED or not isinstance(plugin, dict):
        return None
    name, distribution = str(plugin.get("name")), plugin.get("distribution")
    evidence = [f"import torch loads the device plugin {name} (entry point group "
                "torch.backends), which failed"]
    if plugin.get("cause"):
        evidence.append(f"its own error: {quote(str(plugin['cause']))}")
    if distribution:
        evidence.append(f"it is declared by the distribution {distribution}")
    return Finding("TORCH_BACKEND_PLUGIN_FAILED", "error", tuple(evidence),
                   {"plugin": name, "cause": str(plugin.get("cause") or "not said"),
                    "distribution": str(distribution or name)})


@layer.rule(163, "TORCH_LOGS_INVALID")
def torch_logs_invalid(report: Report) -> Finding | None:
    """torch parses TORCH_LOGS as it is imported and raises on a name it does not know ("Invalid
    log settings: ..."): the value is redacted in the report (a variable's value may identify
    someone), so the variable is named instead, with how to list the names torch takes."""
    error = report.get("error") or EMPTY
    message = str(error.get("message") or "")
    if not (report["code"] == Verdict.TORCH_IMPORT_FAILED and error.get("type") == "ValueError"
            and message.startswith("Invalid log settings:")):
        return None
    return Finding("TORCH_LOGS_INVALID", "error",
                   (quote(message.partition(", must be")[0]),
                    "torch reads TORCH_LOGS as it is imported and refuses a name it does not know"))


@layer.rule(164, "TORCH_ON_NOEXEC_MOUNT")
def torch_on_noexec_mount(report: Report) -> Finding | None:
    """import torch failed and torch lies on a file system mounted noexec: the loader cannot map
    a library from there (glibc: "failed to map segment from shared object"), whole or not; a
    reinstall in the same place changes nothing."""
    evidence = _import_failed_where(report, report["pytorch"].get("noexec_mount"),
                                    "torch's folder is on a file system mounted noexec",
                                    r"failed to map segment from shared object")
    return None if evidence is None else Finding("TORCH_ON_NOEXEC_MOUNT", "error", evidence)


def _import_failed_where(report: Report, flagged: bool | None, fact: str,
                         said: str) -> tuple[str, ...] | None:
    """The evidence that import torch failed where the worker ``flagged`` a fact of torch's
    folder: the ``fact``, and the first error line matching ``said`` when there is one."""
    if not (report["code"] == Verdict.TORCH_IMPORT_FAILED and flagged is True):
        return None
    lines = search(said, messages(report))
    return (fact, quote(lines[0])) if lines else (fact,)


_TORCH_FOLDER = ("\"$(python -c 'import importlib.util as u, os; "
                 "print(os.path.dirname(u.find_spec(\"torch\").origin))')\"")


@layer.rule(169, "TORCH_FILES_UNREADABLE")
def torch_files_unreadable(report: Report) -> Finding | None:
    """import torch failed because a file of torch's own package cannot be read by this user
    (installed by another user with a closed umask, a chmod): a reinstall by this user cannot
    replace another's files; the install's owner opens them."""
    unreadable = report["pytorch"].get("unreadable_file")
    if report["code"] != Verdict.TORCH_IMPORT_FAILED or not isinstance(unreadable, str):
        return None
    return Finding("TORCH_FILES_UNREADABLE", "error",
                   (f"import torch could not read {unreadable}: permission denied",),
                   {"file": unreadable, "folder": _TORCH_FOLDER})


@layer.rule(161, "TORCH_PATH_NOT_UTF8")
def torch_path_not_utf8(report: Report) -> Finding | None:
    """import torch failed and torch's path is not UTF-8: torch encodes its own folder's path as
    UTF-8 as it is imported and fails on it; no reinstall in the same place helps."""
    evidence = _import_failed_where(report, report["pytorch"].get("path_not_utf8"),
                                    "the path of torch's folder holds bytes that are not UTF-8",
                                    r"surrogates not allowed|can't (?:en|de)code")
    return None if evidence is None else Finding("TORCH_PATH_NOT_UTF8", "error", evidence)


@layer.rule(170, "TORCH_DUPLICATE_INSTALL")
def torch_duplicate_install(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    if not pytorch["imported"] or other_build_loaded(report):
        return None  # a build loaded over the installed one is TORCH_SHADOWED's case
    evidence = []
    # An orphan's metadata is counted on the path, and is no install (TORCH_ORPHAN_METADATA).
    count = (pytorch.get("distributions_on_path") or 0) - len(pytorch.get("orphan_metadata") or [])
    if count > 1:
        evidence.append(f"{count} torch distributions are visible on sys.path")
    version, installed = pytorch.get("version"), pytorch.get("distribution_version")
    if version and installed and version.split("+")[0] != installed.split("+")[0]:
        evidence.append(f"torch.__version__ {version} but the installed distribution is "
                        f"{installed}")
    # A single pip install --user is one install: the user site-packages is only context.
    if not evidence:
        return None
    if pytorch.get("origin") == "user-site":
        evidence.append("torch was imported from the user site-packages (pip install --user)")
    return Finding(
        "TORCH_DUPLICATE_INSTALL", "warning", tuple(evidence))


_NUMPY_MISSING = pattern(r"Failed to initialize NumPy: No module named 'numpy'")


@layer.rule(120, "NUMPY_MISSING")
def numpy_missing(report: Report) -> Finding | None:
    pytorch = report["pytorch"]
    said = search(_NUMPY_MISSING, messages(report, ["import"]))
    if said is None and not (pytorch["imported"] and pytorch.get("numpy_present") is False):
        return None
    return Finding(
        "NUMPY_MISSING", "warning",
        (quote(said[0]),) if said else ("numpy is not importable",))


_NUMPY_ABI = pattern(r"compiled using NumPy 1\.x|_ARRAY_API not found|"
                      r"numpy\.core\.multiarray failed to import")


@layer.rule(130, "NUMPY_ABI_MISMATCH")
def numpy_abi_mismatch(report: Report) -> Finding | None:
    said = search(_NUMPY_ABI, messages(report, ["import"]))
    if said is None:
        return None
    numpy = report["pytorch"].get("numpy_version")
    return Finding(
        "NUMPY_ABI_MISMATCH", "warning",
        tuple(x for x in (quote(said[0]), f"numpy {numpy}" if numpy else None) if x))


# Intel oneMKL's own loader aborts the process with the second form: the message is then the
# last line of the worker's stderr, in a WORKER_FAILED report.
_CANNOT_LOAD = pattern(r"([\w.+-]+\.so(?:\.[\d.]+)?): cannot open shared object file|"
                       r"FATAL ERROR: Cannot load (?:\S*/)?([\w.+-]+\.so(?:\.[\d.]+)?)")


@layer.rule(180, "SHARED_LIBRARY_MISSING", variants=("driver", "cuda", "system"))
def shared_library_missing(report: Report) -> Finding | None:
    said = search(_CANNOT_LOAD, messages(report, ["import"]))
    if said is None or working_folder_missing(report) or torch_library_on_path(report):
        # The library is there: the loader failed on the removed working folder, or another
        # libtorch on LD_LIBRARY_PATH asked for it (LIBRARY_PATH_OVERRIDE names that).
        return None
    library = said[1].group(1) or said[1].group(2)
    # libcuda and libnvidia-* (libnvidia-ml...) belong to the driver, never to a wheel.
    if re.match(r"libcuda\.so|libnvidia-", library):
        variant = "driver"
    elif re.match(r"lib(cu|nv|nccl|cudnn|cublas|cusparse|cufft|curand|cusolver)", library):
        variant = "cuda"
    else:
        variant = "system"
    return Finding("SHARED_LIBRARY_MISSING", "error", (quote(said[0]),),
                   {"library": library,
                    "reinstall": reinstall_command(installed_version(report))},
                   variant=variant)


_UNDEFINED_SYMBOL = pattern(r"undefined symbol: ?(\S+)")


@layer.rule(190, "UNDEFINED_SYMBOL")
def undefined_symbol(report: Report) -> Finding | None:
    said = search(_UNDEFINED_SYMBOL, messages(report, ["import"]))
    if said is None or torch_library_on_path(report):
        return None  # another libtorch on LD_LIBRARY_PATH: LIBRARY_PATH_OVERRIDE names it
    library = re.search(r"([\w.+-]+\.so(?:\.[\d.]+)?)", said[0])
    named = library.group(1) if library else "a library"
    return Finding("UNDEFINED_SYMBOL", "error", (quote(said[0]),),
                   {"library": named, "symbol": said[1].group(1)})


def torch_library_on_path(report: Report) -> bool:
    """One of torch's own libraries lay on a library-path variable when import torch failed."""
    override = report["runtime"].get("library_override") or EMPTY
    return override.get("torch_library") is True


_DLL_LOAD_FAILED = pattern(r"WinError 126|DLL load failed")


@layer.rule(200, "WINDOWS_DLL_LOAD_FAILED")
def windows_dll_load_failed(report: Report) -> Finding | None:
    said = search(_DLL_LOAD_FAILED, messages(report, ["import"]))
    if said is None:
        return None
    dll = re.search(r"([\w.+-]+\.dll)", said[0], re.IGNORECASE)
    named = dll.group(1) if dll else "a DLL"
    return Finding("WINDOWS_DLL_LOAD_FAILED", "error", (quote(said[0]),),
                   {"dll": named, "reinstall": reinstall_command(installed_version(report))})


@layer.rule(260, "LIBRARY_PATH_OVERRIDE", variants=(
    "variable", "conda", "torch_library", "torch_library_loaded"))
def library_path_override(report: Report) -> Finding | None:
    """A folder on a library-path variable (or the conda environment's lib) supplied a library
    the loader rejected: a wrong version, an empty file, the wrong ELF class. Or one of torch's
    own libraries (a C++ libtorch) lies on LD_LIBRARY_PATH while import torch failed, or was
    loaded from another folder than torch's own: two builds mixed in one process."""
    override = report["runtime"].get("library_override")
    passed = check_passed(report)
    if override and override.get("torch_library") is True:
        variable = str(override.get("variable"))
        return Finding("LIBRARY_PATH_OVERRIDE", "error",
                       (f"a folder on {variable} holds {override.get('library')}, one of "
                        "torch's own libraries, and import torch failed",),
                       {"variable": variable, "library": str(override.get("library"))},
                       variant="torch_library")
    elsewhere = report["pytorch"].get("torch_libraries_elsewhere") or []
    if not override and elsewhere:
        first = elsewhere[0]
        loaded = tuple(f"{entry.get('name')} was loaded from "
                       + ("a folder on LD_LIBRARY_PATH"
                          if entry.get("loaded_from") == "LD_LIBRARY_PATH"
                          else "another folder than torch's lib/") for entry in elsewhere)
        return Finding("LIBRARY_PATH_OVERRIDE", "warning" if passed else "error", loaded,
                       {"variable": "LD_LIBRARY_PATH", "library": str(first.get("name"))},
                       variant="torch_library_loaded")
    if not override:
        return None
    library, variable = str(override.get("library")), override.get("variable") or ""
    if variable:
        where = f"a folder on {variable}" + (
            " (a conda environment's lib)" if override.get("conda_env_lib") else "")
    else:
        where = "the conda environment's lib folder (the active one, or the checked Python's)"
    evidence = [f"{where} holds {library}"]
    said = search(re.escape(library), messages(report))
    if said:
        evidence.append(quote(said[0]))
    return Finding("LIBRARY_PATH_OVERRIDE", "warning" if passed else "error", tuple(evidence),
                   {"variable": variable or "", "library": library},
                   variant="variable" if variable else "conda")


@layer.rule(280, "TOOL_ISOLATED_INSTALL", variants=("pipx", "uv_tool", "venv"))
def tool_isolated_install(report: Report) -> Finding | None:
    """TORCH_MISSING for the tool's own isolated install: true of that interpreter, and useless
    for the project the user meant to check."""
    kind = report["runtime"].get("tool_environment")
    if not (kind and report["code"] == Verdict.TORCH_MISSING):
        return None
    said = {"pipx": "the check ran in the tool's own pipx environment",
            "uv_tool": "the check ran in the tool's own uv tool environment",
            "venv": "the check ran in the virtual environment holding the kernodeck-diagnostic "
                    "command"}
    return Finding("TOOL_ISOLATED_INSTALL", "info" if kind == "venv" else "warning",
                   (said.get(kind, str(kind)), "torch is not installed in it"), variant=kind)
