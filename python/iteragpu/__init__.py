"""iteragpu: honest GPU memory, time and rental-cost numbers before you pay.

The same core C++ library as the ``iteragpu`` command, through a private extension
(``iteragpu._iteragpu``)::

    import iteragpu
    iteragpu.estimate(parameters=7_000_000_000, bits=16, reserve_gib=4)  # no GPU needed
    iteragpu.estimate(checkpoint="model.safetensors.index.json")           # headers only
    iteragpu.environment(device="cuda:0")                                # a diagnostic
    iteragpu.predict(compute_capability="9.0", width=1024)                 # no GPU touched
    iteragpu.measure(device="cuda:0", output="mesures.json")              # in a worker process
    iteragpu.measure(device="all", output="runs/m.json")                  # every GPU at once
    iteragpu.sweep("batch", width=1024, budget="50%")                     # largest batch that fits
    iteragpu.compare("float32.json", "bfloat16.json")                     # side by side
    iteragpu.quote("b200", days=7, lots=2)                                # package prices
    iteragpu.results_add("resultats.csv", measurement="mesures.json", ...)  # one real run
    iteragpu.results_report("resultats.csv")                               # cost per result
    iteragpu.compare("mesures-float32.json", "mesures-bfloat16.json")      # side by side

Results have attributes (exact values as ``int`` / ``decimal.Decimal``), ``to_dict()``
(equal to the CLI's JSON), ``to_json()``, ``to_text()`` and an HTML view in Jupyter.

Errors: bad input raises ``UsageError`` (a ``ValueError``); a wrong type ``TypeError``.
The library's own errors derive from ``iteragpu.Error``:

- ``UsageError`` (also ``ValueError``): a malformed keyword value; ``.field`` names it.
- ``DataFileError`` (also ``ValueError``): a missing or malformed catalog, results
  table or checkpoint (``file:line: reason``, ``file: reason``).
- ``ResourceUnavailable``: something the request needs is not there; subclasses
  ``BackendUnavailable`` (no LibTorch backend), ``DeviceUnavailable`` (no GPU runtime or
  no such device) and ``OutputExists`` (also ``FileExistsError``: results are never
  overwritten).
- ``HubUnreachable`` (also ``ConnectionError``): a model named by a Hub id ("org/name")
  could not be read over the network (timeout, refused connection, TLS, a cut answer);
- ``MeasurementFailed`` (also ``RuntimeError``): the device failed while measuring;
  subclass ``OutOfMemory`` names the phase and the configuration.
- ``Interrupted`` (also ``KeyboardInterrupt``): stopped between phases; nothing written.

``import iteragpu`` does not load LibTorch: the core opens its LibTorch backend plugin on
first GPU use (``environment()`` or an in-process ``measure()``).
"""

from ._iteragpu import (
    AllocatorCounters,
    BackendUnavailable,
    Catalog,
    CatalogEntry,
    CheckpointDtypeTotal,
    CheckpointEstimate,
    CheckpointShard,
    CheckpointTensor,
    ComparisonRow,
    ComparisonSection,
    DataFileError,
    DeviceUnavailable,
    Environment,
    EnvironmentReport,
    Error,
    GpuDevice,
    Interrupted,
    DeviceOutcome,
    DeviceResultFigures,
    Measurement,
    MeasurementComparison,
    HubUnreachable,
    MeasurementFailed,
    MeasurementSummary,
    MeasureConfiguration,
    MeasureRequest,
    MemoryAmount,
    MemoryPrediction,
    MemoryEstimate,
    MemoryEstimator,
    OutOfMemory,
    OutputExists,
    PackageCalculator,
    PackageFit,
    PackageFitReport,
    PhasePrediction,
    PhaseRow,
    PredictionTarget,
    Quote,
    ResourceUnavailable,
    ResultCost,
    ResultRow,
    ResultsReport,
    ResultsTable,
    SpreadStatistics,
    StackReport,
    SweepPoint,
    SweepResult,
    SyntheticModel,
    TimingSummary,
    TimingWarning,
    UnitCost,
    UsageError,
    __version__,
    build_description,
    read_measurement,
)
from ._iteragpu import compare_measurements as _compare_measurements
from ._iteragpu import fit_packages as _fit_packages
from ._iteragpu import predict_memory as _predict_memory
from ._iteragpu import report_results as _report_results
from ._measure import PhaseMeasurer, measure, sweep
from ._measure import listing_workload_keywords as _listing_workload_keywords


