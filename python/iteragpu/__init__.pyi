# Type stubs of the public iteragpu package. The classes are those of the extension
# (_iteragpu.pyi); the functions below are the package's own (__init__.py, _measure.py).

import datetime
from typing import Literal, Optional, Union, overload

from ._iteragpu import AllocatorCounters as AllocatorCounters
from ._iteragpu import BackendUnavailable as BackendUnavailable
from ._iteragpu import Catalog as Catalog
from ._iteragpu import CatalogEntry as CatalogEntry
from ._iteragpu import CheckpointDtypeTotal as CheckpointDtypeTotal
from ._iteragpu import CheckpointEstimate as CheckpointEstimate
from ._iteragpu import CheckpointShard as CheckpointShard
from ._iteragpu import CheckpointTensor as CheckpointTensor
from ._iteragpu import ComparisonRow as ComparisonRow
from ._iteragpu import ComparisonSection as ComparisonSection
from ._iteragpu import DataFileError as DataFileError
from ._iteragpu import DeviceUnavailable as DeviceUnavailable
from ._iteragpu import Environment as Environment
from ._iteragpu import EnvironmentReport as EnvironmentReport
from ._iteragpu import Error as Error
from ._iteragpu import GpuDevice as GpuDevice
from ._iteragpu import Interrupted as Interrupted
from ._iteragpu import DeviceOutcome as DeviceOutcome
from ._iteragpu import DeviceResultFigures as DeviceResultFigures
from ._iteragpu import MeasureConfiguration as MeasureConfiguration
from ._iteragpu import MeasureRequest as MeasureRequest
from ._iteragpu import Measurement as Measurement
from ._iteragpu import MeasurementComparison as MeasurementComparison
from ._iteragpu import HubUnreachable as HubUnreachable
from ._iteragpu import MeasurementFailed as MeasurementFailed
from ._iteragpu import MeasurementSummary as MeasurementSummary
from ._iteragpu import MemoryAmount as MemoryAmount
from ._iteragpu import MemoryEstimate as MemoryEstimate
from ._iteragpu import MemoryEstimator as MemoryEstimator
from ._iteragpu import MemoryPrediction as MemoryPrediction
from ._iteragpu import IntText, Number, PathArg, PointCallback, ProgressCallback
from ._iteragpu import OutOfMemory as OutOfMemory
from ._iteragpu import OutputExists as OutputExists
from ._iteragpu import PackageCalculator as PackageCalculator
from ._iteragpu import PackageFit as PackageFit
from ._iteragpu import PackageFitReport as PackageFitReport
from ._iteragpu import PhasePrediction as PhasePrediction
from ._iteragpu import PhaseRow as PhaseRow
from ._iteragpu import PredictionTarget as PredictionTarget
from ._iteragpu import Quote as Quote
from ._iteragpu import ResourceUnavailable as ResourceUnavailable
from ._iteragpu import ResultCost as ResultCost
from ._iteragpu import ResultRow as ResultRow
from ._iteragpu import ResultsReport as ResultsReport
from ._iteragpu import ResultsTable as ResultsTable
from ._iteragpu import SpreadStatistics as SpreadStatistics
from ._iteragpu import StackReport as StackReport
from ._iteragpu import SweepPoint as SweepPoint
from ._iteragpu import SweepResult as SweepResult
from ._iteragpu import SyntheticModel as SyntheticModel
from ._iteragpu import TimingSummary as TimingSummary
from ._iteragpu import TimingWarning as TimingWarning
from ._iteragpu import UnitCost as UnitCost
from ._iteragpu import UsageError as UsageError
from ._iteragpu import __version__ as __version__
from ._iteragpu import build_description as build_description
from ._iteragpu import read_measurement as read_measurement

Progress = Union[None, Literal[False], ProgressCallback]

@overload
def estimate(parameters: Number, bits: Number, *, reserve_gib: Number = ...) -> MemoryEstimate: ...
@overload
def estimate(*, checkpoint: PathArg, reserve_gib: Number = ...,
             by_tensor: bool = ..., timeout: Optional[Number] = ...) -> CheckpointEstimate: ...
def environment(*, device: str = ..., output: Optional[PathArg] = ...,
                backend_path: Optional[PathArg] = ...) -> EnvironmentReport: ...
