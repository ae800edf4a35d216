"""The launcher's object-store settings reach every worker inside the job's own functions: a stage written with
no thought for them reads and writes s3:// objects on a worker pool's workers, which Beam starts without the
job's options (moto's S3 server on 127.0.0.1; Beam's job service and worker pool as separate processes)."""

import apache_beam as beam
import pytest
from apache_beam.internal import pickler
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, S3Options

from tests.pipelines.test_job import BUCKET, portable, s3  # noqa: F401 - the job service, pool and moto fixtures
from trajforge.pipelines.beam_runtime import pipeline_options
from trajforge.pipelines.job import run_pipeline
from trajforge.pipelines.storage_settings import carry_storage_settings
from trajforge.schemas import storage


class _Shout(beam.DoFn):
    """A new stage that knows nothing of storage settings: an s3:// object copied to another, upper-cased."""

    def process(self, paths: tuple[str, str]):
        source, target = paths
        storage.write_text(target, storage.read_text(source).upper())
        yield target


def _endpoint() -> str | None:
    return FileSystems._pipeline_options.view_as(S3Options).s3_endpoint_url


def _pickled_functions(endpoint: str) -> list[bytes]:
    """The functions of a small job as a launcher whose store is ENDPOINT sends them to its workers."""
    p = beam.Pipeline(options=PipelineOptions([f"--s3_endpoint_url={endpoint}"]))  # also the launcher's FileSystems'
    _ = p | beam.Create([("a", "b")]) | beam.ParDo(_Shout()) | beam.combiners.Count.Globally()
    carry_storage_settings(p)
    functions = []

    class Collect(beam.pipeline.PipelineVisitor):
        def visit_transform(self, applied):
            if isinstance(getattr(applied.transform, "fn", None), beam.DoFn):
                functions.append(pickler.dumps(applied.transform.fn))

    p.visit(Collect())
    return functions


def test_a_worker_started_without_options_takes_the_jobs_from_the_first_function_it_unpickles(monkeypatch):
    monkeypatch.setattr(FileSystems, "_pipeline_options", FileSystems._pipeline_options)  # restored afterwards
    functions = _pickled_functions("http://127.0.0.1:9")
    assert len(functions) > 2
    for function in functions:  # whichever stage a worker runs first
        FileSystems._pipeline_options = None  # a worker pool's worker: Beam gave it no options
        pickler.loads(function)
        assert _endpoint() == "http://127.0.0.1:9"


def test_a_process_that_beam_gave_options_keeps_them(monkeypatch):
    monkeypatch.setattr(FileSystems, "_pipeline_options", FileSystems._pipeline_options)
    (function, *_) = _pickled_functions("http://127.0.0.1:9")
    FileSystems.set_options(PipelineOptions(["--s3_endpoint_url=http://127.0.0.1:8"]))  # as sdk_worker_main does
    pickler.loads(function)
    assert _endpoint() == "http://127.0.0.1:8"


@pytest.mark.slow
def test_a_new_stage_reads_and_writes_s3_on_pool_workers(s3, portable, tmp_path):  # noqa: F811
    client, flags = s3
    client.put_object(Bucket=BUCKET, Key="settings/in.txt", Body=b"carried to the worker")
    source, target = f"s3://{BUCKET}/settings/in.txt", f"s3://{BUCKET}/settings/out.txt"
    options = pipeline_options([*portable, *flags], paths=(source,))

    def build(p: beam.Pipeline) -> None:
        _ = p | beam.Create([(source, target)]) | beam.ParDo(_Shout())

    run_pipeline("probe", options, str(tmp_path), 1, build)
    assert client.get_object(Bucket=BUCKET, Key="settings/out.txt")["Body"].read() == b"CARRIED TO THE WORKER"
