"""The CPT and SFT stages (RL is training/rl.py): CPT on masked corpus shards, SFT on curated shards. Each
prepares its data (tokenizer, packed sequences, the rows its split allows) and hands it to the one loop. CPT's
held-out loss is over the corpus's held-out tasks; SFT data holds none (curate-sft skips them), so SFT validates
on a share of its own trajectories."""

import json
from pathlib import Path

from trajforge.schemas.dataset import held_out_rows, load_shards, stage_rows
from trajforge.training.chat_format import ChatFormat
from trajforge.training.checkpoint import context_window
from trajforge.training.configs import StageConfig
from trajforge.training.data import TrajectorySplit, split_by_trajectory
from trajforge.training.distributed import World
from trajforge.training.loop import evaluate, train
from trajforge.training.model import build_tiny_model, load_model_for, resolve_init
from trajforge.training.render import render_row, render_sft_row
from trajforge.training.sequences import packed_sequences, rendered_texts
from trajforge.training.tokenizer import load_tokenizer, save_tokenizer, train_tokenizer

STAGES = ("cpt", "sft")


def run_stage(config: StageConfig, world: World, progress=None, eval_only: bool = False) -> dict:
    """Train the stage; with `eval_only`, just the held-out next-observation loss of the starting model."""
    if config.stage not in STAGES:
        raise ValueError(f"stage {config.stage!r}: the trainer runs {', '.join(STAGES)}")
    data = Path(config.data)
    split = stage_split(config, load_shards(data, config.stage))
    render = render_row if config.stage == "cpt" else render_sft_row
    # An SFT answer is learned in the view generation later gives a long prompt (training/labels.py).
    overflow = "split" if config.stage == "cpt" else "trim_history"
    init = resolve_init(config.init)
    tokenizer = stage_tokenizer(config, init, split)
    model = stage_model(config, init, tokenizer)
    chat = ChatFormat.of(tokenizer)
    if config.context_length > model.config.max_position_embeddings:
        raise ValueError(f"context_length {config.context_length} > the model's {model.config.max_position_embeddings}")
    # Held-out loss is over every observation token, so runs with and without masking compare.
    eval_sequences = packed_sequences(
        split.held_out, tokenizer, config.context_length, "all", overflow, render=render
    )
    if eval_only:
        model.to(world.device)
        return {
            "step": 0,
            "eval_loss": evaluate(model, eval_sequences, config.loop, world),
            "held_out_rows": len(split.held_out),
        }
    train_sequences = packed_sequences(
        split.train, tokenizer, config.context_length, config.mask_mode, overflow, render=render
    )
    output = Path(config.output)
    if world.main:
        save_tokenizer(tokenizer, output / "tokenizer")
        write_data_summary(output / "data.json", config, split, train_sequences)
    info = {
        "stage": config.stage,
        "data": str(data),
        "init": init,
        "mask_mode": config.mask_mode,
        "chat_format": chat.name,
        "vocab_size": len(tokenizer),
        "world_size": world.size,
        "packing_efficiency": train_sequences.efficiency,
        # the longest prompt + answer it may be asked for: the context it was trained on, or its starting model's
        "context_length": max(config.context_length, context_window(init, model)) if init else config.context_length,
    }
    return train(model, train_sequences, eval_sequences, config.loop, output, world, info, tokenizer, progress)


def stage_split(config: StageConfig, rows) -> TrajectorySplit:
    """The rows the stage trains on, and those its held-out loss is over: for CPT the corpus's held-out tasks; for
    SFT, whose data holds none, a share of its own trajectories."""
    if config.stage == "cpt":
        return TrajectorySplit(train=stage_rows(rows, "cpt"), held_out=held_out_rows(rows))
    return split_by_trajectory(stage_rows(rows, config.stage), config.held_out, seed=config.loop.seed)


def stage_tokenizer(config: StageConfig, init: str | None, split: TrajectorySplit):
    """The tokenizer named by --tokenizer, else the starting model's, else one trained on the training rows."""
    source = config.tokenizer or init
    if source:
        return load_tokenizer(source)
    return train_tokenizer(rendered_texts(split.train), config.vocab_size)


def stage_model(config: StageConfig, init: str | None, tokenizer):
    """The starting checkpoint's model, else a tiny model built for the tokenizer."""
    if init:
        return load_model_for(init, tokenizer)
    return build_tiny_model(config.model, tokenizer, seed=config.loop.seed)


def write_data_summary(path: Path, config: StageConfig, split: TrajectorySplit, train_sequences) -> None:
    """data.json: how many rows and sequences the run trains on, how well they packed, and its config."""
    summary = {
        "train_rows": len(split.train),
        "held_out_rows": len(split.held_out),
        "train_sequences": len(train_sequences),
        "packing_efficiency": round(train_sequences.efficiency, 4),
        "loss_tokens": train_sequences.loss_tokens,
        "config": config.as_dict(),
    }
    path.write_text(json.dumps(summary, indent=2))
