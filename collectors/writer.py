"""The raw writer of a collection run: finished episodes go to atomic, content-named JSON Lines segments.

A run folder always holds whole episodes only. Episodes are flushed in small batches, so `kill -9` loses at most
the unflushed ones, and a resumed run finds every finished episode by its key (`source.origin`). The run folder
may be a URL (`s3://bucket/raw/run`): every read, list and write goes through `schemas.storage`, so each machine
of a `--shard i/n` run writes its own segments into the same store.
"""

import threading
import time
from collections import Counter
from pathlib import Path

from trajforge.schemas import storage
from trajforge.schemas.jsonl import SEGMENT_SUFFIXES
from trajforge.schemas.manifest import Manifest
from trajforge.schemas.names import SEGMENT_PREFIX
from trajforge.schemas.records import Trajectory
from trajforge.schemas.sinks import write_segments
from trajforge.schemas.sources import find_data_files, read_records


class RunWriter:
    def __init__(self, run_dir: str | Path, flush_every: int = 8, flush_seconds: float = 30.0):
        self.run_dir = run_dir if storage.is_url(run_dir) else Path(run_dir)
        storage.make_dirs(self.run_dir)
        self.flush_every, self.flush_seconds = flush_every, flush_seconds
        self._buffer: list[Trajectory] = []
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()
        self.done = self._finished_keys()

    def _segments(self) -> list[str]:
        files, _ = find_data_files([self.run_dir], SEGMENT_SUFFIXES)  # an empty or new run folder has none
        return [f.path for f in files]

    def _finished_keys(self) -> set[str]:
        return {r.record.source.origin for r in read_records(self._segments()) if r.ok}

    def add(self, trajectory: Trajectory) -> None:
        with self._lock:
            self._buffer.append(trajectory)
            self.done.add(trajectory.source.origin)
            due = time.monotonic() - self._last_flush >= self.flush_seconds
            if len(self._buffer) >= self.flush_every or due:
                self._flush_locked()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._buffer:
            write_segments(self._buffer, self.run_dir, per_file=len(self._buffer))
            self._buffer = []
        self._last_flush = time.monotonic()

    def write_manifest(self, config: dict, planned: int, timings: dict) -> Manifest:
        """Counts over everything the run folder holds, including episodes from earlier, interrupted runs."""
        self.flush()
        segments = self._segments()
        records = [r.record for r in read_records(segments) if r.ok]
        outcomes = Counter(r.outcome.status for r in records)
        manifest = Manifest(
            stage="collect",
            config=config,
            outputs=sorted(storage.name(p) for p in segments if storage.name(p).startswith(SEGMENT_PREFIX)),
            counts={
                "planned": planned,
                "read": len(records),
                "written": len(records),
                "turns": sum(len(r.turns) for r in records),
                **{f"outcome.{k}": v for k, v in sorted(outcomes.items())},
                **{f"domain.{k}": v for k, v in sorted(Counter(r.domain for r in records).items())},
                **{f"turns.{k}": v for k, v in sorted(_turns_by_domain(records).items())},
            },
            timings=timings,
        )
        manifest.write(self.run_dir)
        return manifest


def _turns_by_domain(records: list[Trajectory]) -> Counter:
    turns: Counter = Counter()
    for record in records:
        turns[record.domain] += len(record.turns)
    return turns
