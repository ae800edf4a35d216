"""train --stage rl for real on a tiny checkpoint: rollouts, rewards, GSPO updates, checkpoints, resume."""

import json

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from pipelines.cli import app
from training import rl
from training.rewards import Reward

runner = CliRunner()


@pytest.fixture
def policy(tiny_checkpoint):
    return tiny_checkpoint


@pytest.fixture(scope="module")
def rl_data(tmp_path_factory, corpus_dir):
    out = tmp_path_factory.mktemp("rl-data")
    assert runner.invoke(app, ["prepare-rl", "-i", str(corpus_dir), "-o", str(out), "--workers", "1"]).exit_code == 0
    return out


def test_gspo_moves_the_policy_toward_rewarded_samples(tmp_path, policy, rl_data, monkeypatch):
    # An untrained model never writes the tags the judge reads, so rewards would all be 0 (no advantage, no update):
    # here the reward is the response length, which an untrained model does vary.
    monkeypatch.setattr(rl, "row_reward", lambda judge, row, text: Reward(len(text), None, len(text)))
    config = rl.RLConfig(
        data=str(rl_data), output=str(tmp_path), init=str(policy), max_steps=2, save_every=1, max_new_tokens=12, lr=1e-3
    )
    last = rl.run_rl(config)
    metrics = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2] and last["reward"] > 0
    before, after = (
        load_file(str(policy / "model.safetensors")),
        load_file(str(tmp_path / "checkpoint-2" / "model.safetensors")),
    )
    assert any(not torch.equal(before[k], after[k]) for k in before)
    again = rl.run_rl(config)  # resumes at step 2: nothing left to do
    assert again == {"step": 2}


def test_cli_runs_rl_with_the_hybrid_reward(tmp_path, policy, rl_data):
    result = runner.invoke(
        app,
        [
            "train",
            "--stage",
            "rl",
            "--data",
            str(rl_data),
            "--init",
            str(policy),
            "-o",
            str(tmp_path),
            "--max-steps",
            "1",
            "--max-new-tokens",
            "8",
            "--kl-coef",
            "0.1",
        ],
    )
    assert result.exit_code == 0, result.output
    info = json.loads((tmp_path / "checkpoint-1" / "checkpoint.json").read_text())
    assert info["stage"] == "rl" and info["rl"]["kl_coef"] == 0.1
    assert runner.invoke(app, ["train", "--stage", "rl", "--data", str(rl_data)]).exit_code == 2  # needs --init


def test_rl_rewards_come_from_the_judge_the_command_names(tmp_path, policy, rl_data):
    """train --stage rl --judge endpoint: every sample judged by the judge behind a real HTTP server (2 of 5 for
    these terminal turns), the reward 0.9 x 5 x mean + 0.1 x 25 x verifier where a verifier exists."""
    from tests.evaluation.judge_server import judge_server

    with judge_server() as (url, requests):
        result = runner.invoke(
            app,
            ["train", "--stage", "rl", "--data", str(rl_data), "-o", str(tmp_path), "--init", str(policy),
             "--max-steps", "1", "--max-new-tokens", "8", "--judge", "endpoint", "--judge-url", url,
             "--judge-model", "judge-model"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    (metrics,) = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert len(requests) == 4 * 2 and metrics["judge_failures"] == 0  # group size x prompts per step
    judge_only, with_failed_verifier = 5 * 2.0, 0.9 * 5 * 2.0
    assert with_failed_verifier <= metrics["reward"] <= judge_only + 0.1 * 25
