"""Checkpoints: safetensors weights, optimizer and scheduler state, the data position and every RNG, so a
resumed run continues exactly where the interrupted one stopped.

Only a run's newest checkpoint keeps the trainer state (a run resumes from its newest): AdamW's state is twice the
weights (SmolLM2-135M: 1.1 GB a checkpoint), so an agent-RL run saving every quarter of its steps would hold 4.3 GB
of states no resume reads. Earlier checkpoints keep weights, config and tokenizer: each can still be served,
evaluated and trained on from (--init)."""

import json
import random
import shutil
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from trajforge.schemas.atomic import atomic_write

STATE_NAME = "trainer_state.pt"
WEIGHTS_NAME = "model.safetensors"
INFO_NAME = "checkpoint.json"


def rng_state() -> dict:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def restore_rng(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def save_checkpoint(folder: Path, model, optimizer, scheduler, step: int, info: dict, tokenizer=None) -> Path:
    """Write to a temporary folder, then rename: a checkpoint folder is always whole (weights, config, tokenizer,
    trainer state)."""
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    weights = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    # Tied embeddings share storage; safetensors wants each tensor once.
    seen, unique = set(), {}
    for name, tensor in weights.items():
        key = (tensor.data_ptr(), tuple(tensor.shape))
        if key not in seen:
            seen.add(key)
            unique[name] = tensor
    save_file(unique, str(tmp / WEIGHTS_NAME))
    model.config.save_pretrained(str(tmp))
    if tokenizer is not None:
        tokenizer.save_pretrained(str(tmp))
    torch.save(
        {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "step": step, "rng": rng_state()},
        tmp / STATE_NAME,
    )
    with atomic_write(tmp / INFO_NAME, "w") as f:
        json.dump({**info, "step": step}, f, indent=2)
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)
    return folder


def context_window(folder: str | Path, model) -> int:
    """The longest sequence a model may be asked to read: what its checkpoint recorded (the context it was trained on,
    or its starting model's when that is longer), else its position limit (a model trajforge did not train)."""
    limit = model.config.max_position_embeddings
    info = Path(folder) / INFO_NAME
    recorded = json.loads(info.read_text()).get("context_length") if info.exists() else None
    return min(int(recorded), limit) if recorded else limit


def load_weights(model, folder: Path) -> None:
    missing, unexpected = model.load_state_dict(load_file(str(Path(folder) / WEIGHTS_NAME)), strict=False)
    tied = {"lm_head.weight"} if getattr(model.config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise ValueError(f"checkpoint does not fit the model: missing {missing}, unexpected {unexpected}")
    if tied:
        model.tie_weights()


def load_state(folder: Path) -> dict:
    return torch.load(Path(folder) / STATE_NAME, weights_only=False)


def numbered_checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """The whole checkpoint folders of `run_dir` (not a save's .tmp) with their steps, in step order."""
    found = (p for p in Path(run_dir).glob("checkpoint-*") if p.is_dir() and p.name.split("-")[1].isdigit())
    return sorted((int(p.name.split("-")[1]), p) for p in found)


def drop_older_states(run_dir: Path, step: int) -> None:
    """Remove the trainer state of every checkpoint of `run_dir` before `step` (called once `step`'s is whole)."""
    for number, folder in numbered_checkpoints(run_dir):
        if number < step:
            (folder / STATE_NAME).unlink(missing_ok=True)


def latest_checkpoint(run_dir: Path) -> Path | None:
    checkpoints = numbered_checkpoints(run_dir)
    return checkpoints[-1][1] if checkpoints else None


def resume(run_dir: Path, model, optimizer, scheduler) -> int:
    """Load the latest checkpoint of run_dir into model, optimizer, scheduler and the RNGs; the step it reached
    (0 when there is none)."""
    folder = latest_checkpoint(run_dir)
    if folder is None:
        return 0
    if not (folder / STATE_NAME).exists():
        raise FileNotFoundError(
            f"{folder} holds weights only (a run keeps the trainer state of its newest checkpoint alone), so the run "
            f"cannot resume from it: give it as --init to train on from its weights, or another output folder"
        )
    load_weights(model, folder)
    state = load_state(folder)
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    restore_rng(state["rng"])
    return state["step"]
