import json

from trajforge.pipelines.commands.eval import rl_reward_trend


def test_the_stage_reading_gets_the_reward_trend_of_the_rl_run_that_was_scored(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": i, "reward": r}) + "\n" for i, r in enumerate([4, 5, 9, 10]))
    )
    assert rl_reward_trend(tmp_path) == {"reward_first": 4.0, "reward_last": 10.0, "trend_steps": 1}
    assert rl_reward_trend(None) == {} and rl_reward_trend(tmp_path / "elsewhere") == {}
