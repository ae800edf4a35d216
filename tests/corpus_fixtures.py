"""A small CPT corpus built by build-corpus with a span-mode policy, and a tokenizer trained on it; built once.

Shared by the training and curate-sft tests through the root conftest."""

import json
from pathlib import Path

import pytest

from tests.builders import make_trajectory
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.build_corpus.pipeline import build_corpus
from trajforge.schemas.dataset import load_cpt
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.splits import SplitConfig
from trajforge.training.sequences import rendered_texts
from trajforge.training.tokenizer import train_tokenizer

# Three kinds of turns: a terse one out of the loss, a long listing with only its head half in the loss (span mode),
# and a note kept whole whose text contains a chat marker.
SPAN_POLICY = """
name: test-spans
keep_mode: span
span: {layout: head, chunk_chars: 64}
rules:
  - {category: terse, keep: 0.0, when: [{stat: observation_chars, op: "<", value: 12}]}
  - {category: listing, keep: 0.5, when: [{stat: observation_chars, op: ">=", value: 100}]}
  - {category: other, keep: 1.0, when: []}
"""
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike oscar papa romeo".split()
TRAJECTORIES = 24


def corpus_trajectory(k: int):
    word = WORDS[k % len(WORDS)]
    listing = "".join(f"{word}-{k}-file-{j}.txt  size {j * 37 + k}\n" for j in range(6))
    turns = [
        {"index": 0, "action": {"kind": "shell", "content": f"touch {word}{k}.txt"}, "observation": {"content": "ok"}},
        {"index": 1, "action": {"kind": "shell", "content": f"ls -1 {word}{k}"}, "observation": {"content": listing}},
        {
            "index": 2,
            "action": {"kind": "tool_call", "name": "read_note", "content": json.dumps({"note": f"{word}{k}"})},
            "observation": {"content": f"note {word} {k}: remember <|end|> the {WORDS[k * 7 % len(WORDS)]}"},
        },
    ]
    return make_trajectory(turns=turns, task_description=f"Inspect the {word} folder number {k}.")


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("training-corpus")
    raw = root / "raw"
    raw.mkdir()
    (root / "policy.yaml").write_text(SPAN_POLICY)
    write_segments([corpus_trajectory(k) for k in range(TRAJECTORIES)], raw, per_file=8)
    # Small shards, so loading concatenates several files.
    build_corpus(
        [str(raw)],
        root / "corpus",
        BuildConfig(masking_policy=str(root / "policy.yaml"), shard_bytes=4000, split=SplitConfig(held_out=0.25)),
        workers=1,
    )
    return root / "corpus"


@pytest.fixture(scope="session")
def corpus(corpus_dir):
    return load_cpt(corpus_dir)


@pytest.fixture(scope="session")
def tokenizer(corpus):
    return train_tokenizer(rendered_texts(corpus), vocab_size=512)


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory, corpus, tokenizer) -> Path:
    """A tiny model trained two steps on the corpus: a real checkpoint folder (weights, config, tokenizer)."""
    from trajforge.training.distributed import World
    from trajforge.training.loop import LoopConfig, train
    from trajforge.training.model import TinyModelConfig, build_tiny_model
    from trajforge.training.sequences import packed_sequences

    run = tmp_path_factory.mktemp("tiny-run")
    model = build_tiny_model(
        TinyModelConfig(hidden_size=32, intermediate_size=64, layers=2, heads=2, max_positions=1024), tokenizer
    )
    train(
        model,
        packed_sequences(corpus, tokenizer, 128),
        None,
        LoopConfig(batch_size=2, max_steps=2, save_every=2),
        run,
        World(),
        {},
        tokenizer,
    )
    return run / "checkpoint-2"


@pytest.fixture(scope="session")
def served_model(tiny_checkpoint):
    """`tiny_checkpoint` behind the real OpenAI-compatible server on a loopback port: (base URL, model name)."""
    import socket
    import threading
    import time

    import uvicorn

    from trajforge.training.serving import LocalModel, build_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = build_app(LocalModel(tiny_checkpoint), "tiny-world-model")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/v1", "tiny-world-model"
    server.should_exit = True
    thread.join(timeout=5)


def _run_job(args: list[str]) -> None:
    from typer.testing import CliRunner

    from trajforge.pipelines.cli import app

    result = CliRunner().invoke(app, [*args, "--workers", "1"])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="session")
def rl_dir(tmp_path_factory, corpus_dir) -> Path:
    """prepare-rl's output for the corpus: RL prompts with references and verifiers."""
    out = tmp_path_factory.mktemp("rl-data")
    _run_job(["prepare-rl", "-i", str(corpus_dir), "-o", str(out)])
    return out


@pytest.fixture(scope="session")
def sft_dir(tmp_path_factory, corpus_dir) -> Path:
    """curate-sft's output for the corpus (the embedded judge, one candidate per trajectory)."""
    out = tmp_path_factory.mktemp("sft-data")
    _run_job(["curate-sft", "-i", str(corpus_dir), "-o", str(out), "--per-trajectory", "1"])
    return out
