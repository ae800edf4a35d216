"""The demo's closing table and its reading: each stage's intended effect, checked from real report values."""

from rich.console import Console

from trajforge.evaluation.benchmark import Report
from trajforge.evaluation.stage_effects import reading, stage_table


def report(model: str, loss: float | None, compliance: float, overall: list[float]) -> Report:
    mean = sum(overall) / len(overall)
    pooled = {d: mean for d in ("format", "factuality", "consistency", "realism", "quality", "overall")}
    return Report(model, "embedded", False, {}, pooled, pooled, len(overall), len(overall), {}, compliance, 0.5,
                  heldout_loss=loss, line_overall=overall)  # fmt: skip


def test_reading_says_whether_each_effect_shows():
    trend = {"reward_first": 4.0, "reward_last": 10.0, "trend_steps": 1}  # the RL run's, as reward_trend reads it
    stages = ["untrained", "cpt", "cpt --no-mask", "sft", "rl"]
    reports = [
        report("untrained", 8.0, 0.0, [1, 2, 3]),
        report("cpt", 3.0, 0.0, [20, 22, 24]),
        report("nomask", 3.2, 0.0, [19, 21, 23]),
        report("sft", 3.4, 0.95, [30, 40, 50]),
        report("rl", 3.5, 1.0, [29, 39, 49]),
    ]
    lines = reading(reports, stages, trend)
    assert "CPT lowered the held-out loss on observation tokens: 8.000 untrained -> 3.000." in lines
    assert any(line.startswith("Masking ablation") and "3.200" in line for line in lines)
    assert "format compliance 0% after CPT -> 95% (meets the 90% target)" in " ".join(lines)
    assert "RL: the mean reward on its prompts rose, 4.00 over the first 1 steps -> 10.00 over the last 1." in lines
    assert any("below SFT but within noise" in line for line in lines)
    reports[3] = report("sft", 3.4, 0.5, [80, 81, 82])
    lines = reading(reports, stages, trend)
    assert any("does NOT meet" in line for line in lines) and any("BELOW SFT beyond noise" in line for line in lines)


def test_table_has_a_row_per_model(tmp_path):
    reports = [report("untrained", 8.0, 0.0, [1.0]), report("sft", None, 1.0, [50.0])]
    console = Console(width=200, record=True)
    console.print(stage_table(reports, ["untrained", "sft"], "embedded"))
    text = console.export_text()
    assert "judge: embedded" in text and "8.000" in text and "100.0" in text
    assert text.index("untrained") < text.index("sft")
