"""The build-corpus stages, one small labelled PTransform each.

The job reads its input twice, so that whole records never cross a shuffle (which an in-process runner holds
in memory): pass 1 reduces every record to small features (content id, MinHash signature, predictability
counts) and decides which records are duplicates; those decisions are joined with the input files by file, so
pass 2 reads each file with its own drops and streams each record through validation, dedup, filters,
redaction and masking, into spill files per shard, which a last step sorts into deterministic shards. Every
stage counts what it does twice: as Beam metrics (for the runner's UI) and as ("name", n) elements that the
manifest sums, whatever the runner."""

import uuid
from collections.abc import Iterator

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from trajforge.curation.dedup import MinHashConfig, SignatureTable, near_duplicate_pairs, signature
from trajforge.curation.filters import FilterConfig, apply_filters
from trajforge.curation.normalize import normalize
from trajforge.curation.redaction import redact
from trajforge.masking import MaskingPolicy, PredictabilityCombiner, mask_trajectory
from trajforge.masking.information import action_key
from trajforge.pipelines.counting import COUNTS, CountingFn
from trajforge.pipelines.job import mark_progress, work_dir
from trajforge.schemas import counts, storage
from trajforge.schemas.arrow import CPT_SCHEMA
from trajforge.schemas.formats import ImportOptions
from trajforge.schemas.manifest import rejection_entry
from trajforge.schemas.records import Trajectory
from trajforge.schemas.sources import read_records
from trajforge.schemas.splits import SplitConfig, split_of, task_key

NAMESPACE = "build_corpus"  # of its Beam metrics
REJECTED = "rejected"
FILTERED = "filtered"
PAIRS = "pairs"
SIGNATURES_DIR = "signatures"  # under OUTPUT/_work


class BuildCorpusFn(CountingFn, namespace=NAMESPACE):
    """A build-corpus stage that counts what it does."""


def location(source: str, locator: str) -> str:
    return f"{source}:{locator}"


class ReadRecords(beam.PTransform):
    """(file, {locator: dropped kind}) -> (location, normalised record) of every record not dropped; `formats`
    says how each file is read (knowledge files as documents: single-turn records; a dataset's parquet or arrow
    file row by row, streamed, its records in `column` or the whole row). With `report`, reads, rejections
    (every reason, raw bytes) and drops are counted, invalid records go to the rejected output and each file
    read is marked for the progress display; pass 1 reads silently. A location is (file, locator)."""

    def __init__(
        self,
        formats: dict[str, str],
        max_observation_chars: int,
        report: bool,
        output: str = "",
        column: str | None = None,
    ):
        super().__init__()
        self.formats, self.report, self.output = formats, report, output
        self.options = ImportOptions(max_observation_chars=max_observation_chars, column=column)

    def expand(self, files):
        return (
            files
            | "Spread" >> beam.Reshuffle()
            | "Read"
            >> beam.ParDo(_ReadFn(self.formats, self.options, self.report, self.output)).with_outputs(
                REJECTED, COUNTS, main="records"
            )
        )


class _ReadFn(BuildCorpusFn):
    def __init__(self, formats: dict[str, str], options: ImportOptions, report: bool, output: str):
        self.formats, self.options, self.report, self.output = formats, options, report, output

    def process(self, item: tuple[str, dict[str, str]]) -> Iterator:
        path, drops = item
        n = 0
        for result in read_records([path], self.formats[path], self.options):
            n += 1
            if self.report:
                self.count(counts.READ)
            if not result.ok:
                if self.report:
                    self.count(counts.REJECTED)
                    yield beam.pvalue.TaggedOutput(REJECTED, rejection_entry(result))
            elif result.locator in drops:
                self.count(counts.key(counts.DEDUPLICATED, drops[result.locator]))
            else:
                yield (result.source, result.locator), normalize(result.record)
        if self.output:
            mark_progress(self.output, "pass2" if self.report else "pass1", path, n)


SEP = "\x00"  # sorts before any character, so joined fields sort as their tuple would


