"""`trajforge judge-check`: calibrate a judge against adversarial candidates before trusting its numbers."""

import json
from pathlib import Path

import typer
from rich.table import Table

from trajforge.pipelines.commands import EXIT_OK, EXIT_USAGE
from trajforge.pipelines.commands.judge_options import with_judge_options
from trajforge.pipelines.console import console, out, progress


@with_judge_options
def judge_check_command(
    corpus: Path = typer.Option(Path("data/corpus"), help="A build-corpus folder (its CPT shards)."),
    limit: int | None = typer.Option(None, min=1, help="Trajectories at most (default: all)."),
    seed: int = typer.Option(0, help="Seed for the adversaries' random choices."),
    pairs: Path | None = typer.Option(None, help="Write every (real, adversary) pair with its scores as JSONL here."),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Write the calibration table as JSON here, and as a chart beside it (the same name, .png).",
    ),
    judge_spec=None,
) -> None:
    """For the benchmark's sampled turns of every trajectory, pair the real observation with adversarial
    candidates (the previous observation copied; success for an error and an error for a success; numbers, ids
    or paths changed; lines dropped or shuffled; an empty answer; another trajectory's observation of the same
    kind; one fact altered; a verbose paraphrase with invented facts), judge both, and report per kind and overall
    how often the judge scores the real observation higher (pairwise accuracy), the adversaries' mean score and
    the share of them below the curation threshold (3.5)."""
    from trajforge.endpoints import EndpointError
    from trajforge.evaluation.calibration import calibrate_corpus

    try:
        track = lambda xs, total: progress(xs, "judge-check", total)  # noqa: E731
        result = calibrate_corpus(corpus, judge_spec, limit, seed, pairs, track)
    except (FileNotFoundError, EndpointError) as exc:  # no corpus; a judge that refuses every request
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    out.print(calibration_table(result))
    if output is not None:
        write_calibration(output, result.as_dict())
    raise typer.Exit(EXIT_OK)


def write_calibration(output: Path, calibration: dict) -> None:
    """The calibration table as JSON, and as a chart beside it (a bar per adversary kind and measure)."""
    from trajforge.pipelines.charts import chart_beside, save_chart
    from trajforge.pipelines.result_charts import calibration_chart

    output.write_text(json.dumps(calibration, indent=2))
    chart = save_chart(
        calibration_chart(calibration), chart_beside(output), f"judge calibration: {calibration['judge']}"
    )
    console.print(f"judge-check: {output}, chart {chart}")


def calibration_table(result) -> Table:
    from trajforge.evaluation.calibration import table_rows

    table = Table(title=f"judge calibration: {result.judge}, {result.turns} turns")
    for column in ("adversary", "pairs", "pairwise accuracy %", "adversary mean (1-5)", "adversary < 3.5 %"):
        table.add_column(column, justify="left" if column == "adversary" else "right")
    for row in table_rows(result):
        table.add_row(*row)
    return table
