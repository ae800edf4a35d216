"""The build-corpus stages, one small labelled PTransform each.

The job reads its input twice, so that whole records never cross a shuffle (which an in-process runner holds
in memory): pass 1 reduces every record to small features (content id, MinHash signature, predictability
counts) and decides which records are duplicates; pass 2 reads again and streams each record through
validation, dedup (against pass 1's decisions, as side inputs), filters, redaction and masking, into spill
files per shard, which a last step sorts into deterministic shards. Every stage counts what it does twice: as
Beam metrics (for the runner's UI) and as ("name", n) elements that the manifest sums, whatever the runner."""

from collections import Counter
from collections.abc import Iterator

import apache_beam as beam
import numpy as np
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from curation.dedup import MinHashConfig, band_keys, signature, similarity
from curation.filters import FilterConfig, apply_filters
from curation.normalize import normalize
from curation.redaction import redact
from masking import MaskingPolicy, PredictabilityCombiner, mask_trajectory
from masking.information import action_key
from schemas.arrow import CPT_SCHEMA
from schemas.formats import ImportOptions
from schemas.formats.knowledge import KNOWLEDGE
from schemas.manifest import rejection_entry
from schemas.records import Trajectory
from schemas.sources import read_records
from schemas.splits import SplitConfig, split_of, task_key

NAMESPACE = "build_corpus"
COUNTS = "counts"
REJECTED = "rejected"
PAIRS = "pairs"


class CountingFn(beam.DoFn):
    """A stage's DoFn that counts what it does: a Beam metric per name, and (name, n) elements on the COUNTS
    output summed per bundle, so counting costs no element per record."""

    def start_bundle(self):
        self.counts: Counter = Counter()

    def count(self, name: str, n: int = 1) -> None:
        if n:
            Metrics.counter(NAMESPACE, name).inc(n)
            self.counts[name] += n

    def finish_bundle(self) -> Iterator:
        for name, n in sorted(self.counts.items()):
            yield beam.pvalue.TaggedOutput(COUNTS, WindowedValue((name, n), 0, [GlobalWindow()]))
        self.counts = Counter()


def location(result) -> str:
    return f"{result.source}:{result.locator}"


class ReadRecords(beam.PTransform):
    """Files -> (location, normalised record); `knowledge` files are read as documents (single-turn records).
    With `report`, invalid records (every reason, raw bytes) go to the rejected output and reads are counted;
    pass 1 reads silently."""

    def __init__(self, files: list[str], input_format: str, max_observation_chars: int, report: bool, knowledge=()):
        super().__init__()
        self.files = [(f, input_format) for f in files] + [(f, KNOWLEDGE) for f in knowledge]
        self.report = report
        self.options = ImportOptions(max_observation_chars=max_observation_chars)

    def expand(self, pbegin):
        return (
            pbegin
            | "Files" >> beam.Create(self.files)
            | "Spread" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(_ReadFn(self.options, self.report)).with_outputs(REJECTED, COUNTS, main="records")
        )


class _ReadFn(CountingFn):
    def __init__(self, options: ImportOptions, report: bool):
        self.options, self.report = options, report

    def process(self, item: tuple[str, str]) -> Iterator:
        path, input_format = item
        for result in read_records([path], input_format, self.options):
            if self.report:
                self.count("read")
            if result.ok:
                yield location(result), normalize(result.record)
            elif self.report:
                self.count("rejected")
                yield beam.pvalue.TaggedOutput(REJECTED, rejection_entry(result))


def _order(item: tuple[str, Trajectory]) -> tuple:
    """Among exact duplicates the kept one is the earliest by (run, origin, location): the same in every run."""
    loc, record = item
    return record.source.run_id or "", record.source.origin or "", loc


class ExactDuplicates(beam.PTransform):
    """Pass 1: (location, record) -> (location of a dropped duplicate, kept id); ids an earlier build kept
    (`seen`, for an incremental build) count as already there. Also every distinct id, and the pairs report."""

    def __init__(self, seen: frozenset[str] = frozenset()):
        super().__init__()
        self.seen = seen

    def expand(self, records):
        return (
            records
            | "ById" >> beam.Map(lambda item: (item[1].trajectory_id, (_order(item), item[0])))
            | "Group" >> beam.GroupByKey()
            | "Decide" >> beam.FlatMap(self._decide).with_outputs(PAIRS, "ids", main="losers")
        )

    def _decide(self, item) -> Iterator:
        ident, members = item
        members = sorted(members)
        losers = members if ident in self.seen else members[1:]
        if ident not in self.seen:
            yield beam.pvalue.TaggedOutput("ids", ident)
        for _, loc in losers:
            yield loc, ident
            yield beam.pvalue.TaggedOutput(PAIRS, {"kind": "exact", "dropped": loc, "kept": ident, "similarity": 1.0})


