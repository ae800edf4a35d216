"""RL with GSPO (paper §3.4): for each prompt, G samples from the current policy, each scored by the hybrid
reward (the configured judge - embedded or an LLM endpoint - on the predicted observation, 9:1 with the rule
verifier where there is one); group-normalised advantages; several minibatch updates per rollout batch on the
clipped sequence-level objective; optional KL to the starting model. Checkpoints resume like the other stages.
One process.

Each step reports what decides whether RL can learn at all: the share of degenerate groups (all G rewards equal:
their advantages are zero, so they give no gradient) and format compliance (the share of samples with a
<predicted_observation> block, the only text the reward reads). A run where nearly every group is degenerate warns:
start from a policy that already writes the answer format (a longer SFT), or sample more (G, temperature)."""

import copy
import time
from pathlib import Path

import torch

from trajforge.evaluation.extraction import extract_prediction
from trajforge.schemas.dataset import load_shards, stage_rows
from trajforge.schemas.names import RL_DIR
from trajforge.training.chat_format import ChatFormat
from trajforge.training.configs import GSPOConfig, RLConfig
from trajforge.training.gspo import GSPOOutput, group_advantages, gspo_loss, sequence_logprobs
from trajforge.training.loaded_model import LoadedModel, load
from trajforge.training.metrics_log import METRICS_NAME, MetricsLog, read_metrics
from trajforge.training.model import resolve_init
from trajforge.training.optimization import Optimizer, checkpoint_due
from trajforge.training.rewards import row_reward
from trajforge.training.sampling import fit_window, prompt_ids, sample, stop_ids


@torch.no_grad()
def rollout(
    model, tokenizer, chat: ChatFormat, row: dict, gspo: GSPOConfig, seed: int, window: int
) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """G samples for one prompt (fitted to the policy's context window, as serving fits it): the token ids (prompt
    + response), the response mask, the decoded responses."""
    prompt = torch.tensor([fit_window(prompt_ids(row["messages"], tokenizer, chat), window, gspo.max_new_tokens)])
    stops = stop_ids(tokenizer, chat)
    room = window - prompt.shape[1]
    output = sample(
        model,
        prompt.repeat(gspo.group_size, 1),
        stops,
        tokenizer.pad_token_id,
        max(1, min(gspo.max_new_tokens, room)),
        gspo.temperature,
        seed=seed,
    )
    response = output[:, prompt.shape[1] :]
    mask = torch.zeros_like(output, dtype=torch.float32)
    texts = []
    for i in range(gspo.group_size):
        ends = torch.isin(response[i], torch.tensor(stops)).nonzero()
        length = int(ends[0]) + 1 if len(ends) else response.shape[1]
        mask[i, prompt.shape[1] : prompt.shape[1] + length] = 1
        texts.append(tokenizer.decode(response[i, :length], skip_special_tokens=True))
    return output, mask, texts


class Rollouts:
    """One step's prompts, each sampled G times and scored: what the updates train on and what the step reports."""

    def __init__(self) -> None:
        self.groups: list[tuple] = []  # per prompt: ids, response mask, old and reference log-probs
        self.rewards: list[list[float]] = []  # per prompt: the rewards of its G samples
        self.verified: list[bool] = []  # per sample with a rule verifier: whether it passed
        self.formatted: list[bool] = []  # per sample: whether it wrote a <predicted_observation> block
        self.judge_failures = 0  # samples the judge could not score (rewarded 0 by the judge)
        # agent RL: per guide that joined a group, its geometric-mean token probability under the sampling policy
        self.guide_probabilities: list[float] = []


