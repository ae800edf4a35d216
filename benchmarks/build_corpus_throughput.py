"""build-corpus throughput and memory at 1x and 10x input (200k and 2M turns by default), against a plain
single-process loop measured in the same run.

    .venv/bin/python benchmarks/build_corpus_throughput.py [--trajectories 20000] [--turns 10] [--workers 2]

Targets (issue 57): end-to-end throughput >= 1.3x the plain loop at 1x and >= 1.5x at 10x; peak memory of the
whole build-corpus process tree grows < 1.3x when the input grows 10x. Measure with the machine otherwise idle:
its load average is printed, since other work on the same cores slows both sides, not always equally.
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from process_tree import timed_tree
from results_record import add_results_option, start_record

WORDS = (
    "alpha beta gamma delta report total region file line error warning build test module value user "
    "record index table query result status config server request response path data"
).split()


def synthetic_raw(folder: Path, trajectories: int, turns: int, seed: int = 0) -> int:
    """Raw segments of distinct trajectories with shell-like actions and observations (~300 chars a turn)."""
    from trajforge.schemas.records import new_trajectory
    from trajforge.schemas.sinks import write_segments

    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(n))

    def record(i: int):
        return new_trajectory(
            domain="terminal",
            source={"kind": "collected", "by": "bench", "run_id": "bench", "origin": f"b#{i}"},
            environment={"name": "bench"},
            task_description=text(12),
            agent={"name": "bench"},
            turns=[
                {
                    "index": t,
                    "action": {"kind": "shell", "content": f"grep -n {text(3)}"},
                    "observation": {"content": text(40), "exit_code": 0},
                }
                for t in range(turns)
            ],
        )

    write_segments((record(i) for i in range(trajectories)), folder, per_file=500)
    return trajectories * turns


def baseline(folder: Path, out: Path) -> float:
    """One process, one loop: read, validate, mask, write one Arrow table. Seconds."""
    from trajforge.masking import load_policy, mask_trajectory
    from trajforge.schemas.arrow import CPT_SCHEMA
    from trajforge.schemas.jsonl import read_segment

    policy = load_policy("paper")
    start = time.perf_counter()
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for result in read_segment(path):
            row = result.record.model_dump()
            row["masking_policy"] = "paper"
            for turn, note in zip(row["turns"], mask_trajectory(result.record, policy), strict=True):
                s, m = note.statistics, note.mask
                turn["statistics"] = {
                    k: getattr(s, k) for k in CPT_SCHEMA.field("turns").type.value_type.field("statistics").type.names
                }
                turn.update(
                    category=m.category,
                    keep_ratio=m.keep_ratio,
                    in_loss=m.in_loss,
                    loss_spans=[{"start": a, "end": b} for a, b in m.spans],
                )
            rows.append(row)
    table = pa.Table.from_pylist(rows, schema=CPT_SCHEMA)
    with pa.OSFile(str(out), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return time.perf_counter() - start


def timed_build(raw: Path, out: Path, workers: int) -> tuple[float, int]:
    """Run `trajforge build-corpus` as a child; wall seconds and peak memory of its whole process tree."""
    argv = [
        str(Path(sys.executable).parent / "trajforge"),
        "build-corpus",
        "-i",
        str(raw),
        "-o",
        str(out),
        "--workers",
        str(workers),
        "--shard-mb",
        "8",
    ]
    return timed_tree(argv, ok=(0, 1))  # exit 1: some records rejected, which the generated data has on purpose


def row(turns: int, base_s: float, seconds: float, peak: int, target: float) -> str:
    ratio = base_s / seconds
    load = os.getloadavg()[0]
    return (
        f"| {turns:,} turns | {base_s:.1f} s ({turns / base_s:,.0f} turns/s) | {seconds:.1f} s "
        f"({turns / seconds:,.0f} turns/s) | {ratio:.2f}x | >= {target}x: {'met' if ratio >= target else 'NOT met'} "
        f"| {peak / 2**20:,.0f} MiB | {load:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=20000)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    add_results_option(parser)
    args = parser.parse_args()
    record = start_record("build-corpus-throughput", args)
    print(f"input: {args.trajectories:,} trajectories x {args.turns} turns, and 10x; workers {args.workers}; ", end="")
    print(f"{os.cpu_count()} cores", flush=True)
    print("| input | plain loop | build-corpus (end to end) | ratio | target | peak memory (process tree) | load |")
    print("|---|---|---|---|---|---|---|", flush=True)
    peaks = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for scale, seed, target in ((1, 0, 1.3), (10, 1, 1.5)):
            raw = root / f"raw-{scale}x"
            turns = synthetic_raw(raw, args.trajectories * scale, args.turns, seed=seed)
            base_s = baseline(raw, root / f"baseline-{scale}x.arrow")
            seconds, peak = timed_build(raw, root / f"corpus-{scale}x", args.workers)
            written = json.loads((root / f"corpus-{scale}x" / "_manifest.json").read_text())["counts"]["written"]
            assert written == args.trajectories * scale, written
            peaks.append(peak)
            print(row(turns, base_s, seconds, peak, target), flush=True)
            for path in root.iterdir():  # the next size needs the disk more than these
                shutil.rmtree(path) if path.is_dir() else path.unlink()
    growth = peaks[1] / peaks[0]
    print(f"\npeak memory grows {growth:.2f}x for 10x input (target < 1.3x: {'met' if growth < 1.3 else 'NOT met'})")
    record.write()


if __name__ == "__main__":
    main()
