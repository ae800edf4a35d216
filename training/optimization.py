"""The optimizer every training stage steps with: AdamW, a learning rate with linear warmup then cosine decay to a
floor, gradient clipping; and what a run folder keeps of it (checkpoints with exact resume; the metrics lines are
training/metrics_log.py's). CPT and SFT (training/loop.py) and RL (training/rl.py) use it alike."""

from pathlib import Path

import torch

from trajforge.training.checkpoint import drop_older_states, resume, save_checkpoint
from trajforge.training.schedule import warmup_cosine


class Optimizer:
    def __init__(
        self,
        model,
        lr: float,
        warmup_steps: int,
        total_steps: int,
        weight_decay: float,
        clip: float,
        lr_floor: float = 0.1,  # the share of lr the cosine decays to; 1.0 keeps the learning rate constant
    ):
        self.model, self.clip = model, clip
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.95))
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: warmup_cosine(s, warmup_steps, total_steps, lr_floor)
        )

    def step(self) -> float:
        """Clip the gradients, update, advance the schedule, clear the gradients; the norm before clipping."""
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(norm)

    @property
    def lr(self) -> float:
        return self.scheduler.get_last_lr()[0]

    def resume(self, run_dir: Path) -> int:
        """Model, optimizer, schedule and RNGs from the run folder's latest checkpoint; the step reached (0: none)."""
        return resume(run_dir, self.model, self.optimizer, self.scheduler)

    def save(self, run_dir: Path, step: int, info: dict, tokenizer=None) -> Path:
        """A checkpoint folder that serving, eval and a resumed run can each start from; the earlier checkpoints'
        trainer states, which no resume reads, are removed."""
        folder = save_checkpoint(
            Path(run_dir) / f"checkpoint-{step}", self.model, self.optimizer, self.scheduler, step, info, tokenizer
        )
        drop_older_states(run_dir, step)
        return folder


def checkpoint_due(step: int, save_every: int, last_step: int) -> bool:
    return step % save_every == 0 or step == last_step
