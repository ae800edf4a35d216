"""`--world-model CHECKPOINT`: a real tiny trajforge checkpoint loaded in-process as the world model of concurrent
simulated episodes, its answers batched through the broker, each prompt fitted to its context window."""

import json
from pathlib import Path

from typer.testing import CliRunner

from trajforge.agents import world_model
from trajforge.agents.world_model import load_checkpoint_world_model, prompt_of
from trajforge.pipelines.cli import app
from trajforge.training.sampling import prompt_ids

runner = CliRunner()


def trajectories(run: Path) -> list[dict]:
    return [
        json.loads(line) for segment in sorted(run.glob("segment-*.jsonl")) for line in segment.read_text().splitlines()
    ]


def test_collect_simulates_count_lines_with_an_in_process_checkpoint_batched_across_episodes(tiny_checkpoint, tmp_path):
    args = ["collect", "--suite", "terminal", "--task", "count-lines", "-o", str(tmp_path), "--run-id", "sim",
            "--world-model", str(tiny_checkpoint), "--simulate-prompt", "plain",  # a CPT model
            "--repeats", "3", "--concurrency", "3", "--retries", "0"]  # fmt: skip
    key = (str(tiny_checkpoint), 0.0)
    before = len(world_model._LOADED[key].broker.batch_sizes) if key in world_model._LOADED else 0  # shared model
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    episodes = trajectories(tmp_path / "sim")
    assert len(episodes) == 3 and {e["source"]["kind"] for e in episodes} == {"simulated"}
    assert {e["environment"]["name"] for e in episodes} == {"simulated:tiny-run0/checkpoint-2"}
    for episode in episodes:
        assert "--- notes.txt (30 bytes)\nmilk\neggs\nbread\ncoffee\napples" in episode["initial_state"]
        assert len(episode["turns"]) == 3  # the scripted solution, every action answered by the world model
        verifier = json.loads(episode["outcome"]["verifier"])
        assert verifier["decided_by"].startswith("the task's check in the world model")  # success or not: decided
    batches = world_model._LOADED[key].broker.batch_sizes[before:]
    assert max(batches) > 1  # concurrent episodes shared a generate call
    assert sum(batches) == 3 * 4  # per episode: three actions, then the compared file (never the check's command)


def test_a_long_conversation_is_fitted_to_the_models_window(tiny_checkpoint):
    model = load_checkpoint_world_model(str(tiny_checkpoint), max_tokens=16, temperature=0.0, prompt="plain")
    history = [
        m
        for k in range(40)
        for m in ({"role": "user", "content": f"ls {k}"}, {"role": "assistant", "content": "a.txt " * 8})
    ]
    messages = [{"role": "system", "content": "You simulate a terminal."}, *history, {"role": "user", "content": "ls"}]
    actor = model.actor
    assert len(prompt_ids(messages, actor.tokenizer, actor.chat)) > actor.window
    asked = []
    generate_batch = actor.broker.generate_batch
    actor.broker.generate_batch = lambda asks: asked.extend(asks) or generate_batch(asks)
    try:
        model.join()
        answer = model.answer(messages, seed=0)
    finally:
        model.leave()
        actor.broker.generate_batch = generate_batch
    assert isinstance(answer, str) and len(asked[0].prompt_ids) + asked[0].max_new_tokens <= actor.window


def test_a_checkpoint_that_is_no_model_is_refused_before_any_episode(tmp_path):
    result = runner.invoke(app, ["collect", "--suite", "terminal", "--task", "count-lines", "-o", str(tmp_path),
                                 "--world-model", str(tmp_path / "nothing")])  # fmt: skip
    assert result.exit_code == 2 and "no model folder (config.json)" in result.output
    assert not list(tmp_path.glob("*/segment-*.jsonl"))


def test_auto_asks_a_cpt_checkpoint_plainly_and_any_other_with_a_template(tmp_path):
    assert prompt_of(str(tmp_path), "auto") == "template" and prompt_of(str(tmp_path), "plain") == "plain"
    (tmp_path / "checkpoint.json").write_text(json.dumps({"stage": "cpt"}))
    assert prompt_of(str(tmp_path), "auto") == "plain"  # a CPT checkpoint never saw a template
    (tmp_path / "checkpoint.json").write_text(json.dumps({"stage": "rl"}))
    assert prompt_of(str(tmp_path), "auto") == "template"