def _given(**keywords):
    """The keywords the caller gave: None leaves the core's default (one place for each)."""
    return {name: value for name, value in keywords.items() if value is not None}


def _usage_error(keyword, reason):
    error = UsageError(f"{keyword}: {reason}")
    error.field = keyword
    return error


def estimate(parameters=None, bits=None, *, reserve_gib=None, checkpoint=None, by_tensor=False, timeout=None):
    """Weight memory, exactly (no GPU needed): from a parameter count and a bit width, or from
    the safetensors checkpoint you have (its headers only; no tensor data is read).

    Args:
        parameters: a positive whole count (int, or str with a K/M/B/T shorthand: "7B").
        bits: storage bits per parameter (16, 4).
        checkpoint: keyword, instead of parameters and bits; a .safetensors file, a sharded
            checkpoint's *.safetensors.index.json, or a folder holding one (str or PathLike);
            or a Hub id "org/name[@revision]" (the Hugging Face cache, else its headers over
            HTTPS).
        by_tensor: keyword, with checkpoint; keep every tensor in ``tensors``.
        timeout: keyword, with a Hub id; seconds per HTTP request (None: 10).
        reserve_gib: a reserve to add, in GiB (None: 0). Your assumption.

    Returns:
        MemoryEstimate, or CheckpointEstimate with checkpoint.

    Raises:
        UsageError: checkpoint together with parameters or bits, by_tensor without checkpoint,
            or a malformed value.
        DataFileError: a checkpoint file that is missing, not a regular file or not valid
            ("PATH: reason").
    """
    if checkpoint is not None:
        if parameters is not None or bits is not None:
            raise _usage_error(
                "checkpoint",
                "cannot be combined with parameters or bits: the checkpoint's headers give every "
                "tensor's dtype and shape",
            )
        return MemoryEstimator().estimate_checkpoint(checkpoint, by_tensor=by_tensor, timeout=timeout,
                                                     **_given(reserve_gib=reserve_gib))
    if by_tensor:
        raise _usage_error("by_tensor", "lists the tensors of a checkpoint; pass checkpoint=PATH")
    if timeout is not None:
        raise _usage_error("timeout", "goes with checkpoint naming a Hub id (org/name)")
    if parameters is None and bits is None:
        raise TypeError("estimate() needs parameters and bits, or checkpoint")
    return MemoryEstimator().estimate(parameters, bits, **_given(reserve_gib=reserve_gib))


def environment(*, device=None, output=None, backend_path=None):
    """A diagnostic of the LibTorch/CUDA/GPU stack, collected in this process.

    Args:
        device: "cuda:N" (None: "cuda:0").
        output: a new JSON file to write the report to (never overwritten).
        backend_path: an explicit LibTorch backend plugin file.

    Returns:
        EnvironmentReport: reporting that no GPU or no backend is available is valid.
    """
    return Environment().collect(**_given(device=device, output=output, backend_path=backend_path))


@_listing_workload_keywords
def predict(*, device=None, compute_capability=None, batch=None, context=None, width=None,
            hidden=None, dtype=None, warmup=None, repeats=None, seed=None, backend_path=None,
            model=None, timeout=None, **workload_options):
    """The allocator counters measure() will record with the same options, phase by phase,
    predicted from PyTorch's caching-allocator rules before any GPU is touched.

    Args:
        device: "cuda:N": the LibTorch backend reports that GPU's compute capability and the
            cuBLAS/cuBLASLt workspace sizes (nothing is allocated). Give this or
            compute_capability, not both.
        compute_capability: "9.0" (H100/H200), "8.0", ...: no GPU and no backend needed;
            PyTorch's default workspace sizes for that architecture.
        batch, context, width, hidden, dtype, warmup, repeats, seed: as for measure()
            (None keeps measure()'s default).
        backend_path: an explicit LibTorch backend plugin file (with device).
        model: a checkpoint folder, or a Hub id "org/name[@revision]" (the Hugging Face
            cache, else its config.json and safetensors headers over HTTPS; no tensor data is
            read), as for measure(model=...): every prefill and decode row is predicted.
        timeout: with a Hub id, seconds per HTTP request (None: 10).
        **workload_options: the workload's own options, as for measure() (new_tokens with
            model: its decode steps).

    Returns:
        MemoryPrediction: ``to_dict()`` equals ``iteragpu predict --format json``.

    Raises:
        UsageError: a malformed option, or neither/both of device and compute_capability.
        BackendUnavailable, DeviceUnavailable: with device, when it cannot be read.
    """
    options = {"batch": batch, "context": context, "width": width, "hidden": hidden,
               "dtype": dtype, "warmup": warmup, "repeats": repeats, "seed": seed,
               "backend_path": backend_path, "model": model, "timeout": timeout, **workload_options}
    request = MeasureRequest(device="" if device is None else device,
                             **{k: v for k, v in options.items() if v is not None})
    if compute_capability is not None and not isinstance(compute_capability, str):
        if isinstance(compute_capability, bool) or not isinstance(compute_capability, (int, float)):
            raise TypeError("compute_capability: expected a str such as '9.0'")
        compute_capability = str(compute_capability)
    return _predict_memory(request, compute_capability or "")


