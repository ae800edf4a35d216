"""The training loop shared by CPT and SFT: AdamW, warmup + cosine, gradient accumulation, clipping, bf16
autocast where the device supports it, DDP under torchrun, checkpoints with exact resume, metrics to JSON
Lines and a progress bar with loss and tokens/s.

Batches are packed sequences (training/packing.py): input_ids, labels (-100 = not in the loss) and
position_ids that restart at every document, fed with attention_mask=None and use_cache=False so that no
token attends across documents.
"""

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

from trajforge.training.configs import LoopConfig
from trajforge.training.distributed import World, all_reduce_sum
from trajforge.training.metrics_log import MetricsLog
from trajforge.training.model import default_lr
from trajforge.training.optimization import Optimizer, checkpoint_due
from trajforge.training.packing import PackedSequences


def collate(packed: PackedSequences, rows: list[int], device: torch.device) -> dict[str, torch.Tensor]:
    inputs = packed.model_inputs(rows)
    return {key: inputs[key].to(device) for key in ("input_ids", "labels", "position_ids")}


def batch_order(n: int, epoch: int, seed: int, world: World) -> list[int]:
    """This process's share of a seeded permutation of the sequences: the same for every run and resume."""
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    order = torch.randperm(n, generator=generator).tolist()
    return order[world.rank :: world.size]


def micro_batches(n: int, config: LoopConfig, world: World, start: int = 0) -> Iterator[list[int]]:
    """Micro-batches of sequence indices, forever, skipping the first `start` (a resumed run)."""
    per_epoch = max(1, len(batch_order(n, 0, config.seed, world)) // config.batch_size)
    index = start
    while True:
        epoch, offset = divmod(index, per_epoch)
        order = batch_order(n, epoch, config.seed, world)
        yield order[offset * config.batch_size : (offset + 1) * config.batch_size]
        index += 1


def token_loss_sum(model, batch: dict[str, torch.Tensor], autocast: bool) -> tuple[torch.Tensor, int]:
    """Summed next-token cross entropy over the tokens in the loss, and how many there were."""
    with torch.autocast(device_type=batch["input_ids"].device.type, dtype=torch.bfloat16, enabled=autocast):
        logits = model(
            input_ids=batch["input_ids"], position_ids=batch["position_ids"], attention_mask=None, use_cache=False
        ).logits
    targets = batch["labels"][:, 1:]
    loss = F.cross_entropy(logits[:, :-1].float().flatten(0, 1), targets.flatten(), ignore_index=-100, reduction="sum")
    return loss, int((targets != -100).sum())


@torch.no_grad()
def evaluate(model, sequences: PackedSequences, config: LoopConfig, world: World) -> float:
    """Mean loss per in-loss token over held-out sequences (all processes together), in the precision training
    computes in (bf16 moves it by ~0.03% on SmolLM2)."""
    model.eval()
    total, tokens = 0.0, 0
    autocast = bf16_autocast(config, world)
    mine = list(range(world.rank, len(sequences), world.size))
    for i in range(0, len(mine), config.batch_size):
        loss, n = token_loss_sum(model, collate(sequences, mine[i : i + config.batch_size], world.device), autocast)
        total, tokens = total + float(loss), tokens + n
    model.train()
    total, tokens = all_reduce_sum(total, world), all_reduce_sum(tokens, world)
    return total / max(1, tokens)


def train(
    model,
    train_sequences: PackedSequences,
    eval_sequences: PackedSequences | None,
    config: LoopConfig,
    run_dir: Path,
    world: World,
    info: dict,
    tokenizer=None,
    progress: Callable | None = None,
    until: int | None = None,
) -> dict:
    """Train until config.max_steps optimizer steps, resuming from the latest checkpoint in run_dir. Each
    checkpoint holds the tokenizer too, so that a checkpoint folder is all that serving needs. `until` stops
    early (with a checkpoint) without changing the schedule: a time-sliced job resumes where it stopped."""
    if not len(train_sequences):
        raise ValueError("no training sequences: is the corpus empty, or every turn masked?")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    model.to(world.device)
    if config.lr is None:
        config = replace(config, lr=default_lr(model))
    optimizer = Optimizer(model, config.lr, config.warmup_steps, config.max_steps, config.weight_decay, config.clip)
    step = optimizer.resume(run_dir)
    wrapped = DistributedDataParallel(model) if world.size > 1 else model
    autocast = bf16_autocast(config, world)
    batches = micro_batches(len(train_sequences), config, world, start=step * config.grad_accum)
    last: dict = {"step": step}
    model.train()
    stop = min(config.max_steps, until or config.max_steps)
    with MetricsLog(run_dir, config.report_to, resumed_from=step) as metrics:
        while step < stop:
            started = time.perf_counter()
            window = [collate(train_sequences, next(batches), world.device) for _ in range(config.grad_accum)]
            last = {"step": step + 1, **optimizer_step(wrapped, optimizer, window, world, autocast)}
            step += 1
            seen = all_reduce_sum(sum(b["input_ids"].numel() for b in window), world)
            last["tokens_per_s"] = seen / max(time.perf_counter() - started, 1e-9)
            if eval_due(config, step) and eval_sequences is not None and len(eval_sequences):
                last["eval_loss"] = evaluate(model, eval_sequences, config, world)
            if world.main:
                if step % config.log_every == 0 or "eval_loss" in last:
                    metrics.write(last)
                if progress is not None:
                    progress(last)
            if world.main and (checkpoint_due(step, config.save_every, config.max_steps) or step == stop):
                optimizer.save(run_dir, step, {**info, "loop": config.as_dict(), "metrics": last}, tokenizer)
    return last


def bf16_autocast(config: LoopConfig, world: World) -> bool:
    """Whether to autocast to bf16: as configured, else wherever the device supports it."""
    if config.bf16 is not None:
        return config.bf16
    return world.device.type == "cuda" and torch.cuda.is_bf16_supported()


def optimizer_step(wrapped, optimizer: Optimizer, window: list[dict], world: World, autocast: bool) -> dict:
    """One optimizer step over a window of micro-batches, gradients synchronised across processes on the last one
    only: the step's loss per in-loss token, learning rate, gradient norm and in-loss tokens, all processes together."""
    tokens = all_reduce_sum(sum(int((b["labels"][:, 1:] != -100).sum()) for b in window), world)
    loss_total = 0.0
    for i, batch in enumerate(window):
        sync = i == len(window) - 1 or world.size == 1
        context = wrapped.no_sync() if not sync and world.size > 1 else contextlib.nullcontext()
        with context:
            loss_sum, _ = token_loss_sum(wrapped, batch, autocast)
            # DDP averages gradients over processes: scale so the result is the sum over all in-loss tokens.
            (loss_sum * world.size / max(1.0, tokens)).backward()
        loss_total += float(loss_sum.detach())
    norm = optimizer.step()
    loss = all_reduce_sum(loss_total, world) / max(1.0, tokens)
    return {"loss": loss, "lr": optimizer.lr, "grad_norm": norm, "loss_tokens": int(tokens)}


def eval_due(config: LoopConfig, step: int) -> bool:
    """Every eval_every steps and at the last one (never with eval_every 0)."""
    return bool(config.eval_every) and (step % config.eval_every == 0 or step == config.max_steps)
