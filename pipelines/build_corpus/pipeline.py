"""build-corpus: raw trajectories -> validated, normalised, deduplicated, filtered, redacted, masked CPT shards."""

import dataclasses
from pathlib import Path

import apache_beam as beam

from masking import load_policy
from pipelines.beam_runtime import pipeline_options, runner_for
from pipelines.build_corpus.config import BuildConfig
from pipelines.build_corpus.outputs import finish, read_seen, remove_stale_shards, write_cpt_shard
from pipelines.build_corpus.transforms import (
    COUNTS,
    PAIRS,
    REJECTED,
    Annotate,
    AssignShards,
    ExactDedup,
    Filter,
    NearDedup,
    Normalize,
    ReadAndValidate,
    Redact,
)
from schemas.manifest import MANIFEST_NAME, Manifest, read_manifest
from schemas.sources import FOREIGN_SUFFIXES, NATIVE, NATIVE_SUFFIXES, find_files


def fingerprint(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def plan_inputs(
    inputs: list[str], input_format: str, output: Path, incremental: bool
) -> tuple[dict[str, str], dict | None]:
    """Input files with their fingerprints; for an incremental build, only those new or changed since the last."""
    suffixes = NATIVE_SUFFIXES if input_format == NATIVE else FOREIGN_SUFFIXES
    files, missing = find_files(inputs, suffixes)
    if missing:
        raise FileNotFoundError("; ".join(f"{m.source}: {m.reasons()[0]}" for m in missing))
    output = output.resolve()
    found = {str(f.resolve()): fingerprint(f) for f in files if output not in f.resolve().parents}
    previous = None
    if incremental and (output / MANIFEST_NAME).exists():
        previous = read_manifest(output).model_dump(mode="json")
        seen = previous.get("fingerprints", {})
        found = {path: print_ for path, print_ in found.items() if seen.get(path) != print_}
    return found, previous


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
    files, previous = plan_inputs(inputs, config.input_format, output, incremental)
    output.mkdir(parents=True, exist_ok=True)
    options = pipeline_options(beam_args, workers)
    out = str(output.resolve())
    with beam.Pipeline(runner=runner_for(options), options=options) as p:
        read = p | "ReadAndValidate" >> ReadAndValidate(
            sorted(files), config.input_format, config.max_observation_chars
        )
        counts = [read[COUNTS]]
        pairs = []
        records = read.records | "Normalize" >> Normalize()
        exact = records | "ExactDedup" >> ExactDedup(read_seen(output) if previous else frozenset())
        counts.append(exact[COUNTS])
        pairs.append(exact[PAIRS])
        records = exact.records
        if config.near_dedup:
            near = records | "NearDedup" >> NearDedup(config.minhash)
            counts.append(near[COUNTS])
            pairs.append(near[PAIRS])
            records = near.records
        filtered = records | "Filter" >> Filter(config.filters)
        counts.append(filtered[COUNTS])
        records = filtered.records
        if config.redact:
            redacted = records | "Redact" >> Redact()
            counts.append(redacted[COUNTS])
            records = redacted.records
        annotated = records | "Annotate" >> Annotate(policy)
        counts.append(annotated[COUNTS])
        shards = (
            annotated.rows
            | "AssignShards" >> AssignShards(config.shard_bytes)
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShards" >> beam.Map(write_cpt_shard, out)
        )
        totals = tuple(counts) | "AllCounts" >> beam.Flatten() | "SumCounts" >> beam.CombinePerKey(sum)
        all_pairs = tuple(pairs) | "AllPairs" >> beam.Flatten()
        _ = (
            p
            | "Finish" >> beam.Create([None])
            | "WriteManifest"
            >> beam.Map(
                finish,
                out,
                config.as_dict(),
                files,
                previous,
                beam.pvalue.AsList(totals),
                beam.pvalue.AsList(shards),
                beam.pvalue.AsList(read[REJECTED]),
                beam.pvalue.AsList(all_pairs),
                beam.pvalue.AsList(exact.records | "KeptIds" >> beam.Map(lambda r: r.trajectory_id)),
            )
        )
    manifest = read_manifest(output)
    remove_stale_shards(output, manifest)
    return manifest


__all__ = ["build_corpus"]
