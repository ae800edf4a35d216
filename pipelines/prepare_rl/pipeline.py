"""prepare-rl (paper §3.4): one turn per trajectory, prompts capped by a token budget (the oldest history goes
first), each with its reference observation and, where one can be derived, a rule-verifier spec."""

from pathlib import Path

import apache_beam as beam

from trajforge.pipelines.beam_runtime import pipeline_options
from trajforge.pipelines.counting import COUNTS, SumCounts
from trajforge.pipelines.job import ReadShardRows, SaveOutputs, read_outputs, run_pipeline
from trajforge.pipelines.prepare_rl.config import PrepareConfig
from trajforge.pipelines.prepare_rl.transforms import Prompts
from trajforge.pipelines.shard_writing import WriteShards, cpt_inputs, write_shard_job_manifest
from trajforge.schemas.arrow import RL_SCHEMA
from trajforge.schemas.manifest import Manifest
from trajforge.schemas.names import RL_DIR


def prepare_rl(
    corpus: str | Path,
    output: str | Path,
    config: PrepareConfig | None = None,
    beam_args: list[str] | None = None,
    workers: int | None = None,
    verbose: bool = False,
) -> Manifest:
    config = config or PrepareConfig()
    options = pipeline_options(beam_args, workers, verbose, paths=(str(corpus), str(output)))
    out = str(output)
    inputs = cpt_inputs(str(corpus), out, config.shard_bytes)

    def build(p: beam.Pipeline) -> None:
        rows = p | "ReadRows" >> ReadShardRows(inputs.files, out)
        prompts = rows | "Prompts" >> Prompts(config.token_budget, config.tokenizer)
        shards = prompts.rows | "WriteShards" >> WriteShards(out, inputs.shards, RL_SCHEMA, RL_DIR, ["trajectory_id"])
        counts = prompts[COUNTS] | "Counts" >> SumCounts()
        _ = {"counts": counts, "shards": shards} | "Save" >> SaveOutputs(out)

    run_pipeline("prepare-rl", options, out, len(inputs.files), build)
    saved = read_outputs(out)
    return write_shard_job_manifest("prepare-rl", config.as_manifest(), inputs.files, out, saved, RL_DIR)
