"""The build-corpus stages, one small labelled PTransform each. Every stage counts what it does twice: as
Beam metrics (for the runner's UI) and as ("name", n) elements that the manifest sums, whatever the runner."""

import base64
import math
from collections.abc import Iterator

import apache_beam as beam
from apache_beam.metrics import Metrics

from curation.dedup import MinHashConfig, band_keys, duplicates_in_bucket, signature
from curation.filters import FilterConfig, apply_filters
from curation.normalize import normalize
from curation.redaction import redact
from masking import MaskingPolicy, PredictabilityCombiner, mask_trajectory
from masking.information import action_key
from schemas.formats import ImportOptions
from schemas.records import Trajectory
from schemas.sources import read_records

NAMESPACE = "build_corpus"
COUNTS = "counts"
REJECTED = "rejected"
PAIRS = "pairs"


def count(name: str, n: int = 1) -> tuple[str, int]:
    Metrics.counter(NAMESPACE, name).inc(n)
    return name, n


class ReadAndValidate(beam.PTransform):
    """Files -> valid records; invalid ones (with every reason and the raw bytes) go to the rejected output."""

    def __init__(self, files: list[str], input_format: str, max_observation_chars: int):
        super().__init__()
        self.files, self.input_format = files, input_format
        self.options = ImportOptions(max_observation_chars=max_observation_chars)

    def expand(self, pbegin):
        return (
            pbegin
            | "Files" >> beam.Create(self.files)
            | "Spread" >> beam.Reshuffle()
            | "Read" >> beam.FlatMap(self._read).with_outputs(REJECTED, COUNTS, main="records")
        )

    def _read(self, path: str) -> Iterator:
        for result in read_records([path], self.input_format, self.options):
            yield beam.pvalue.TaggedOutput(COUNTS, count("read"))
            if result.ok:
                yield result.record
                continue
            yield beam.pvalue.TaggedOutput(COUNTS, count("rejected"))
            entry = {"source": result.source, "locator": result.locator, "reasons": result.reasons()}
            if result.raw is not None:
                try:
                    entry["raw"] = result.raw.decode("utf-8")
                except UnicodeDecodeError:
                    entry["raw_base64"] = base64.b64encode(result.raw).decode("ascii")
            yield beam.pvalue.TaggedOutput(REJECTED, entry)


class Normalize(beam.PTransform):
    def expand(self, records):
        return records | "Normalize" >> beam.Map(normalize)


def _kept_first(records: list[Trajectory]) -> list[Trajectory]:
    """Among exact duplicates, the one kept is the earliest by (run, origin): the same whatever the order."""
    return sorted(records, key=lambda r: (r.source.run_id or "", r.source.origin or "", r.source.by))


class ExactDedup(beam.PTransform):
    """Same content id after normalisation: one is kept, the others are reported as dropped -> kept pairs.
    `seen` holds the ids an earlier build kept (an incremental build): those are duplicates too."""

    def __init__(self, seen: frozenset[str] = frozenset()):
        super().__init__()
        self.seen = seen

    def expand(self, records):
        return (
            records
            | "ById" >> beam.Map(lambda r: (r.trajectory_id, r))
            | "Group" >> beam.GroupByKey()
            | "Keep" >> beam.FlatMap(self._keep).with_outputs(COUNTS, PAIRS, main="records")
        )

    def _keep(self, item) -> Iterator:
        ident, group = item
        kept, *dropped = _kept_first(list(group))
        if ident in self.seen:
            dropped.insert(0, kept)
        else:
            yield kept
        for other in dropped:
            yield beam.pvalue.TaggedOutput(COUNTS, count("deduplicated.exact"))
            yield beam.pvalue.TaggedOutput(
                PAIRS,
                {
                    "kind": "exact",
                    "dropped": other.source.origin or other.source.run_id,
                    "kept": kept.trajectory_id,
                    "similarity": 1.0,
                },
            )


class NearDedup(beam.PTransform):
    """MinHash over action/observation sequences, LSH bands, estimated Jaccard: the larger id of a pair goes."""

    def __init__(self, config: MinHashConfig):
        super().__init__()
        self.config = config

    def expand(self, records):
        config = self.config
        keyed = records | "ById" >> beam.Map(lambda r: (r.trajectory_id, r))
        coefficients = config.coefficients()
        signatures = keyed | "Sign" >> beam.Map(lambda kv: (kv[0], signature(kv[1], config, coefficients)))
        drops = (
            signatures
            | "Bands" >> beam.FlatMap(lambda kv: [(band, kv) for band in band_keys(kv[1], config)])
            | "Buckets" >> beam.GroupByKey()
            | "Pairs" >> beam.FlatMap(lambda kv: duplicates_in_bucket(list(kv[1]), config.threshold))
            | "ByDropped" >> beam.Map(lambda t: (t[0], (t[1], t[2])))
            | "SmallestKept" >> beam.CombinePerKey(min)
        )
        return (
            {"record": keyed, "drop": drops}
            | "Join" >> beam.CoGroupByKey()
            | "Keep" >> beam.FlatMap(self._keep).with_outputs(COUNTS, PAIRS, main="records")
        )

    @staticmethod
    def _keep(item) -> Iterator:
        ident, joined = item
        drops = list(joined["drop"])
        for record in joined["record"]:
            if not drops:
                yield record
                continue
            kept, score = drops[0]
            yield beam.pvalue.TaggedOutput(COUNTS, count("deduplicated.near"))
            yield beam.pvalue.TaggedOutput(
                PAIRS, {"kind": "near", "dropped": ident, "kept": kept, "similarity": round(score, 4)}
            )


