"""Experiments: designs over scenario parameters × replications (common random numbers), swappable
executors (serial, local processes, Dask), an incremental result store and the runner."""

from speedtrap.experiments.design import check_points, design_points, scenario_for, unit_samples
from speedtrap.experiments.executors import (
    EXECUTOR_KINDS,
    DaskExecutor,
    Executor,
    ProcessExecutor,
    SerialExecutor,
    make_executor,
)
from speedtrap.experiments.runner import (
    Model,
    RunTask,
    SweepInterrupted,
    evaluate,
    execute,
    experiment_identity,
    results_table,
    run_experiment,
    run_task,
)
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.experiments.sensitivity import (
    SensitivityResult,
    productivity_gap,
    run_morris,
    run_sobol,
)
from speedtrap.experiments.store import ResultStore, StoreError, StoreLockedError, StoreMismatchError

__all__ = [
    "EXECUTOR_KINDS",
    "DaskExecutor",
    "Executor",
    "Model",
    "ProcessExecutor",
    "ResultStore",
    "RunTask",
    "SensitivityResult",
    "SerialExecutor",
    "StoreError",
    "StoreLockedError",
    "StoreMismatchError",
    "SweepInterrupted",
    "check_points",
    "design_points",
    "evaluate",
    "execute",
    "experiment_identity",
    "make_executor",
    "productivity_gap",
    "replication_seeds",
    "results_table",
    "run_experiment",
    "run_morris",
    "run_sobol",
    "run_task",
    "scenario_for",
    "unit_samples",
]
