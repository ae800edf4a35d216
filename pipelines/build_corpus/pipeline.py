"""build-corpus: raw trajectories -> validated, normalised, deduplicated, filtered, redacted, masked CPT shards."""

import dataclasses
import math
import shutil
from pathlib import Path

import apache_beam as beam

from masking import load_policy
from pipelines.beam_runtime import pipeline_options, runner_for
from pipelines.build_corpus.config import BuildConfig
from pipelines.build_corpus.outputs import SHARDS_DIR, finish, read_seen
from pipelines.build_corpus.transforms import (
    COUNTS,
    PAIRS,
    REJECTED,
    Annotate,
    CapKnowledge,
    CountTasks,
    DropDuplicates,
    ExactDuplicates,
    Filter,
    KnowledgeShareFn,
    NearDuplicates,
    PredictabilityCombineFn,
    ReadRecords,
    Redact,
)
from pipelines.shard_writing import SPILL_DIR, WriteShards, remove_stale_shards
from schemas.arrow import CPT_SCHEMA
from schemas.atomic import remove_stale_temporaries
from schemas.formats.knowledge import find_knowledge_files
from schemas.manifest import MANIFEST_NAME, Manifest, read_manifest
from schemas.sources import FOREIGN_SUFFIXES, NATIVE, NATIVE_SUFFIXES, find_files


def fingerprint(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def plan_inputs(
    inputs: list[str], input_format: str, output: Path, incremental: bool, knowledge: tuple[str, ...] = ()
) -> tuple[dict[str, str], dict[str, str], dict | None]:
    """Input files and knowledge files with their fingerprints; for an incremental build, only those new or
    changed since the last."""
    suffixes = NATIVE_SUFFIXES if input_format == NATIVE else FOREIGN_SUFFIXES
    files, missing = find_files(inputs, suffixes)
    documents, missing_documents = find_knowledge_files(knowledge)
    if missing or missing_documents:
        raise FileNotFoundError("; ".join([*(f"{m.source}: {m.reasons()[0]}" for m in missing), *missing_documents]))
    output = output.resolve()
    found, found_documents = (
        {str(f.resolve()): fingerprint(f) for f in group if output not in f.resolve().parents}
        for group in (files, documents)
    )
    previous = None
    if incremental and (output / MANIFEST_NAME).exists():
        previous = read_manifest(output).model_dump(mode="json")
        seen = previous.get("fingerprints", {})
        found, found_documents = (
            {path: print_ for path, print_ in group.items() if seen.get(path) != print_}
            for group in (found, found_documents)
        )
    return found, found_documents, previous


def build_corpus(
    inputs: list[str],
    output: Path,
    config: BuildConfig,
    beam_args: list[str] | None = None,
    incremental: bool = False,
    workers: int | None = None,
) -> Manifest:
    policy = load_policy(config.policy)
    config = dataclasses.replace(config, policy_hash=policy.config_hash)
    files, documents, previous = plan_inputs(inputs, config.input_format, output, incremental, config.knowledge)
    output.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(output / SPILL_DIR, ignore_errors=True)  # left by an interrupted build
    remove_stale_temporaries(output)
    input_bytes = sum(int(f.split(":")[0]) for f in [*files.values(), *documents.values()])
    shards = max(1, math.ceil(input_bytes / config.shard_bytes))
    options = pipeline_options(beam_args, workers)
    out = str(output.resolve())
    paths, knowledge = sorted(files), sorted(documents)
    with beam.Pipeline(runner=runner_for(options), options=options) as p:
        # Pass 1: small features of every record, and the dedup decisions.
        features = p | "Pass1Read" >> ReadRecords(
            paths, config.input_format, config.max_observation_chars, report=False, knowledge=knowledge
        )
        exact = features.records | "ExactDuplicates" >> ExactDuplicates(read_seen(output) if previous else frozenset())
        pairs = [exact[PAIRS]]
        near = p | "NoNear" >> beam.Create([])
        if config.near_dedup:
            near = features.records | "NearDuplicates" >> NearDuplicates(config.minhash)
            pairs.append(
                near
                | "NearPairs"
                >> beam.Map(lambda kv: {"kind": "near", "dropped": kv[0], "kept": kv[1][0], "similarity": kv[1][1]})
            )
        table = None
        if policy.needs_predictability:
            table = features.records | "Predictability" >> beam.CombineGlobally(PredictabilityCombineFn())

        # Pass 2: every record streamed through the curation steps into spill files, then shards.
        read = p | "Pass2Read" >> ReadRecords(
            paths, config.input_format, config.max_observation_chars, report=True, knowledge=knowledge
        )
        counts = [read[COUNTS]]
        kept = read.records | "DropDuplicates" >> DropDuplicates(exact.losers, near)
        counts.append(kept[COUNTS])
        records = kept.records
        if knowledge and config.knowledge_share < 1.0:
            threshold = features.records | "KnowledgeShare" >> beam.CombineGlobally(
                KnowledgeShareFn(config.knowledge_share, config.filters)
            )
            capped = records | "CapKnowledge" >> CapKnowledge(threshold)
            counts.append(capped[COUNTS])
            records = capped.records
        filtered = records | "Filter" >> Filter(config.filters)
        counts.append(filtered[COUNTS])
        records = filtered.records
        if config.redact:
            redacted = records | "Redact" >> Redact()
            counts.append(redacted[COUNTS])
            records = redacted.records
        annotated = records | "Annotate" >> Annotate(policy, table, config.split)
        counts += [annotated[COUNTS], annotated.rows | "CountTasks" >> CountTasks()]
        written = annotated.rows | "WriteShards" >> WriteShards(out, shards, CPT_SCHEMA, SHARDS_DIR, ["trajectory_id"])

        totals = tuple(counts) | "AllCounts" >> beam.Flatten() | "SumCounts" >> beam.CombinePerKey(sum)
        _ = (
            p
            | "Finish" >> beam.Create([None])
            | "WriteManifest"
            >> beam.Map(
                finish,
                out,
                config.as_dict(),
                {**files, **documents},
                previous,
                beam.pvalue.AsList(totals),
                beam.pvalue.AsList(written),
                beam.pvalue.AsList(read[REJECTED]),
                beam.pvalue.AsList(tuple(pairs) | "AllPairs" >> beam.Flatten()),
                beam.pvalue.AsList(exact.ids),
            )
        )
    shutil.rmtree(output / SPILL_DIR, ignore_errors=True)
    manifest = read_manifest(output)
    remove_stale_shards(output, SHARDS_DIR, manifest.outputs)
    return manifest