def quote(gpu: str, days: Number, *, catalog: Union[None, PathArg, Catalog] = ...,
          lots: Number = ..., accepted_results: Optional[Number] = ...) -> Quote: ...
def results_add(table: PathArg, *, measurement: PathArg, gpu: str, days: Number, work_unit: str,
                attempted: Number, accepted: Number, metric: str, threshold: Union[str, Number],
                observed: Union[str, Number], lots: Number = ...,
                date: Union[None, str, datetime.date] = ..., notes: str = ...,
                catalog: Union[None, PathArg, Catalog] = ...,
                gpu_mismatch_ok: bool = ...) -> ResultRow: ...
def results_check(table: PathArg, catalog: Union[None, PathArg, Catalog] = ...) -> ResultsTable: ...
def results_report(table: PathArg, sort: Literal["table", "cost", "date", "gpu"] = ...,
                   descending: bool = ...,
                   catalog: Union[None, PathArg, Catalog] = ...) -> ResultsReport: ...

def compare(*measurements: Union[Measurement, PathArg]) -> MeasurementComparison: ...

class PhaseMeasurer:
    """Measures in a fresh worker process unless in_process=True."""
    def measure(self, *, device: str = ..., batch: IntText = ..., context: IntText = ...,
                width: Optional[IntText] = ..., hidden: Optional[IntText] = ..., dtype: Optional[str] = ...,
                warmup: Optional[IntText] = ..., repeats: Optional[IntText] = ..., seed: IntText = ...,
                output: Optional[PathArg] = ..., backend_path: Optional[PathArg] = ...,
                in_process: bool = ...,
                progress: Progress = ..., model: Optional[PathArg] = ...,
                timeout: Optional[Number] = ...,
                **workload_options: Union[IntText, bool, None]) -> Union[Measurement, MeasurementSummary]: ...

def packages(*, model: PathArg, batch: Optional[IntText] = ..., context: Optional[IntText] = ...,
             dtype: Optional[str] = ..., warmup: Optional[IntText] = ...,
             repeats: Optional[IntText] = ..., days: Optional[IntText] = ..., measurement: Optional[PathArg] = ...,
             catalog: Union[None, PathArg, Catalog] = ...,
             timeout: Optional[Number] = ..., **workload_options: Union[IntText, bool, None]) -> PackageFitReport: ...
def predict(*, device: Optional[str] = ..., compute_capability: Optional[Union[str, float]] = ...,
            batch: Optional[int] = ..., context: Optional[int] = ..., width: Optional[int] = ...,
            hidden: Optional[int] = ..., dtype: Optional[str] = ..., warmup: Optional[int] = ...,
            repeats: Optional[int] = ..., seed: Optional[int] = ...,
            backend_path: Optional[PathArg] = ..., model: Optional[PathArg] = ...,
            timeout: Optional[Number] = ..., **workload_options: Union[IntText, bool, None]) -> MemoryPrediction: ...

def measure(*, device: str = ..., batch: IntText = ..., context: IntText = ...,
            width: Optional[IntText] = ..., hidden: Optional[IntText] = ..., dtype: Optional[str] = ...,
            warmup: Optional[IntText] = ..., repeats: Optional[IntText] = ..., seed: IntText = ...,
            output: Optional[PathArg] = ..., backend_path: Optional[PathArg] = ...,
            in_process: bool = ...,
            progress: Progress = ..., model: Optional[PathArg] = ...,
            timeout: Optional[Number] = ...,
            **workload_options: Union[IntText, bool, None]) -> Union[Measurement, MeasurementSummary]: ...
def sweep(vary: Literal["batch", "context", "width", "hidden", "new-tokens"], *, budget: IntText = ...,
          device: str = ..., batch: IntText = ..., context: IntText = ..., width: Optional[IntText] = ...,
          hidden: Optional[IntText] = ..., dtype: Optional[str] = ..., warmup: Optional[IntText] = ...,
          repeats: Optional[IntText] = ..., seed: IntText = ..., output: Optional[PathArg] = ...,
          backend_path: Optional[PathArg] = ...,
          progress: Union[None, Literal[False], PointCallback] = ...,
          model: Optional[PathArg] = ..., timeout: Optional[Number] = ...,
          **workload_options: Union[IntText, bool, None]) -> SweepResult: ...
