"""What a build-corpus run does, as one serialisable config whose hash goes into the manifest."""

import dataclasses
from dataclasses import dataclass, field

from curation.dedup import MinHashConfig
from curation.filters import FilterConfig
from schemas.hashing import config_hash
from schemas.validation import DEFAULT_MAX_OBSERVATION_CHARS

DEFAULT_SHARD_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class BuildConfig:
    input_format: str = "trajforge"
    policy: str = "paper"  # masking policy: bundled name or YAML path
    policy_hash: str = ""
    filters: FilterConfig = field(default_factory=FilterConfig)
    near_dedup: bool = True
    minhash: MinHashConfig = field(default_factory=MinHashConfig)
    redact: bool = True
    shard_bytes: int = DEFAULT_SHARD_BYTES
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @property
    def hash(self) -> str:
        return config_hash(self.as_dict())
