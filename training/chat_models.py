"""The chat models eval scores that need training code: a checkpoint folder sampled locally, and an untrained model
shaped like one. Both implement `trajforge.evaluation.models.ChatModel`; `trajforge eval` builds them and hands them
to the run."""

import json
from collections.abc import Sequence
from pathlib import Path

from trajforge.evaluation.models import Sampling
from trajforge.training.checkpoint import INFO_NAME
from trajforge.training.serving import LocalModel


def checkpoint_name(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}" if folder.name.startswith("checkpoint-") else folder.name


def stage_of(folder: Path) -> str | None:
    """cpt, cpt --no-mask, sft or rl for a trajforge checkpoint folder; None for anything else."""
    info_path = Path(folder) / INFO_NAME
    if not info_path.exists():
        return None
    info = json.loads(info_path.read_text())
    stage = info.get("stage")
    if stage == "cpt" and info.get("mask_mode") == "all":
        return "cpt --no-mask"
    return stage if stage in ("cpt", "sft", "rl") else None


class CheckpointModel:
    """A checkpoint folder, sampled locally."""

    def __init__(self, folder: Path, name: str | None = None):
        self.folder, self.local = Path(folder), LocalModel(folder)
        self.name, self.stage = name or checkpoint_name(self.folder), stage_of(self.folder)

    def answer(self, messages: list[dict], sampling: Sampling) -> str | None:
        return self.local.chat(messages, sampling.max_tokens, temperature=sampling.temperature, seed=sampling.seed)[0]

    def heldout_loss(self, rows: Sequence[dict]) -> float | None:
        from trajforge.training.distributed import World
        from trajforge.training.loop import LoopConfig, evaluate
        from trajforge.training.sequences import packed_sequences

        length = min(512, self.local.model.config.max_position_embeddings)
        sequences = packed_sequences(rows, self.local.tokenizer, length, mask_mode="all")
        return evaluate(self.local.model, sequences, LoopConfig(batch_size=4), World())


class UntrainedModel(CheckpointModel):
    """The same architecture and tokenizer as a checkpoint, random weights: what training bought, measured."""

    def __init__(self, like: Path):
        import torch
        from transformers import AutoModelForCausalLM

        super().__init__(like, name="untrained")
        self.stage = "untrained"
        torch.manual_seed(0)
        self.local.model = AutoModelForCausalLM.from_config(self.local.model.config).eval()
