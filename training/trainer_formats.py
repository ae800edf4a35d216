"""The trainers trajforge's data is handed to (`trajforge export --format trl|verl`): name -> the module that writes
its files, imported when used (this module stays light: the command line lists the names without loading torch).

A format module has `WRITERS`: shard kind (cpt, sft, rl) -> a function (a `Batch` of rows, the tokenizer or None, the
settings, the result it may add notes to) -> {dataset folder: Arrow table}; training/trainer_export.py appends each
table to `OUT/<folder>/<split>.parquet`."""

from dataclasses import dataclass

from trajforge.schemas.registry import Registry

TRAINER_FORMATS: Registry[str] = Registry("trainer format")
TRAINER_FORMATS.add(
    "trl",
    "trajforge.training.trl_export",
    help="TRL datasets (parquet): CPT/SFT pre-tokenized with loss masks (--tokenizer), SFT chat messages, GRPO prompts",
)
TRAINER_FORMATS.add("verl", "trajforge.training.verl_export", help="verl's RL parquet rows (prepare-rl shards)")

TOKENIZING_FORMATS = ("trl",)  # the formats that write pre-tokenized rows, for which --tokenizer means something
DEFAULT_CONTEXT_LENGTH = 2048


@dataclass(frozen=True)
class TrainerExport:
    format: str  # a TRAINER_FORMATS name
    output: str
    tokenizer: str | None = None  # a tokenizer folder, a trajforge checkpoint or run folder, or smollm2
    context_length: int = DEFAULT_CONTEXT_LENGTH  # tokenized rows: at most this many tokens each
