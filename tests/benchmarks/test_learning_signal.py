"""benchmarks/learning_signal.py's agent-RL flags: what every benchmark RL row passes to `trajforge train`."""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import learning_signal  # noqa: E402 - the benchmarks folder is a script folder, not a package

from trajforge.agents.config import agent_rl_config  # noqa: E402
from trajforge.pipelines.commands.train_options import FLAGS, STAGE_FLAGS  # noqa: E402


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    learning_signal.agent_training_arguments(parser)
    return parser.parse_args(list(argv))


def as_config(flags: list[str]):
    """The flags read as `trajforge train agent-rl` reads them: each one an option of it, into its config."""
    given = {}
    for name, value in zip(flags[::2], flags[1::2], strict=True):
        key = name.removeprefix("--").replace("-", "_")
        assert key in STAGE_FLAGS["agent-rl"], f"{name} is not an option of trajforge train agent-rl"
        given[key] = FLAGS[key].kind(value) if FLAGS[key].kind in (int, float, str) else value
    return agent_rl_config(**given)


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
