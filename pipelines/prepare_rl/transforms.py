"""prepare-rl stages: one small labelled PTransform each, counting what they do."""

import json
import math
from collections.abc import Iterator

import apache_beam as beam

from trajforge.evaluation.turns import corpus_turn
from trajforge.evaluation.verifiers import derive_verifier
from trajforge.pipelines.counting import COUNTS, CountingFn
from trajforge.schemas import counts
from trajforge.schemas.hashing import content_hash
from trajforge.schemas.splits import readable_by, row_placement
from trajforge.schemas.version import SCHEMA_VERSION

NAMESPACE = "prepare_rl"  # of its Beam metrics
CHARS_PER_TOKEN = 4  # the budget's estimate without a tokenizer; --tokenizer counts exactly


class PrepareFn(CountingFn, namespace=NAMESPACE):
    """A prepare-rl stage that counts what it does."""


class Prompts(beam.PTransform):
    """CPT rows -> RL rows: one turn per trajectory (an in-loss one where there is one, picked by a hash of the
    id), its history cut from the oldest end to fit `token_budget`, with its reference observation and, where
    one can be derived, a rule-verifier spec. Rows RL may not read (held out, or in the CPT-only pool), rows
    without turns and prompts over the budget even without history are counted as `filtered.<why>`."""

    def __init__(self, token_budget: int, tokenizer: str | None):
        super().__init__()
        self.token_budget, self.tokenizer = token_budget, tokenizer

    def expand(self, rows):
        return rows | "Prompt" >> beam.ParDo(_PromptFn(self.token_budget, self.tokenizer)).with_outputs(
            COUNTS, main="rows"
        )


class _PromptFn(PrepareFn):
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
        self.count(counts.READ)
        task, split = row_placement(row)
        if not readable_by(split, "rl"):  # held out for eval, or in the CPT-only pool
            self.count(counts.key(counts.FILTERED, f"split_{split}"))
            return
        candidates = [t["index"] for t in row["turns"] if t["in_loss"]] or [t["index"] for t in row["turns"]]
        if not candidates:
            self.count(counts.key(counts.FILTERED, "no_turns"))
            return
        index = candidates[int(content_hash(row["trajectory_id"] + ":rl", 8), 16) % len(candidates)]
        turn = corpus_turn(row, index)
        messages = list(turn.messages)
        while self._tokens(messages) > self.token_budget and len(messages) > 2:
            messages = [messages[0], *messages[3:]]  # drop the oldest (action, observation) pair
        tokens = self._tokens(messages)
        if tokens > self.token_budget:
            self.count(counts.key(counts.FILTERED, "over_budget"))
            return
        spec = derive_verifier(turn.observation, row["domain"])
        self.count(counts.WITH_VERIFIER, int(spec is not None))
        self.count(counts.WRITTEN)
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