class NearDuplicates(beam.PTransform):
    """Pass 1: MinHash signatures, LSH bands for candidates (each paired with its bucket's smallest id), then
    the estimated Jaccard of each candidate pair: (dropped id, (kept id, similarity)). Only ids and one
    signature per record travel through shuffles."""

    def __init__(self, config: MinHashConfig):
        super().__init__()
        self.config = config

    def expand(self, records):
        config = self.config
        sigs = records | "Sign" >> beam.Map(lambda item: (item[1].trajectory_id, signature(item[1], config).tobytes()))
        candidates = (
            sigs
            | "Bands"
            >> beam.FlatMap(lambda kv: [(b, kv[0]) for b in band_keys(np.frombuffer(kv[1], np.uint32), config)])
            | "Buckets" >> beam.GroupByKey()
            | "ToSmallest" >> beam.FlatMap(_pairs_to_smallest)
            | "Distinct" >> beam.Distinct()
        )
        with_own = (
            {"sig": sigs, "smaller": candidates}
            | "JoinOwn" >> beam.CoGroupByKey()
            | "BySmaller"
            >> beam.FlatMap(lambda kv: [(lo, (kv[0], next(iter(kv[1]["sig"])))) for lo in set(kv[1]["smaller"])])
        )
        return (
            {"sig": sigs, "larger": with_own}
            | "JoinSmaller" >> beam.CoGroupByKey()
            | "Verify" >> beam.FlatMap(self._verify)
            | "SmallestKept" >> beam.CombinePerKey(min)
        )

    def _verify(self, kv) -> Iterator:
        smaller, joined = kv
        own = next(iter(joined["sig"]), None)
        if own is None:
            return
        own = np.frombuffer(own, np.uint32)
        for larger, sig in {(k, s) for k, s in joined["larger"]}:
            score = similarity(np.frombuffer(sig, np.uint32), own)
            if score >= self.config.threshold:
                yield larger, (smaller, round(score, 4))


def _pairs_to_smallest(kv) -> Iterator:
    ids = sorted(set(kv[1]))
    for ident in ids[1:]:
        yield ident, ids[0]


class PredictabilityCombineFn(beam.CombineFn):
    """The corpus-wide action -> observation table that the information-theoretic policy reads."""

    def __init__(self):
        self.combiner = PredictabilityCombiner()

    def create_accumulator(self):
        return self.combiner.create()

    def add_input(self, accumulator, item):
        for turn in item[1].turns:
            accumulator = self.combiner.add(accumulator, action_key(turn.action), turn.observation.content)
        return accumulator

    def merge_accumulators(self, accumulators):
        return self.combiner.merge(list(accumulators))

    def extract_output(self, accumulator):
        return self.combiner.extract(accumulator)


def is_knowledge(record: Trajectory) -> bool:
    return record.source.kind == "knowledge"


def record_chars(record: Trajectory) -> int:
    """What a record adds to CPT, in characters (a tokenizer-free stand-in for tokens): its actions and
    observations."""
    return sum(len(t.action.content) + len(t.observation.content) for t in record.turns)


def knowledge_draw(trajectory_id: str) -> float:
    return int(trajectory_id[:12], 16) / 16**12


class KnowledgeShareFn(beam.CombineFn):
    """Pass 1: the draw below which knowledge documents are kept, so that they take at most `share` of the CPT
    characters: documents in the order of a hash of their id, as many as fit. Trajectories count as the filters
    leave them; deduplication, decided later, can still shrink them a little (the manifest has the real share).
    Input: (location, record)."""

    def __init__(self, share: float, filters: FilterConfig):
        self.share, self.filters = share, filters

    def create_accumulator(self):
        return 0, []  # trajectory characters, (draw, characters) of every document

    def add_input(self, accumulator, item):
        trajectories, documents = accumulator
        record = item[1]
        if is_knowledge(record):
            documents.append((knowledge_draw(record.trajectory_id), record_chars(record)))
            return trajectories, documents
        kept = apply_filters(record, self.filters).record
        return trajectories + (record_chars(kept) if kept is not None else 0), documents

    def merge_accumulators(self, accumulators):
        trajectories, documents = 0, []
        for t, d in accumulators:
            trajectories, documents = trajectories + t, documents + d
        return trajectories, documents

    def extract_output(self, accumulator) -> float:
        trajectories, documents = accumulator
        if self.share >= 1.0:
            return 1.0
        budget = self.share / (1.0 - self.share) * trajectories  # k / (t + k) <= share
        used = 0
        for draw, chars in sorted(documents):
            if used + chars > budget:
                return draw
            used += chars
        return 1.0


class CapKnowledge(beam.PTransform):
    """Pass 2: knowledge documents past the share's cap are dropped, counted as `filtered.knowledge_share`."""

    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def expand(self, records):
        return records | "Cap" >> beam.ParDo(_CapFn(), beam.pvalue.AsSingleton(self.threshold)).with_outputs(
            COUNTS, main="records"
        )


