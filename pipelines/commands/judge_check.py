"""`trajforge judge-check`: calibrate a judge against adversarial candidates before trusting its numbers."""

import json
from pathlib import Path

import typer
from rich.table import Table

from pipelines.commands import EXIT_OK, EXIT_USAGE
from pipelines.commands.judge_options import with_judge_options
from pipelines.console import console, out, progress


@with_judge_options
def judge_check_command(
    corpus: Path = typer.Option(Path("data/corpus"), help="A build-corpus folder (its CPT shards)."),
    limit: int | None = typer.Option(None, min=1, help="Trajectories at most (default: all)."),
    seed: int = typer.Option(0, help="Seed for the adversaries' random choices."),
    pairs: Path | None = typer.Option(None, help="Write every (real, adversary) pair with its scores as JSONL here."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the calibration table as JSON here."),
    judge_spec=None,
) -> None:
    """For the benchmark's sampled turns of every trajectory, pair the real observation with adversarial
    candidates (the previous observation copied; success for an error and an error for a success; numbers, ids
    or paths changed; lines dropped or shuffled; an empty answer; another trajectory's observation of the same
    kind; one fact altered; a verbose paraphrase with invented facts), judge both, and report per kind and overall
    how often the judge scores the real observation higher (pairwise accuracy), the adversaries' mean score and
    the share of them below the curation threshold (3.5)."""
    from evaluation.calibration import calibrate, corpus_turns, table_rows
    from training.data import load_cpt
    from training.render import action_text

    try:
        rows = load_cpt(corpus)
    except FileNotFoundError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    rows = rows.select(range(min(limit, len(rows)))) if limit else rows
    turns = corpus_turns(rows, action_text)
    judge = judge_spec.build()
    sink = open(pairs, "w") if pairs is not None else None  # noqa: SIM115 - closed below
    try:
        result = calibrate(turns, judge, seed, sink, lambda xs: progress(xs, "judge-check", len(turns)))
    finally:
        if sink is not None:
            sink.close()
    table = Table(title=f"judge calibration: {result.judge}, {result.turns} turns")
    for column in ("adversary", "pairs", "pairwise accuracy %", "adversary mean (1-5)", "adversary < 3.5 %"):
        table.add_column(column, justify="left" if column == "adversary" else "right")
    for row in table_rows(result):
        table.add_row(*row)
    out.print(table)
    if output is not None:
        output.write_text(json.dumps(result.as_dict(), indent=2))
    raise typer.Exit(EXIT_OK)
