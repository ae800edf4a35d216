"""The CPT, SFT and agent-SFT stages (RL is training/rl.py): CPT on masked corpus shards, SFT on curated shards,
agent SFT on the successful trajectories of training tasks (training/agent_data.py). Each prepares its data
(tokenizer, packed sequences, the rows its split allows, rendered in the roles --role asks for) and hands it to the
one loop. CPT's held-out loss is over the corpus's validation tasks (never its test part, which eval reads); SFT
and agent-SFT data hold neither (curate-sft skips them, agent SFT never reads them), so they validate on a share of
their own trajectories."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from trajforge.schemas.dataset import load_shards, part_rows, stage_rows
from trajforge.training.agent_data import successful_trajectories
from trajforge.training.agent_render import ROLES, role_render
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

STAGES = ("cpt", "sft", "agent-sft")
# The roles a stage may train: SFT rows are world-model queries, not trajectories; agent SFT teaches the agent.
STAGE_ROLES = {"cpt": ROLES, "sft": ("world",), "agent-sft": ("agent", "both")}


@dataclass(frozen=True)
class StageData:
    split: TrajectorySplit
    render: Callable  # a row -> its documents (agent_render.role_render)
    overflow: str  # how a document longer than the context is fitted (training/labels.py)
    trajectories: dict | None = None  # agent SFT: how many were read, kept and dropped by outcome


def run_stage(config: StageConfig, world: World, progress=None, eval_only: bool = False) -> dict:
    """Train the stage; with `eval_only`, just the held-out loss of the starting model."""
    data = stage_data(config)
    init = resolve_init(config.init)
    tokenizer = stage_tokenizer(config, init, data)
    model = stage_model(config, init, tokenizer)
    chat = ChatFormat.of(tokenizer)
    if config.context_length > model.config.max_position_embeddings:
        raise ValueError(f"context_length {config.context_length} > the model's {model.config.max_position_embeddings}")
    counts = {"trajectories": data.trajectories} if data.trajectories else {}
    # Held-out loss is over every observation token (agent documents: every action), so runs with and without
    # masking compare.
    eval_sequences = packed_sequences(
        data.split.held_out, tokenizer, config.context_length, "all", data.overflow, render=data.render
    )
    if eval_only:
        model.to(world.device)
        loss = evaluate(model, eval_sequences, config.loop, world)
        return {"step": 0, "eval_loss": loss, "held_out_rows": len(data.split.held_out), **counts}
    train_sequences = packed_sequences(
        data.split.train, tokenizer, config.context_length, config.mask_mode, data.overflow, render=data.render
    )
    output = Path(config.output)
    if world.main:
        save_tokenizer(tokenizer, output / "tokenizer")
        write_data_summary(output / "data.json", config, data, train_sequences)
    info = {
        "stage": config.stage,
        "data": str(config.data),
        "init": init,
        "mask_mode": config.mask_mode,
        "role": config.role,
        "chat_format": chat.name,
        "vocab_size": len(tokenizer),
        "world_size": world.size,
        "packing_efficiency": train_sequences.efficiency,
        # the longest prompt + answer it may be asked for: the context it was trained on, or its starting model's
        "context_length": max(config.context_length, context_window(init, model)) if init else config.context_length,
        **counts,
    }
    last = train(model, train_sequences, eval_sequences, config.loop, output, world, info, tokenizer, progress)
    return {**last, **counts}


def stage_data(config: StageConfig) -> StageData:
    """The stage's rows, split, and how they are rendered (module docstring)."""
    if config.stage not in STAGES:
        raise ValueError(f"stage {config.stage!r}: the trainer runs {', '.join(STAGES)}")
    if config.role not in STAGE_ROLES[config.stage]:
        roles = " or ".join(STAGE_ROLES[config.stage])
        raise ValueError(f"--role {config.role!r}: {config.stage} trains the role {roles}")
    if config.stage == "agent-sft":
        agent = successful_trajectories(config.data)
        split = split_by_trajectory(agent.rows, config.held_out, seed=config.loop.seed)
        return StageData(split, role_render(config.role), "split", agent.summary())
    rows = load_shards(Path(config.data), config.stage)
    world = render_row if config.stage == "cpt" else render_sft_row
    # An SFT answer is learned in the view generation later gives a long prompt (training/labels.py).
    overflow = "split" if config.stage == "cpt" else "trim_history"
    return StageData(stage_split(config, rows), role_render(config.role, world), overflow)


def stage_split(config: StageConfig, rows) -> TrajectorySplit:
    """The rows the stage trains on, and those its held-out loss is over: for CPT the corpus's validation tasks (a
    curve read at every --eval-every, so never the test part, which eval reads once); for SFT, whose data holds
    none, a share of its own trajectories."""
    if config.stage == "cpt":
        return TrajectorySplit(train=stage_rows(rows, "cpt"), held_out=part_rows(rows, "validation"))
    return split_by_trajectory(stage_rows(rows, config.stage), config.held_out, seed=config.loop.seed)


def stage_tokenizer(config: StageConfig, init: str | None, data: StageData):
    """The tokenizer named by --tokenizer, else the starting model's, else one trained on the training rows as the
    stage renders them."""
    source = config.tokenizer or init
    if source:
        return load_tokenizer(source)
    return train_tokenizer(rendered_texts(data.split.train, data.render), config.vocab_size)


def stage_model(config: StageConfig, init: str | None, tokenizer):
    """The starting checkpoint's model, else a tiny model built for the tokenizer."""
    if init:
        return load_model_for(init, tokenizer)
    return build_tiny_model(config.model, tokenizer, seed=config.loop.seed)


def write_data_summary(path: Path, config: StageConfig, data: StageData, train_sequences) -> None:
    """data.json: how many rows and sequences the run trains on, how well they packed, what agent SFT read and
    dropped, and its config."""
    summary = {
        "train_rows": len(data.split.train),
        "held_out_rows": len(data.split.held_out),
        **({"trajectories": data.trajectories} if data.trajectories else {}),
        "train_sequences": len(train_sequences),
        "packing_efficiency": round(train_sequences.efficiency, 4),
        "loss_tokens": train_sequences.loss_tokens,
        "config": config.as_dict(),
    }
    path.write_text(json.dumps(summary, indent=2))
