"""Pipeline options for every trajforge Beam job: an in-process runner by default, any runner on request.

Beam 2.77's DirectRunner first tries to download the Prism binary; here the default is the in-process
FnApiRunner, with one worker per core. Beam's own flags come after `--` and are checked before the job starts
(an unknown flag, an unknown runner or an unreachable job service is one line and exit code 2, and so is a
job whose worker pool does not answer), e.g.
`trajforge build-corpus ... -- --runner=PortableRunner --job_endpoint=localhost:8099 --environment_type=EXTERNAL
--environment_config=localhost:50000` (how Flink and Spark job servers are driven) or
`-- --runner=DataflowRunner --project=P --region=R --temp_location=gs://bucket/tmp`.
"""

import difflib
import os
import sys

from apache_beam.options.pipeline_options import (
    DirectOptions,
    PipelineOptions,
    PortableOptions,
    StandardOptions,
    _BeamArgumentParser,
)
from apache_beam.runners.portability.fn_api_runner import FnApiRunner

from trajforge.pipelines.beam_worker import VERBOSE_ENV


class BeamOptionsError(ValueError):
    """A Beam flag that Beam does not know, a runner that does not exist, a job service that does not answer."""


def check_beam_args(beam_args: list[str]) -> None:
    """Every flag after `--` must be one of Beam's options (the closest is suggested), and the runner must exist."""
    parser = _BeamArgumentParser(allow_abbrev=False)
    for cls in {str(c): c for c in PipelineOptions.__subclasses__()}.values():
        cls._add_argparse_args(parser)  # noqa: SLF001 - how Beam itself collects its options
    _, unknown = parser.parse_known_args(beam_args)
    flags = [a for a in unknown if a.startswith("-")]
    if flags or unknown:
        flag = (flags or unknown)[0].split("=", 1)[0]
        known = [s for action in parser._actions for s in action.option_strings]  # noqa: SLF001
        close = difflib.get_close_matches(flag, known, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise BeamOptionsError(f"unknown Beam option {flag}{hint}")
    runner = PipelineOptions(beam_args).view_as(StandardOptions).runner
    if runner is not None:
        from apache_beam.runners.runner import create_runner

        try:
            create_runner(runner)
        except (ValueError, ImportError) as exc:
            raise BeamOptionsError(f"--runner={runner}: {str(exc).splitlines()[0]}") from exc


def check_job_endpoint(options: PipelineOptions, timeout: float = 5.0) -> None:
    """A portable runner's job service must answer before the job is built: one line if it does not. (A worker
    pool is not asked: its address is the job service's to resolve, on a cluster often a task manager's
    localhost; a pool that does not answer fails the job at its start, which run_pipeline names.)"""
    endpoint = options.view_as(PortableOptions).job_endpoint
    runner = options.view_as(StandardOptions).runner or ""
    if not endpoint or endpoint == "embed" or "Portable" not in runner:
        return
    import grpc

    channel = grpc.insecure_channel(endpoint)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError as exc:
        raise BeamOptionsError(f"no Beam job service answers at --job_endpoint={endpoint} ({timeout:.0f} s)") from exc
    finally:
        channel.close()


def check_object_stores(paths: list[str], timeout: float = 5.0) -> None:
    """Each s3:// bucket the job reads or writes must answer before the job starts (Beam's S3 client would retry
    an unreachable endpoint for minutes): one line naming the path if it does not. Asked with the job's
    settings, which this process's FileSystems has by then."""
    from trajforge.schemas.storage import StorageError, check_reachable

    try:
        check_reachable(paths, timeout)
    except StorageError as exc:
        raise BeamOptionsError(str(exc)) from exc


def pipeline_options(
    beam_args: list[str] | None = None, workers: int | None = None, verbose: bool = False, paths: tuple[str, ...] = ()
) -> PipelineOptions:
    """Checked options for a job that reads and writes `paths`: Beam flags, runner, job service, object stores."""
    beam_args = list(beam_args or [])
    check_beam_args(beam_args)
    if not any(a.startswith("--default_sdk_harness_log_level") for a in beam_args):
        # Worker processes log every channel they open at INFO: only with --verbose.
        beam_args.append(f"--default_sdk_harness_log_level={'INFO' if verbose else 'ERROR'}")
    os.environ[VERBOSE_ENV] = "1" if verbose else "0"  # read by the in-process runner's worker processes
    options = PipelineOptions(beam_args)
    direct = options.view_as(DirectOptions)
    if not any(a.startswith("--direct_num_workers") for a in beam_args):
        direct.direct_num_workers = workers or min(4, os.cpu_count() or 1)
    check_job_endpoint(options)
    from apache_beam.io.filesystems import FileSystems

    # The job's settings, for the launcher (it lists inputs and writes the manifest) and for its workers, which
    # the job's functions carry them to (pipelines/storage_settings.py).
    FileSystems.set_options(options)
    check_object_stores(list(paths))
    return options


def worker_pool_failure(options: PipelineOptions, error: str) -> str | None:
    """The line for a job that failed because the job service could not start a worker in the EXTERNAL
    environment's worker pool (stopped, or never started); None for any other failure."""
    portable = options.view_as(PortableOptions)
    if (portable.environment_type or "").upper() != "EXTERNAL" or "StartWorker" not in error:
        return None
    if "UNAVAILABLE" not in error and "DEADLINE_EXCEEDED" not in error:
        return None
    return f"no Beam worker pool answers at --environment_config={portable.environment_config}"


def runner_for(options: PipelineOptions):
    """An explicit runner object for the default; a named runner (Flink, Spark, Dataflow) is left to Beam.

    With more than one worker, the in-process runner starts worker processes (Beam's own SDK worker, through
    pipelines.beam_worker so that they are quiet) and hands them the job's options, as a cluster's job service
    would: without them a worker would not know, say, the object store's endpoint."""
    if options.view_as(StandardOptions).runner is not None:
        return None
    direct = options.view_as(DirectOptions)
    if direct.direct_num_workers == 1 or direct.direct_running_mode != "in_memory":
        return FnApiRunner()
    from apache_beam.portability.api import beam_provision_api_pb2
    from apache_beam.runners.job.utils import dict_to_struct
    from apache_beam.runners.portability.fn_api_runner.fn_runner import ExtendedProvisionInfo
    from apache_beam.transforms.environments import SubprocessSDKEnvironment

    worker = SubprocessSDKEnvironment.from_command_string(f"{sys.executable} -m trajforge.pipelines.beam_worker")
    provision = beam_provision_api_pb2.ProvisionInfo(
        retrieval_token="unused-retrieval-token",
        # A protobuf Struct turns ints into floats ("2.0"), which the worker's own parser rejects: they stay out.
        pipeline_options=dict_to_struct(
            {k: v for k, v in options.get_all_options(drop_default=True).items() if isinstance(v, str | bool | list)}
        ),
    )
    return FnApiRunner(default_environment=worker, provision_info=ExtendedProvisionInfo(provision))
