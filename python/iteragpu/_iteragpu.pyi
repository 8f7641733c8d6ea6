# Type stubs of the private extension iteragpu._iteragpu (python/src/*.cpp).
# Exact values: int when whole, decimal.Decimal otherwise (see each attribute).

import datetime
import os
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple, Union

__version__: str

def build_description() -> str: ...

# Private, for the package's own modules (python/src/module.cpp).
_test_double_mark: str  # iteragpu::kTestDoubleMark, shown beside a measurement from the test double
def _may_use_escape_codes(fd: int) -> bool: ...  # the CLI's rule: a terminal, NO_COLOR unset, TERM not dumb

Number = Union[int, str, Decimal, float]
PathArg = Union[str, os.PathLike]

# Errors (python/src/error_bindings.cpp).
class Error(Exception): ...
class UsageError(Error, ValueError):
    field: Optional[str]
class DataFileError(Error, ValueError): ...
class ResourceUnavailable(Error): ...
class BackendUnavailable(ResourceUnavailable): ...
class DeviceUnavailable(ResourceUnavailable): ...
class OutputExists(ResourceUnavailable, FileExistsError): ...
class MeasurementFailed(Error, RuntimeError): ...
class OutOfMemory(MeasurementFailed): ...
class HubUnreachable(Error, ConnectionError): ...
class Interrupted(Error, KeyboardInterrupt): ...

