"""train rl for real on a tiny checkpoint: rollouts, rewards, GSPO updates, checkpoints, resume."""

import inspect
import json

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from tests.training.test_metrics_log import assert_same_as_jsonl
from trajforge.pipelines.cli import app
from trajforge.training import rl
from trajforge.training.configs import GSPOConfig
from trajforge.training.gspo import sequence_logprobs
from trajforge.training.model import load_model
from trajforge.training.rewards import Reward

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
        data=str(rl_data),
        output=str(tmp_path),
        init=str(policy),
        max_steps=2,
        save_every=1,
        gspo=GSPOConfig(max_new_tokens=12, lr=1e-3),
    )
    last = rl.run_rl(config)
    metrics = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2] and last["reward"] > 0
    assert all(0 <= m["degenerate_groups"] <= 1 and m["format_compliance"] == 0 for m in metrics)
    assert [m["lr"] for m in metrics] == [1e-3, 1e-3]  # the trainer's optimizer, its schedule held constant for RL
    assert last["reward_first"] == metrics[0]["reward"] and last["reward_last"] == metrics[1]["reward"]
    before, after = (
        load_file(str(policy / "model.safetensors")),
        load_file(str(tmp_path / "checkpoint-2" / "model.safetensors")),
    )
    assert any(not torch.equal(before[k], after[k]) for k in before)
    again = rl.run_rl(config)  # resumes at step 2: nothing left to do
    assert again["step"] == 2 and "loss" not in again


def test_cli_runs_rl_with_the_hybrid_reward(tmp_path, policy, rl_data):
    result = runner.invoke(
        app,
        [
            "train",
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
            "--lr",
            "1e-3",
            "--report-to",
            "tensorboard",
        ],
    )
    assert result.exit_code == 0, result.output
    assert_same_as_jsonl(tmp_path)  # reward, format compliance, degenerate groups, ... as TensorBoard scalars too
    info = json.loads((tmp_path / "checkpoint-1" / "checkpoint.json").read_text())
    assert info["stage"] == "rl" and info["rl"]["gspo"]["kl_coef"] == 0.1
    assert info["rl"]["gspo"]["lr"] == 1e-3  # an explicit --lr is used as given, also when it is the CPT default
    assert "format 0%, degenerate groups" in result.output  # an untrained policy never writes the answer format
    assert info["metrics"]["format_compliance"] == 0.0
    assert runner.invoke(app, ["train", "rl", "--data", str(rl_data)]).exit_code == 2  # needs --init


def test_a_run_of_degenerate_groups_warns(tmp_path, policy, rl_data, monkeypatch):
    monkeypatch.setattr(rl, "row_reward", lambda judge, row, text: Reward(0.0, None, 0.0))  # no answer is better
    config = rl.RLConfig(data=str(rl_data), output=str(tmp_path), init=str(policy), max_steps=1,
                         gspo=GSPOConfig(max_new_tokens=4))  # fmt: skip
    last = rl.run_rl(config)
    assert last["degenerate_groups"] == 1.0 and "no gradient" in last["warning"]
    assert last["loss"] is None  # no group was learned from


def _one_group(model, rewards: list[float], seed: int) -> tuple:
    ids = torch.randint(3, 100, (len(rewards), 12), generator=torch.Generator().manual_seed(seed))
    mask = torch.zeros(len(rewards), 11)
    mask[:, 5:] = 1.0
    with torch.no_grad():
        old = sequence_logprobs(model, ids, mask)
    return (ids, mask, old, None), rewards


def _updated(policy, groups: list[list[float]], gspo=GSPOConfig()) -> tuple[dict, list, int]:
    """The weights after update_policy on one step's groups (rewards given, ids random), its outputs, and how many
    optimizer steps it took."""
    torch.manual_seed(0)
    model = load_model(policy)
    optimizer = rl.Optimizer(model, 1e-3, 0, 10, 0.0, 1.0, lr_floor=1.0)
    rollouts = rl.Rollouts()
    for seed, rewards in enumerate(groups):
        group, rewards = _one_group(model, rewards, seed if rewards[0] != rewards[-1] else 0)
        rollouts.groups.append(group)
        rollouts.rewards.append(rewards)
    stats = rl.update_policy(model, optimizer, rollouts, gspo)
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, stats, optimizer.scheduler.last_epoch