def collect_rollouts(policy: LoadedModel, reference, judge, batch: list[dict], config: RLConfig, step: int) -> Rollouts:
    """Sample and score every prompt of the batch; the log-probs of the policy that sampled are the snapshot that
    the updates' ratios compare against, and the `reference` model's (the starting one, when the KL term is on)."""
    policy.model.eval()
    out = Rollouts()
    for j, row in enumerate(batch):
        seed = config.seed * 7919 + step * 101 + j
        ids, mask, texts = rollout(policy.model, policy.tokenizer, policy.chat, row, config.gspo, seed, policy.window)
        scored = [row_reward(judge, row, t) for t in texts]
        out.formatted += [extract_prediction(t).tagged for t in texts]
        out.rewards.append([r.total for r in scored])
        out.verified += [r.verifier == 25.0 for r in scored if r.verifier is not None]
        out.judge_failures += sum(r.judge_failure is not None for r in scored)
        mask = mask[:, 1:]  # aligned with the predicted tokens, ids[:, 1:]
        with torch.no_grad():
            old = sequence_logprobs(policy.model, ids, mask)
            ref = sequence_logprobs(reference, ids, mask) if reference is not None else None
        out.groups.append((ids, mask, old, ref))
    return out


def require_sampling(temperature: float) -> None:
    """RL learns from differences between a prompt's G samples: at temperature 0 they are one answer."""
    if temperature <= 0:
        raise ValueError(
            f"--temperature {temperature:g}: RL samples G answers per prompt and learns from their differences; at "
            "temperature 0 they are all the same answer (every group equal, no gradient). Give a temperature above 0."
        )


def update_policy(model, optimizer: Optimizer, rollouts: Rollouts, gspo: GSPOConfig) -> list:
    """`updates_per_batch` passes over the groups on the clipped sequence-level objective with group-normalised
    advantages, one optimizer step per `groups_per_update` groups (0: all of them, so every ratio of the first pass
    is exactly 1 and nothing is clipped); the GSPO outputs of every group, in order. A group of equal rewards (and no
    KL term) is left out: it has no gradient, and an optimizer step on none would still move the weights along
    Adam's momentum."""
    # per group: an agent-RL group may be smaller (an episode left out) or larger (a guide joined) than G
    advantages = [group_advantages(torch.tensor(r, dtype=torch.float32)) for r in rollouts.rewards]
    learnable = [
        (group, adv)
        for group, adv in zip(rollouts.groups, advantages, strict=True)
        if adv.any() or (group[3] is not None and gspo.kl_coef)
    ]
    size = gspo.groups_per_update or max(len(learnable), 1)
    model.train()
    stats = []
    for _ in range(gspo.updates_per_batch):
        for start in range(0, len(learnable), size):
            chunk = learnable[start : start + size]
            for group, adv in chunk:
                stats.append(group_backward(model, group, adv, gspo, weight=1 / len(chunk)))
            optimizer.step()
    return stats


def group_backward(model, group: tuple, advantages: torch.Tensor, gspo: GSPOConfig, weight: float) -> GSPOOutput:
    """Backward of `weight` x the group's GSPO loss, `gspo.micro_batch` sequences at a time, and the group's
    outputs. Exact, not an approximation: the loss, its KL term and the clipped fraction are means over sequences,
    each sequence's term depending on its own tokens only, so a slice of n of the group's N sequences adds n/N of
    its mean. The activations held for backward are a slice's, not the group's."""
    ids, mask, old, ref = group
    parts, size = [], gspo.micro_batch or len(ids)
    for start in range(0, len(ids), size):
        rows = slice(start, start + size)
        share = len(ids[rows]) / len(ids)
        logp = sequence_logprobs(model, ids[rows], mask[rows])
        out = gspo_loss(
            logp,
            old[rows],
            mask[rows],
            advantages[rows],
            gspo.eps_low,
            gspo.eps_high,
            None if ref is None else ref[rows],
            gspo.kl_coef,
        )
        (out.loss * share * weight).backward()
        parts.append((share, out))
    return GSPOOutput(
        loss=sum(share * out.loss.detach() for share, out in parts),
        ratios=torch.cat([out.ratios for _, out in parts]),
        clipped_fraction=sum(share * out.clipped_fraction for share, out in parts),
        kl=sum(share * out.kl for share, out in parts),
    )


def update_means(stats: list) -> dict:
    """A step's loss, clipped fraction and KL, averaged over its updates; None when no group was learned from."""
    if not stats:
        return {"loss": None, "clipped": None, "kl": None}
    return {
        "loss": sum(float(s.loss.detach()) for s in stats) / len(stats),
        "clipped": sum(s.clipped_fraction for s in stats) / len(stats),
        "kl": sum(s.kl for s in stats) / len(stats),
    }


