"""benchmarks/learning_signal.py's agent-RL flags: what every benchmark RL row passes to `trajforge train`."""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import learning_signal  # noqa: E402 - the benchmarks folder is a script folder, not a package
import typer  # noqa: E402

from trajforge.agents.config import agent_rl_config  # noqa: E402
from trajforge.pipelines.cli import app  # noqa: E402
from trajforge.pipelines.commands.train import given_flags  # noqa: E402

AGENT_RL = typer.main.get_command(app).commands["train"].commands["agent-rl"]


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    learning_signal.agent_training_arguments(parser)
    return parser.parse_args(list(argv))


def as_config(flags: list[str]):
    """The flags read as `trajforge train agent-rl` reads them: each one an option of its click command, its value
    converted by the option's type, the given ones into its config."""
    names = {name for param in AGENT_RL.params for name in param.opts}
    assert not set(flags[::2]) - names, f"{set(flags[::2]) - names}: not options of trajforge train agent-rl"
    context = AGENT_RL.make_context("agent-rl", list(flags))
    return agent_rl_config(**given_flags(context, context.params))


def test_the_guide_and_temperature_reach_agent_rl():
    args = parsed("--guide", "scripted", "--rl-temperature", "0.7", "--group-size", "8", "--tasks-per-step", "4")
    config = as_config(learning_signal.agent_rl_flags(args))
    assert (config.guide, config.gspo.temperature, config.gspo.group_size, config.tasks_per_step) == (
        "scripted",
        0.7,
        8,
        4,
    )
    assert config.run.concurrency == 32  # a step's episodes at once


def test_without_a_temperature_train_decides_it():
    config = as_config(learning_signal.agent_rl_flags(parsed()))
    assert config.guide == "none" and config.gspo.temperature == type(config)().gspo.temperature


def test_the_world_model_is_the_saved_checkpoint_at_the_lowest_validation_loss(tmp_path):
    """Issue 55: a world model trained until its validation figures stop improving, chosen on validation."""
    lines = [{"step": 1, "loss": 3.0}, {"step": 2, "eval_loss": 2.0}, {"step": 4, "eval_loss": 1.5},
             {"step": 6, "eval_loss": 1.5}, {"step": 8, "eval_loss": 1.7}, {"step": 3, "eval_loss": 0.1}]  # fmt: skip
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for step in (2, 4, 6, 8):
        (tmp_path / f"checkpoint-{step}").mkdir()
    chosen, losses = learning_signal.lowest_validation_loss(tmp_path)
    assert chosen.name == "checkpoint-4"  # step 3 was never saved; 4 and 6 tie: the earlier
    assert losses[8] == 1.7 and len(losses) == 5
    assert learning_signal.steps_flags(100, 4) == ["--max-steps", "100", "--eval-every", "25", "--save-every", "25"]
    assert learning_signal.steps_flags(100) == ["--max-steps", "100", "--eval-every", "100", "--save-every", "100"]
    assert learning_signal.rl_steps_flags(16) == ["--max-steps", "16", "--save-every", "4"]
    assert learning_signal.rl_steps_flags(3) == ["--max-steps", "3", "--save-every", "1"]
