"""The report's shape for the type checker: one ``TypedDict`` per object of the JSON Schema
(``schema/report-v1.json``), so that mypy catches a misspelt key or a forgotten ``None`` where a
report is read (the findings, the renderers) or assembled (``build``).

The schema is the contract and these types follow it: ``tests/test_report_shapes.py`` walks both
and fails on any property, required-ness or value type on which they disagree. A key the schema
requires is a key of the class's ``_...Required`` base; the others are ``total=False``, as
Python 3.9 spells ``NotRequired``. A JSON number is ``float`` (an ``int`` is one too), an array
``list``, an object the schema gives no properties ``dict[str, ...]`` (``timings_ms``: one number
per phase, ``system.configuration``: the allow-listed variables that are set).

Nothing here runs: the classes are plain ``dict`` at run time, and the module imports only what
``typing`` has on Python 3.9. A report read from another machine (``load``) has met no schema:
its reader still goes through ``load.field``.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, Optional, TypedDict, Union

# An absent block read as an empty one (``report.get("system") or EMPTY``): where the block is
# there, the type checker still knows its keys.
EMPTY: Mapping[str, Any] = MappingProxyType({})

Code = Literal["GPU_CHECK_PASSED", "CPU_CHECK_PASSED", "TORCH_MISSING", "TORCH_IMPORT_FAILED",
               "GPU_BACKEND_ABSENT", "GPU_UNAVAILABLE", "DEVICE_INDEX_INVALID", "CHECK_FAILED",
               "OUT_OF_MEMORY", "RUNTIME_ERROR", "TIMEOUT", "WORKER_FAILED", "COLLECTIVE_FAILED",
               "EXTENSION_FAILED", "TOOL_RESOURCES"]
Stage = Literal["interpreter", "import", "backend", "device", "compute", "extensions", "kernels",
                "collective"]
Place = Literal["site-packages", "user-site", "working-folder", "script-folder", "pythonpath",
                "elsewhere"]
ErrorKind = Literal["import_failed", "backend_absent", "gpu_unavailable", "device_index_invalid",
                    "check_failed", "out_of_memory", "runtime_error", "timeout", "worker_failed",
                    "collective_failed", "extension_failed", "tool_resources"]
ErrorStep = Literal["allocate", "product", "gradient", "synchronize", "verify", "copy",
                    "matmul_float32", "matmul_tf32", "matmul_float16", "matmul_bfloat16", "conv2d",
                    "sdpa", "transfer", "compile"]
ModuleKind = Literal["installed", "unverified", "file", "compiled", "extension", "package",
                     "folder", "source-checkout"]
KernelName = Literal["matmul_float32", "matmul_tf32", "matmul_float16", "matmul_bfloat16", "conv2d",
                     "sdpa", "transfer", "compile"]
DebugVariable = Literal["CUDA_INJECTION64_PATH", "CUDA_INJECTION32_PATH", "NSIGHT_CUDA_DEBUGGER",
                        "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_COREDUMP_FILE",
                        "CUDA_DEVICE_WAITS_ON_EXCEPTION", "CUDA_PROFILE", "COMPUTE_PROFILE",
                        "CUDA_AUTO_BOOST"]
VisibilityVariable = Literal["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                             "GPU_DEVICE_ORDINAL"]


class Tool(TypedDict):
    """``tool``."""
    name: Literal["kernodeck-diagnostic"]
    version: str


class _RequestRequired(TypedDict):
    device: Literal["gpu", "cpu"]
    device_index: int
    timeout_s: float
    host_check: bool


class Request(_RequestRequired, total=False):
    """``request``."""
    distributed: Literal[True]
    all_devices: Literal[True]
    extensions: Literal[True]
    kernels: Literal[True]


class Visibility(TypedDict, total=False):
    """``runtime.visibility``."""
    CUDA_VISIBLE_DEVICES: str
    HIP_VISIBLE_DEVICES: str
    ROCR_VISIBLE_DEVICES: str


class DeviceNodes(TypedDict):
    """``runtime.device_nodes``."""
    nvidiactl: bool
    nvidia_uvm: bool
    proc_driver_nvidia: bool
    dxg: bool
    kfd: Literal["absent", "ok", "no_access"]


class Caller(TypedDict):
    """``runtime.caller``."""
    kernel: bool
    torch_imported: bool
    torch_version: Optional[str]
    torch_origin: Optional[Place]
    torch_same: Optional[bool]


class LocalModule(TypedDict):
    """``runtime.local_modules[]``."""
    name: str
    file: str
    folder: Literal["working-folder", "script-folder"]
    hides: Literal["standard-library", "torch", "torch-dependency", "nothing"]


class _LibraryOverrideRequired(TypedDict):
    variable: Optional[Literal["LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"]]
    library: str
    conda_env_lib: bool


class LibraryOverride(_LibraryOverrideRequired, total=False):
    """``runtime.library_override``."""
    torch_library: bool


class _RuntimeRequired(TypedDict):
    python_version: Optional[str]
    python_implementation: Optional[str]
    os_family: Optional[str]
    machine: Optional[str]
    environment_kind: Optional[Literal["venv", "conda", "system", "unknown"]]
    visibility: Optional[Visibility]
    device_nodes: Optional[DeviceNodes]


class Runtime(_RuntimeRequired, total=False):
    """``runtime``."""
    called_from_kernel: Literal[True]
    caller: Optional[Caller]
    local_modules: Optional[list[LocalModule]]
    warnings_as_errors: Optional[bool]
    tracemalloc_frames: Optional[int]
    library_override: Optional[LibraryOverride]
    tool_environment: Optional[Literal["pipx", "uv_tool", "venv"]]
    working_folder_missing: Optional[bool]
    python_home_set: Optional[bool]


class Mps(TypedDict):
    """``pytorch.mps``."""
    available: bool
    macos_version: Optional[str]
    machine: Optional[str]
    translated: Optional[bool]


class _ReportErrorRequired(TypedDict):
    stage: Stage
    kind: ErrorKind
    type: Optional[str]
    message: str


class HungIn(TypedDict):
    """``error.hung_in``."""
    package: str
    file: str
    line: int
    torch_backend: bool
    distribution: Optional[str]


class ReportError(_ReportErrorRequired, total=False):
    """``error``."""
    step: ErrorStep
    message_key: str
    message_values: dict[str, str]
    hung_in: HungIn


class Peer(TypedDict):
    """``pytorch.peers[]``."""
    source: int
    target: int
    access: Optional[bool]
    copy_verified: bool
    code: Code
    duration_ms: Optional[float]
    error: Optional[ReportError]


class DeviceCheck(TypedDict):
    """``pytorch.devices[].check``."""
    code: Optional[Code]
    stage: Optional[Literal["compute"]]
    product_verified: bool
    gradient_verified: bool
    loss: Optional[float]
    synchronized: Optional[bool]
    duration_ms: Optional[float]
    error: Optional[ReportError]


class _DeviceRequired(TypedDict):
    index: int
    name: Optional[str]
    capability: Optional[str]
    total_memory_bytes: Optional[int]


class Device(_DeviceRequired, total=False):
    """``pytorch.devices[]``."""
    error: str
    gcn_arch: str
    free_memory_bytes: int
    check: DeviceCheck


class BuildFactErrors(TypedDict, total=False):
    """``pytorch.build_fact_errors``."""
    arch_list: str
    cudnn_version: str
    nccl_version: str


class ImportErrorOrigin(TypedDict):
    """``pytorch.import_error_origin``."""
    module: Optional[str]
    place: Place


class TorchLibraryElsewhere(TypedDict):
    """``pytorch.torch_libraries_elsewhere[]``."""
    name: str
    loaded_from: Literal["LD_LIBRARY_PATH", "elsewhere"]


class DamagedLibrary(TypedDict):
    """``pytorch.damaged_libraries[]``."""
    name: str
    damage: Literal["truncated", "not_elf"]


class BackendPlugin(TypedDict):
    """``pytorch.backend_plugin``."""
    name: str
    distribution: Optional[str]
    cause: Optional[str]


class CudaLibrary(TypedDict):
    """``pytorch.cuda_libraries[]``."""
    name: str
    version: Optional[str]
    loaded: Optional[Literal["wheel", "other", "not_loaded"]]
    loaded_file: Optional[str]
    loaded_from: Optional[Literal["LD_LIBRARY_PATH", "elsewhere"]]
    library_path_copies: list[str]


class _PytorchRequired(TypedDict):
    imported: bool
    version: Optional[str]
    distribution_version: Optional[str]
    cuda_build: Optional[str]
    hip_build: Optional[str]
    backend: Optional[Literal["cuda", "rocm", "xpu", "mps", "cpu"]]
    gpu_available: Optional[bool]
    visible_device_count: Optional[int]
    devices: list[Device]
    init_error: Optional[str]
    arch_list: Optional[list[str]]
    cudnn_version: Optional[str]
    nccl_version: Optional[str]
    origin: Optional[Place]
    distributions_on_path: Optional[int]
    numpy_present: Optional[bool]
    numpy_version: Optional[str]


class Pytorch(_PytorchRequired, total=False):
    """``pytorch``."""
    xpu_build: Optional[str]
    mps: Optional[Mps]
    peers: Optional[list[Peer]]
    build_fact_errors: Optional[BuildFactErrors]
    import_error_origin: Optional[ImportErrorOrigin]
    extension_tags: Optional[list[str]]
    interpreter_tag: Optional[str]
    hidden_by: Optional[Literal["-S", "-s", "-I", "PYTHONNOUSERSITE"]]
    orphan_metadata: Optional[list[str]]
    torch_libraries_elsewhere: Optional[list[TorchLibraryElsewhere]]
    damaged_libraries: Optional[list[DamagedLibrary]]
    backend_plugin: Optional[BackendPlugin]
    noexec_mount: Optional[bool]
    unreadable_file: Optional[str]
    path_not_utf8: Optional[bool]
    module_kind: Optional[ModuleKind]
    debug_build: Optional[bool]
    git_version: Optional[str]
    cuda_libraries: Optional[list[CudaLibrary]]
    triton_version: Optional[str]
    torchvision_version: Optional[str]
    torchaudio_version: Optional[str]


class WrongValues(TypedDict, total=False):
    """``execution.wrong_values``."""
    product: Literal["wrong", "non_finite"]
    loss: Literal["wrong", "non_finite"]
    gradient: Literal["wrong", "non_finite"]


class _ExecutionRequired(TypedDict):
    device: Optional[str]
    product_verified: bool
    gradient_verified: bool
    loss: Optional[float]
    synchronized: Optional[bool]
    duration_ms: Optional[float]


class Execution(_ExecutionRequired, total=False):
    """``execution``."""
    wrong_values: WrongValues


class _LibraryErrorRequired(TypedDict):
    type: Optional[str]
    message: str


class LibraryError(_LibraryErrorRequired, total=False):
    """``libraries.extensions[].error``."""
    missing_module: Optional[str]


class _ExtensionRequired(TypedDict):
    name: str
    version: str


class Extension(_ExtensionRequired, total=False):
    """``libraries.extensions[]``."""
    module: Optional[str]
    requires_torch: str
    requirement_met: Optional[bool]
    cuda: Optional[str]
    status: Literal["passed", "failed", "timeout", "skipped"]
    duration_ms: Optional[float]
    error: Optional[LibraryError]
    limit_s: float


class _AttentionBackendRequired(TypedDict):
    available: Optional[bool]
    reason: Optional[str]


class AttentionBackend(_AttentionBackendRequired, total=False):
    """``libraries.kernels[].backends.flash``."""
    max_abs_error: Union[float, Literal["nan", "inf", "-inf"], None]


class KernelBackends(TypedDict, total=False):
    """``libraries.kernels[].backends``."""
    flash: AttentionBackend
    efficient: AttentionBackend
    cudnn: AttentionBackend


class _KernelRequired(TypedDict):
    name: KernelName


class Kernel(_KernelRequired, total=False):
    """``libraries.kernels[]``."""
    device: str
    dtype: Optional[Literal["float32", "tf32", "float16", "bfloat16", "int32"]]
    status: Literal["passed", "failed", "unsupported", "skipped"]
    duration_ms: Optional[float]
    max_abs_error: Union[float, Literal["nan", "inf", "-inf"], None]
    error: Optional[LibraryError]
    reason: Optional[str]
    backends: KernelBackends
    compile_ms: float
    default_cache: Literal["not_a_folder", "not_writable"]
    run_ms: float
    bytes: int
    host_to_device_bytes_per_s: Optional[float]
    device_to_host_bytes_per_s: Optional[float]


class Libraries(TypedDict):
    """``libraries``."""
    torch_version: Optional[str]
    extensions: Optional[list[Extension]]
    kernels: Optional[list[Kernel]]


class _HostGpuRequired(TypedDict):
    name: Optional[str]
    memory_total_mib: Optional[int]


class HostGpu(_HostGpuRequired, total=False):
    """``host.gpus[]``."""
    persistence_mode: bool
    compute_mode: Literal["Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process"]
    ecc_uncorrected_volatile: int
    retired_pages_pending: bool
    remapped_rows_pending: bool
    compute_processes: int


class _HostRequired(TypedDict):
    tool: Literal["nvidia-smi", "amd-smi", "rocm-smi"]
    status: Literal["not_found", "ok", "timeout", "failed"]
    driver_version: Optional[str]
    gpus: list[HostGpu]
    mig_devices: Optional[int]


class Host(_HostRequired, total=False):
    """``host``."""
    lost_gpus: int


class CudaToolkit(TypedDict):
    """``system.cuda_toolkit``."""
    status: Literal["ok", "not_found", "timeout", "failed"]
    version: Optional[str]
    found_via: Optional[Literal["CUDA_HOME", "CUDA_PATH", "PATH", "default_location"]]
    cuda_home_set: bool
    cuda_path_set: bool


class _SystemRequired(TypedDict):
    os_name: Optional[str]
    os_version: Optional[str]
    kernel: Optional[str]
    libc: Optional[str]
    cpu_model: Optional[str]
    logical_cpus: Optional[int]
    memory_total_bytes: Optional[int]
    nvidia_driver_version: Optional[str]
    kfd_gfx_targets: Optional[list[str]]
    cuda_toolkit: CudaToolkit
    configuration: dict[str, str]


class System(_SystemRequired, total=False):
    """``system``."""
    usable_cpus: Optional[int]
    cpu_quota: Optional[float]


class Shm(TypedDict):
    """``node.shm``."""
    size_bytes: int
    free_bytes: int
    writable: bool


class ShmAbsent(TypedDict):
    """``node.shm`` where there is no /dev/shm at all."""
    absent: Literal[True]


class MemoryLimits(TypedDict):
    """``node.memory_limits``."""
    address_space_bytes: Optional[int]
    data_bytes: Optional[int]


PciDrivers = TypedDict("PciDrivers", {
    "nvidia": int,
    "nouveau": int,
    "vfio-pci": int,
    "other": int,
    "none": int,
})


class MigEntries(TypedDict, total=False):
    """``node.mig_entries``."""
    CUDA_VISIBLE_DEVICES: int
    HIP_VISIBLE_DEVICES: int
    ROCR_VISIBLE_DEVICES: int
    GPU_DEVICE_ORDINAL: int


class VisibilityUnmatched(TypedDict, total=False):
    """``node.visibility_unmatched``."""
    CUDA_VISIBLE_DEVICES: int


class _NodeRequired(TypedDict):
    shm: Optional[Union[Shm, ShmAbsent]]
    memory_limits: MemoryLimits
    nvidia_module_loaded: bool
    pci_gpus: int
    pci_models: int
    pci_drivers: PciDrivers
    proc_gpus: Optional[int]
    dev_gpus: int
    dev_gpus_accessible: int
    libcuda: Literal["absent", "wsl", "library_path", "system"]
    libcuda_unversioned: bool
    nvml: bool
    wsl: bool
    debug_variables: list[DebugVariable]
    visibility_by_index: list[VisibilityVariable]
    mig_entries: MigEntries
    visibility_conflicts: list[Literal["CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                       "GPU_DEVICE_ORDINAL"]]


class Node(_NodeRequired, total=False):
    """``node``."""
    visibility_unmatched: VisibilityUnmatched
    compilers_not_found: list[Literal["CXX"]]


class _CollectiveRequired(TypedDict):
    status: Literal["passed", "failed", "timeout", "skipped", "not_reached"]
    expected: int
    observed: Optional[int]
    duration_ms: Optional[float]


class Collective(_CollectiveRequired, total=False):
    """``distributed.collective``."""
    store: Optional[Literal["joined", "unresolvable", "refused", "unreachable", "silent", "in_use",
                            "foreign"]]
    world_sizes: Optional[list[int]]
    duplicated_ranks: Optional[list[int]]
    not_reached_at: Stage


class RankOutcome(TypedDict):
    """``distributed.ranks[]``."""
    rank: int
    local_rank: Optional[int]
    node: Optional[int]
    code: Code
    stage: Stage
    device: Optional[str]


class _DistributedRequired(TypedDict):
    launcher: Literal["torchrun", "slurm"]
    rank: int
    world_size: int
    backend: Optional[Literal["gloo", "nccl"]]
    collective: Collective
    ranks: list[RankOutcome]
    missing_ranks: Optional[list[int]]
    shared_devices: list[list[int]]
    port_in_use: Optional[bool]
    socket_interfaces: dict[str, Literal["found", "missing", "excluding"]]
    rdma_devices: Optional[int]
    memlock_limit_bytes: Optional[int]


class Distributed(_DistributedRequired, total=False):
    """``distributed``."""
    job: str
    launcher_tasks: Optional[int]
    launcher_stopped: bool
    launcher_stop: Literal["time_limit", "cancelled", "sigterm"]


class ReportFinding(TypedDict):
    """``findings[]``."""
    id: str
    severity: Literal["error", "warning", "info"]
    summary: str
    next_action: str
    evidence: list[str]


class ReportWarning(TypedDict):
    """``warnings[]``."""
    stage: Optional[str]
    category: Optional[str]
    message: Optional[str]


class _ReportRequired(TypedDict):
    schema_version: Literal[1]
    tool: Tool
    created_at: str
    status: Literal["passed", "failed"]
    code: Code
    exit_code: int
    stage: Stage
    summary: str
    next_action: str
    request: Request
    runtime: Runtime
    pytorch: Pytorch
    execution: Execution
    host: Optional[Host]
    findings: list[ReportFinding]
    error: Optional[ReportError]
    warnings: list[ReportWarning]
    timings_ms: dict[str, float]


class Report(_ReportRequired, total=False):
    """A report as ``build`` writes it (``schema/report-v1.json``)."""
    libraries: Optional[Libraries]
    system: Optional[System]
    node: Optional[Node]
    distributed: Distributed

