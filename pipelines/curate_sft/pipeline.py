"""curate-sft: CPT shards -> queries -> N candidates -> judged -> best-of-N above a threshold -> SFT shards."""

from pathlib import Path

import apache_beam as beam

from trajforge.pipelines.beam_runtime import pipeline_options
from trajforge.pipelines.counting import COUNTS, SumCounts
from trajforge.pipelines.curate_sft.config import CurateConfig
from trajforge.pipelines.curate_sft.transforms import SCORES, Generate, JudgeAndPick, MakeQueries
from trajforge.pipelines.job import ReadShardRows, SaveOutputs, read_outputs, run_pipeline, write_json_lines
from trajforge.pipelines.shard_writing import WriteShards, cpt_inputs, write_shard_job_manifest
from trajforge.schemas import storage
from trajforge.schemas.arrow import SFT_SCHEMA
from trajforge.schemas.manifest import Manifest
from trajforge.schemas.names import SCORES_NAME, SFT_DIR


def curate_sft(
    corpus: str | Path,
    output: str | Path,
    config: CurateConfig | None = None,
    beam_args: list[str] | None = None,
    workers: int | None = None,
    verbose: bool = False,
) -> Manifest:
    config = config or CurateConfig()
    options = pipeline_options(beam_args, workers, verbose, paths=(str(corpus), str(output)))
    out = str(output)
    inputs = cpt_inputs(str(corpus), out, config.shard_bytes)

    def build(p: beam.Pipeline) -> None:
        rows = p | "ReadRows" >> ReadShardRows(inputs.files, out)
        queries = rows | "MakeQueries" >> MakeQueries(config.per_trajectory)
        generated = queries.queries | "Generate" >> Generate(
            config.generator, config.candidates, config.hint, config.seed
        )
        judged = generated | "JudgeAndPick" >> JudgeAndPick(config.judge, config.threshold)
        shards = judged.rows | "WriteShards" >> WriteShards(
            out, inputs.shards, SFT_SCHEMA, SFT_DIR, ["trajectory_id", "turn_index"]
        )
        counts = (queries[COUNTS], judged[COUNTS]) | "Counts" >> SumCounts()
        _ = {"counts": counts, "shards": shards, "scores": judged[SCORES]} | "Save" >> SaveOutputs(out)

    run_pipeline("curate-sft", options, out, len(inputs.files), build)
    saved = read_outputs(out)
    scores = sorted(saved.get("scores", []), key=lambda e: (e["trajectory_id"], e["turn_index"]))
    write_json_lines(storage.join(out, SCORES_NAME), scores)
    return write_shard_job_manifest("curate-sft", config.as_manifest(), inputs.files, out, saved, SFT_DIR)