def step_metrics(step: int, rollouts: Rollouts, stats: list, lr: float, seconds: float, warn_at: float) -> dict:
    """A step's line in metrics.jsonl, with a warning when at least `warn_at` of its groups are degenerate."""
    flat = [r for group in rollouts.rewards for r in group]
    degenerate = sum(len(set(group)) == 1 for group in rollouts.rewards) / len(rollouts.rewards)
    sampled = int(sum(float(mask.sum()) for _, mask, _, _ in rollouts.groups))
    formatted, verified = rollouts.formatted, rollouts.verified
    metrics = {
        "step": step,
        "reward": sum(flat) / len(flat),
        "reward_max": max(flat),
        "degenerate_groups": degenerate,
        "format_compliance": sum(formatted) / len(formatted),
        "verifier_pass": sum(verified) / len(verified) if verified else None,
        "judge_failures": rollouts.judge_failures,
        **update_means(stats),
        "lr": lr,
        "sampled_tokens": sampled,
        "tokens_per_s": sampled / max(seconds, 1e-9),  # sampled tokens per second of the whole step
        "seconds": seconds,
    }
    if degenerate >= warn_at:
        metrics["warning"] = (
            f"{degenerate:.0%} of groups have equal rewards (no gradient); format compliance "
            f"{metrics['format_compliance']:.0%}: train SFT longer, or raise --group-size"
        )
    return metrics


def run_rl(config: RLConfig, progress=None) -> dict:
    gspo = config.gspo
    require_sampling(gspo.temperature)
    rows = stage_rows(load_shards(config.data, RL_DIR), "rl")
    init = resolve_init(config.init)
    if init is None:
        raise ValueError("train rl needs --init: a CPT or SFT checkpoint (the policy to sharpen)")
    policy = load(init, on_device=False)  # the model RL trains: its own copy (training/loaded_model.py)
    reference = copy.deepcopy(policy.model).eval() if gspo.kl_coef else None
    optimizer = Optimizer(policy.model, gspo.lr, 0, config.max_steps, weight_decay=0.0, clip=gspo.clip, lr_floor=1.0)
    output = Path(config.output)
    output.mkdir(parents=True, exist_ok=True)
    step = optimizer.resume(output)
    judge = config.judge.build()
    order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(config.seed)).tolist()
    last: dict = {"step": step}
    with MetricsLog(output, config.report_to, resumed_from=step) as metrics:
        while step < config.max_steps:
            started = time.perf_counter()
            batch = [
                rows[order[(step * config.prompts_per_step + i) % len(rows)]] for i in range(config.prompts_per_step)
            ]
            rollouts = collect_rollouts(policy, reference, judge, batch, config, step)
            stats = update_policy(policy.model, optimizer, rollouts, gspo)
            step += 1
            last = step_metrics(
                step, rollouts, stats, optimizer.lr, time.perf_counter() - started, gspo.degenerate_warning
            )
            metrics.write(last)
            if progress is not None:
                progress(last)
            if checkpoint_due(step, config.save_every, config.max_steps):
                save_rl_checkpoint(optimizer, policy, config, init, step, last)
    return {**last, **reward_trend(output / METRICS_NAME)}


def save_rl_checkpoint(
    optimizer: Optimizer, policy: LoadedModel, config: RLConfig, init: str, step: int, last: dict
) -> None:
    info = {
        "stage": "rl",
        "init": init,
        "chat_format": policy.chat.name,
        "context_length": policy.window,
        "rl": config.as_dict(),
        "metrics": last,
    }
    optimizer.save(Path(config.output), step, info, policy.tokenizer)


def reward_trend(metrics: Path) -> dict:
    """Mean reward over the first and the last quarter of the run's steps (at least one step each)."""
    steps = read_metrics(metrics) if metrics.exists() else []
    if not steps:
        return {}
    k = max(1, len(steps) // 4)
    first, final = steps[:k], steps[-k:]
    return {
        "reward_first": sum(s["reward"] for s in first) / k,
        "reward_last": sum(s["reward"] for s in final) / k,
        "trend_steps": k,
    }
