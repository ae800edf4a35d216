"""The training loop for real: a tiny model on a small corpus, exact resume, held-out loss, DDP on gloo."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from training.distributed import World
from training.loop import LoopConfig, train
from training.model import TinyModelConfig, build_tiny_model
from training.schedule import warmup_cosine
from training.sequences import packed_sequences

TINY = TinyModelConfig(hidden_size=32, intermediate_size=64, layers=2, heads=2, max_positions=256)
LOOP = LoopConfig(batch_size=2, grad_accum=2, lr=3e-3, warmup_steps=2, max_steps=6, eval_every=3, save_every=3)


@pytest.fixture(scope="module")
def sequences(corpus, tokenizer):
    return packed_sequences(corpus, tokenizer, 128)


def weights(folder: Path) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def test_schedule_warms_up_then_decays():
    values = [warmup_cosine(s, 4, 20) for s in range(20)]
    assert values[:4] == [0.25, 0.5, 0.75, 1.0]
    assert all(a >= b for a, b in zip(values[4:], values[5:], strict=False)) and values[-1] > 0.1


def test_loss_falls_and_checkpoints_are_complete(tmp_path, sequences, tokenizer):
    model = build_tiny_model(TINY, tokenizer, seed=0)
    last = train(model, sequences, sequences, LOOP, tmp_path, World(), {"test": True}, tokenizer)
    metrics = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3, 4, 5, 6]
    assert metrics[-1]["loss"] < metrics[0]["loss"]
    assert "eval_loss" in metrics[2] and "eval_loss" in last
    checkpoint = tmp_path / "checkpoint-6"
    assert {"model.safetensors", "config.json", "trainer_state.pt", "tokenizer.json"} <= {
        p.name for p in checkpoint.iterdir()
    }
    assert json.loads((checkpoint / "checkpoint.json").read_text())["step"] == 6


def test_resume_is_exact(tmp_path, sequences, tokenizer):
    straight = tmp_path / "straight"
    train(build_tiny_model(TINY, tokenizer, seed=0), sequences, None, LOOP, straight, World(), {}, tokenizer)
    interrupted = tmp_path / "interrupted"
    train(
        build_tiny_model(TINY, tokenizer, seed=0), sequences, None, LOOP, interrupted, World(), {}, tokenizer, until=3
    )
    assert (interrupted / "checkpoint-3").exists() and not (interrupted / "checkpoint-6").exists()
    # A fresh process would start from a fresh model: the checkpoint must bring back everything.
    train(build_tiny_model(TINY, tokenizer, seed=99), sequences, None, LOOP, interrupted, World(), {}, tokenizer)
    a, b = weights(straight / "checkpoint-6"), weights(interrupted / "checkpoint-6")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_torchrun_two_cpu_processes(tmp_path, corpus_dir):
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_"))}
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-port",
        "29517",
        "-m",
        "pipelines.cli",
        "train",
        "--data",
        str(corpus_dir),
        "-o",
        str(out),
        "--max-steps",
        "4",
        "--context-length",
        "128",
        "--batch-size",
        "2",
        "--hidden-size",
        "32",
        "--layers",
        "2",
        "--eval-every",
        "2",
        "--save-every",
        "2",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr[-3000:]
    info = json.loads((out / "checkpoint-4" / "checkpoint.json").read_text())
    assert info["world_size"] == 2 and info["step"] == 4
    metrics = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3, 4]  # written once, by rank 0
