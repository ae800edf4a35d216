"""What the three Beam commands (build-corpus, curate-sft, prepare-rl) share on the command line: only the
arguments after `--` reach Beam, anything else trajforge does not know is a usage error (click names the flag
and suggests the closest), and the ways a job fails to start are one line and exit code 2."""

import contextlib
from collections.abc import Iterator

import click
import typer
from rich.text import Text
from typer.core import TyperCommand

from trajforge.pipelines.commands import EXIT_USAGE
from trajforge.pipelines.console import console

BEAM_ARGS = "beam_args"


class BeamCommand(TyperCommand):
    """`trajforge JOB [OPTIONS] [-- BEAM OPTIONS]`: the part after `--` is kept for Beam, the rest parsed strictly."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            cut = args.index("--")
            args, ctx.meta[BEAM_ARGS] = args[:cut], args[cut + 1 :]
        else:
            ctx.meta[BEAM_ARGS] = []
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] [-- BEAM OPTIONS]")


def beam_args(ctx: typer.Context) -> list[str]:
    return list(ctx.meta.get(BEAM_ARGS, []))


def _not_a_job_message(record) -> bool:
    # The portable runner relays the job service's messages (a failed job's whole traceback among them) from
    # this thread, through the root logger; the failure itself comes back as an exception.
    return record.threadName != "wait_until_finish_read"


def quiet_logging(verbose: bool) -> None:
    """What the launcher logs from Beam (job states, channels, "apitools not found", the job service's messages)
    is noise unless asked for; a job's own errors still come through as exceptions. Called before Beam is
    imported."""
    import logging

    level = logging.INFO if verbose else logging.ERROR
    root = logging.getLogger()
    root.setLevel(level)
    logging.getLogger("apache_beam").setLevel(level)
    if verbose:
        root.removeFilter(_not_a_job_message)
    else:
        root.addFilter(_not_a_job_message)


@contextlib.contextmanager
def job_errors(verbose: bool) -> Iterator[None]:
    """Around a Beam job, from importing its pipeline to its end: Beam's logging quieted first (unless verbose);
    bad Beam options, an unreachable job service or object store, missing input, a failed job: one red line
    and exit code 2 (the whole traceback with --verbose)."""
    quiet_logging(verbose)
    from trajforge.pipelines.beam_runtime import BeamOptionsError
    from trajforge.pipelines.job import JobError
    from trajforge.schemas.shards import ShardError
    from trajforge.schemas.storage import StorageError

    try:
        yield
    except (BeamOptionsError, JobError, StorageError, ShardError, FileNotFoundError, ValueError) as exc:
        if verbose:
            console.print_exception()
        console.print(Text(str(exc), style="red"), soft_wrap=True)  # Text: brackets in paths are not markup
        raise typer.Exit(EXIT_USAGE) from exc
