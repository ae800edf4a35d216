"""build-corpus throughput and memory at 1x and 10x input (200k and 2M turns by default), against a plain
single-process loop measured in the same run.

    .venv/bin/python benchmarks/build_corpus_throughput.py [--trajectories 20000] [--turns 10] [--workers 2]

Targets (issue #12): end-to-end throughput >= 0.6x the plain loop at 1x and >= 0.8x at 10x; peak memory of the
whole build-corpus process tree grows < 1.5x when the input grows 10x. The machine's load average is printed
too: other work on the same cores slows both sides, not always equally.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa

WORDS = (
    "alpha beta gamma delta report total region file line error warning build test module value user "
    "record index table query result status config server request response path data"
).split()


def synthetic_raw(folder: Path, trajectories: int, turns: int, seed: int = 0) -> int:
    """Raw segments of distinct trajectories with shell-like actions and observations (~300 chars a turn)."""
    from schemas.records import new_trajectory
    from schemas.sinks import write_segments

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
    from masking import load_policy, mask_trajectory
    from schemas.arrow import CPT_SCHEMA
    from schemas.jsonl import read_segment

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


def tree_rss(pid: int) -> int:
    """Resident memory of a process and all its descendants, in bytes."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            p = int(stat.parent.name)
            children.setdefault(int(fields[1]), []).append(p)
            rss[p] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack += children.get(p, [])
    return total


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
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0

    def watch():
        nonlocal peak
        while proc.poll() is None:
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    _, err = proc.communicate()
    watcher.join()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"build-corpus failed:\n{err.decode()[-2000:]}")
    return time.perf_counter() - start, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=20000)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        small, large = root / "raw-1x", root / "raw-10x"
        turns = synthetic_raw(small, args.trajectories, args.turns)
        base_s = baseline(small, root / "baseline.arrow")
        seconds, peak_small = timed_build(small, root / "corpus-1x", args.workers)
        manifest = json.loads((root / "corpus-1x" / "_manifest.json").read_text())
        synthetic_raw(large, args.trajectories * 10, args.turns, seed=1)
        base_large = baseline(large, root / "baseline-10x.arrow")
        seconds_large, peak_large = timed_build(large, root / "corpus-10x", args.workers)
    ratio_small, ratio_large, memory = base_s / seconds, base_large / seconds_large, peak_large / peak_small
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"input: {args.trajectories:,} trajectories x {args.turns} turns = {turns:,} turns (and 10x); ", end="")
    print(f"workers {args.workers}; {os.cpu_count()} cores; load average {load}")
    print(f"written at 1x: {manifest['counts']['written']:,} trajectories")
    print()
    print("| input | plain loop | build-corpus (end to end) | ratio | target | peak memory (process tree) |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {turns:,} turns | {base_s:.1f} s ({turns / base_s:,.0f} turns/s) | {seconds:.1f} s "
        f"({turns / seconds:,.0f} turns/s) | {ratio_small:.2f}x | >= 0.6x: "
        f"{'met' if ratio_small >= 0.6 else 'NOT met'} | {peak_small / 2**20:,.0f} MiB |"
    )
    print(
        f"| {turns * 10:,} turns | {base_large:.1f} s ({turns * 10 / base_large:,.0f} turns/s) | {seconds_large:.1f} s "
        f"({turns * 10 / seconds_large:,.0f} turns/s) | {ratio_large:.2f}x | >= 0.8x: "
        f"{'met' if ratio_large >= 0.8 else 'NOT met'} | {peak_large / 2**20:,.0f} MiB |"
    )
    print()
    print(f"peak memory grows {memory:.2f}x for 10x input (target < 1.5x: {'met' if memory < 1.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
