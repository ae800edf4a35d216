"""`trajforge report`: an HTML page about a built corpus."""

from pathlib import Path

import typer

from pipelines.commands import EXIT_OK, EXIT_USAGE
from pipelines.console import console
from schemas.atomic import atomic_write
from schemas.manifest import MANIFEST_NAME


def report_command(
    corpus: Path = typer.Argument(Path("data/corpus"), help="A folder written by build-corpus."),
    output: Path | None = typer.Option(None, "--output", "-o", help="HTML file (default: CORPUS/report.html)."),
    samples: int = typer.Option(3, min=0, help="Sample trajectories to show."),
) -> None:
    """Write one HTML page: counts per domain and category, a histogram per statistic, rejection reasons, and
    sample trajectories with in-loss and masked turns highlighted."""
    from pipelines.report import build_report

    if not (corpus / MANIFEST_NAME).exists():
        console.print(f"[red]{corpus} has no {MANIFEST_NAME}: run build-corpus first[/]")
        raise typer.Exit(EXIT_USAGE)
    output = output or corpus / "report.html"
    with atomic_write(output, "w") as f:
        f.write(build_report(corpus, samples))
    console.print(f"report: {output}")
    raise typer.Exit(EXIT_OK)
