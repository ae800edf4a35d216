"""A Hugging Face dataset imported streaming: `trajforge import` over N generated chat rows in parquet files (rows
streamed a batch at a time: schemas/dataset_rows.py), against a plain loop over the same files (each file read
whole with pyarrow, its rows converted and written the same way), measured in the same run, each in its own
process. The run needs about 5 GB of free disk per million rows (the input and both outputs).

    .venv/bin/python benchmarks/import_streaming.py [--rows 1000000] [--rows-per-file 250000]

Printed: rows/s and the peak memory of each process tree, and their ratios. The streaming import's memory should
not grow with the file's size (the plain loop's does); the machine's load average is printed too: other work on
the same cores slows both sides, not always equally.
"""

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

from build_corpus_throughput import WORDS
from process_tree import timed_tree
from results_record import REPOSITORY, add_results_option, start_record

ROW_GROUP = 1000


def generate(folder: Path, rows: int, per_file: int, seed: int) -> list[Path]:
    """ROWS chat conversations (a system prompt, 3 turns of a shell session, ~1 KB a row) in parquet files of
    PER_FILE rows, as the Hub holds a dataset (data/train-*.parquet)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(n))

    def row(i: int) -> dict:
        turns = [[{"role": "user", "content": f"grep -n {text(3)}"}, {"role": "assistant", "content": text(40)}]]
        messages = [{"role": "system", "content": f"You are a Linux shell. Task {i}: {text(12)}"}]
        return {"id": i, "messages": messages + [m for _ in range(3) for m in turns[0]]}

    (folder / "data").mkdir(parents=True)
    files = -(-rows // per_file)
    paths = []
    for f in range(files):
        part = range(f * per_file, min(rows, (f + 1) * per_file))
        path = folder / "data" / f"train-{f:05d}-of-{files:05d}.parquet"
        pq.write_table(pa.Table.from_pylist([row(i) for i in part]), path, row_group_size=ROW_GROUP)
        paths.append(path)
    return paths


def plain_loop(folder: Path, out: Path) -> None:
    """The loop one writes without a streaming reader: each file read whole, its rows converted and validated by
    the same format, the valid records written as the import writes them."""
    import pyarrow.parquet as pq

    from trajforge.schemas.formats import ImportOptions, get_format
    from trajforge.schemas.jsonl import JsonLine
    from trajforge.schemas.sinks import write_segments
    from trajforge.schemas.sources import ValidRecords

    chat = get_format("chat")

    def results():
        for path in sorted((folder / "data").glob("*.parquet")):
            rows = pq.read_table(path).to_pylist()
            values = (JsonLine(f"row {i}", row, [], b"") for i, row in enumerate(rows))
            yield from chat.read_values(str(path), values, ImportOptions())

    rejected: list = []
    write_segments(ValidRecords(results()).rejecting_into(rejected), out)
    if rejected:
        raise SystemExit(f"the plain loop rejected {len(rejected)} rows: {rejected[0].reasons()}")


def timed(argv: list[str]) -> tuple[float, int]:
    """Run a child (this repository's code); wall seconds and the peak memory of its whole process tree."""
    return timed_tree(argv, cwd=REPOSITORY, env={**os.environ, "PYTHONPATH": str(REPOSITORY)})


def measure(root: Path, rows: int) -> dict:
    plain = timed([sys.executable, __file__, "--plain-loop", str(root), str(root / "plain")])
    streaming = timed([sys.executable, "-m", "trajforge", "import", "-f", "chat", str(root / "data"), "-o",
                       str(root / "streamed")])  # fmt: skip
    written = json.loads((root / "streamed" / "_manifest.json").read_text())["counts"]["written"]
    assert written == rows, written
    return {"plain": plain, "streaming": streaming}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rows-per-file", type=int, default=250_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plain-loop", nargs=2, type=Path, help=argparse.SUPPRESS)  # the child of the plain loop
    add_results_option(parser)
    args = parser.parse_args()
    if args.plain_loop:
        plain_loop(*args.plain_loop)
        return
    record = start_record("import-streaming", args)
    with tempfile.TemporaryDirectory() as tmp:
        files = generate(Path(tmp), args.rows, args.rows_per_file, args.seed)
        size = sum(p.stat().st_size for p in files)
        print(f"input: {args.rows:,} chat rows in {len(files)} parquet files ({size / 2**20:,.0f} MiB), "
              f"{args.rows_per_file:,} rows a file; {os.cpu_count()} cores", flush=True)  # fmt: skip
        result = measure(Path(tmp), args.rows)
    (plain_s, plain_peak), (stream_s, stream_peak) = result["plain"], result["streaming"]
    print("| reader | rows/s | peak memory (process tree) |")
    print("|---|---|---|")
    print(f"| plain loop (each file whole, pyarrow) | {args.rows / plain_s:,.0f} | {plain_peak / 2**20:,.0f} MiB |")
    print(f"| trajforge import (streaming) | {args.rows / stream_s:,.0f} | {stream_peak / 2**20:,.0f} MiB |")
    ratios = f"{plain_s / stream_s:.2f}x the rows/s, {stream_peak / plain_peak:.2f}x the peak memory"
    print(f"\nstreaming / plain loop: {ratios}; load {os.getloadavg()[0]:.1f}")
    record.write({"rows": args.rows, "files": len(files), "plain_s": plain_s, "plain_peak_bytes": plain_peak,
                  "streaming_s": stream_s, "streaming_peak_bytes": stream_peak})  # fmt: skip


if __name__ == "__main__":
    main()
