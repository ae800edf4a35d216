"""What a prepare-rl run does, as one typed config that owns the defaults (the command line reads them here)."""

from dataclasses import dataclass

DEFAULT_TOKEN_BUDGET = 2048  # prompt tokens at most
DEFAULT_SHARD_BYTES = 64 << 20


@dataclass(frozen=True)
class PrepareConfig:
    token_budget: int = DEFAULT_TOKEN_BUDGET  # prompt tokens at most; the oldest history goes first
    tokenizer: str | None = None  # counts tokens exactly; without one, ~4 characters make a token
    shard_bytes: int = DEFAULT_SHARD_BYTES

    def as_manifest(self) -> dict:
        """What the manifest records (the shard size changes how rows are grouped, not what they are)."""
        return {"token_budget": self.token_budget, "tokenizer": self.tokenizer}
