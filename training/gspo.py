"""GSPO (Group Sequence Policy Optimization): group-normalised advantages and a clipped objective on the
length-normalised sequence-level importance ratio s_i = exp(mean_t(log pi_theta - log pi_old)).

Defaults eps_low = 3e-4 and eps_high = 4e-4 are the GSPO paper's: sequence-level ratios sit close to 1, so the
clip range is far tighter than PPO's token-level 0.2."""

from dataclasses import dataclass

import torch

from trajforge.training.configs import EPS_HIGH, EPS_LOW


@dataclass(frozen=True)
class GSPOOutput:
    loss: torch.Tensor
    ratios: torch.Tensor  # s_i per sequence
    clipped_fraction: float
    kl: float


def group_advantages(rewards: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """(r_i - mean(r)) / std(r) within each group; rewards is [groups, G]. A group of equal rewards gives zeros."""
    mean = rewards.mean(dim=-1, keepdim=True)
    std = rewards.std(dim=-1, keepdim=True, unbiased=False)
    return (rewards - mean) / (std + eps)


def gspo_loss(
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    mask: torch.Tensor,
    advantages: torch.Tensor,
    eps_low: float = EPS_LOW,
    eps_high: float = EPS_HIGH,
    logp_ref: torch.Tensor | None = None,
    kl_coef: float = 0.0,
) -> GSPOOutput:
    """logp, logp_old, logp_ref: [N, T] per-token log-probabilities of the sampled responses; mask: [N, T] 1 on
    response tokens; advantages: [N]. Returns -mean_i min(s_i A_i, clip(s_i, 1-eps_low, 1+eps_high) A_i)
    (+ kl_coef x the mean per-token KL to the reference, k3 estimator)."""
    mask = mask.to(logp.dtype)
    lengths = mask.sum(dim=-1).clamp(min=1)
    log_ratio = ((logp - logp_old) * mask).sum(dim=-1) / lengths
    ratios = torch.exp(log_ratio)
    unclipped = ratios * advantages
    clipped = torch.clamp(ratios, 1 - eps_low, 1 + eps_high) * advantages
    objective = torch.minimum(unclipped, clipped)
    loss = -objective.mean()
    kl_value = 0.0
    if logp_ref is not None and kl_coef:
        delta = logp_ref - logp
        kl = ((torch.exp(delta) - delta - 1) * mask).sum(dim=-1) / lengths
        loss = loss + kl_coef * kl.mean()
        kl_value = float(kl.mean().detach())
    clipped_fraction = float(((clipped < unclipped) & (advantages != 0)).float().mean())
    return GSPOOutput(loss, ratios.detach(), clipped_fraction, kl_value)


def sequence_logprobs(model, input_ids: torch.Tensor, response_mask: torch.Tensor) -> torch.Tensor:
    """Per-token log-probabilities of input_ids[:, 1:] under the model, aligned with response_mask[:, 1:]."""
    logits = model(input_ids=input_ids, use_cache=False).logits[:, :-1].float()
    return torch.log_softmax(logits, dim=-1).gather(-1, input_ids[:, 1:, None]).squeeze(-1)