class ExactDuplicates(beam.PTransform):
    """Pass 1: (location, record) -> the dropped ones, as (location, "exact"), joined by id with the near
    duplicates' decisions (`near`: (dropped id, (kept id, similarity))), whose kept member becomes
    (location, "near"). Among exact duplicates the kept one is the earliest by (run, origin, file, locator): the
    same in every run. Ids an earlier build kept (`seen`, for an incremental build) count as already there. Also
    every distinct new id, and the pairs report.

    Every record crosses the shuffle, so each is one short string keyed by its id (its file as an index into the
    sorted `files`), with no tuple or path per record for an in-process runner to hold."""

    def __init__(self, files: list[str], seen: frozenset[str] = frozenset(), near=None):
        super().__init__()
        self.files, self.seen, self.near = sorted(files), seen, near

    def expand(self, records):
        index = {path: i for i, path in enumerate(self.files)}
        members = records | "ById" >> beam.Map(_member, index)
        joined = [members]
        if self.near is not None:
            joined.append(self.near | "NearById" >> beam.Map(lambda d: (d[0], f"n{d[1][0]}{SEP}{d[1][1]!r}")))
        return (
            joined
            | "Tagged" >> beam.Flatten()
            | "Join" >> beam.GroupByKey()
            | "Decide" >> beam.FlatMap(self._decide).with_outputs(PAIRS, "ids", main="dropped")
        )

    def _decide(self, item) -> Iterator:
        ident, values = item
        members, near = [], []
        for value in values:
            (members if value[0] == "m" else near).append(value[1:])
        if not members:
            return
        members.sort()
        located = []
        for member in members:
            _, _, file, locator = member.split(SEP, 3)
            located.append((self.files[int(file)], locator))
        losers = located if ident in self.seen else located[1:]
        if ident not in self.seen:
            yield beam.pvalue.TaggedOutput("ids", ident)
            for kept, score in sorted(v.split(SEP) for v in near)[:1]:
                yield located[0], "near"
                yield beam.pvalue.TaggedOutput(
                    PAIRS, {"kind": "near", "dropped": ident, "kept": kept, "similarity": float(score)}
                )
        for source, locator in losers:
            yield (source, locator), "exact"
            yield beam.pvalue.TaggedOutput(
                PAIRS, {"kind": "exact", "dropped": location(source, locator), "kept": ident, "similarity": 1.0}
            )


def _member(item: tuple[tuple[str, str], Trajectory], index: dict[str, int]) -> tuple[str, str]:
    (source, locator), record = item
    fields = (record.source.run_id or "", record.source.origin or "", f"{index[source]:09d}", locator)
    return record.trajectory_id, "m" + SEP.join(fields)


class FilesWithDrops(beam.PTransform):
    """Join the input files with pass 1's decisions by file: (file, {locator: "exact" | "near"}). Each file
    carries only its own drops, so no table that grows with the corpus reaches pass 2 as a side input."""

    def __init__(self, files: list[str]):
        super().__init__()
        self.files = files

    def expand(self, dropped):
        files = dropped.pipeline | "Files" >> beam.Create([(f, None) for f in self.files])
        by_file = dropped | "ByFile" >> beam.Map(lambda d: (d[0][0], (d[0][1], d[1])))
        return (
            {"file": files, "drops": by_file}
            | "Join" >> beam.CoGroupByKey()
            | "Drops" >> beam.FlatMap(lambda kv: [(kv[0], dict(kv[1]["drops"]))] if kv[1]["file"] else [])
        )


class NearDuplicates(beam.PTransform):
    """Pass 1: MinHash signatures of each bundle in one compact table (numpy arrays), written under OUTPUT/_work so
    that only file names cross the runner; one step reads them all, bands them (LSH) for candidates and
    estimates the Jaccard of each candidate pair: (dropped id, (kept id, similarity)). One fingerprint per record,
    no Python object per band."""

    def __init__(self, config: MinHashConfig, output: str):
        super().__init__()
        self.config, self.output = config, output

    def expand(self, records):
        return (
            records
            | "Signatures" >> beam.ParDo(_SpillSignaturesFn(self.config, self.output))
            | "AllTables" >> beam.CombineGlobally(beam.combiners.ToListCombineFn()).without_defaults()
            | "Pairs" >> beam.FlatMap(_pairs_of_tables, self.config)
        )


class _SpillSignaturesFn(beam.DoFn):
    def __init__(self, config: MinHashConfig, output: str):
        self.config, self.output = config, output

    def start_bundle(self):
        self.table = SignatureTable(self.config.permutations)

    def process(self, item: tuple[tuple[str, str], Trajectory]) -> None:
        self.table.add(item[1].trajectory_id, signature(item[1], self.config))

    def finish_bundle(self) -> Iterator:
        if len(self.table):
            path = storage.join(work_dir(self.output), SIGNATURES_DIR, f"{uuid.uuid4().hex}.npz")
            storage.write_bytes(path, self.table.to_bytes())
            yield WindowedValue(path, 0, [GlobalWindow()])


def _pairs_of_tables(paths: list[str], config: MinHashConfig) -> list:
    tables = [SignatureTable.from_bytes(storage.read_bytes(path)) for path in sorted(paths)]
    return near_duplicate_pairs(SignatureTable(config.permutations).merge(tables), config)


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


