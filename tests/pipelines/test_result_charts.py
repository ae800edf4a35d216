"""eval's and judge-check's tables as charts: the bars are the table's numbers."""

from trajforge.evaluation.scores import DIMENSIONS
from trajforge.pipelines.result_charts import EVAL_CATEGORIES, calibration_chart, evaluation_chart, evaluation_series


def report(model: str, overall: float, loss: float | None) -> dict:
    pooled = {**{d: 10.0 * (i + 1) for i, d in enumerate(DIMENSIONS)}, "overall": overall}
    return {"model": model, "judge": "embedded", "pooled": pooled, "format_compliance": 0.5,
            "verifier_accuracy": None, "heldout_loss": loss, "note": "embedded judge, not comparable"}  # fmt: skip


def bar_heights(figure) -> list[float]:
    return [p.get_height() for p in figure.axes[0].patches]


def test_a_bar_per_model_and_dimension_with_the_held_out_loss_in_the_legend():
    reports = [report("untrained", 12.0, 8.25), report("cpt/checkpoint-4", 30.0, None)]
    series = evaluation_series(reports)
    assert list(series) == ["untrained (held-out loss 8.250)", "cpt/checkpoint-4"]
    assert series["cpt/checkpoint-4"] == [10.0, 20.0, 30.0, 40.0, 50.0, 30.0, 50.0, None]
    figure = evaluation_chart(reports)
    assert len(bar_heights(figure)) == 2 * (len(EVAL_CATEGORIES) - 1)  # no bar where the verifier never ran
    assert figure.axes[0].get_title().endswith("judge: embedded (embedded judge, not comparable)")


def test_the_calibration_chart_shows_accuracy_and_share_below_threshold_per_kind():
    row = {"pairs": 4, "correct": 3, "below_threshold": 1, "adversary_mean": 2.0, "failed": 0, "accuracy": 0.75}
    empty = {"pairs": 0, "correct": 0, "below_threshold": 0, "adversary_mean": 0.0, "failed": 0, "accuracy": None}
    calibration = {"judge": "embedded", "turns": 2, "kinds": {"empty": row, "shuffled": empty}, "overall": row}
    figure = calibration_chart(calibration)
    assert bar_heights(figure) == [75.0, 75.0, 25.0, 25.0]  # accuracy: empty, overall; below 3.5: empty, overall
    assert [t.get_text() for t in figure.axes[0].get_xticklabels()] == ["empty", "shuffled", "overall"]
    assert figure.axes[0].get_title() == "judge calibration: embedded, 2 turns"


def test_the_eval_chart_states_how_the_run_sampled_where_its_reports_record_it():
    from trajforge.evaluation.run import EvalConfig, describe_sampling

    sampling = EvalConfig(max_tokens=160).sampling_record()
    figure = evaluation_chart([{**report("sft", 30.0, None), "sampling": sampling}])
    title = figure.axes[0].get_title()
    assert title.endswith("\n" + describe_sampling(sampling)) and "temperature 0.6" in title
    assert "sampled" not in evaluation_chart([report("sft", 30.0, None)]).axes[0].get_title()  # an older report
