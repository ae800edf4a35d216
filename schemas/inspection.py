"""What `trajforge inspect` counts in trajectory files: records, turns, domains, outcomes, schema versions and
environments, the invalid records with their reasons, and the first few valid records as samples; and in SFT and
RL shards (derived rows, not trajectories), their rows per kind and domain."""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.schemas import storage
from trajforge.schemas.names import SHARD_SUFFIX
from trajforge.schemas.records import Trajectory
from trajforge.schemas.shards import ShardError, read_shard_table, shard_kind
from trajforge.schemas.sources import ValidRecords, read_records
from trajforge.schemas.validation import ReadResult

COUNTED = ("domain", "outcome", "schema_version", "environment")
DERIVED_KINDS = ("sft", "rl")  # shards whose rows are training samples, not trajectories


@dataclass
class RecordSummary:
    turns: int = 0
    counts: dict[str, Counter] = field(default_factory=lambda: {key: Counter() for key in COUNTED})
    invalid: list[ReadResult] = field(default_factory=list)
    samples: list[Trajectory] = field(default_factory=list)

    @property
    def valid(self) -> int:
        return sum(self.counts["domain"].values())

    def add(self, record: Trajectory, samples: int) -> None:
        self.turns += len(record.turns)
        self.counts["domain"][record.domain] += 1
        self.counts["outcome"][record.outcome.status] += 1
        self.counts["schema_version"][record.schema_version] += 1
        self.counts["environment"][record.environment.name] += 1
        if len(self.samples) < samples:
            self.samples.append(record)


def summarise_records(
    files: list[str | Path], samples: int = 1, progress: Callable[[Iterable, str], Iterable] | None = None
) -> RecordSummary:
    """Every record of `files`, read and validated once (`progress(items, label)` may wrap the reading)."""
    summary = RecordSummary()
    results = read_records(files)
    for record in ValidRecords(progress(results, "reading") if progress else results).rejecting_into(summary.invalid):
        summary.add(record, samples)
    return summary


def is_derived(path: str | Path) -> bool:
    """An SFT or RL shard; an unreadable one is not (read_records lists it as invalid)."""
    try:
        return storage.name(path).endswith(SHARD_SUFFIX) and shard_kind(path) in DERIVED_KINDS
    except ShardError:
        return False


def count_derived_rows(files: list[str | Path]) -> Counter:
    """(kind, domain) -> rows, over SFT and RL shards."""
    counts: Counter = Counter()
    for path in files:
        kind = shard_kind(path)
        for domain in read_shard_table(path).column("domain").to_pylist():
            counts[(kind, domain)] += 1
    return counts
