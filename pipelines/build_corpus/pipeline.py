"""build-corpus: raw trajectories -> validated, normalised, deduplicated, filtered, redacted, masked CPT shards."""

import dataclasses
import math
from pathlib import Path

import apache_beam as beam

from trajforge.masking import load_policy
from trajforge.pipelines.beam_runtime import pipeline_options
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.build_corpus.outputs import finish, read_seen
from trajforge.pipelines.build_corpus.transforms import (
    FILTERED,
    PAIRS,
    REJECTED,
    Annotate,
    CapKnowledge,
    CountTasks,
    ExactDuplicates,
    FilesWithDrops,
    Filter,
    KnowledgeShareFn,
    NearDuplicates,
    PredictabilityCombineFn,
    ReadRecords,
    Redact,
)
from trajforge.pipelines.counting import COUNTS, SumCounts
from trajforge.pipelines.job import SaveOutputs, prepare_output, run_pipeline
from trajforge.pipelines.shard_writing import WriteShards
from trajforge.schemas import storage
from trajforge.schemas.arrow import CPT_SCHEMA
from trajforge.schemas.dataset_rows import DATASET_SUFFIXES
from trajforge.schemas.formats.knowledge import KNOWLEDGE, find_knowledge_files
from trajforge.schemas.manifest import Manifest, read_manifest
from trajforge.schemas.names import CPT_DIR, MANIFEST_NAME
from trajforge.schemas.sources import find_data_files, format_suffixes


def plan_inputs(
    inputs: list[str], config: BuildConfig, output: str, incremental: bool
) -> tuple[dict[str, str], dict[str, str], dict | None]:
    """Input files and knowledge files with their fingerprints ("size:mtime_ns"); for an incremental build, only
    those new or changed since the last. Local paths are made absolute; files under OUTPUT are never inputs.
    Inputs may be URLs; knowledge documents are local files."""
    input_format, knowledge = config.input_format, config.knowledge
    suffixes = format_suffixes(input_format)
    local = [p if storage.is_url(p) else str(Path(p).resolve()) for p in inputs]
    files, missing = find_data_files(local, suffixes)
    documents, missing_documents = find_knowledge_files(knowledge)
    if missing or missing_documents:
        raise FileNotFoundError("; ".join([*(f"{m.source}: {m.reasons()[0]}" for m in missing), *missing_documents]))
    if not files and not documents:
        raise FileNotFoundError(f"{', '.join(inputs)}: no {'/'.join(suffixes)} files to read")
    if config.input_column and not any(f.path.endswith(DATASET_SUFFIXES) for f in files):
        raise ValueError(f"--column: no dataset file {input_format} reads among the inputs")
    out = output.rstrip("/") + "/"
    found = {f.path: f"{f.size}:{f.mtime_ns}" for f in files if not f.path.startswith(out)}
    found_documents = {
        str(p.resolve()): f"{(st := p.stat()).st_size}:{st.st_mtime_ns}"
        for p in documents
        if not str(p.resolve()).startswith(out)
    }
    previous = None
    if incremental and storage.exists(storage.join(output, MANIFEST_NAME)):
        previous = read_manifest(output).model_dump(mode="json")
        seen = previous.get("fingerprints", {})
        found, found_documents = (
            {path: print_ for path, print_ in group.items() if seen.get(path) != print_}
            for group in (found, found_documents)
        )
    return found, found_documents, previous


def build_corpus(
    inputs: list[str],
    output: str | Path,
    config: BuildConfig,
    beam_args: list[str] | None = None,
    incremental: bool = False,
    workers: int | None = None,
    verbose: bool = False,
) -> Manifest:
    out = str(output) if storage.is_url(output) else str(Path(output).resolve())
    options = pipeline_options(beam_args, workers, verbose, paths=(*inputs, out))
    policy = load_policy(config.masking_policy)
    config = dataclasses.replace(config, masking_policy_hash=policy.config_hash)
    files, documents, previous = plan_inputs(inputs, config, out, incremental)
    prepare_output(out)
    input_bytes = sum(int(f.split(":")[0]) for f in [*files.values(), *documents.values()])
    shards = max(1, math.ceil(input_bytes / config.shard_bytes))
    formats = {**{path: config.input_format for path in files}, **{path: KNOWLEDGE for path in documents}}
    paths = sorted(formats)
    seen = read_seen(out) if previous else frozenset()

    def build(p: beam.Pipeline) -> None:
        # Pass 1: small features of every record, and the dedup decisions.
        features = (
            p
            | "Pass1Files" >> beam.Create([(path, {}) for path in paths])
            | "Pass1Read"
            >> ReadRecords(formats, config.max_observation_chars, report=False, output=out, column=config.input_column)
        )
        near = None
        if config.near_dedup:
            near = features.records | "NearDuplicates" >> NearDuplicates(config.minhash, out)
        dedup = features.records | "ExactDuplicates" >> ExactDuplicates(paths, seen, near)
        table = None
        if policy.needs_predictability:
            table = features.records | "Predictability" >> beam.CombineGlobally(PredictabilityCombineFn())

        # Pass 2: each file read again with its own drops (a join by file, no side input of the corpus's size),
        # streamed through the curation steps into shards.
        read = (
            dedup.dropped
            | "FilesWithDrops" >> FilesWithDrops(paths)
            | "Pass2Read"
            >> ReadRecords(formats, config.max_observation_chars, report=True, output=out, column=config.input_column)
        )
        counts, filtered_out = [read[COUNTS]], []
        records = read.records
        if documents and config.knowledge_share < 1.0:
            threshold = features.records | "KnowledgeShare" >> beam.CombineGlobally(
                KnowledgeShareFn(config.knowledge_share, config.filters)
            )
            capped = records | "CapKnowledge" >> CapKnowledge(threshold)
            counts.append(capped[COUNTS])
            filtered_out.append(capped[FILTERED])
            records = capped.records
        filtered = records | "Filter" >> Filter(config.filters)
        counts.append(filtered[COUNTS])
        filtered_out.append(filtered[FILTERED])
        records = filtered.records
        if config.redact:
            redacted = records | "Redact" >> Redact()
            counts.append(redacted[COUNTS])
            records = redacted.records
        annotated = records | "Annotate" >> Annotate(policy, table, config.split)
        counts += [annotated[COUNTS], annotated.rows | "CountTasks" >> CountTasks()]
        written = annotated.rows | "WriteShards" >> WriteShards(out, shards, CPT_SCHEMA, CPT_DIR, ["trajectory_id"])
        _ = {
            "counts": tuple(counts) | "Counts" >> SumCounts(),
            "shards": written,
            "rejected": read[REJECTED],
            "filtered": tuple(filtered_out) | "AllFiltered" >> beam.Flatten(),
            "pairs": dedup[PAIRS],
            "ids": dedup.ids,
        } | "Save" >> SaveOutputs(out)

    run_pipeline("build-corpus", options, out, 2 * len(paths), build)
    return finish(out, config.as_dict(), {**files, **documents}, previous)