def filtered_entry(item: tuple[tuple[str, str], Trajectory], reason: str, detail: str) -> dict:
    """A dropped trajectory as `_filtered.jsonl` lists it: where it was read, its id, the filter and why."""
    (source, locator), record = item
    return {
        "source": source,
        "locator": locator,
        "trajectory_id": record.trajectory_id,
        "reason": reason,
        "detail": detail,
    }


class CapKnowledge(beam.PTransform):
    """Pass 2: (location, record) -> knowledge documents past the share's cap are dropped, counted as
    `filtered.knowledge_share` and listed on the FILTERED output."""

    def __init__(self, threshold):
        super().__init__()
        self.threshold = threshold

    def expand(self, records):
        return records | "Cap" >> beam.ParDo(_CapFn(), beam.pvalue.AsSingleton(self.threshold)).with_outputs(
            COUNTS, FILTERED, main="records"
        )


class _CapFn(BuildCorpusFn):
    def process(self, item: tuple[tuple[str, str], Trajectory], threshold: float) -> Iterator:
        record = item[1]
        if is_knowledge(record) and knowledge_draw(record.trajectory_id) >= threshold:
            self.count(counts.key(counts.FILTERED, counts.KNOWLEDGE_SHARE))
            yield beam.pvalue.TaggedOutput(
                FILTERED, filtered_entry(item, "knowledge_share", f"past the knowledge share's cap ({threshold:.4f})")
            )
        else:
            yield item


class Filter(beam.PTransform):
    """The paper's filters: (location, record) -> the records they keep; dropped trajectories are listed on the
    FILTERED output and counted as `filtered.NAME`, removed turns counted as `turns_removed.NAME`."""

    def __init__(self, config: FilterConfig):
        super().__init__()
        self.config = config

    def expand(self, records):
        return records | "Apply" >> beam.ParDo(_FilterFn(self.config)).with_outputs(COUNTS, FILTERED, main="records")


class _FilterFn(BuildCorpusFn):
    def __init__(self, config: FilterConfig):
        self.config = config

    def process(self, item: tuple[tuple[str, str], Trajectory]) -> Iterator:
        result = apply_filters(item[1], self.config)
        for name, n in result.removed_turns.items():
            self.count(counts.key(counts.TURNS_REMOVED, name), n)
        if result.record is None:
            self.count(counts.key(counts.FILTERED, result.dropped_by))
            yield beam.pvalue.TaggedOutput(FILTERED, filtered_entry(item, result.dropped_by, result.detail))
        else:
            yield result.record


class Redact(beam.PTransform):
    """Secrets in actions and observations become typed placeholders, counted by type."""

    def expand(self, records):
        return records | "Redact" >> beam.ParDo(_RedactFn()).with_outputs(COUNTS, main="records")


class _RedactFn(BuildCorpusFn):
    def process(self, record: Trajectory) -> Iterator:
        clean, found = redact(record)
        for kind, n in found.items():
            self.count(counts.key(counts.REDACTED, kind), n)
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
            | "CountTasks" >> beam.Map(lambda kv: (counts.key(counts.TASKS, kv[0]), 1))
        )


class _AnnotateFn(BuildCorpusFn):
    def __init__(self, policy: MaskingPolicy, split: SplitConfig):
        self.policy, self.split = policy, split

    def process(self, record: Trajectory, table) -> Iterator:
        annotations = mask_trajectory(record, self.policy, table)
        row = record.model_dump()
        row["masking_policy"] = f"{self.policy.name}@{self.policy.config_hash}"
        row["task"], row["split"] = task_key(row), split_of(row, self.split)
        self.count(counts.key(counts.SPLIT, row["split"]))
        knowledge = is_knowledge(record)
        self.count(counts.KNOWLEDGE_DOCUMENTS, int(knowledge))
        self.count(
            counts.key(counts.CHARS, counts.KNOWLEDGE if knowledge else counts.TRAJECTORIES), record_chars(record)
        )
        for turn, note in zip(row["turns"], annotations, strict=True):
            stats, mask = note.statistics, note.mask
            turn["statistics"] = {name: getattr(stats, name) for name in STATISTIC_NAMES}
            turn.update(
                category=mask.category,
                keep_ratio=mask.keep_ratio,
                in_loss=mask.in_loss,
                loss_spans=[{"start": a, "end": b} for a, b in mask.spans],
            )
            self.count(counts.key(counts.CATEGORY, mask.category))
            self.count(counts.TURNS_IN_LOSS, int(mask.in_loss))
        self.count(counts.WRITTEN)
        self.count(counts.TURNS_WRITTEN, len(row["turns"]))
        yield row
