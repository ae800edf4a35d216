"""`trajforge train`'s configs: one per stage, each owning its defaults; a value given is used as given."""

import re

import pytest
from typer.testing import CliRunner

from trajforge.pipelines.cli import app
from trajforge.training.configs import LoopConfig, RLConfig, TinyModelConfig
from trajforge.training.launch import stage_config


def test_an_explicit_lr_is_used_as_given_and_an_omitted_one_is_the_stages_default():
    assert stage_config("rl", lr=1e-3).gspo.lr == 1e-3  # once silently replaced by RL's default
    assert stage_config("rl", lr=None).gspo.lr == RLConfig.gspo.lr == 1e-5
    assert stage_config("cpt", lr=1e-3).loop.lr == 1e-3
    assert stage_config("sft", lr=None).loop.lr is None  # the trainer picks it by the model's size


def test_each_stage_has_its_own_default_paths():
    configs = [stage_config(stage) for stage in ("cpt", "sft", "rl")]
    assert [c.data for c in configs] == ["data/corpus", "data/sft", "data/rl"]
    assert [c.output for c in configs] == ["runs/cpt", "runs/sft", "runs/rl"]
    assert stage_config("sft", data="elsewhere", output=None).data == "elsewhere"
    agent = stage_config("agent-sft")
    assert (agent.data, agent.output, agent.role) == ("data/raw", "runs/agent-sft", "agent")


def test_the_role_is_a_flag_and_world_by_default():
    assert stage_config("cpt").role == stage_config("sft").role == "world"
    assert stage_config("cpt", role="both").role == "both"
    assert stage_config("agent-sft", role=None).role == "agent"


def test_flags_land_in_the_stage_config():
    cpt = stage_config("cpt", hidden_size=32, layers=2, no_mask=True, eval_every=0, max_steps=7, batch_size=None)
    assert cpt.model == TinyModelConfig(hidden_size=32, intermediate_size=96, layers=2)
    assert cpt.mask_mode == "all" and cpt.loop.max_steps == 7 and cpt.loop.eval_every == 7  # 0: at the end only
    assert cpt.loop.batch_size == LoopConfig.batch_size and cpt.loop.bf16 is None  # None: bf16 on a CUDA GPU only
    assert stage_config("sft", bf16=True).loop.bf16 is True and stage_config("cpt", bf16=False).loop.bf16 is False
    rl = stage_config("rl", group_size=8, kl_coef=0.1, max_steps=None)
    assert (rl.gspo.group_size, rl.gspo.kl_coef, rl.max_steps) == (8, 0.1, RLConfig.max_steps)
    assert (rl.gspo.updates_per_batch, rl.gspo.micro_batch) == (2, 4)  # RL's own GSPO defaults
    with pytest.raises(ValueError, match="choose cpt, sft, rl"):
        stage_config("dpo")


def test_a_flag_a_stage_has_no_use_for_is_an_error_naming_it():
    with pytest.raises(ValueError, match="train rl has no use for --hidden-size"):
        stage_config("rl", hidden_size=32)  # once dropped in silence
    with pytest.raises(ValueError, match="train cpt has no use for --group-size, --kl-coef"):
        stage_config("cpt", group_size=8, kl_coef=0.1)
    assert stage_config("rl", hidden_size=None).gspo == RLConfig.gspo  # None: not given


def _help(*command: str) -> str:
    text = CliRunner().invoke(app, [*command, "--help"], terminal_width=200).output
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@pytest.mark.parametrize(("stage", "data"), [("cpt", "data/corpus"), ("sft", "data/sft"), ("rl", "data/rl")])
def test_help_shows_each_stages_own_defaults_and_no_issue_numbers(stage, data):
    flat = _help("train", stage)
    assert f"[default: {data}]" in flat and f"[default: runs/{stage}]" in flat and "issue" not in flat.lower()
    assert ("--bf16 --no-bf16" in flat) == (stage != "rl")


def test_help_shows_agent_rls_gspo_defaults_not_rls():
    rl, agent_rl = _help("train", "rl"), _help("train", "agent-rl")
    assert "update. [default: 4]" in rl and "update. [default: 2]" in agent_rl  # --micro-batch
    assert "[default: 1e-05]" in rl and "1e-3 for the tiny model" in _help("train", "cpt")
