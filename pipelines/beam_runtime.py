"""Pipeline options for every trajforge Beam job: an in-process runner by default, any runner on request.

Beam 2.77's DirectRunner first tries to download the Prism binary; here the default is the in-process
FnApiRunner, with one worker per core. Pass Beam's own flags after `--` to run the same job elsewhere, e.g.
`trajforge build-corpus ... -- --runner=FlinkRunner --flink_master=host:8081 --environment_type=LOOPBACK`
or `-- --runner=DataflowRunner --project=P --region=R --temp_location=gs://bucket/tmp`.
"""

import logging
import os

from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

# The in-process job service relays each worker's start-up warnings (a missing semi-persistent directory,
# which the local runner never has); a run's own errors still come through.
logging.getLogger("apache_beam.runners.portability.local_job_service").setLevel(logging.ERROR)


def pipeline_options(beam_args: list[str] | None = None, workers: int | None = None) -> PipelineOptions:
    beam_args = list(beam_args or [])
    options = PipelineOptions(beam_args)
    direct = options.view_as(DirectOptions)
    if not any(a.startswith("--direct_num_workers") for a in beam_args):
        direct.direct_num_workers = workers or min(4, os.cpu_count() or 1)
    if direct.direct_num_workers > 1 and not any(a.startswith("--direct_running_mode") for a in beam_args):
        direct.direct_running_mode = "multi_processing"
    if not any(a.startswith("--default_sdk_harness_log_level") for a in beam_args):
        # Worker processes log every channel they open at INFO: keep a run's output to what matters.
        options = PipelineOptions([*beam_args, "--default_sdk_harness_log_level=WARNING"])
        options.view_as(DirectOptions).direct_num_workers = direct.direct_num_workers
        options.view_as(DirectOptions).direct_running_mode = direct.direct_running_mode
    return options


def runner_for(options: PipelineOptions):
    """An explicit runner object for the default; a named runner (Flink, Spark, Dataflow) is left to Beam."""
    return FnApiRunner() if options.view_as(StandardOptions).runner is None else None
