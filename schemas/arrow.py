"""The explicit Arrow schema of a trajectory, and conversion between records and Arrow."""

from collections.abc import Iterable, Iterator

import pyarrow as pa

from trajforge.schemas.records import Trajectory
from trajforge.schemas.validation import Problem, ReadResult, validate_record

ACTION = pa.struct(
    [
        pa.field("kind", pa.string(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("content", pa.large_string(), nullable=False),
    ]
)
OBSERVATION = pa.struct(
    [
        pa.field("content", pa.large_string(), nullable=False),
        pa.field("format", pa.string(), nullable=False),
        pa.field("exit_code", pa.int64()),
        pa.field("is_error", pa.bool_(), nullable=False),
        pa.field("truncated", pa.bool_(), nullable=False),
        pa.field("metadata", pa.string()),
    ]
)
TURN_FIELDS = [
    pa.field("index", pa.int32(), nullable=False),
    pa.field("action", ACTION, nullable=False),
    pa.field("observation", OBSERVATION, nullable=False),
    pa.field("latency_ms", pa.float64()),
    pa.field("fault", pa.string()),
    pa.field("no_change", pa.bool_()),
    pa.field("loss_weight", pa.float64()),
]
TURN = pa.struct(TURN_FIELDS)

TRAJECTORY_FIELDS = [
    pa.field("schema_version", pa.string(), nullable=False),
    pa.field("trajectory_id", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field(
        "source",
        pa.struct(
            [
                pa.field("kind", pa.string(), nullable=False),
                pa.field("by", pa.string(), nullable=False),
                pa.field("run_id", pa.string()),
                pa.field("origin", pa.string()),
            ]
        ),
        nullable=False,
    ),
    pa.field(
        "environment",
        pa.struct(
            [
                pa.field("name", pa.string(), nullable=False),
                pa.field("version", pa.string()),
                pa.field("image_digest", pa.string()),
                pa.field("backend", pa.string()),
            ]
        ),
        nullable=False,
    ),
    pa.field("task_description", pa.large_string(), nullable=False),
    pa.field("action_space", pa.large_string(), nullable=False),
    pa.field("initial_state", pa.large_string(), nullable=False),
    pa.field("demonstrations", pa.large_string(), nullable=False),
    pa.field("simulation_instruction", pa.large_string(), nullable=False),
    pa.field(
        "agent",
        pa.struct([pa.field("name", pa.string(), nullable=False), pa.field("model", pa.string())]),
        nullable=False,
    ),
    pa.field("turns", pa.list_(pa.field("item", TURN, nullable=False)), nullable=False),
    pa.field(
        "outcome",
        pa.struct(
            [
                pa.field("status", pa.string(), nullable=False),
                pa.field("reward", pa.float64()),
                pa.field("verifier", pa.string()),
                pa.field("error", pa.string()),
            ]
        ),
        nullable=False,
    ),
    pa.field("started_at", pa.timestamp("us", tz="UTC")),
    pa.field("ended_at", pa.timestamp("us", tz="UTC")),
    pa.field("metadata", pa.string()),
]

TRAJECTORY_SCHEMA = pa.schema(TRAJECTORY_FIELDS, metadata={"trajforge.kind": "trajectory"})

# Where a row stands in the corpus's one split (schemas/splits.py): its task key and its split. Every later stage
# carries both. Shards written before these columns existed lack them; readers derive them (schemas/dataset.py).
SPLIT_FIELDS = [pa.field("task", pa.string()), pa.field("split", pa.string())]
ADDED_FIELDS = frozenset(f.name for f in SPLIT_FIELDS)

# CPT shards (build-corpus): every turn also carries its statistics, category, keep ratio, in-loss flag and the
# character spans of its observation that are in the loss. Masks become token masks in one place: tokenization.
STATISTICS = pa.struct(
    [
        pa.field("overlap", pa.float64(), nullable=False),
        pa.field("novelty", pa.float64(), nullable=False),
        pa.field("jaccard", pa.float64(), nullable=False),
        pa.field("length_ratio", pa.float64(), nullable=False),
        pa.field("action_chars", pa.int64(), nullable=False),
        pa.field("observation_chars", pa.int64(), nullable=False),
        pa.field("compression_gain", pa.float64()),
        pa.field("predictability", pa.float64()),
    ]
)
SPAN = pa.struct([pa.field("start", pa.int64(), nullable=False), pa.field("end", pa.int64(), nullable=False)])
MASK_FIELDS = [
    pa.field("statistics", STATISTICS, nullable=False),
    pa.field("category", pa.string(), nullable=False),
    pa.field("keep_ratio", pa.float64(), nullable=False),
    pa.field("in_loss", pa.bool_(), nullable=False),
    pa.field("loss_spans", pa.list_(pa.field("item", SPAN, nullable=False)), nullable=False),
]
CPT_TURN = pa.struct(TURN_FIELDS + MASK_FIELDS)
CPT_SCHEMA = pa.schema(
    [
        f
        if f.name != "turns"
        else pa.field("turns", pa.list_(pa.field("item", CPT_TURN, nullable=False)), nullable=False)
        for f in TRAJECTORY_FIELDS
    ]
    + [pa.field("masking_policy", pa.string(), nullable=False), *SPLIT_FIELDS],
    metadata={"trajforge.kind": "cpt"},
)
# SFT shards (curate-sft): one curated query a row, the messages the model sees and the best candidate.
SCORES = pa.struct(
    [
        pa.field(name, pa.float64(), nullable=False)
        for name in ("format", "factuality", "consistency", "realism", "quality")
    ]
)
MESSAGE = pa.struct(
    [pa.field("role", pa.string(), nullable=False), pa.field("content", pa.large_string(), nullable=False)]
)
# What SFT and RL rows share: which turn of which trajectory, and the messages a model sees.
QUERY_FIELDS = [
    pa.field("schema_version", pa.string(), nullable=False),
    pa.field("trajectory_id", pa.string(), nullable=False),
    pa.field("turn_index", pa.int32(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("template", pa.int32(), nullable=False),
    pa.field("messages", pa.list_(pa.field("item", MESSAGE, nullable=False)), nullable=False),
    *SPLIT_FIELDS,
]
SFT_SCHEMA = pa.schema(
    [
        *QUERY_FIELDS,
        pa.field("target", pa.large_string(), nullable=False),
        pa.field("prediction", pa.large_string(), nullable=False),
        pa.field("reference", pa.large_string(), nullable=False),
        pa.field("scores", SCORES, nullable=False),
        pa.field("score", pa.float64(), nullable=False),
        pa.field("candidates", pa.int32(), nullable=False),
        pa.field("generator", pa.string(), nullable=False),
        pa.field("judge", pa.string(), nullable=False),
        pa.field("origin", pa.string()),  # rollout or rationalization[:variant] (training/generators.py)
    ],
    metadata={"trajforge.kind": "sft"},
)
# RL shards (prepare-rl): one turn per trajectory, its prompt messages, the real observation, a verifier spec.
RL_SCHEMA = pa.schema(
    [
        *QUERY_FIELDS,
        pa.field("reference", pa.large_string(), nullable=False),
        pa.field("verifier", pa.string()),  # JSON spec (evaluation/verifiers.py); null where none can be derived
        pa.field("prompt_tokens", pa.int32(), nullable=False),
    ],
    metadata={"trajforge.kind": "rl"},
)
SCHEMAS = {"trajectory": TRAJECTORY_SCHEMA, "cpt": CPT_SCHEMA}
TURN_NAMES = [f.name for f in TURN_FIELDS]


def records_to_table(records: Iterable[Trajectory], schema: pa.Schema = TRAJECTORY_SCHEMA) -> pa.Table:
    return pa.Table.from_pylist([r.model_dump() for r in records], schema=schema)


def trajectory_view(row: dict) -> dict:
    """A shard row as a trajectory record: what later stages added (masks, statistics) is left out."""
    out = {k: v for k, v in row.items() if k in Trajectory.model_fields}
    if isinstance(out.get("turns"), list):
        out["turns"] = [{k: t[k] for k in TURN_NAMES if k in t} if isinstance(t, dict) else t for t in out["turns"]]
    return out


def table_to_results(table: pa.Table | pa.RecordBatch, source: str, first_row: int = 0) -> Iterator[ReadResult]:
    """Validate every row: a shard written by an older or foreign writer is checked like any raw file."""
    for i, row in enumerate(table.to_pylist()):
        record, problems = validate_record(trajectory_view(row))
        yield ReadResult(source, f"row {first_row + i}", record, problems)


def schema_kind(schema: pa.Schema) -> str:
    return (schema.metadata or {}).get(b"trajforge.kind", b"trajectory").decode()


def schema_problems(schema: pa.Schema) -> list[Problem]:
    """Columns of the file's declared schema (trajectory or cpt) that it lacks or types differently."""
    expected = SCHEMAS.get(schema_kind(schema))
    if expected is None:
        return [Problem("", f"unknown shard kind {schema_kind(schema)!r} (known: {', '.join(SCHEMAS)})")]
    problems = []
    for field in expected:
        if field.name not in schema.names:
            if field.name in ADDED_FIELDS:
                continue  # an older shard: readers derive these
            problems.append(Problem(field.name, "missing column"))
        elif not schema.field(field.name).type.equals(field.type):
            problems.append(Problem(field.name, f"column type {schema.field(field.name).type}, expected {field.type}"))
    return problems
