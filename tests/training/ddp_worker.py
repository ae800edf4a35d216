"""One rank of the DDP test (tests/training/test_loop.py), run by torchrun: trains the tiny model through the real
loop and saves this rank's final weights, so the test can compare ranks with each other and with one process.

    python -m torch.distributed.run --nproc-per-node 2 -m tests.training.ddp_worker CORPUS TOKENIZER OUT
"""

import sys
from pathlib import Path

import torch

from trajforge.schemas.dataset import load_cpt
from trajforge.training.distributed import close_world, init_world
from trajforge.training.loop import LoopConfig, train
from trajforge.training.model import TinyModelConfig, build_tiny_model
from trajforge.training.sequences import packed_sequences
from trajforge.training.tokenizer import load_tokenizer

TINY = TinyModelConfig(hidden_size=32, intermediate_size=64, layers=2, heads=2, max_positions=256)
CONTEXT = 128


def loop_config(batch_size: int) -> LoopConfig:
    """batch_size per process: two ranks of 2 see the global batch that one process of 4 sees."""
    return LoopConfig(batch_size=batch_size, lr=3e-3, warmup_steps=1, max_steps=3, eval_every=0, save_every=10**6)


def run(corpus: Path, tokenizer_dir: Path, out: Path, batch_size: int, world) -> dict[str, torch.Tensor]:
    tokenizer = load_tokenizer(tokenizer_dir)
    sequences = packed_sequences(load_cpt(corpus), tokenizer, CONTEXT)
    model = build_tiny_model(TINY, tokenizer, seed=0)
    train(model, sequences, None, loop_config(batch_size), out, world, {})
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


if __name__ == "__main__":
    corpus, tokenizer_dir, out = map(Path, sys.argv[1:4])
    world = init_world()
    weights = run(corpus, tokenizer_dir, out / f"rank-{world.rank}", 2, world)
    torch.save(weights, out / f"rank-{world.rank}.pt")
    close_world(world)
