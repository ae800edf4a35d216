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
import json
import time
from pathlib import Path

import torch

from trajforge.evaluation.extraction import extract_prediction
from trajforge.schemas.dataset import load_shards, stage_rows
from trajforge.schemas.names import RL_DIR
from trajforge.training.chat_format import ChatFormat
from trajforge.training.checkpoint import context_window
from trajforge.training.configs import RLConfig
from trajforge.training.generation import fit_window, prompt_ids, sample, stop_ids
from trajforge.training.gspo import group_advantages, gspo_loss, sequence_logprobs
from trajforge.training.model import load_model_for, resolve_init
from trajforge.training.optimization import METRICS_NAME, Optimizer, append_metrics, checkpoint_due
from trajforge.training.rewards import row_reward
from trajforge.training.tokenizer import load_tokenizer


@torch.no_grad()
def rollout(
    model, tokenizer, chat: ChatFormat, row: dict, config: RLConfig, seed: int, window: int
) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """G samples for one prompt (fitted to the policy's context window, as serving fits it): the token ids (prompt
    + response), the response mask, the decoded responses."""
    prompt = torch.tensor([fit_window(prompt_ids(row["messages"], tokenizer, chat), window, config.max_new_tokens)])
    stops = stop_ids(tokenizer, chat)
    room = window - prompt.shape[1]
    output = sample(
        model,
        prompt.repeat(config.group_size, 1),
        stops,
        tokenizer.pad_token_id,
        max(1, min(config.max_new_tokens, room)),
        config.temperature,
        seed=seed,
    )
    response = output[:, prompt.shape[1] :]
    mask = torch.zeros_like(output, dtype=torch.float32)
    texts = []
    for i in range(config.group_size):
        ends = torch.isin(response[i], torch.tensor(stops)).nonzero()
        length = int(ends[0]) + 1 if len(ends) else response.shape[1]
        mask[i, prompt.shape[1] : prompt.shape[1] + length] = 1
        texts.append(tokenizer.decode(response[i, :length], skip_special_tokens=True))
    return output, mask, texts


def run_rl(config: RLConfig, progress=None) -> dict:
    rows = stage_rows(load_shards(config.data, RL_DIR), "rl")
    init = resolve_init(config.init)
    if init is None:
        raise ValueError("--stage rl needs --init: a CPT or SFT checkpoint (the policy to sharpen)")
    tokenizer = load_tokenizer(init)
    chat = ChatFormat.of(tokenizer)
    model = load_model_for(init, tokenizer)
    window = context_window(init, model)
    reference = copy.deepcopy(model).eval() if config.kl_coef else None
    optimizer = Optimizer(model, config.lr, 0, config.max_steps, weight_decay=0.0, clip=config.clip, lr_floor=1.0)
    output = Path(config.output)
    output.mkdir(parents=True, exist_ok=True)
    step = optimizer.resume(output)
    judge = config.judge.build()
    order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(config.seed)).tolist()
    last: dict = {"step": step}
    while step < config.max_steps:
        started = time.perf_counter()
        batch = [rows[order[(step * config.prompts_per_step + i) % len(rows)]] for i in range(config.prompts_per_step)]
        model.eval()
        groups, rewards, verified, formatted, judge_failures = [], [], [], [], 0
        for j, row in enumerate(batch):
            ids, mask, texts = rollout(model, tokenizer, chat, row, config, config.seed * 7919 + step * 101 + j, window)
            scored = [row_reward(judge, row, t) for t in texts]
            formatted += [extract_prediction(t).tagged for t in texts]
            rewards.append([r.total for r in scored])
            verified += [r.verifier == 25.0 for r in scored if r.verifier is not None]
            judge_failures += sum(r.judge_failure is not None for r in scored)  # rewarded 0 by the judge
            with torch.no_grad():
                old = sequence_logprobs(model, ids, mask)
                ref = sequence_logprobs(reference, ids, mask) if reference is not None else None
            groups.append((ids, mask[:, 1:], old, ref))
        advantages = group_advantages(torch.tensor(rewards, dtype=torch.float32))
        model.train()
        stats = []
        for _ in range(config.updates_per_batch):
            for (ids, mask, old, ref), adv in zip(groups, advantages, strict=True):
                logp = sequence_logprobs(model, ids, mask)
                out = gspo_loss(logp, old, mask, adv, config.eps_low, config.eps_high, ref, config.kl_coef)
                out.loss.backward()
                optimizer.step()
                stats.append(out)
        step += 1
        flat = [r for group in rewards for r in group]
        degenerate = sum(len(set(group)) == 1 for group in rewards) / len(rewards)
        sampled = int(sum(float(mask.sum()) for _, mask, _, _ in groups))
        seconds = time.perf_counter() - started
        last = {
            "step": step,
            "reward": sum(flat) / len(flat),
            "reward_max": max(flat),
            "degenerate_groups": degenerate,
            "format_compliance": sum(formatted) / len(formatted),
            "verifier_pass": sum(verified) / len(verified) if verified else None,
            "judge_failures": judge_failures,
            "loss": sum(float(s.loss.detach()) for s in stats) / len(stats),
            "lr": optimizer.lr,
            "clipped": sum(s.clipped_fraction for s in stats) / len(stats),
            "kl": sum(s.kl for s in stats) / len(stats),
            "sampled_tokens": sampled,
            "tokens_per_s": sampled / max(seconds, 1e-9),  # sampled tokens per second of the whole step
            "seconds": seconds,
        }
        if degenerate >= config.degenerate_warning:
            last["warning"] = (
                f"{degenerate:.0%} of groups have equal rewards (no gradient); format compliance "
                f"{last['format_compliance']:.0%}: train SFT longer, or raise --group-size"
            )
        append_metrics(output, last)
        if progress is not None:
            progress(last)
        if checkpoint_due(step, config.save_every, config.max_steps):
            info = {
                "stage": "rl",
                "init": init,
                "chat_format": chat.name,
                "context_length": window,
                "rl": config.as_dict(),
                "metrics": last,
            }
            optimizer.save(output, step, info, tokenizer)
    return {**last, **reward_trend(output / METRICS_NAME)}


def reward_trend(metrics: Path) -> dict:
    """Mean reward over the first and the last quarter of the run's steps (at least one step each)."""
    steps = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()] if metrics.exists() else []
    if not steps:
        return {}
    k = max(1, len(steps) // 4)
    first, final = steps[:k], steps[-k:]
    return {
        "reward_first": sum(s["reward"] for s in first) / k,
        "reward_last": sum(s["reward"] for s in final) / k,
        "trend_steps": k,
    }