class _CapFn(CountingFn):
    def process(self, record: Trajectory, threshold: float) -> Iterator:
        if is_knowledge(record) and knowledge_draw(record.trajectory_id) >= threshold:
            self.count("filtered.knowledge_share")
        else:
            yield record


class DropDuplicates(beam.PTransform):
    """Pass 2: drop what pass 1 decided (exact: by location; near: by id), counted."""

    def __init__(self, exact_losers, near_losers):
        super().__init__()
        self.exact_losers, self.near_losers = exact_losers, near_losers

    def expand(self, records):
        return records | "Drop" >> beam.ParDo(
            _DropFn(), beam.pvalue.AsDict(self.exact_losers), beam.pvalue.AsDict(self.near_losers)
        ).with_outputs(COUNTS, main="records")


class _DropFn(CountingFn):
    def process(self, item, exact: dict, near: dict) -> Iterator:
        loc, record = item
        if loc in exact:
            self.count("deduplicated.exact")
        elif record.trajectory_id in near:
            self.count("deduplicated.near")
        else:
            yield record


class Filter(beam.PTransform):
    """The paper's filters: dropped trajectories and removed turns, counted by reason."""

    def __init__(self, config: FilterConfig):
        super().__init__()
        self.config = config

    def expand(self, records):
        return records | "Apply" >> beam.ParDo(_FilterFn(self.config)).with_outputs(COUNTS, main="records")


class _FilterFn(CountingFn):
    def __init__(self, config: FilterConfig):
        self.config = config

    def process(self, record: Trajectory) -> Iterator:
        result = apply_filters(record, self.config)
        for reason, n in result.removed_turns.items():
            self.count(f"turns_removed.{reason}", n)
        if result.record is None:
            self.count(f"filtered.{result.dropped_by}")
        else:
            yield result.record


class Redact(beam.PTransform):
    """Secrets in actions and observations become typed placeholders, counted by type."""

    def expand(self, records):
        return records | "Redact" >> beam.ParDo(_RedactFn()).with_outputs(COUNTS, main="records")


class _RedactFn(CountingFn):
    def process(self, record: Trajectory) -> Iterator:
        clean, found = redact(record)
        for kind, n in found.items():
            self.count(f"redacted.{kind}", n)
        yield clean


STATISTIC_NAMES = CPT_SCHEMA.field("turns").type.value_type.field("statistics").type.names


class Annotate(beam.PTransform):
    """Per-turn statistics, category, keep ratio, in-loss flag and spans, and the row's task and split: rows of
    the CPT schema."""

    def __init__(self, policy: MaskingPolicy, table=None, split: SplitConfig = SplitConfig()):
        super().__init__()
        self.policy, self.table, self.split = policy, table, split

    def expand(self, records):
        table = beam.pvalue.AsSingleton(self.table) if self.table is not None else None
        return records | "Mask" >> beam.ParDo(_AnnotateFn(self.policy, self.split), table).with_outputs(
            COUNTS, main="rows"
        )


class CountTasks(beam.PTransform):
    """CPT rows -> ("tasks.<split>", 1) per distinct task of each split, for the manifest."""

    def expand(self, rows):
        return (
            rows
            | "TaskSplits" >> beam.Map(lambda row: (row["split"], row["task"]))
            | "DistinctTasks" >> beam.Distinct()
            | "CountTasks" >> beam.Map(lambda kv: (f"tasks.{kv[0]}", 1))
        )


class _AnnotateFn(CountingFn):
    def __init__(self, policy: MaskingPolicy, split: SplitConfig):
        self.policy, self.split = policy, split

    def process(self, record: Trajectory, table) -> Iterator:
        annotations = mask_trajectory(record, self.policy, table)
        row = record.model_dump()
        row["masking_policy"] = f"{self.policy.name}@{self.policy.config_hash}"
        row["task"], row["split"] = task_key(row), split_of(row, self.split)
        self.count(f"split.{row['split']}")
        knowledge = is_knowledge(record)
        self.count("knowledge.documents", int(knowledge))
        self.count(f"chars.{'knowledge' if knowledge else 'trajectories'}", record_chars(record))
        for turn, note in zip(row["turns"], annotations, strict=True):
            stats, mask = note.statistics, note.mask
            turn["statistics"] = {name: getattr(stats, name) for name in STATISTIC_NAMES}
            turn.update(
                category=mask.category,
                keep_ratio=mask.keep_ratio,
                in_loss=mask.in_loss,
                loss_spans=[{"start": a, "end": b} for a, b in mask.spans],
            )
            self.count(f"category.{mask.category}")
            self.count("turns_in_loss", int(mask.in_loss))
        self.count("written")
        self.count("turns_written", len(row["turns"]))
        yield row
