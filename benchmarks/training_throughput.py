"""Packing efficiency on documents of varied lengths (best-fit decreasing against a naive first-fit on the same
documents), and trainer throughput against a bare torch loop over the same model and batch shapes.

    .venv/bin/python benchmarks/training_throughput.py [--corpus data/demo/corpus] [--steps 30]
    .venv/bin/python benchmarks/training_throughput.py --init smollm2 --context-length 1024 --steps 4

Targets: packing keeps >= 95% of tokens non-padding; trainer tokens/s >= 0.8x the bare loop. Then the trainer with
--bf16 (autocast) against itself in fp32 on the same batches: the speed-up, and both runs' last loss.
Without --corpus, a synthetic corpus of varied lengths is built first (build-corpus on generated raw
trajectories: 1 to 40 turns each, observation lengths log-normal), so packing has real work to do.
"""

import argparse
import functools
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F
from results_record import add_results_option, start_record

sys.path.insert(0, str(Path(__file__).parent))


def varied_raw(folder: Path, trajectories: int, seed: int = 0) -> None:
    """Raw segments whose trajectories differ in length the way collected ones do: a few turns to dozens, short
    acknowledgements to long listings (log-normal observation lengths)."""
    from build_corpus_throughput import WORDS

    from trajforge.schemas.records import new_trajectory
    from trajforge.schemas.sinks import write_segments

    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(n))

    def record(i: int):
        turns = [
            {
                "index": t,
                "action": {"kind": "shell", "content": f"grep -n {text(rng.randint(1, 6))}"},
                "observation": {"content": text(min(800, int(rng.lognormvariate(3.0, 1.1)) + 1)), "exit_code": 0},
            }
            for t in range(min(40, int(rng.expovariate(1 / 6)) + 2))
        ]
        return new_trajectory(
            domain="terminal",
            source={"kind": "collected", "by": "bench", "run_id": "bench", "origin": f"b#{i}"},
            environment={"name": "bench"},
            task_description=text(rng.randint(6, 30)),
            agent={"name": "bench"},
            turns=turns,
        )

    write_segments((record(i) for i in range(trajectories)), folder, per_file=500)


def corpus_folder(given: str | None, tmp: Path) -> Path:
    if given:
        return Path(given)
    from trajforge.pipelines.build_corpus.config import BuildConfig
    from trajforge.pipelines.build_corpus.pipeline import build_corpus

    varied_raw(tmp / "raw", 600)
    build_corpus([str(tmp / "raw")], tmp / "corpus", BuildConfig(), workers=1)
    return tmp / "corpus"


def first_fit_rows(lengths: list[int], capacity: int) -> int:
    """The naive baseline: documents in corpus order, each into the first row with room. How many rows."""
    free: list[int] = []
    for size in lengths:
        for r, room in enumerate(free):
            if room >= size:
                free[r] -= size
                break
        else:
            free.append(capacity - size)
    return len(free)


def packing_report(rows, tokenizer) -> None:
    from trajforge.training.packing import pack
    from trajforge.training.sequences import tokenized_documents

    for length in (512, 1024, 2048):
        documents = tokenized_documents(rows, tokenizer, length)
        sizes = [len(d) for d in documents]
        if length == 512:
            deciles = statistics.quantiles(sizes, n=10)
            print(
                f"documents: {len(rows)} rows -> {len(sizes)} documents at 512 tokens; tokens per document min "
                f"{min(sizes)}, p10 {deciles[0]:.0f}, median {statistics.median(sizes):.0f}, p90 {deciles[-1]:.0f}, "
                f"max {max(sizes)} (longer ones split at the context length)"
            )
        ours = pack(documents, length, tokenizer.pad_token_id)
        naive = first_fit_rows(sizes, length)
        print(
            f"packing at {length} tokens: best-fit decreasing {len(ours)} rows, {ours.efficiency:.2%} non-padding; "
            f"first-fit in corpus order {naive} rows, {sum(sizes) / (naive * length):.2%}; "
            f"{naive / len(ours):.3f}x the rows (target >= 95% non-padding)"
        )


def bare_loop(model, packed, batch_size: int, steps: int) -> float:
    """The least a trainer can do: forward, loss, backward, AdamW. Tokens per second."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    rows = list(range(len(packed)))
    start, tokens = time.perf_counter(), 0
    for step in range(steps):
        index = [rows[(step * batch_size + i) % len(rows)] for i in range(batch_size)]
        batch = packed.model_inputs(index)
        logits = model(
            input_ids=batch["input_ids"], position_ids=batch["position_ids"], attention_mask=None, use_cache=False
        ).logits
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), batch["labels"][:, 1:].flatten(), ignore_index=-100)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        tokens += batch["input_ids"].numel()
    return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--context-length", type=int, default=512)
    parser.add_argument("--init", help="smollm2 or a model folder to time instead of the tiny default")
    add_results_option(parser)
    args = parser.parse_args()
    record = start_record("training-throughput", args)

    from trajforge.schemas.dataset import load_cpt
    from trajforge.training.distributed import World
    from trajforge.training.loop import LoopConfig, train
    from trajforge.training.model import TinyModelConfig, build_tiny_model, load_model_for, resolve_init
    from trajforge.training.sequences import packed_sequences, rendered_texts
    from trajforge.training.tokenizer import load_tokenizer, train_tokenizer

    torch.set_num_threads(max(1, torch.get_num_threads()))
    with tempfile.TemporaryDirectory() as tmp:
        rows = load_cpt(corpus_folder(args.corpus, Path(tmp)))
        if args.init:
            folder = resolve_init(args.init)
            tokenizer = load_tokenizer(folder)
            model = functools.partial(load_model_for, folder, tokenizer)
        else:
            tokenizer = train_tokenizer(rendered_texts(rows), 4096)
            model = functools.partial(build_tiny_model, TinyModelConfig(), tokenizer, seed=0)
        packing_report(rows, tokenizer)
        packed = packed_sequences(rows, tokenizer, args.context_length)
        first = model()
        parameters = sum(p.numel() for p in first.parameters())
        bare = bare_loop(first, packed, args.batch_size, args.steps)
        loop = LoopConfig(
            batch_size=args.batch_size, max_steps=args.steps, eval_every=0, save_every=10**9, warmup_steps=1
        )
        timed = {}
        for bf16 in (False, True):
            start = time.perf_counter()
            last = train(model(), packed, None, replace(loop, bf16=bf16), Path(tmp) / f"run-{bf16}", World(), {})
            timed[bf16] = (args.steps * args.batch_size * args.context_length / (time.perf_counter() - start), last)
    ours, half = timed[False][0], timed[True][0]
    print(
        f"bare torch loop: {bare:,.0f} tokens/s; trainer: {ours:,.0f} tokens/s; ratio {ours / bare:.2f}x "
        f"(target >= 0.8x); model {parameters:,} "
        f"parameters, batch {args.batch_size} x {args.context_length}"
    )
    print(
        f"trainer --bf16: {half:,.0f} tokens/s, {half / ours:.2f}x fp32 (AMX on this CPU: "
        f"{torch.cpu._is_amx_tile_supported()}); last loss {timed[True][1]['loss']:.4f} against fp32's "
        f"{timed[False][1]['loss']:.4f}"
    )
    record.write(
        {"bare_tokens_per_s": bare, "trainer_tokens_per_s": ours, "bf16_tokens_per_s": half, "parameters": parameters}
    )


if __name__ == "__main__":
    main()
