"""`trajforge plot`: training runs' curves (and an eval table) as one picture. The drawing is
pipelines/run_curves.py's; this parses the flags and prints where the picture went."""

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from trajforge.pipelines.commands import EXIT_OK, EXIT_USAGE, flags
from trajforge.pipelines.console import console

Runs = Annotated[
    list[Path],
    typer.Argument(help="Run folders of `trajforge train` (or a checkpoint folder inside one): their metrics.jsonl."),
]


def plot_command(runs: Runs, output: flags.OptionalOutput = None, evaluation: flags.EvalReport = None) -> None:
    """Draw the runs' curves on one chart, a panel per kind: loss and held-out loss (dashed) of CPT, SFT and agent
    SFT runs (e.g. masked vs --no-mask), RL's mean reward, format compliance and degenerate groups per step, agent
    RL's success and degenerate groups. A loss curve of 30 steps or more is drawn faint with its moving average.

    --output: the picture, a file: .png, .svg, or .html (one self-contained page, the chart inline as SVG, with a
    row per run). Default: curves.png beside the first run folder."""
    from trajforge.pipelines.run_curves import plot_runs

    output = Path(output) if output else Path(runs[0]).parent / "curves.png"
    try:
        written, plotted = plot_runs(runs, output, evaluation)
    except ValueError as exc:  # a folder without metrics, a bad eval file, an output of an unknown kind
        console.print(Text(str(exc), style="red"), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from exc
    console.print(f"plot: {len(plotted)} run(s) ({', '.join(r.label for r in plotted)}) -> {written}")
    raise typer.Exit(EXIT_OK)