def quote(gpu, days, *, lots=None, accepted_results=None, catalog=None):
    """The price of a rental package and, with accepted_results, the cost per result.

    Args:
        gpu: catalog key ("b200").
        days: 3, 7 or 30.
        lots: lots to buy (None: 1).
        accepted_results: distinct accepted results (no default: None gives no unit cost).
        catalog: None for the shipped (illustrative) catalog, or a CSV path.

    Returns:
        Quote
    """
    return PackageCalculator(catalog).quote(gpu, days, **_given(lots=lots, accepted_results=accepted_results))


@_listing_workload_keywords
def packages(*, model, batch=None, context=None, dtype=None, warmup=None, repeats=None,
             days=None, measurement=None, catalog=None, timeout=None, **workload_options):
    """Which rental package's GPU holds a checkpoint at a batch and context, as
    ``iteragpu packages --model`` judges it: the predicted peak reserved bytes plus the
    process's memory outside the caching allocator, against each catalog GPU model's memory
    (data/gpu-memory.csv: the total the runtime reports, measured on the H200 and H100 or
    published with its source; a nominal size where none is known, which never "fits"). One GPU per
    model instance: splitting a model over several GPUs is not modelled.

    Args:
        model: a checkpoint folder (config.json and safetensors; headers only are read), or a
            Hub id "org/name[@revision]" (the Hugging Face cache, else the headers over HTTPS).
        batch, context, dtype, warmup, repeats, **workload_options (new_tokens, or train,
            gradient_checkpointing, lora_rank, ...): as for measure(model=...).
        days: 3, 7 or 30: each package's price for that duration (None: no prices).
        measurement: a measure(model=...) file of the same checkpoint and configuration: its
            decode rate prices a million generated tokens on the GPU model it ran on (with
            train=..., its trained tokens per second a million trained tokens).
        catalog: None for the shipped (illustrative) catalog, or a CSV path.
        timeout: with a Hub id, seconds per HTTP request (None: 10).

    Returns:
        PackageFitReport: ``to_dict()`` equals ``iteragpu packages --model ... --format json``.
    """
    options = {"batch": batch, "context": context, "dtype": dtype, "warmup": warmup, "repeats": repeats,
               "timeout": timeout, **workload_options}
    request = MeasureRequest(device="", model=model, **{k: v for k, v in options.items() if v is not None})
    return _fit_packages(request, days, measurement, catalog)


def results_add(table, *, measurement, gpu, days, work_unit, attempted, accepted, metric,
                threshold, observed, lots=None, date=None, notes=None, catalog=None,
                gpu_mismatch_ok=False):
    """Appends one real run to a raw-results table (created when missing), validated, under
    a lock and atomically: concurrent adds from several processes lose nothing.

    Args:
        table: the results CSV file (str or os.PathLike).
        measurement, gpu, days, work_unit, attempted, accepted, metric, threshold,
        observed: required; see ``ResultsTable.add_result``.
        lots: lots rented (None: 1).
        date: "YYYY-MM-DD" or a datetime.date (None: today, UTC).
        notes: free notes (None: empty).
        catalog: None for the shipped (illustrative) catalog, a Catalog or a CSV path.
        gpu_mismatch_ok: record a measurement whose GPU is not a device the catalog lists
            for gpu (refused otherwise). A test-double measurement is always refused.

    Returns:
        ResultRow: the row added.
    """
    return ResultsTable.add_result(
        table, measurement=measurement, gpu=gpu, days=days, work_unit=work_unit,
        attempted=attempted, accepted=accepted, metric=metric, threshold=threshold,
        observed=observed, date=date, catalog=catalog, gpu_mismatch_ok=gpu_mismatch_ok,
        **_given(lots=lots, notes=notes))


def results_check(table, catalog=None):
    """Validates a raw-results table, measurement files and their SHA-256 included.

    Returns:
        ResultsTable: its rows, and ``gpu_mismatches`` for rows measured on another GPU than
        their package's; a malformed table, or a row whose measurement came from the test
        double, raises DataFileError ("file:line: reason").
    """
    return ResultsTable.load(table, catalog)


