import json

from trajforge.pipelines.commands.eval import rl_reward_trend


def test_the_stage_reading_gets_the_reward_trend_of_the_rl_run_that_was_scored(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": i, "reward": r}) + "\n" for i, r in enumerate([4, 5, 9, 10]))
    )
    assert rl_reward_trend(tmp_path) == {"reward_first": 4.0, "reward_last": 10.0, "trend_steps": 1}
    assert rl_reward_trend(None) == {} and rl_reward_trend(tmp_path / "elsewhere") == {}


class StageModel:
    """Stands in for a checkpoint of one stage: an echo of the real observation (tagged from SFT on) every
    `every`-th turn, nothing on the others; `silent` answers "" (an empty prediction) everywhere."""

    folder = None

    def __init__(self, stage: str, references: dict[str, str], every: int = 1, silent: bool = False):
        self.name, self.stage, self.references, self.every, self.silent = stage, stage, references, every, silent
        self.asked = 0

    def answer(self, messages, sampling):
        self.asked += 1
        if self.silent or self.asked % self.every:
            return ""
        reference = self.references[messages[-1]["content"]]
        tagged = self.stage in ("sft", "rl")
        return f"<predicted_observation>{reference}</predicted_observation>" if tagged else reference

    def heldout_loss(self, rows):
        return None


def test_the_demos_stage_table_puts_every_row_on_the_same_turns_and_compares_stages_paired(corpus_dir, monkeypatch):
    from rich.console import Console

    from trajforge.evaluation.run import Display, EvalConfig, evaluate, load_items
    from trajforge.pipelines.commands import eval as eval_command

    config = EvalConfig(corpus=str(corpus_dir), plain=False, max_tokens=160)
    items = load_items(config, Display())[0]
    references = {item.action: item.reference for item in items}
    models = [StageModel("untrained", references, silent=True), StageModel("cpt", references, every=3),
              StageModel("cpt --no-mask", references, silent=True), StageModel("sft", references, every=2),
              StageModel("rl", references)]  # fmt: skip
    result = evaluate(config, lambda config, display: models, Display())
    assert len({(r.samples, r.scored) for r in result.reports}) == 1 and result.reports[0].scored == len(items)
    recording = Console(width=400, record=True)
    monkeypatch.setattr(eval_command, "out", recording)
    eval_command.show(result)
    text = recording.export_text()
    stage_rows = [row for row in map(str.split, text.splitlines())
                  if row[:1] in (["untrained"], ["cpt"], ["sft"], ["rl"]) and "vs" not in row]  # fmt: skip
    assert len(stage_rows) == 5 and {row[2 if row[1] == "--no-mask" else 1] for row in stage_rows} == {
        f"{len(items)}/{len(items)}"
    }  # every stage row on every turn, the silent ones too
    flat = " ".join(text.split())
    assert "what each stage did, on held-out tasks (judge: embedded" in flat
    assert "sampled at temperature 0.6 (AgentWorldBench's evaluator's, kept to reproduce the benchmark), 1 sample " \
           "per turn, seed 0 (each turn its own seed from it), <= 160 new tokens" in flat  # fmt: skip
    assert f"every row scored on the same {len(items)} turns in " in flat
    for row, against in (("cpt", "untrained"), ("cpt --no-mask", "cpt"), ("sft", "cpt"), ("rl", "sft")):
        assert f"{row} vs {against}, overall: " in flat
    assert "rl vs sft, overall: +" in flat and "noise" not in flat
