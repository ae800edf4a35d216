"""verl's RL rows from prepare-rl shards (`trajforge export --format verl`): OUT/train.parquet and OUT/test.parquet,
one row per prompt, in the layout verl's data preparation documents and its RL trainer reads:

- `data_source` (string): `trajforge/<domain>` (verl groups validation metrics by it);
- `prompt` (list of {role, content}): the chat messages the policy answers;
- `ability` (string): `world-model`;
- `reward_model` ({style, ground_truth}): style `rule` (the score comes from our reward function, not from verl's
  reward-model worker), ground_truth the real observation;
- `extra_info` ({split, index, domain, verifier, messages, trajectory_id, turn_index}): what our `compute_score`
  (training/reward_functions.py) needs besides the ground truth: the domain, the verifier spec (JSON, or null), and
  the messages again (verl passes extra_info, not the prompt, to the reward function; the judge reads the history).
"""

from collections.abc import Mapping

import pyarrow as pa

from trajforge.training.trainer_export import MESSAGES, Batch, messages_of

DATA_SOURCE = "trajforge/{domain}"
ABILITY = "world-model"
REWARD_STYLE = "rule"
EXTRA_INFO = pa.struct(
    [
        pa.field("split", pa.string()),
        pa.field("index", pa.int64()),
        pa.field("domain", pa.string()),
        pa.field("verifier", pa.string()),
        pa.field("messages", MESSAGES),
        pa.field("trajectory_id", pa.string()),
        pa.field("turn_index", pa.int64()),
    ]
)
VERL_SCHEMA = pa.schema(
    [
        pa.field("data_source", pa.string()),
        pa.field("prompt", MESSAGES),
        pa.field("ability", pa.string()),
        pa.field("reward_model", pa.struct([pa.field("style", pa.string()), pa.field("ground_truth", pa.string())])),
        pa.field("extra_info", EXTRA_INFO),
    ]
)


def verl_row(row: Mapping, split: str, index: int) -> dict:
    messages = messages_of(row["messages"])
    return {
        "data_source": DATA_SOURCE.format(domain=row["domain"]),
        "prompt": messages,
        "ability": ABILITY,
        "reward_model": {"style": REWARD_STYLE, "ground_truth": row["reference"]},
        "extra_info": {
            "split": split,
            "index": index,
            "domain": row["domain"],
            "verifier": row["verifier"],
            "messages": messages,
            "trajectory_id": row["trajectory_id"],
            "turn_index": row["turn_index"],
        },
    }


def rl(batch: Batch, tokenizer, config, result) -> dict[str, pa.Table]:
    rows = [verl_row(r, batch.split, batch.start + i) for i, r in enumerate(batch.rows)]
    return {"": pa.Table.from_pylist(rows, schema=VERL_SCHEMA)}


WRITERS = {"rl": rl}