class _Report:
    def to_json(self) -> str: ...
    def to_text(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...

# Estimate (python/src/estimate_bindings.cpp).
class MemoryAmount:
    @property
    def bytes(self) -> Union[int, Decimal]: ...
    @property
    def gib(self) -> Decimal: ...
    @property
    def gb(self) -> Decimal: ...

class MemoryEstimate(_Report):
    @property
    def parameters(self) -> int: ...
    @property
    def bits(self) -> int: ...
    @property
    def total_bits(self) -> int: ...
    @property
    def weights(self) -> MemoryAmount: ...
    @property
    def reserve(self) -> MemoryAmount: ...
    @property
    def total(self) -> MemoryAmount: ...
    not_included: ClassVar[List[str]]
    def _repr_html_(self) -> str: ...

class CheckpointTensor:
    name: str
    dtype: str
    @property
    def shape(self) -> Tuple[int, ...]: ...
    parameters: int
    bytes: int
    shard: str
    offset: int

class CheckpointDtypeTotal:
    dtype: str
    bits_per_element: int
    tensors: int
    @property
    def parameters(self) -> int: ...
    memory: MemoryAmount

class CheckpointShard:
    name: str
    path: str
    file_bytes: int
    header_bytes: int
    data_bytes: int
    tensors: int

class CheckpointEstimate(_Report):
    checkpoint: str
    resolved: str
    sharded: bool
    index_total_size: Optional[int]
    shards: List[CheckpointShard]
    dtypes: List[CheckpointDtypeTotal]
    tensor_count: int
    @property
    def parameters(self) -> int: ...
    weights: MemoryAmount
    reserve: MemoryAmount
    total: MemoryAmount
    by_tensor: bool
    tensors: List[CheckpointTensor]
    not_included: ClassVar[List[str]]
    def _repr_html_(self) -> str: ...

class MemoryEstimator:
    def __init__(self) -> None: ...
    def estimate(self, parameters: Number, bits: Number, reserve_gib: Number = ...) -> MemoryEstimate: ...
    def estimate_checkpoint(self, checkpoint: PathArg, reserve_gib: Number = ...,
                            by_tensor: bool = ..., timeout: Optional[Number] = ...) -> CheckpointEstimate: ...

# Packages (python/src/package_bindings.cpp).
class CatalogEntry:
    gpu: str
    gpu_name: str
    days: int
    lot_price_cents: int
    gpus_per_lot: int
    snapshot_date: str
    source: str
    device_names: List[str]
    line: int

class Catalog(_Report):
    @staticmethod
    def load(path: PathArg, require_full_grid: bool = ...) -> Catalog: ...
    @staticmethod
    def shipped_path() -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def entries(self) -> List[CatalogEntry]: ...
    def find(self, gpu: str, days: int) -> CatalogEntry: ...

class UnitCost:
    @property
    def accepted_results(self) -> int: ...
    @property
    def numerator_cents(self) -> int: ...
    @property
    def denominator(self) -> int: ...
    @property
    def cents(self) -> Fraction: ...
    @property
    def exact_usd(self) -> Optional[Decimal]: ...
    display_usd: str
    display_rounding: ClassVar[str]

class Quote(_Report):
    entry: CatalogEntry
    catalog_path: str
    @property
    def lots(self) -> int: ...
    @property
    def total_gpus(self) -> int: ...
    @property
    def total_cents(self) -> int: ...
    @property
    def total_usd(self) -> Decimal: ...
    unit_cost: Optional[UnitCost]
    def _repr_html_(self) -> str: ...

class PackageCalculator:
    def __init__(self, catalog: Union[None, PathArg, Catalog] = ...) -> None: ...
    @property
    def catalog(self) -> Catalog: ...
    def quote(self, gpu: str, days: Number, lots: Number = ...,
              accepted_results: Optional[Number] = ...) -> Quote: ...

# Raw-results table (python/src/results_bindings.cpp).
class ResultRow:
    date: str
    measurement_file: str
    measurement_sha256: str
    gpu: str
    days: int
    lots: int
    work_unit: str
    units_attempted: int
    units_accepted_distinct: int
    quality_metric: str
    acceptance_threshold: str
    observed_value: str
    notes: str
    line: int
    measured_device: str
    gpu_mismatch: str

class ResultsTable:
    columns: ClassVar[List[str]]
    @staticmethod
    def load(path: PathArg, catalog: Union[None, PathArg, Catalog] = ...,
             verify_measurements: bool = ...) -> ResultsTable: ...
    @staticmethod
    def add_result(table: PathArg, *, measurement: PathArg, gpu: str, days: Number,
                   work_unit: str, attempted: Number, accepted: Number, metric: str,
                   threshold: Union[str, Number], observed: Union[str, Number],
                   lots: Number = ..., date: Union[None, str, datetime.date] = ...,
                   notes: str = ..., catalog: Union[None, PathArg, Catalog] = ...,
                   gpu_mismatch_ok: bool = ...) -> ResultRow: ...
    @property
    def path(self) -> str: ...
    @property
    def rows(self) -> List[ResultRow]: ...
    @property
    def gpu_mismatches(self) -> List[str]: ...
    def __len__(self) -> int: ...

class ResultCost:
    row: ResultRow
    quote: Quote

class ResultsReport(_Report):
    table_path: str
    catalog_path: str
    rows: List[ResultCost]
    def to_csv(self) -> str: ...
    def _repr_html_(self) -> str: ...

def report_results(table: ResultsTable, calculator: PackageCalculator, sort: str = ...,
                   descending: bool = ...) -> ResultsReport: ...

# Environment (python/src/environment_bindings.cpp).
class GpuDevice:
    index: int
    name: str
    compute_capability_major: int
    compute_capability_minor: int
    total_memory_bytes: int
    multiprocessors: int

class StackReport:
    backend_identity: str
    torch_version: str
    cuda_build_version: Optional[str]
    hip_build_version: Optional[str]
    cudnn_version: Optional[str]
    gpu_runtime_available: bool
    @property
    def no_gpu_reason(self) -> Optional[str]: ...  # the CLI's reason, None when GPUs are visible
    gpus: List[GpuDevice]
    selected_free_bytes: Optional[int]
    selected_total_bytes: Optional[int]
    cublas_workspace_bytes: Optional[int]
    cublaslt_workspace_bytes: Optional[int]

class EnvironmentReport(_Report):
    iteragpu_version: str
    iteragpu_build: str
    os_name: str
    os_distribution: Optional[str]
    kernel_release: str
    architecture: str
    libc: str
    backend_available: bool
    @property
    def from_test_double(self) -> bool: ...
    backend_path: str
    backend_error: str
    stack: Optional[StackReport]
    selected_device: str
    selected_index: int
    selected_present: bool
    nvidia_driver_version: Optional[str]
    nvidia_driver_source: str
    def _repr_html_(self) -> str: ...

class Environment:
    def __init__(self) -> None: ...
    def collect(self, device: str = ..., output: Optional[PathArg] = ...,
                backend_path: Optional[PathArg] = ...) -> EnvironmentReport: ...

# Measure (python/src/measure_bindings.cpp).
class AllocatorCounters:
    allocated_bytes: int
    reserved_bytes: int
    peak_allocated_bytes: int
    peak_reserved_bytes: int

class PhaseRow:
    phase: str
    repeat: int
    forwards: int
    sequence: str
    step: Optional[int]
    host_seconds: float
    gpu_event_seconds: Optional[float]
    baseline: AllocatorCounters
    end: AllocatorCounters

IntText = Union[int, str]

class MeasureRequest:
    """As written: every value is text, parsed by the core (MeasureConfiguration.parse)."""
    def __init__(self, *, device: str = ..., batch: IntText = ..., context: IntText = ...,
                 width: Optional[IntText] = ..., hidden: Optional[IntText] = ..., dtype: Optional[str] = ...,
                 warmup: Optional[IntText] = ..., repeats: Optional[IntText] = ..., seed: IntText = ...,
                 output: Optional[PathArg] = ..., backend_path: Optional[PathArg] = ...,
                 model: Optional[PathArg] = ..., timeout: Optional[Number] = ...,
                 **kwargs: Union[IntText, bool, None]) -> None: ...
    device: str
    batch: str
    context: str
    width: Optional[str]
    hidden: Optional[str]
    dtype: Optional[str]
    warmup: Optional[str]
    repeats: Optional[str]
    seed: str
    output: str
    backend_path: str
    model: Optional[str]
    timeout: Optional[str]
    # Each workload's own options (WorkloadKind::options), by keyword; None when left out.
    train: Optional[str]
    steps: Optional[str]
    lora_rank: Optional[str]
    lora_alpha: Optional[str]
    lora_targets: Optional[str]
    gradient_checkpointing: Optional[str]
    new_tokens: Optional[str]

def _workload_option_keywords() -> List[str]: ...

class MeasureConfiguration:
    @staticmethod
    def parse(request: MeasureRequest) -> MeasureConfiguration: ...
    device: str
    batch: int
    context: int
    width: int
    hidden: int
    dtype: str
    warmup: int
    repeats: int
    seed: int
    output: str
    model: str
    # Each workload's own options, by keyword; None when the configuration's workload has none.
    train: Optional[str]
    steps: Optional[int]
    lora_rank: Optional[int]
    lora_alpha: Optional[int]
    lora_targets: Optional[str]
    gradient_checkpointing: Optional[bool]
    new_tokens: Optional[int]

class SyntheticModel:
    @staticmethod
    def from_request(request: MeasureRequest) -> SyntheticModel: ...
    batch: int
    context: int
    width: int
    hidden: int
    dtype: str
    dtype_bytes: int
    parameter_count: int
    parameter_bytes: int
    input_bytes: int

class PredictionTarget:
    compute_capability_major: int
    compute_capability_minor: int
    gpu_name: str
    cublas_workspace_bytes: int
    cublaslt_workspace_bytes: int
    workspace_source: str

class PhasePrediction:
    phase: str
    repeat: int
    forwards: int
    sequence: str
    step: Optional[int]
    baseline: AllocatorCounters
    end: AllocatorCounters
    uncertain_counters: List[str]
    lower_bound: bool
    recorded_bound_bytes: int

class MemoryPrediction(_Report):
    configuration: MeasureConfiguration
    model: SyntheticModel
    target: PredictionTarget
    parameter_bytes: int
    input_bytes: int
    cublaslt_used: bool
    heading: str
    phases: List[PhasePrediction]
    caveats: List[str]
    def _repr_html_(self) -> str: ...

def predict_memory(request: MeasureRequest, compute_capability: str = ...) -> MemoryPrediction: ...

class PackageFit:
    gpu: str
    gpu_name: str
    compute_capability: str
    memory_bytes: int
    memory_source: str
    outside_allocator_bytes: int
    outside_allocator_source: str
    verdict: str
    reason: str
    predicted_peak_reserved_bytes: int
    required_bytes: int
    required_unchecked: str
    headroom_bytes: int
    lot_price_cents: Optional[int]
    cost_per_million_tokens_usd: Optional[str]

class PackageFitReport(_Report):
    heading: str
    catalog_path: str
    gpu_memory_path: str
    packages: List[PackageFit]
    caveats: List[str]
    def _repr_html_(self) -> str: ...

def fit_packages(request: MeasureRequest, days: Any = ..., measurement: Any = ...,
                 catalog: Any = ...) -> PackageFitReport: ...

class SpreadStatistics:
    count: int
    median: float
    iqr: float
    min: float
    max: float
    mean: float
    stdev: float
    cv: float

class TimingWarning:
    code: str
    clock: str
    message: str

class TimingSummary:
    warm_repeats: int
    host_seconds: SpreadStatistics
    gpu_event_seconds: Optional[SpreadStatistics]
    warnings: List[TimingWarning]
    def _repr_html_(self) -> str: ...

class DecoderArchitecture:
    architecture: str
    model_type: str
    layers: int
    hidden_size: int
    intermediate_size: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    rope_type: str
    qkv_bias: bool
    qk_norm: bool
    tie_word_embeddings: bool
    dtype: str

class CheckpointRecord:
    directory: str
    architecture: DecoderArchitecture
    tensors: int
    parameter_count: int
    parameter_bytes: int

class DecoderRun:
    attention_backend: str
    first_sequence_tokens: List[int]
    last_logits_sha256: str
    device_used_bytes: Optional[int]
    time_to_first_token_seconds: Optional[float]
    prefill_tokens_per_second: Optional[float]
    decode_tokens_per_second: Optional[float]

class Measurement(_Report):
    environment: EnvironmentReport
    configuration: MeasureConfiguration
    model: SyntheticModel
    checkpoint: Optional[CheckpointRecord]
    decoder_run: Optional[DecoderRun]
    phases: List[PhaseRow]
    timing: TimingSummary
    prediction: Optional[MemoryPrediction]
    exact_predicted_counters: int
    heading: str
    def predicted_row(self, index: int) -> Optional[PhasePrediction]: ...
    def plot(self) -> Any: ...  # matplotlib.figure.Figure
    def _repr_html_(self) -> str: ...
    @staticmethod
    def from_json(text: str, source: str = ...) -> Measurement: ...
    @staticmethod
    def read(path: PathArg) -> Measurement: ...

ProgressCallback = Callable[[PhaseRow, int, int], None]
PointCallback = Callable[[SweepPoint, int], None]

class DeviceResultFigures:
    gpu_name: str
    warm_forward_host_seconds_median: float
    model_load_allocated_bytes: int
    peak_allocated_bytes_max: int

class DeviceOutcome:
    device: str
    exit_code: int
    result_file: str
    error: str
    figures: Optional[DeviceResultFigures]
    measurement: Optional[Measurement]
    ok: bool

class MeasurementSummary(_Report):
    configuration: MeasureConfiguration
    devices: List[DeviceOutcome]
    interrupted: bool
    complete: bool
    exit_code: int
    def _repr_html_(self) -> str: ...

def run_measurements(request: MeasureRequest, progress: Optional[ProgressCallback] = ...,
                     worker_path: Optional[PathArg] = ...) -> Union[Measurement, MeasurementSummary]: ...

class SweepPoint:
    value: int
    outcome: str
    fits: bool
    peak_reserved_bytes: Optional[int]
    peak_allocated_bytes: Optional[int]
    predicted_peak_reserved_bytes: Optional[int]
    warm_forward_host_seconds_median: Optional[float]
    error: str

class SweepResult(_Report):
    start: MeasureConfiguration
    vary: str
    budget: str
    budget_bytes: int
    package: str
    free_bytes: int
    gpu_name: str
    points: List[SweepPoint]
    points_by_value: List[SweepPoint]
    predicted_largest: Optional[int]
    largest_fitting: Optional[int]
    smallest_not_fitting: Optional[int]
    largest_accepted: int
    beyond_largest_accepted: str
    measurements: int
    def plot(self) -> Any: ...  # matplotlib.figure.Figure
    def _repr_html_(self) -> str: ...

def run_sweep(start: MeasureRequest, vary: str, budget: IntText = ..., output: Optional[PathArg] = ...,
              progress: Optional[ProgressCallback] = ...,
              on_point: Optional[PointCallback] = ...) -> SweepResult: ...

class PhaseMeasurer:
    """In this process; iteragpu.PhaseMeasurer uses a fresh worker process by default."""
    def __init__(self) -> None: ...
    def measure(self, request: MeasureRequest, progress: Optional[ProgressCallback] = ...) -> Measurement: ...

# Measurements read back and compared (python/src/comparison_bindings.cpp).
def read_measurement(path: PathArg) -> Measurement: ...

class ComparisonRow:
    name: str
    label: str
    unit: str  # "bytes", "seconds", "fraction" or ""
    same: bool
    values: List[Union[str, int, float, None]]
    ratios: Optional[List[Optional[float]]]

class ComparisonSection:
    name: str  # configuration | model | environment | peaks | times
    title: str
    rows: List[ComparisonRow]
    def row(self, name: str) -> Optional[ComparisonRow]: ...

class MeasurementComparison(_Report):
    sources: List[str]
    measurements: List[Measurement]
    sections: List[ComparisonSection]
    findings: List[str]
    def section(self, name: str) -> Optional[ComparisonSection]: ...
    def to_markdown(self) -> str: ...
    def to_csv(self) -> str: ...
    def _repr_html_(self) -> str: ...

def compare_measurements(items: List[Union[Measurement, PathArg]]) -> MeasurementComparison: ...
