"""prepare-rl (paper §3.4): one turn per trajectory, prompts capped by a token budget (the oldest history goes
first), each with its reference observation and, where one can be derived, a rule-verifier spec."""

import json
import math
from collections.abc import Iterator
from pathlib import Path

import apache_beam as beam

from trajforge.evaluation.turns import corpus_turn
from trajforge.evaluation.verifiers import derive_verifier
from trajforge.pipelines.beam_runtime import pipeline_options
from trajforge.pipelines.build_corpus.transforms import COUNTS, CountingFn
from trajforge.pipelines.job import ReadShardRows, SaveOutputs, SumCounts, read_outputs, run_pipeline
from trajforge.pipelines.prepare_rl import DEFAULT_TOKEN_BUDGET
from trajforge.pipelines.shard_writing import WriteShards, cpt_inputs, write_shard_job_manifest
from trajforge.schemas.arrow import RL_SCHEMA
from trajforge.schemas.hashing import content_hash
from trajforge.schemas.manifest import Manifest
from trajforge.schemas.names import RL_DIR
from trajforge.schemas.splits import readable_by, row_placement
from trajforge.schemas.version import SCHEMA_VERSION

CHARS_PER_TOKEN = 4  # the budget's estimate without a tokenizer; --tokenizer counts exactly


class _PromptFn(CountingFn):
    def __init__(self, token_budget: int, tokenizer: str | None):
        self.token_budget, self.tokenizer_path = token_budget, tokenizer

    def setup(self):
        self.tokenizer = None
        if self.tokenizer_path:
            from trajforge.training.tokenizer import load_tokenizer

            self.tokenizer = load_tokenizer(self.tokenizer_path)

    def _tokens(self, messages) -> int:
        text = "".join(content for _, content in messages)
        if self.tokenizer is None:
            return math.ceil(len(text) / CHARS_PER_TOKEN)
        return len(self.tokenizer(text, add_special_tokens=False).input_ids)

    def process(self, row: dict) -> Iterator[dict]:
        self.count("read")
        task, split = row_placement(row)
        if not readable_by(split, "rl"):  # held out for eval, or in the CPT-only pool
            self.count(f"filtered.split_{split}")
            return
        candidates = [t["index"] for t in row["turns"] if t["in_loss"]] or [t["index"] for t in row["turns"]]
        if not candidates:
            self.count("filtered.no_turns")
            return
        index = candidates[int(content_hash(row["trajectory_id"] + ":rl", 8), 16) % len(candidates)]
        turn = corpus_turn(row, index)
        messages = list(turn.messages)
        while self._tokens(messages) > self.token_budget and len(messages) > 2:
            messages = [messages[0], *messages[3:]]  # drop the oldest (action, observation) pair
        tokens = self._tokens(messages)
        if tokens > self.token_budget:
            self.count("filtered.over_budget")
            return
        spec = derive_verifier(turn.observation, row["domain"])
        self.count("with_verifier", int(spec is not None))
        self.count("written")
        yield {
            "schema_version": SCHEMA_VERSION,
            "trajectory_id": row["trajectory_id"],
            "turn_index": index,
            "domain": row["domain"],
            "template": turn.template,
            "messages": [{"role": r, "content": c} for r, c in messages],
            "reference": turn.reference,
            "verifier": json.dumps(spec) if spec is not None else None,
            "prompt_tokens": tokens,
            "task": task,
            "split": split,
        }


def prepare_rl(
    corpus: str | Path,
    output: str | Path,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    tokenizer: str | None = None,
    shard_bytes: int = 64 << 20,
    beam_args: list[str] | None = None,
    workers: int | None = None,
    verbose: bool = False,
) -> Manifest:
    options = pipeline_options(beam_args, workers, verbose, paths=(str(corpus), str(output)))
    out = str(output)
    inputs = cpt_inputs(str(corpus), out, shard_bytes)
    config = {"token_budget": token_budget, "tokenizer": tokenizer}

    def build(p: beam.Pipeline) -> None:
        rows = p | "ReadRows" >> ReadShardRows(inputs.files, out)
        prompts = rows | "Prompts" >> beam.ParDo(_PromptFn(token_budget, tokenizer)).with_outputs(COUNTS, main="rows")
        shards = prompts.rows | "WriteShards" >> WriteShards(out, inputs.shards, RL_SCHEMA, RL_DIR, ["trajectory_id"])
        counts = prompts[COUNTS] | "Counts" >> SumCounts()
        _ = {"counts": counts, "shards": shards} | "Save" >> SaveOutputs(out)

    run_pipeline("prepare-rl", options, out, len(inputs.files), build)
    saved = read_outputs(out)
    return write_shard_job_manifest("prepare-rl", config, inputs.files, out, saved, RL_DIR)
