"""curate-sft: CPT shards -> queries -> N candidates -> judged -> best-of-N above a threshold -> SFT shards."""

import json
import shutil
from pathlib import Path

import apache_beam as beam

from pipelines.beam_runtime import pipeline_options, runner_for
from pipelines.build_corpus.transforms import COUNTS
from pipelines.curate_sft.transforms import SCORES, Generate, JudgeAndPick, MakeQueries, ReadRows
from pipelines.shard_writing import SPILL_DIR, WriteShards, cpt_inputs, remove_stale_shards, sum_counts
from schemas.arrow import SFT_SCHEMA
from schemas.atomic import atomic_write
from schemas.manifest import Manifest, read_manifest

SFT_DIR = "sft"
SCORES_NAME = "_scores.jsonl"


def _finish(_, output: str, config: dict, inputs: list[str], counts, shards, scores) -> None:
    out = Path(output)
    totals = sum_counts(counts)
    with atomic_write(out / SCORES_NAME, "w") as f:
        for entry in sorted(scores, key=lambda e: (e["trajectory_id"], e["turn_index"])):
            f.write(json.dumps(entry, sort_keys=True) + "\n")
    Manifest(
        stage="curate-sft",
        config=config,
        inputs=inputs,
        outputs=sorted(s["file"] for s in shards),
        counts={"read": 0, "written": 0, **dict(sorted(totals.items()))},
    ).write(out)


def curate_sft(
    corpus: Path,
    output: Path,
    make_generator,
    make_judge,
    config: dict,
    candidates: int = 3,
    threshold: float = 3.5,
    per_trajectory: int = 4,
    hint: bool = False,
    seed: int = 0,
    shard_bytes: int = 64 << 20,
    beam_args: list[str] | None = None,
    workers: int | None = None,
) -> Manifest:
    files, shards = cpt_inputs(corpus, output, shard_bytes)
    options = pipeline_options(beam_args, workers)
    out = str(output.resolve())
    full_config = {
        **config,
        "candidates": candidates,
        "threshold": threshold,
        "per_trajectory": per_trajectory,
        "hint": hint,
        "seed": seed,
    }
    with beam.Pipeline(runner=runner_for(options), options=options) as p:
        rows = p | "ReadRows" >> ReadRows([str(f) for f in files])
        queries = rows | "MakeQueries" >> MakeQueries(per_trajectory)
        generated = queries.queries | "Generate" >> Generate(make_generator, candidates, hint, seed)
        judged = generated | "JudgeAndPick" >> JudgeAndPick(make_judge, threshold)
        written = judged.rows | "WriteShards" >> WriteShards(
            out, shards, SFT_SCHEMA, SFT_DIR, ["trajectory_id", "turn_index"]
        )
        counts = (queries[COUNTS], judged[COUNTS]) | "AllCounts" >> beam.Flatten() | beam.CombinePerKey(sum)
        _ = (
            p
            | "Finish" >> beam.Create([None])
            | "WriteManifest"
            >> beam.Map(
                _finish,
                out,
                full_config,
                [str(f) for f in files],
                beam.pvalue.AsList(counts),
                beam.pvalue.AsList(written),
                beam.pvalue.AsList(judged[SCORES]),
            )
        )
    shutil.rmtree(output / SPILL_DIR, ignore_errors=True)
    manifest = read_manifest(output)
    remove_stale_shards(output, SFT_DIR, manifest.outputs)
    return manifest
