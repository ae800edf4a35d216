"""`trajforge train STAGE`: each stage takes only its own flags (another is a usage error naming it, never a flag
dropped in silence), and a flag left out takes the stage's own default."""

from dataclasses import replace

import pytest
import typer
from typer.testing import CliRunner

from trajforge.agents.config import AgentRLConfig
from trajforge.pipelines.cli import app
from trajforge.pipelines.commands import train as train_module
from trajforge.training.configs import RLConfig

runner = CliRunner()
STAGES = typer.main.get_command(app).commands["train"].commands
HELP = {"-h", "--help"}


def _flags(stage: str) -> set[str]:
    return {name for p in STAGES[stage].params for name in (*p.opts, *p.secondary_opts)} - HELP


FAMILY = set().union(*(_flags(stage) for stage in STAGES))


def test_every_stage_is_a_command_of_train():
    assert list(STAGES) == ["cpt", "sft", "rl", "agent-sft", "agent-rl"]
    assert "--hidden-size" in _flags("cpt") and "--judge" in _flags("rl") and "--world-model" in _flags("agent-rl")


@pytest.mark.parametrize("stage", ["cpt", "sft", "rl", "agent-sft", "agent-rl"])
def test_a_flag_the_stage_does_not_take_is_a_usage_error_naming_it(stage):
    foreign = sorted(FAMILY - _flags(stage))
    assert foreign  # every stage lacks some flag of another
    for flag in foreign:
        result = runner.invoke(app, ["train", stage, flag, "64"], terminal_width=200)
        assert result.exit_code == 2, (flag, result.output)
        assert "No such option" in result.output and flag in result.output, (flag, result.output)


def test_rl_rejects_a_model_size_instead_of_training_without_it():
    result = runner.invoke(app, ["train", "rl", "--hidden-size", "64"], terminal_width=200)
    assert result.exit_code == 2 and "No such option: --hidden-size" in result.output


@pytest.fixture
def built(monkeypatch):
    """The config each `train` invocation builds; nothing runs."""
    configs = []

    def run(config, world, progress, eval_only):
        configs.append(config)
        return {"step": 0}

    monkeypatch.setattr(train_module, "_run", run)
    return configs


def test_agent_rls_own_defaults_apply_from_the_command_line(built, tmp_path):
    result = runner.invoke(app, ["train", "agent-rl", "--init", "x", "-o", str(tmp_path), "--group-size", "3"])
    assert result.exit_code == 0, result.output
    (config,) = built
    assert isinstance(config, AgentRLConfig) and config.gspo.group_size == 3
    assert (config.gspo.updates_per_batch, config.gspo.micro_batch) == (1, 2)  # agent RL's, not RL's 2 and 4
    assert config.gspo == replace(AgentRLConfig.gspo, group_size=3)
    assert (config.max_steps, config.save_every) == (AgentRLConfig.max_steps, AgentRLConfig.save_every)


def test_rls_own_defaults_apply_from_the_command_line(built, tmp_path):
    result = runner.invoke(app, ["train", "rl", "--init", "x", "-o", str(tmp_path), "--micro-batch", "1"])
    assert result.exit_code == 0, result.output
    (config,) = built
    assert isinstance(config, RLConfig) and config.gspo.micro_batch == 1 and config.gspo.updates_per_batch == 2
    assert config.judge.kind == "embedded" and config.max_steps == RLConfig.max_steps
