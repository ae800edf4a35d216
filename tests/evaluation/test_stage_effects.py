"""The demo's closing table and its reading: each stage's intended effect, checked from real report values, and
each stage against the one before by the paired difference over the same turns."""

import random

from rich.console import Console

from trajforge.evaluation.benchmark import Report
from trajforge.evaluation.paired_rows import row_comparisons
from trajforge.evaluation.stage_effects import reading, stage_table

STAGES = ["untrained", "cpt", "cpt --no-mask", "sft", "rl"]
SAMPLING = "sampled at temperature 0.6, 1 sample per turn, seed 0"


def report(model: str, loss: float | None, compliance: float, overall: list[float | None]) -> Report:
    """A row whose turns t0, t1, ... (three to an episode) scored `overall` (None: the judge failed there)."""
    scored = [v for v in overall if v is not None]
    mean = sum(scored) / len(scored)
    pooled = {d: mean for d in ("format", "factuality", "consistency", "realism", "quality", "overall")}
    per_turn = {
        f"t{i}": {"cluster": f"episode {i // 3}", "tagged": int(i < compliance * len(overall)),
                  **({"overall": v, "factuality": v} if v is not None else {})}
        for i, v in enumerate(overall)
    }  # fmt: skip
    return Report(model, "embedded", False, {}, pooled, pooled, len(overall), len(scored), {}, compliance, 0.5,
                  heldout_loss=loss, per_turn=per_turn)  # fmt: skip


def _run(sft: list[float], rl: list[float], trend=None) -> list[str]:
    reports = [
        report("untrained", 8.0, 0.0, [0.0] * len(sft)),
        report("cpt", 3.0, 0.0, [v / 2 for v in sft]),
        report("nomask", 3.2, 0.0, [v / 2 for v in sft]),
        report("sft", 3.4, 0.95, sft),
        report("rl", 3.5, 1.0, rl),
    ]
    return reading(reports, STAGES, row_comparisons(reports, STAGES), trend)


def test_reading_says_whether_each_effect_shows_and_compares_each_stage_with_the_one_before():
    trend = {"reward_first": 4.0, "reward_last": 10.0, "trend_steps": 1}  # the RL run's, as reward_trend reads it
    sft = [float(10 * i) for i in range(1, 13)]
    lines = _run(sft, sft, trend)
    assert "CPT lowered the held-out loss on observation tokens: 8.000 untrained -> 3.000." in lines
    assert any(line.startswith("Masking ablation") and "3.200" in line for line in lines)
    assert "format compliance 0% after CPT -> 95% (meets the 90% target)" in " ".join(lines)
    assert "RL: the mean reward on its prompts rose, 4.00 over the first 1 steps -> 10.00 over the last 1." in lines
    paired = [line for line in lines if "(paired, 12 turns in 4 episodes)" in line]
    assert [line.split(",")[0] for line in paired] == [
        "cpt vs untrained", "cpt --no-mask vs cpt", "sft vs cpt", "sft vs cpt", "rl vs sft"
    ]  # fmt: skip
    assert paired[0].endswith(": higher than untrained.") and "format compliance: +100.0 points" in paired[3]
    assert paired[1].startswith("cpt --no-mask vs cpt, overall: +0.0 points [+0.0, +0.0]")
    assert paired[-1] == (
        "rl vs sft, overall: +0.0 points [+0.0, +0.0] (paired, 12 turns in 4 episodes): no difference shown."
    )


def test_the_old_unpaired_reading_is_gone():
    rng = random.Random(0)
    sft = [rng.uniform(0, 100) for _ in range(30)]
    # RL 2 points below SFT on every turn: the two rows' unpaired intervals overlap almost entirely (the old reading:
    # "below SFT but within noise"), and the paired difference shows RL lower
    lines = _run(sft, [v - 2 for v in sft])
    assert not any("noise" in line for line in lines)
    rl = next(line for line in lines if line.startswith("rl vs sft"))
    assert rl.startswith("rl vs sft, overall: -2.0 points [-2.0, -2.0]") and rl.endswith("LOWER than sft.")
    # RL above SFT on average by chance (the old reading: "at or above SFT"): the paired interval holds zero
    noise = [v + rng.uniform(-30, 32) for v in sft]
    assert sum(noise) > sum(sft)
    rl = next(line for line in _run(sft, noise) if line.startswith("rl vs sft"))
    assert rl.endswith(": no difference shown.") and "at or above" not in rl


def test_table_has_a_row_per_model_with_its_turns_and_states_the_sampling():
    reports = [report("untrained", 8.0, 0.0, [1.0, 2.0, 3.0, 4.0]), report("sft", None, 1.0, [50.0] * 4)]
    console = Console(width=300, record=True)
    console.print(stage_table(reports, ["untrained", "sft"], "embedded", SAMPLING))
    text = " ".join(console.export_text().split())  # the title and caption wrap to the table's width
    assert "judge: embedded" in text and SAMPLING in text and "8.000" in text and "100.0" in text
    assert text.index("untrained") < text.index("sft") and text.count(" 4/4 ") == 2
    assert "every row scored on the same 4 turns in 2 episodes" in text
    reports[1] = report("sft", None, 1.0, [50.0, None, 50.0, 50.0])  # the judge failed on one turn
    console = Console(width=300, record=True)
    console.print(stage_table(reports, ["untrained", "sft"], "embedded", SAMPLING))
    text = " ".join(console.export_text().split())
    assert "rows scored on DIFFERENT turns (a judge failed on some: untrained 4, sft 3)" in text and " 3/4 " in text
