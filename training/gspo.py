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


def sequence_logprobs(model, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per-token log-probabilities of input_ids[:, 1:] under the model where mask ([N, T-1], aligned with
    input_ids[:, 1:]) is 1, and 0 elsewhere. The vocabulary head reads only those positions and nothing after the
    last one is read: in an episode the prompt and observations are most of the tokens, and full [tokens, vocabulary]
    logits with their log-softmax (kept for backward) were most of an update's memory."""
    if mask.shape != (input_ids.shape[0], input_ids.shape[1] - 1):
        raise ValueError(f"mask {tuple(mask.shape)} must align with input_ids[:, 1:] {tuple(input_ids[:, 1:].shape)}")
    targets = mask > 0
    columns = targets.any(dim=0).nonzero()
    width = int(columns[-1]) + 1 if len(columns) else 1
    hidden_at = targets[:, :width]
    if reads_head_apart(model):
        hidden = model.get_decoder()(input_ids=input_ids[:, :width], use_cache=False).last_hidden_state
        logits = model.get_output_embeddings()(hidden[hidden_at]).float()
    else:
        logits = model(input_ids=input_ids[:, :width], use_cache=False).logits[hidden_at].float()
    tokens = input_ids[:, 1 : width + 1][hidden_at]
    picked = torch.log_softmax(logits, dim=-1).gather(-1, tokens[:, None]).squeeze(-1)
    return torch.zeros(mask.shape, dtype=picked.dtype, device=picked.device).masked_scatter(targets, picked)


def reads_head_apart(model) -> bool:
    """Whether the model's logits are its output embeddings applied to its decoder's last hidden states, nothing
    more (Llama, SmolLM2, Qwen, Mistral; not Gemma 2's soft-capping or Cohere's logit scale)."""
    config = getattr(model, "config", None)
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None) not in (None, 1.0):
        return False
    decoder = getattr(model, "get_decoder", None)
    return decoder is not None and decoder() is not None and model.get_output_embeddings() is not None
