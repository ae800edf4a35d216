"""The training loop for real: a tiny model on a small corpus, exact resume, held-out loss, DDP on gloo."""

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from trajforge.training.distributed import World
from trajforge.training.labels import fit_to_context, label_documents
from trajforge.training.loop import LoopConfig, collate, evaluate, token_loss_sum, train
from trajforge.training.metrics_log import METRICS_NAME, read_metrics
from trajforge.training.model import TinyModelConfig, build_tiny_model
from trajforge.training.packing import pack
from trajforge.training.render import render_row
from trajforge.training.schedule import warmup_cosine
from trajforge.training.sequences import packed_sequences
from trajforge.training.tokenizer import save_tokenizer

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


def alone_loss_sum(model, documents) -> tuple[float, int]:
    """Next-token loss summed over each document run on its own, with nothing else in its row."""
    total, tokens = 0.0, 0
    with torch.no_grad():
        for doc in documents:
            ids, labels = torch.from_numpy(doc.input_ids)[None], torch.from_numpy(doc.labels)[None]
            logits = model(input_ids=ids).logits
            total += float(F.cross_entropy(logits[0, :-1], labels[0, 1:], ignore_index=-100, reduction="sum"))
            tokens += int((labels[0, 1:] != -100).sum())
    return total, tokens


def test_trainer_and_held_out_losses_equal_each_document_alone(corpus, tokenizer):
    """The loop's own model call (token_loss_sum, used by training and by evaluate) keeps packed documents apart."""
    docs = label_documents([render_row(row) for row in corpus.select(range(8))], tokenizer)
    docs = [chunk for doc in docs for chunk in fit_to_context(doc, 96)]
    packed = pack(docs, 256, tokenizer.pad_token_id)
    assert max(len(m) for m in packed.documents) > 2  # rows really hold several documents
    model = build_tiny_model(TINY, tokenizer, seed=0).eval()
    assert model.config.use_cache  # the model's own default would let a row's documents see each other
    # A random init attends almost uniformly, so a leak between documents moves the summed loss by only ~1e-5 of
    # it; sharper attention (larger projections) makes a leak move it by ~1e-3.
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if name.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight")):
                weight.mul_(6)
    expected, tokens = alone_loss_sum(model, docs)
    with torch.no_grad():
        loss, n = token_loss_sum(model, collate(packed, list(range(len(packed))), torch.device("cpu")), False)
    assert n == tokens == packed.loss_tokens
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    held_out = evaluate(model, packed, LoopConfig(batch_size=2), World())
    assert held_out == pytest.approx(expected / tokens, rel=1e-5)


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

    def killed_at_5(last):  # the run is stopped after step 5's line, before a checkpoint
        if last["step"] == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(build_tiny_model(TINY, tokenizer, seed=0), sequences, None, LOOP, interrupted, World(), {}, tokenizer,
              progress=killed_at_5)  # fmt: skip
    assert (interrupted / "checkpoint-3").exists() and not (interrupted / "checkpoint-5").exists()
    # A fresh process would start from a fresh model: the checkpoint must bring back everything.
    train(build_tiny_model(TINY, tokenizer, seed=99), sequences, None, LOOP, interrupted, World(), {}, tokenizer)
    a, b = weights(straight / "checkpoint-6"), weights(interrupted / "checkpoint-6")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    # Steps 4 and 5 ran twice; metrics.jsonl holds each step once, as the uninterrupted run's does.
    lines, again = read_metrics(straight / METRICS_NAME), read_metrics(interrupted / METRICS_NAME)
    assert [line["step"] for line in again] == [line["step"] for line in lines] == [1, 2, 3, 4, 5, 6]
    assert [line["loss"] for line in again] == pytest.approx([line["loss"] for line in lines])


def test_only_the_newest_checkpoint_keeps_the_trainer_state_and_a_run_cannot_resume_from_weights_alone(
    tmp_path, sequences, tokenizer
):
    train(build_tiny_model(TINY, tokenizer, seed=0), sequences, None, LOOP, tmp_path, World(), {}, tokenizer)
    first, newest = tmp_path / "checkpoint-3", tmp_path / "checkpoint-6"
    assert (newest / "trainer_state.pt").exists() and not (first / "trainer_state.pt").exists()
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= {p.name for p in first.iterdir()}
    shutil.rmtree(newest)
    with pytest.raises(FileNotFoundError, match="checkpoint-3 holds weights only"):
        train(build_tiny_model(TINY, tokenizer, seed=0), sequences, None, LOOP, tmp_path, World(), {}, tokenizer)


def test_bf16_autocast_on_the_cpu_computes_in_bf16_and_keeps_fp32_weights(tmp_path, sequences, tokenizer):
    model = build_tiny_model(TINY, tokenizer, seed=0)
    batch = collate(sequences, [0, 1], torch.device("cpu"))
    with torch.no_grad():
        full, tokens = token_loss_sum(model, batch, False)
        half, same_tokens = token_loss_sum(model, batch, True)
    assert tokens == same_tokens and float(half) != float(full)  # the matmuls really ran in bf16
    assert float(half) == pytest.approx(float(full), rel=2e-2)
    held_out, held_out_bf16 = (evaluate(model, sequences, replace(LOOP, bf16=b), World()) for b in (False, True))
    assert held_out_bf16 != held_out and held_out_bf16 == pytest.approx(held_out, rel=2e-2)
    train(model, sequences, None, replace(LOOP, bf16=True), tmp_path, World(), {}, tokenizer)
    losses = [json.loads(x)["loss"] for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert losses[-1] < losses[0]
    assert {w.dtype for w in weights(tmp_path / "checkpoint-6").values()} == {torch.float32}


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
        "trajforge",
        "train",
        "cpt",
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


@pytest.mark.slow
def test_two_ranks_end_equal_to_one_process_on_the_same_global_batch(tmp_path, corpus_dir, sequences, tokenizer):
    """DDP syncs gradients: two torchrun ranks of 2 sequences each end with the weights of one process of 4."""
    from tests.training import ddp_worker

    assert len(sequences) >= 4 * ddp_worker.loop_config(4).max_steps  # every step inside the first epoch
    save_tokenizer(tokenizer, tmp_path / "tokenizer")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_"))}
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29519"]
    argv += ["-m", "tests.training.ddp_worker", str(corpus_dir), str(tmp_path / "tokenizer"), str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr[-3000:]
    rank0, rank1 = (torch.load(tmp_path / f"rank-{r}.pt") for r in (0, 1))
    single = ddp_worker.run(corpus_dir, tmp_path / "tokenizer", tmp_path / "single", 4, World())
    start = build_tiny_model(ddp_worker.TINY, tokenizer, seed=0).state_dict()
    assert rank0.keys() == rank1.keys() == single.keys()
    for name in single:
        assert torch.equal(rank0[name], rank1[name]), name
        assert not torch.equal(single[name], start[name]), name  # trained, so equality below means something
        assert torch.allclose(rank0[name], single[name], atol=1e-5, rtol=1e-4), name
