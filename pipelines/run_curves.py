"""Training curves from run folders' metrics.jsonl (training/metrics_log.py), several runs on one chart: loss and
held-out loss of CPT, SFT and agent-SFT runs (masked vs --no-mask side by side), RL's mean reward, format compliance
and degenerate groups per step, agent RL's success and degenerate groups; with an eval JSON, its table as bars."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from trajforge.pipelines.charts import check_chart_path, color, save_chart
from trajforge.pipelines.result_charts import draw_evaluation
from trajforge.training.metrics_log import METRICS_NAME

SMOOTH_FROM = 30  # points: a longer loss curve is drawn faint, with its moving average on top


class RunMetricsError(ValueError):
    """A folder that holds no metrics to plot; the message names the file."""


@dataclass(frozen=True)
class Run:
    label: str
    folder: Path
    lines: list[dict]

    @property
    def kind(self) -> str:
        """agent-rl, rl, or lm (CPT, SFT, agent SFT), by the numbers its stage logs."""
        keys = set().union(*self.lines)
        return "agent-rl" if "success" in keys else "rl" if "reward" in keys else "lm"

    def series(self, key: str) -> tuple[list[int], list[float]]:
        points = [(line["step"], line[key]) for line in self.lines if isinstance(line.get(key), int | float)]
        return [s for s, _ in points], [float(v) for _, v in points]


@dataclass(frozen=True)
class Panel:
    title: str
    ylabel: str
    kind: str
    curves: tuple[tuple[str, str], ...]  # (metrics key, legend name): the first drawn solid, the next dashed
    share: bool = False  # values are shares, shown as %


PANELS = (
    Panel("loss per in-loss token (held-out: dashed)", "loss", "lm", (("loss", "loss"), ("eval_loss", "held-out"))),
    Panel("RL: mean reward per step (of 25)", "reward", "rl", (("reward", "reward"),)),
    Panel(
        "RL: format compliance and degenerate groups (dashed)",
        "share of the step",
        "rl",
        (("format_compliance", "format"), ("degenerate_groups", "degenerate")),
        share=True,
    ),
    Panel(
        "agent RL: success and degenerate groups (dashed)",
        "share of the step",
        "agent-rl",
        (("success", "success"), ("degenerate_groups", "degenerate")),
        share=True,
    ),
)


def run_folder(path: Path) -> Path:
    """A run folder, or a checkpoint folder inside one (its run's metrics are plotted)."""
    path = Path(path)
    if path.name.startswith("checkpoint-") and not (path / METRICS_NAME).exists():
        return path.parent
    return path


def read_run_lines(folder: Path) -> list[dict]:
    path = folder / METRICS_NAME
    if not path.is_file():
        raise RunMetricsError(f"{path}: no such file: {folder} is not a `trajforge train` run folder with metrics")
    lines = []
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RunMetricsError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(line, dict) or not isinstance(line.get("step"), int):
            raise RunMetricsError(f"{path}:{number}: a metrics line is a JSON object with an integer step")
        lines.append(line)
    if not lines:
        raise RunMetricsError(f"{path}: empty: the run has not logged a step yet")
    return lines


def load_runs(paths: Sequence[Path]) -> list[Run]:
    """The runs, each labelled by its folder's name (with its parent's where two names are the same)."""
    folders = [run_folder(p) for p in paths]
    names = [f.name for f in folders]
    labels = [f"{f.parent.name}/{f.name}" if names.count(f.name) > 1 else f.name for f in folders]
    return [Run(label, folder, read_run_lines(folder)) for label, folder in zip(labels, folders, strict=True)]


def smoothed(values: list[float], window: int) -> list[float]:
    """The trailing moving average over `window` points."""
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def draw_panel(axes, panel: Panel, runs: Sequence[Run]) -> None:
    for i, run in enumerate(runs):
        if run.kind != panel.kind:
            continue
        for j, (key, name) in enumerate(panel.curves):
            steps, values = run.series(key)
            if not steps:
                continue
            style = {"color": color(i), "label": f"{run.label} {name}"}
            if j:
                axes.plot(steps, values, linestyle="--", marker="o", markersize=4, **style)
            elif len(values) >= SMOOTH_FROM:
                axes.plot(steps, values, color=color(i), alpha=0.25, linewidth=0.8)
                axes.plot(steps, smoothed(values, max(5, len(values) // 20)), linewidth=1.6, **style)
            else:
                axes.plot(steps, values, linewidth=1.6, marker="." if len(values) < 10 else None, **style)
    axes.set_title(panel.title, fontsize=10)
    axes.set_xlabel("step")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
    axes.set_ylabel(panel.ylabel)
    if panel.share:
        axes.set_ylim(-0.03, 1.03)
        axes.yaxis.set_major_formatter(PercentFormatter(1.0))
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)


def curves_figure(runs: Sequence[Run], evaluation: Sequence[dict] | None = None) -> Figure:
    """A panel per kind of curve the runs have (in one row, or two columns from four panels on), and the eval
    table's bars across the foot."""
    panels = [p for p in PANELS if any(r.kind == p.kind for r in runs)]
    columns = max(1 if not evaluation else 2, len(panels) if len(panels) <= 3 else 2)
    rows = -(-len(panels) // columns) + (1 if evaluation else 0)
    width = 6.5 if columns <= 2 else 5.2  # inches per column
    figure = Figure(figsize=(max(width * columns, 13 if evaluation else 0), 3.9 * rows), layout="constrained")
    grid = figure.add_gridspec(rows, columns)
    for n, panel in enumerate(panels):
        draw_panel(figure.add_subplot(grid[n // columns, n % columns]), panel, runs)
    if evaluation:
        draw_evaluation(figure.add_subplot(grid[rows - 1, :]), evaluation)
    figure.suptitle("trajforge training runs: " + ", ".join(r.label for r in runs), fontsize=12)
    return figure


LAST = ("loss", "eval_loss", "reward", "format_compliance", "success")


def run_table(runs: Sequence[Run]) -> tuple[list[str], list[list]]:
    """A row per run for the HTML page: its folder, kind, steps and last numbers (the last held-out loss logged)."""
    headers = ["run", "folder", "kind", "last step", *(f"last {key}" for key in LAST)]
    rows = []
    for run in runs:
        last = [run.series(key)[1][-1:] for key in LAST]
        numbers = [f"{values[0]:.4g}" if values else "-" for values in last]
        rows.append([run.label, str(run.folder), run.kind, run.lines[-1]["step"], *numbers])
    return headers, rows


def read_evaluation(path: Path) -> list[dict]:
    """The reports of an `eval --report` JSON file."""
    try:
        reports = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise RunMetricsError(f"{path}: not an eval JSON file ({exc})") from exc
    if not isinstance(reports, list) or not all(isinstance(r, dict) and "model" in r for r in reports):
        raise RunMetricsError(f"{path}: not an eval JSON file (a list of reports, each with its model)")
    return reports


def plot_runs(paths: Sequence[Path], output: Path, evaluation: Path | None = None) -> tuple[Path, list[Run]]:
    """Draw the runs' curves (and the eval table, when given its JSON) into `output` (.png, .svg or .html)."""
    check_chart_path(output)
    runs = load_runs(paths)
    reports = read_evaluation(evaluation) if evaluation is not None else None
    figure = curves_figure(runs, reports)
    return save_chart(figure, output, "trajforge training runs", run_table(runs)), runs
