"""The launcher's object-store settings (`--s3_endpoint_url`, regions, credentials flags...) travel inside the job
itself, so that no stage has to remember them.

Beam hands a job's options to the workers it starts itself (the in-process runner's, a Beam SDK container's),
but a worker pool started as `python -m apache_beam.runners.worker.worker_pool_main` starts its workers with
none, and Beam's FileSystems is process-wide state: there a URL would reach the wrong store, or none. So before
a job runs, every DoFn and CombineFn of its graph is given the settings as an attribute, which the worker
unpickles with the function, before the function's own code runs: unpickling applies them to that worker's
FileSystems (schemas.storage.use_options), unless Beam already gave it the job's options."""

import apache_beam as beam
from apache_beam.pipeline import PipelineVisitor

from trajforge.schemas import storage

ATTRIBUTE = "_trajforge_storage_settings"


class StorageSettings:
    """Filesystem options as a plain dict; unpickling one applies them to the process that unpickles it."""

    def __init__(self, options: dict):
        self.options = options

    def __reduce__(self):
        return _applied, (self.options,)


def _applied(options: dict) -> StorageSettings:
    storage.use_options(options)
    return StorageSettings(options)


class _Attach(PipelineVisitor):
    def __init__(self, settings: StorageSettings):
        self.settings = settings

    def _attach(self, applied) -> None:
        fn = getattr(applied.transform, "fn", None)
        if isinstance(fn, beam.DoFn | beam.CombineFn):
            try:
                setattr(fn, ATTRIBUTE, self.settings)
            except AttributeError:  # a function with __slots__: the stage's other functions carry them
                pass

    def enter_composite_transform(self, applied) -> None:  # CombinePerKey's CombineFn, which runners lift
        self._attach(applied)

    def visit_transform(self, applied) -> None:
        self._attach(applied)


def carry_storage_settings(pipeline: beam.Pipeline) -> None:
    """Every function of PIPELINE carries this process's filesystem options to whichever worker runs it."""
    pipeline.visit(_Attach(StorageSettings(storage.current_options())))
