"""What a build-corpus run does, as one serialisable config whose hash goes into the manifest."""

import dataclasses
from dataclasses import dataclass, field

from trajforge.curation.dedup import MinHashConfig
from trajforge.curation.filters import FilterConfig
from trajforge.schemas.hashing import config_hash
from trajforge.schemas.splits import SplitConfig
from trajforge.schemas.validation import DEFAULT_MAX_OBSERVATION_CHARS

DEFAULT_SHARD_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class BuildConfig:
    input_format: str = "trajforge"
    masking_policy: str = "paper"  # a bundled name or a YAML path
    masking_policy_hash: str = ""
    filters: FilterConfig = field(default_factory=FilterConfig)
    near_dedup: bool = True
    minhash: MinHashConfig = field(default_factory=MinHashConfig)
    redact: bool = True
    shard_bytes: int = DEFAULT_SHARD_BYTES
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS
    split: SplitConfig = field(default_factory=SplitConfig)  # the task-level split every later stage honours
    knowledge: tuple[str, ...] = ()  # files or folders of world-knowledge documents (schemas/formats/knowledge.py)
    knowledge_share: float = 1.0  # the most of the CPT characters knowledge documents may take (1: no cap)
    input_column: str | None = None  # a dataset's column holding the records (None: the whole row)

    def as_dict(self) -> dict:
        data = dataclasses.asdict(self)
        if not self.split.held_out_families:  # recorded when used: a build from before the option keeps its hash
            del data["split"]["held_out_families"]
        if self.input_column is None:  # likewise
            del data["input_column"]
        return data

    @property
    def hash(self) -> str:
        return config_hash(self.as_dict())
