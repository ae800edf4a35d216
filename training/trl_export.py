"""TRL datasets from trajforge shards (`trajforge export --format trl`), each a folder of train/test parquet files:

- `cpt-tokenized/` (CPT shards, --tokenizer): each document pre-tokenized with its per-turn loss masks, as `input_ids`
  and `assistant_masks` (1: the token is in the loss). TRL's SFTTrainer reads a dataset with `input_ids` as
  pre-tokenized and builds its labels from `assistant_masks` (-100 where 0) whatever `assistant_only_loss` says. The
  ids and masks are the ones `train cpt` trains on (training/labels.py, the only place masks become tokens):
  a document longer than --context-length is split into chunks, every loss token kept.
- `sft-tokenized/` (SFT shards, --tokenizer): the same for SFT rows: the curated target and its end of turn in the
  loss; a prompt too long keeps its head and its most recent tokens, as `train sft` does.
- `sft-prompt-completion/` (SFT shards): TRL's conversational prompt-completion rows, `prompt` = the messages the
  model sees and `completion` = the target as the assistant's message: SFTTrainer then puts the completion alone in
  the loss (`completion_only_loss`, its default for such rows), with any chat template: the SFT `train` does.
- `sft-messages/` (SFT shards): TRL's conversational language-modeling rows, `messages` = the prompt messages, then
  the target as the assistant's message (all of it in the loss, unless the template has `{% generation %}` markers
  for `assistant_only_loss`).
- `grpo/` (RL shards): GRPOTrainer prompts: `prompt` (chat messages) and the columns our reward reads (`reference`,
  `verifier`, `domain`; training/reward_functions.py's `trl_reward`), with `trajectory_id` and `turn_index`.
"""

from collections.abc import Iterable, Mapping

import pyarrow as pa

from trajforge.training.labels import IGNORE_INDEX
from trajforge.training.render import render_row, render_sft_row
from trajforge.training.sequences import tokenized_documents
from trajforge.training.trainer_export import MESSAGES, Batch, messages_of

TOKENS_SCHEMA = pa.schema(
    [pa.field("input_ids", pa.list_(pa.int32())), pa.field("assistant_masks", pa.list_(pa.int8()))]
)
ORIGIN_FIELDS = [
    pa.field("trajectory_id", pa.string()),
    pa.field("turn_index", pa.int32()),
    pa.field("domain", pa.string()),
]
SFT_MESSAGES_SCHEMA = pa.schema([pa.field("messages", MESSAGES), *ORIGIN_FIELDS])
SFT_PROMPT_COMPLETION_SCHEMA = pa.schema(
    [pa.field("prompt", MESSAGES), pa.field("completion", MESSAGES), *ORIGIN_FIELDS]
)
GRPO_SCHEMA = pa.schema(
    [
        pa.field("prompt", MESSAGES),
        pa.field("reference", pa.string()),
        pa.field("verifier", pa.string()),  # a JSON spec (evaluation/verifiers.py), null where the row has none
        *ORIGIN_FIELDS,
    ]
)


def tokens_table(rows: Iterable[Mapping], tokenizer, context_length: int, render, overflow: str) -> pa.Table:
    documents = tokenized_documents(rows, tokenizer, context_length, "masked", overflow, render)
    return pa.Table.from_pylist(
        [
            {"input_ids": d.input_ids.tolist(), "assistant_masks": (d.labels != IGNORE_INDEX).astype("int8").tolist()}
            for d in documents
        ],
        schema=TOKENS_SCHEMA,
    )


def _origin(row: Mapping) -> dict:
    return {"trajectory_id": row["trajectory_id"], "turn_index": row["turn_index"], "domain": row["domain"]}


def cpt(batch: Batch, tokenizer, config, result) -> dict[str, pa.Table]:
    if tokenizer is None:
        raise ValueError("--format trl of CPT shards needs --tokenizer: their loss masks exist only as token masks")
    return {"cpt-tokenized": tokens_table(batch.rows, tokenizer, config.context_length, render_row, "split")}


def sft(batch: Batch, tokenizer, config, result) -> dict[str, pa.Table]:
    rows = batch.rows
    pairs = [
        {"prompt": messages_of(r["messages"]), "completion": [{"role": "assistant", "content": r["target"]}]}
        | _origin(r)
        for r in rows
    ]
    messages = [{"messages": p["prompt"] + p["completion"], **_origin(p)} for p in pairs]
    tables = {
        "sft-prompt-completion": pa.Table.from_pylist(pairs, schema=SFT_PROMPT_COMPLETION_SCHEMA),
        "sft-messages": pa.Table.from_pylist(messages, schema=SFT_MESSAGES_SCHEMA),
    }
    if tokenizer is None:
        result.note("sft-tokenized/ not written: give --tokenizer for SFT rows pre-tokenized with their loss masks")
    else:
        tables["sft-tokenized"] = tokens_table(rows, tokenizer, config.context_length, render_sft_row, "trim_history")
    return tables


def rl(batch: Batch, tokenizer, config, result) -> dict[str, pa.Table]:
    prompts = [
        {"prompt": messages_of(r["messages"]), "reference": r["reference"], "verifier": r["verifier"], **_origin(r)}
        for r in batch.rows
    ]
    return {"grpo": pa.Table.from_pylist(prompts, schema=GRPO_SCHEMA)}


WRITERS = {"cpt": cpt, "sft": sft, "rl": rl}
