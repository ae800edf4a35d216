"""The tables of `eval` and `judge-check` as charts: a bar per model and dimension (0-100), and a bar per adversary
kind and measure. Both read the JSON the commands write, so a chart can be drawn again from the file alone."""

from collections.abc import Sequence

from matplotlib.figure import Figure

from trajforge.evaluation.scores import DIMENSIONS
from trajforge.pipelines.charts import bar_chart, draw_bars

EVAL_CATEGORIES = (*DIMENSIONS, "overall", "format compliance %", "verifier accuracy %")


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def evaluation_series(reports: Sequence[dict]) -> dict[str, list[float | None]]:
    """Model (with its held-out loss where it has one) -> its pooled scores on EVAL_CATEGORIES."""
    series = {}
    for report in reports:
        loss = report.get("heldout_loss")
        name = report["model"] + (f" (held-out loss {loss:.3f})" if loss is not None else "")
        pooled = report.get("pooled") or {}
        scores = [pooled.get(key) for key in (*DIMENSIONS, "overall")]
        series[name] = [*scores, _percent(report.get("format_compliance")), _percent(report.get("verifier_accuracy"))]
    return series


def evaluation_title(reports: Sequence[dict]) -> str:
    """The judge of the reports, with its note where it has one (the embedded judge says it is not comparable), and
    how the run sampled where its reports record it."""
    from trajforge.evaluation.run import describe_sampling

    judges = sorted({r.get("judge", "?") + (f" ({r['note']})" if r.get("note") else "") for r in reports})
    title = f"world-model evaluation on held-out tasks (0-100), judge: {', '.join(judges)}"
    sampling = next((r["sampling"] for r in reports if r.get("sampling")), None)  # a report of an older run: none
    return f"{title}\n{describe_sampling(sampling)}" if sampling else title


def draw_evaluation(axes, reports: Sequence[dict]) -> None:
    draw_bars(axes, EVAL_CATEGORIES, evaluation_series(reports), "score (0-100)")
    axes.set_ylim(0, 112)  # room for the labels over a bar at 100
    axes.set_title(evaluation_title(reports), fontsize=10)


def evaluation_chart(reports: Sequence[dict]) -> Figure:
    """eval's table (the JSON of `eval --report`) as a chart."""
    figure = bar_chart(evaluation_title(reports), EVAL_CATEGORIES, evaluation_series(reports), "score (0-100)")
    figure.axes[0].set_ylim(0, 112)  # room for the labels over a bar at 100
    return figure


def calibration_chart(calibration: dict) -> Figure:
    """judge-check's table (the JSON of `judge-check --report`): per adversary kind and overall, how often the judge
    scored the real observation higher, and the share of adversaries below the curation threshold."""
    kinds = {**calibration["kinds"], "overall": calibration["overall"]}
    accuracy = [_percent(k["accuracy"]) if k["pairs"] else None for k in kinds.values()]
    below = [100 * k["below_threshold"] / k["pairs"] if k["pairs"] else None for k in kinds.values()]
    title = f"judge calibration: {calibration['judge']}, {calibration['turns']} turns"
    series = {"pairwise accuracy %": accuracy, "adversary < 3.5 %": below}
    figure = bar_chart(title, list(kinds), series, "% of pairs")
    figure.axes[0].set_ylim(0, 112)
    return figure