def test_a_group_of_equal_rewards_takes_no_optimizer_step(policy):
    """After a real update, a degenerate group would still move the weights along Adam's momentum: it is skipped."""
    learned, _, updates = _updated(policy, [[0.0, 1.0, 0.0, 1.0]])
    with_degenerate, _, updates_too = _updated(policy, [[0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    assert updates == updates_too == rl.RLConfig().gspo.updates_per_batch  # the degenerate group took none
    assert all(torch.equal(learned[k], with_degenerate[k]) for k in learned)
    untouched = load_model(policy).state_dict()
    assert any(not torch.equal(untouched[k], learned[k]) for k in learned)


def test_micro_batches_give_the_same_update_as_the_whole_group(policy):
    """An update a sequence at a time (the memory of one) gives the whole group's gradient, moves the weights as the
    whole group at once does, and reports the same loss and clipped fraction."""
    gradients = []
    for micro_batch in (0, 1):
        model = load_model(policy)
        group, _ = _one_group(model, [0.0, 1.0, 0.0, 1.0], seed=1)
        rl.group_backward(model, group, torch.tensor([-1.0, 1.0, -1.0, 1.0]), GSPOConfig(micro_batch=micro_batch), 1.0)
        gradients.append({k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None})
    assert gradients[0].keys() == gradients[1].keys() and gradients[0]
    for name, whole_gradient in gradients[0].items():  # the same to float rounding, relative to its largest entry
        assert (whole_gradient - gradients[1][name]).abs().max() <= 1e-5 * whole_gradient.abs().max()
    groups = [[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.5]]
    whole, whole_stats, _ = _updated(policy, groups, GSPOConfig(micro_batch=0))
    sliced, sliced_stats, _ = _updated(policy, groups, GSPOConfig(micro_batch=1))
    # Adam divides by the root of each gradient's square, so a near-zero gradient's float rounding (the order of a
    # sum) can move its weight by up to a few 1e-6 over four steps; the largest moves are about 3e-3.
    assert all(torch.allclose(whole[k], sliced[k], atol=1e-5) for k in whole)
    untouched = load_model(policy).state_dict()
    assert any(not torch.allclose(untouched[k], sliced[k], atol=1e-6) for k in sliced)
    for a, b in zip(whole_stats, sliced_stats, strict=True):
        assert abs(float(a.loss) - float(b.loss)) < 1e-6 and a.clipped_fraction == b.clipped_fraction
        assert torch.allclose(a.ratios, b.ratios)


def test_a_slice_without_response_tokens_adds_nothing(policy):
    """A sequence that wrote no token (an empty mask) has ratio 1 and no gradient, alone in its micro-batch too."""
    model = load_model(policy)
    (ids, mask, old, _), rewards = _one_group(model, [0.0, 1.0, 0.0, 1.0], seed=3)
    mask[0] = 0
    out = rl.group_backward(
        model, (ids, mask, old, None), torch.tensor([-1.0, 1.0, -1.0, 1.0]), GSPOConfig(micro_batch=1), 1.0
    )
    assert out.ratios[0] == 1.0 and any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_groups_per_update_0_learns_from_every_group_on_policy_in_one_step(policy):
    """One step per group: from the second group on, the ratios compare against weights already moved, and some
    are clipped. All groups in one step: every ratio is exactly 1, nothing clipped, one optimizer step."""
    groups = [[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]
    _, per_group, steps = _updated(policy, groups, GSPOConfig(updates_per_batch=1))
    assert steps == 3 and torch.equal(per_group[0].ratios, torch.ones(4))
    assert any(not torch.allclose(s.ratios, torch.ones(4)) for s in per_group[1:])
    together, in_one, one_step = _updated(policy, groups, GSPOConfig(updates_per_batch=1, groups_per_update=0))
    assert one_step == 1 and len(in_one) == 3
    assert all(torch.equal(s.ratios, torch.ones(4)) and s.clipped_fraction == 0.0 for s in in_one)
    untouched = load_model(policy).state_dict()
    assert any(not torch.equal(untouched[k], together[k]) for k in together)


@pytest.mark.parametrize("stage", ["rl", "agent-rl"])
def test_rl_at_temperature_0_is_refused_before_anything_runs(stage, tmp_path):
    args = ["train", stage, "--init", "x", "-o", str(tmp_path / "run"), "--temperature", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code != 0 and "temperature 0 they are all the same answer" in " ".join(result.output.split())
    assert not (tmp_path / "run").exists()


def test_reward_trend_compares_the_first_and_last_quarter(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text(
        "".join(json.dumps({"step": i + 1, "reward": r}) + "\n" for i, r in enumerate([1, 3, 2, 4, 6, 8, 7, 9]))
    )
    assert rl.reward_trend(metrics) == {"reward_first": 2.0, "reward_last": 8.0, "trend_steps": 2}
    assert rl.reward_trend(tmp_path / "none.jsonl") == {}


def test_rl_rewards_come_from_the_judge_the_command_names(tmp_path, policy, rl_data, monkeypatch):
    """train rl --judge endpoint: every sample judged by the judge behind a real HTTP server (2 of 5 for
    these terminal turns), the reward 0.9 x 5 x mean + 0.1 x 25 x verifier where a verifier exists. The untrained
    policy's samples are wrapped in the answer format (an untagged answer earns nothing, unjudged)."""
    from tests.evaluation.judge_server import judge_server

    real_rollout = rl.rollout

    def tagged_rollout(*args, **kwargs):
        ids, mask, texts = real_rollout(*args, **kwargs)
        return ids, mask, [f"<predicted_observation>{t}</predicted_observation>" for t in texts]

    monkeypatch.setattr(rl, "rollout", tagged_rollout)

    with judge_server() as (url, requests):
        result = runner.invoke(
            app,
            ["train", "rl", "--data", str(rl_data), "-o", str(tmp_path), "--init", str(policy),
             "--max-steps", "1", "--max-new-tokens", "8", "--judge", "endpoint", "--judge-url", url,
             "--judge-model", "judge-model"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "(judge: endpoint:judge-model)" in result.output
    (metrics,) = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert len(requests) == 4 * 2 and metrics["judge_failures"] == 0  # group size x prompts per step
    judge_only, with_failed_verifier = 5 * 2.0, 0.9 * 5 * 2.0
    assert with_failed_verifier <= metrics["reward"] <= judge_only + 0.1 * 25


def mean_response_logprob(model, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        logp = sequence_logprobs(model.eval(), ids, mask[:, 1:])
    return (logp * mask[:, 1:]).sum(-1) / mask[:, 1:].sum(-1)


def test_an_update_sharpens_with_snapshot_ratios_and_the_configured_clip(tmp_path, policy, rl_data, monkeypatch):
    """One real rollout batch, two minibatch passes: what GSPO must do, watched from inside the run."""
    monkeypatch.setattr(rl, "row_reward", lambda judge, row, text: Reward(len(text), None, len(text)))
    rollouts, passes = [], []
    real_rollout, real_loss = rl.rollout, rl.gspo_loss

    def watched_rollout(*args, **kwargs):
        rollouts.append(real_rollout(*args, **kwargs))
        return rollouts[-1]

    def watched_loss(*args, **kwargs):
        call = inspect.signature(real_loss).bind(*args, **kwargs)
        call.apply_defaults()
        out = real_loss(*args, **kwargs)
        passes.append((call.arguments["advantages"].detach(), out))
        return out

    monkeypatch.setattr(rl, "rollout", watched_rollout)
    monkeypatch.setattr(rl, "gspo_loss", watched_loss)
    # eps_high far above any ratio a step reaches: only the low side can clip, so a run that falls back to the
    # default eps_high (4e-4) clips samples this one must not.
    eps_low, eps_high = 3e-4, 10.0
    config = rl.RLConfig(
        data=str(rl_data),
        output=str(tmp_path),
        init=str(policy),
        max_steps=1,
        prompts_per_step=1,
        gspo=GSPOConfig(
            group_size=4, updates_per_batch=2, max_new_tokens=12, lr=1e-3, eps_low=eps_low, eps_high=eps_high
        ),
    )
    rl.run_rl(config)
    ((ids, mask, texts),) = rollouts
    assert len({len(t) for t in texts}) > 1  # rewards differ, so the group has advantages
    (first_advantages, first), (advantages, second) = passes
    assert torch.equal(first_advantages, advantages)
    # Pass 1 runs the policy that sampled: every ratio is 1. Pass 2 runs the updated policy against the snapshot.
    assert torch.allclose(first.ratios, torch.ones(4), atol=1e-5)
    assert (second.ratios - 1).abs().max() > 1e-3
    should_clip = ((advantages > 0) & (second.ratios > 1 + eps_high)) | (
        (advantages < 0) & (second.ratios < 1 - eps_low)
    )
    assert should_clip.any(), second.ratios  # clipping engages on the second pass
    assert ((advantages > 0) & (second.ratios > 1 + 4e-4)).any()  # where the default eps_high would clip too
    assert second.clipped_fraction == pytest.approx(float(should_clip.float().mean()))
    # The best sample of the group is more likely under the updated policy.
    best = int(torch.tensor([len(t) for t in texts]).argmax())
    before = mean_response_logprob(load_model(policy), ids[best : best + 1], mask[best : best + 1])
    after = mean_response_logprob(load_model(tmp_path / "checkpoint-1"), ids[best : best + 1], mask[best : best + 1])
    assert after > before + 1e-3, (before, after)