class Filter(beam.PTransform):
    """The paper's filters: dropped trajectories and removed turns, counted by reason."""

    def __init__(self, config: FilterConfig):
        super().__init__()
        self.config = config

    def expand(self, records):
        return records | "Apply" >> beam.FlatMap(self._apply).with_outputs(COUNTS, main="records")

    def _apply(self, record: Trajectory) -> Iterator:
        result = apply_filters(record, self.config)
        for reason, n in (+result.removed_turns).items():
            yield beam.pvalue.TaggedOutput(COUNTS, count(f"turns_removed.{reason}", n))
        if result.record is None:
            yield beam.pvalue.TaggedOutput(COUNTS, count(f"filtered.{result.dropped_by}"))
        else:
            yield result.record


class Redact(beam.PTransform):
    """Secrets in actions and observations become typed placeholders, counted by type."""

    def expand(self, records):
        return records | "Redact" >> beam.FlatMap(self._redact).with_outputs(COUNTS, main="records")

    @staticmethod
    def _redact(record: Trajectory) -> Iterator:
        clean, found = redact(record)
        for kind, n in found.items():
            yield beam.pvalue.TaggedOutput(COUNTS, count(f"redacted.{kind}", n))
        yield clean


class PredictabilityCombineFn(beam.CombineFn):
    """The corpus-wide action -> observation table that the information-theoretic policy reads."""

    def __init__(self):
        self.combiner = PredictabilityCombiner()

    def create_accumulator(self):
        return self.combiner.create()

    def add_input(self, accumulator, record: Trajectory):
        for turn in record.turns:
            accumulator = self.combiner.add(accumulator, action_key(turn.action), turn.observation.content)
        return accumulator

    def merge_accumulators(self, accumulators):
        return self.combiner.merge(list(accumulators))

    def extract_output(self, accumulator):
        return self.combiner.extract(accumulator)


class Annotate(beam.PTransform):
    """Per-turn statistics, category, keep ratio, in-loss flag and spans: rows of the CPT schema."""

    def __init__(self, policy: MaskingPolicy):
        super().__init__()
        self.policy = policy

    def expand(self, records):
        table = None
        if self.policy.needs_predictability:
            table = beam.pvalue.AsSingleton(
                records | "Predictability" >> beam.CombineGlobally(PredictabilityCombineFn())
            )
        return records | "Mask" >> beam.FlatMap(self._annotate, table).with_outputs(COUNTS, main="rows")

    def _annotate(self, record: Trajectory, table) -> Iterator:
        annotations = mask_trajectory(record, self.policy, table)
        row = record.model_dump()
        row["masking_policy"] = f"{self.policy.name}@{self.policy.config_hash}"
        for turn, note in zip(row["turns"], annotations, strict=True):
            stats, mask = note.statistics, note.mask
            turn["statistics"] = {
                "overlap": stats.overlap,
                "novelty": stats.novelty,
                "jaccard": stats.jaccard,
                "length_ratio": stats.length_ratio,
                "action_chars": stats.action_chars,
                "observation_chars": stats.observation_chars,
                "compression_gain": stats.compression_gain,
                "predictability": stats.predictability,
            }
            turn.update(
                category=mask.category,
                keep_ratio=mask.keep_ratio,
                in_loss=mask.in_loss,
                loss_spans=[{"start": a, "end": b} for a, b in mask.spans],
            )
            yield beam.pvalue.TaggedOutput(COUNTS, count(f"category.{mask.category}"))
            if mask.in_loss:
                yield beam.pvalue.TaggedOutput(COUNTS, count("turns_in_loss"))
        yield beam.pvalue.TaggedOutput(COUNTS, count("written"))
        yield beam.pvalue.TaggedOutput(COUNTS, count("turns_written", len(row["turns"])))
        yield row


def row_bytes(row: dict) -> int:
    return sum(len(t["action"]["content"]) + len(t["observation"]["content"]) + 256 for t in row["turns"]) + 1024


class AssignShards(beam.PTransform):
    """Rows -> (shard index, row): as many shards as the target size asks, a row's shard fixed by its id."""

    def __init__(self, shard_bytes: int):
        super().__init__()
        self.shard_bytes = shard_bytes

    def expand(self, rows):
        total = rows | "Size" >> beam.Map(row_bytes) | "Total" >> beam.CombineGlobally(sum)
        shards = total | "Count" >> beam.Map(lambda n: max(1, math.ceil(n / self.shard_bytes)))
        return rows | "Assign" >> beam.Map(
            lambda row, n: (int(row["trajectory_id"][:12], 16) % n, row), beam.pvalue.AsSingleton(shards)
        )
