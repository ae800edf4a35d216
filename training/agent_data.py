"""What agent-sft trains on: raw trajectories (collect's run folders, trajectory segments or shards; a build-corpus
folder reads too, as trajectories) of training tasks whose outcome is success: rejection sampling by outcome.

A held-out task (of the validation or the test part) is never read further: its side is the corpus's one task
split (schemas/splits.py, the default SplitConfig that build-corpus and agent-eval use), decided here from each
record's task, so episodes collected after a corpus was built are placed the same way. Everything read is
counted: how many were read, invalid, of held-out tasks, kept, and dropped by outcome (failure, agent_error,
timeout, ...).
"""

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import datasets

from trajforge.schemas.arrow import records_to_table
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import SplitConfig, readable_by, split_of
from trajforge.training.agent_render import teaches_agent


@dataclass(frozen=True)
class AgentData:
    rows: datasets.Dataset  # the kept trajectories, as trajectory rows
    read: int = 0  # valid records read
    invalid: int = 0  # records that failed validation (never trained on)
    held_out: int = 0  # records of held-out tasks (never looked at further)
    dropped: dict[str, int] = field(default_factory=dict)  # training-task records left out, by outcome status

    @property
    def kept(self) -> int:
        return len(self.rows)

    def summary(self) -> dict:
        return {
            "read": self.read,
            "invalid": self.invalid,
            "held_out": self.held_out,
            "kept": self.kept,
            "dropped_by_outcome": dict(sorted(self.dropped.items())),
        }


def successful_trajectories(source: str | Path, split: SplitConfig = SplitConfig()) -> AgentData:
    """The successful trajectories of training tasks under `source`; none is an error that gives the counts."""
    kept, dropped, counts = [], Counter(), Counter()
    for result in read_records([source]):
        if not result.ok:
            counts["invalid"] += 1
            continue
        counts["read"] += 1
        record = result.record
        row = record.model_dump()
        if not readable_by(split_of(row, split), "sft"):
            counts["held_out"] += 1
        elif teaches_agent(row):
            kept.append(record)
        else:
            dropped[record.outcome.status] += 1
    if not kept:
        raise ValueError(
            f"no successful trajectory of a training task in {source}: {counts['read']} read, {counts['invalid']} "
            f"invalid, {counts['held_out']} of held-out tasks, dropped by outcome {dict(dropped) or 'none'}"
        )
    rows = datasets.Dataset(datasets.table.InMemoryTable(records_to_table(kept)))
    return AgentData(rows, counts["read"], counts["invalid"], counts["held_out"], dict(dropped))
