"""`trajforge judge-check`: calibrate a judge against adversarial candidates before trusting its numbers."""

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from trajforge.pipelines.commands import EXIT_OK, EXIT_USAGE, flags
from trajforge.pipelines.commands.judge_options import JUDGE_DEFAULTS, KEY_ENV, judge_of
from trajforge.pipelines.console import console, out, progress

Pairs = Annotated[Path | None, typer.Option(help="Write every (real, adversary) pair with its scores as JSONL here.")]


def judge_check_command(
    corpus: flags.Corpus = "data/corpus",
    limit: flags.Limit = None,
    seed: flags.Seed = 0,
    pairs: Pairs = None,
    report: flags.OptionalReport = None,
    judge: flags.Judge = JUDGE_DEFAULTS.kind,
    judge_url: flags.JudgeUrl = None,
    judge_model: flags.JudgeModel = None,
    judge_key_env: flags.JudgeKeyEnv = KEY_ENV,
    rubrics: flags.Rubrics = None,
    judge_timeout: flags.JudgeTimeout = JUDGE_DEFAULTS.timeout,
) -> None:
    """For the benchmark's sampled turns of every trajectory, pair the real observation with adversarial
    candidates (the previous observation copied; success for an error and an error for a success; numbers, ids
    or paths changed; lines dropped or shuffled; an empty answer; another trajectory's observation of the same
    kind; one fact altered; a verbose paraphrase with invented facts), judge both, and report per kind and overall
    how often the judge scores the real observation higher (pairwise accuracy), the adversaries' mean score and
    the share of them below the curation threshold (3.5).

    --corpus: a local build-corpus folder (its CPT shards); --limit: trajectories at most; --seed: the adversaries'
    random choices; --report: the calibration table, drawn beside it too (the same name, .png)."""
    judge_spec = judge_of(locals())
    from trajforge.endpoints import EndpointError
    from trajforge.evaluation.calibration import calibrate_corpus

    try:
        track = lambda xs, total: progress(xs, "judge-check", total)  # noqa: E731
        result = calibrate_corpus(Path(corpus), judge_spec, limit, seed, pairs, track)
    except (FileNotFoundError, EndpointError) as exc:  # no corpus; a judge that refuses every request
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    out.print(calibration_table(result))
    if report is not None:
        write_calibration(report, result.as_dict())
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