def results_report(table, sort="table", descending=False, catalog=None):
    """Package price and exact cost per accepted result for every row of a checked table.

    Args:
        table: the results CSV file (str or os.PathLike).
        sort: "table" (file order), "cost", "date" or "gpu".
        descending: reverse the order.
        catalog: None for the shipped (illustrative) catalog, a Catalog or a CSV path.

    Returns:
        ResultsReport: ``to_dict()`` equals ``iteragpu results report --format json``.
    """
    calculator = PackageCalculator(catalog)
    return _report_results(ResultsTable.load(table, calculator.catalog), calculator, sort, descending)


def compare(*measurements):
    """Measurements side by side, with every figure's ratio to the first's.

    Args:
        *measurements: two or more Measurement objects (from measure() or
            read_measurement()) and/or paths of files written by measure (str or PathLike).
            The first is the reference of the ratios.

    Returns:
        MeasurementComparison: ``findings`` (what differs from the first, and what follows),
        ``sections`` of rows (configuration, model, environment, peaks, times); str() is
        the CLI's text, ``to_markdown()``, ``to_csv()``, ``to_dict()``, and an HTML view in
        Jupyter.

    Raises:
        UsageError: fewer than two measurements.
        DataFileError: a path that is missing or not a whole measurement ("PATH: reason").
        TypeError: an argument that is neither a Measurement nor a path.
    """
    return _compare_measurements(list(measurements))


__all__ = [
    "AllocatorCounters",
    "BackendUnavailable",
    "Catalog",
    "CatalogEntry",
    "CheckpointDtypeTotal",
    "CheckpointEstimate",
    "CheckpointShard",
    "CheckpointTensor",
    "ComparisonRow",
    "ComparisonSection",
    "DataFileError",
    "DeviceUnavailable",
    "Environment",
    "EnvironmentReport",
    "Error",
    "GpuDevice",
    "Interrupted",
    "DeviceOutcome",
    "DeviceResultFigures",
    "MeasureConfiguration",
    "MeasureRequest",
    "Measurement",
    "MeasurementComparison",
    "HubUnreachable",
    "MeasurementFailed",
    "MeasurementSummary",
    "MemoryAmount",
    "MemoryEstimate",
    "MemoryEstimator",
    "MemoryPrediction",
    "OutOfMemory",
    "OutputExists",
    "PackageCalculator",
    "PackageFit",
    "PackageFitReport",
    "PhaseMeasurer",
    "PhasePrediction",
    "PhaseRow",
    "PredictionTarget",
    "Quote",
    "ResourceUnavailable",
    "ResultCost",
    "ResultRow",
    "ResultsReport",
    "ResultsTable",
    "SpreadStatistics",
    "StackReport",
    "SweepPoint",
    "SweepResult",
    "SyntheticModel",
    "TimingSummary",
    "TimingWarning",
    "UnitCost",
    "UsageError",
    "__version__",
    "build_description",
    "compare",
    "environment",
    "estimate",
    "measure",
    "packages",
    "predict",
    "quote",
    "read_measurement",
    "results_add",
    "results_check",
    "results_report",
    "sweep",
]


def _constructor_signatures():
    """inspect.signature(iteragpu.MeasureRequest) as for a Python class: CPython does not look
    past a pybind11 class's metaclass to its __init__, so each extension class that can be
    constructed gets its __init__'s signature, without self. A class only the library makes
    (no constructor: calling it raises TypeError) keeps none."""
    import inspect
    for name in __all__:
        klass = globals()[name]
        if not isinstance(klass, type) or klass.__module__ != _iteragpu_module_name:
            continue
        try:
            signature = inspect.signature(klass.__init__)
        except ValueError:
            continue
        parameters = list(signature.parameters.values())[1:]  # self
        if any(parameter.kind is parameter.VAR_POSITIONAL for parameter in parameters):
            continue  # pybind11's "no constructor defined", or overloads
        if klass is MeasureRequest:  # the workloads' own keywords, as they declare them
            parameters = [p for p in parameters if p.kind is not p.VAR_KEYWORD]
            parameters += [inspect.Parameter(keyword, inspect.Parameter.KEYWORD_ONLY, default=None)
                           for keyword in _iteragpu._workload_option_keywords()]
        klass.__signature__ = signature.replace(parameters=parameters)


_iteragpu_module_name = MeasureRequest.__module__
_constructor_signatures()
