"""GSPO's loss and gradient against a direct implementation of the formula, term by term."""

import math

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from trajforge.training import gspo
from trajforge.training.gspo import EPS_HIGH, EPS_LOW, group_advantages, gspo_loss, sequence_logprobs


def direct_loss(logp, logp_old, mask, rewards, eps_low=EPS_LOW, eps_high=EPS_HIGH):
    """The paper's formula written out with Python loops."""
    groups, size = rewards.shape
    total = 0.0
    for g in range(groups):
        mean = sum(rewards[g].tolist()) / size
        std = math.sqrt(sum((r - mean) ** 2 for r in rewards[g].tolist()) / size)
        for j in range(size):
            i = g * size + j
            advantage = (rewards[g, j].item() - mean) / (std + 1e-6)
            tokens = [t for t in range(logp.shape[1]) if mask[i, t]]
            s = torch.exp(sum(logp[i, t] - logp_old[i, t] for t in tokens) / len(tokens))
            clipped = torch.clamp(s, 1 - eps_low, 1 + eps_high)
            total = total + torch.minimum(s * advantage, clipped * advantage)
    return -total / (groups * size)


def sample(seed: int, spread: float):
    generator = torch.Generator().manual_seed(seed)
    groups, size, length = 2, 4, 6
    logp_old = -torch.rand(groups * size, length, generator=generator) * 3
    logp = (logp_old + spread * torch.randn(groups * size, length, generator=generator)).requires_grad_(True)
    mask = torch.ones(groups * size, length)
    mask[1, 4:] = 0
    mask[6, 2:] = 0
    rewards = torch.rand(groups, size, generator=generator) * 25
    return logp, logp_old, mask, rewards


def test_advantages_are_normalised_per_group():
    rewards = torch.tensor([[1.0, 2.0, 3.0, 6.0], [5.0, 5.0, 5.0, 5.0]])
    advantages = group_advantages(rewards)
    assert torch.allclose(advantages[0].mean(), torch.tensor(0.0), atol=1e-6)
    assert torch.allclose(advantages[0].std(unbiased=False), torch.tensor(1.0), atol=1e-4)
    assert torch.equal(advantages[1], torch.zeros(4))


def test_loss_and_gradient_match_the_formula_inside_and_outside_the_clip():
    for seed, spread in ((0, 1e-5), (1, 1e-2), (2, 0.3)):  # ratios within, at and far beyond the clip range
        logp, logp_old, mask, rewards = sample(seed, spread)
        ours = gspo_loss(logp, logp_old, mask, group_advantages(rewards).flatten()).loss
        (grad_ours,) = torch.autograd.grad(ours, logp)
        direct = direct_loss(logp, logp_old, mask, rewards)
        (grad_direct,) = torch.autograd.grad(direct, logp)
        assert torch.allclose(ours, direct, atol=1e-6), (seed, ours, direct)
        assert torch.allclose(grad_ours, grad_direct, atol=1e-7), seed
        assert torch.all(grad_ours[mask == 0] == 0)  # padding never gets a gradient


def test_clipping_stops_the_gradient_of_outliers():
    logp_old = torch.zeros(2, 3)
    logp = torch.tensor([[0.5, 0.5, 0.5], [0.0, 0.0, 0.0]], requires_grad=True)  # s_0 = e^0.5, s_1 = 1
    out = gspo_loss(logp, logp_old, torch.ones(2, 3), torch.tensor([1.0, -1.0]))
    (grad,) = torch.autograd.grad(out.loss, logp)
    assert torch.all(grad[0] == 0) and torch.all(grad[1] != 0)
    assert out.clipped_fraction == 0.5


def test_kl_to_the_reference():
    logp = torch.log(torch.tensor([[0.5, 0.5]])).requires_grad_(True)
    same = gspo_loss(logp, logp.detach(), torch.ones(1, 2), torch.zeros(1), logp_ref=logp.detach(), kl_coef=0.1)
    assert same.kl == 0.0
    other = gspo_loss(
        logp,
        logp.detach(),
        torch.ones(1, 2),
        torch.zeros(1),
        logp_ref=torch.log(torch.tensor([[0.9, 0.1]])),
        kl_coef=0.1,
    )
    assert other.kl > 0 and other.loss.item() > 0


def test_the_readme_clip_range_is_the_default():
    """docs/training.md: eps_low = 3e-4 and eps_high = 4e-4, as literals, not imported from the code under test."""
    assert (EPS_LOW, EPS_HIGH) == (3e-4, 4e-4)
    logp_old = torch.zeros(4, 1)
    # Sequence ratios just inside and just outside each side of [1 - 3e-4, 1 + 4e-4].
    logp = torch.log(torch.tensor([[1 + 3.5e-4], [1 + 4.5e-4], [1 - 2.5e-4], [1 - 3.5e-4]]))
    advantages = torch.tensor([1.0, 1.0, -1.0, -1.0])
    out = gspo_loss(logp, logp_old, torch.ones(4, 1), advantages)
    assert out.clipped_fraction == 0.5  # the 2nd and the 4th
    wide = gspo_loss(logp, logp_old, torch.ones(4, 1), advantages, eps_low=0.2, eps_high=0.28)
    assert wide.clipped_fraction == 0.0


def tiny_llama() -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        attn_implementation="sdpa",
    )
    return LlamaForCausalLM(config).train()


@pytest.mark.parametrize("apart", [True, False])
def test_sequence_logprobs_are_the_full_log_softmax_at_the_masked_tokens(monkeypatch, apart):
    """Read through the head at the masked positions only (or, for a model whose logits are more than its head,
    the whole forward): the values and the gradients of the full log-softmax there, 0 elsewhere."""
    model = tiny_llama()
    monkeypatch.setattr(gspo, "reads_head_apart", lambda m: apart)
    ids = torch.randint(0, 64, (3, 10), generator=torch.Generator().manual_seed(1))
    mask = torch.zeros(3, 9)
    mask[0, 2:5], mask[1, 6:7], mask[2, 3:6] = 1, 1, 1  # ragged, nothing read after column 6

    logp = sequence_logprobs(model, ids, mask)
    (logp * torch.arange(1.0, 28.0).view(3, 9)).sum().backward()
    fast = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()

    full = torch.log_softmax(model(input_ids=ids).logits[:, :-1].float(), -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    (full * mask * torch.arange(1.0, 28.0).view(3, 9)).sum().backward()
    assert torch.allclose(logp, full * mask, atol=1e-5) and (logp[mask == 0] == 0).all()
    assert all(torch.allclose(fast[n], p.grad, atol=1e-5) for n, p in model.named_parameters())


def test_sequence_logprobs_need_a_mask_aligned_with_the_predicted_tokens():
    ids = torch.zeros(2, 6, dtype=torch.long)
    with pytest.raises(ValueError, match=r"must align with input_ids\[:, 1:\]"):
        sequence_logprobs(tiny_llama(), ids, torch.ones(2, 6))
