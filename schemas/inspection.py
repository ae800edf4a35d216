"""What `trajforge inspect` counts in trajectory files: records, turns, domains, outcomes, schema versions and
environments, the invalid records with their reasons, and the first few valid records as samples."""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.schemas.records import Trajectory
from trajforge.schemas.sources import ValidRecords, read_records
from trajforge.schemas.validation import ReadResult

COUNTED = ("domain", "outcome", "schema_version", "environment")


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
