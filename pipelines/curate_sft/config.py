"""What a curate-sft run does, as one typed config that owns the defaults (the command line reads them here)."""

from collections.abc import Callable
from dataclasses import dataclass, field

from trajforge.evaluation.factory import JudgeSpec
from trajforge.training.generators import Generator, GeneratorSpec

DEFAULT_SHARD_BYTES = 64 << 20


@dataclass(frozen=True)
class CurateConfig:
    # Called once per Beam worker to build its generator: a GeneratorSpec, or any picklable callable.
    generator: Callable[[], Generator] = field(default_factory=GeneratorSpec)
    judge: JudgeSpec = field(default_factory=JudgeSpec)
    candidates: int = 3  # per query: best of N
    threshold: float = 3.5  # queries whose best mean score is lower are dropped
    per_trajectory: int = 4  # queries (in-loss turns) per trajectory at most
    hint: bool = False  # a model generator sees the real observation (its samples count as rationalized)
    seed: int = 0
    shard_bytes: int = DEFAULT_SHARD_BYTES

    def as_manifest(self) -> dict:
        """What the manifest records: the generator's kind, the judge, and the numbers."""
        generator = getattr(self.generator, "kind", None) or getattr(self.generator, "__name__", "custom")
        return {
            "generator": generator,
            **self.judge.as_config(),
            "candidates": self.candidates,
            "threshold": self.threshold,
            "per_trajectory": self.per_trajectory,
            "hint": self.hint,
            "seed": self.seed,
        }
