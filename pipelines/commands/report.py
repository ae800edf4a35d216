"""`trajforge report`: an HTML page about a built corpus."""

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from trajforge.pipelines.commands import EXIT_OK, EXIT_USAGE, flags
from trajforge.pipelines.console import console
from trajforge.schemas import storage
from trajforge.schemas.names import MANIFEST_NAME
from trajforge.schemas.shards import ShardError

Corpus = Annotated[
    str,
    typer.Argument(
        help="A folder written by build-corpus, local or a URL (s3://bucket/corpus; S3 settings from the AWS "
        "environment, e.g. AWS_ENDPOINT_URL_S3)."
    ),
]
Runs = Annotated[
    list[Path],
    typer.Option("--runs", help="A `trajforge train` run folder that trained on this corpus: its curves (repeatable)."),
]


def report_command(
    corpus: Corpus = "data/corpus",
    output: flags.OptionalOutput = None,
    samples: flags.Samples = 3,
    runs: Runs = [],  # noqa: B006 - typer copies list defaults
    evaluation: flags.EvalReport = None,
) -> None:
    """Write one HTML page: counts per domain and category, a histogram per statistic, rejection reasons, and
    sample trajectories with in-loss and masked turns highlighted; with --runs, the training curves of those runs
    (loss and held-out loss, RL reward and format compliance) and, with --eval, the evaluation table as bars.

    --output: the HTML file, local or a URL (default: CORPUS/report.html). --eval goes with --runs."""
    from trajforge.pipelines.report import build_report
    from trajforge.pipelines.run_curves import RunMetricsError

    try:
        if not storage.exists(storage.join(corpus, MANIFEST_NAME)):
            console.print(Text(f"{corpus} has no {MANIFEST_NAME}: run build-corpus first", style="red"))
            raise typer.Exit(EXIT_USAGE)
        output = output or storage.join(corpus, "report.html")
        storage.write_text(output, build_report(corpus, samples, runs, evaluation))
    except (storage.StorageError, ShardError, RunMetricsError) as exc:
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    console.print(f"report: {output}")
    raise typer.Exit(EXIT_OK)
