"""The paper's five dimensions, each scored 1 (bad) to 5 (perfect), and AgentWorldBench's 0-100 scale."""

from dataclasses import asdict, dataclass

DIMENSIONS = ("format", "factuality", "consistency", "realism", "quality")


def normalize(raw: float) -> float:
    """AgentWorldBench's 0-100 scale: (raw - 1) / 4 x 100."""
    return (raw - 1) / 4 * 100


@dataclass(frozen=True)
class Scores:
    format: float
    factuality: float
    consistency: float
    realism: float
    quality: float

    @classmethod
    def lowest(cls) -> "Scores":
        return cls(1, 1, 1, 1, 1)

    @classmethod
    def clamped(cls, values: dict[str, float]) -> "Scores":
        """Integers 1-5, as the benchmark counts an LLM judge's scores."""
        return cls(**{k: int(min(5, max(1, round(float(values[k]))))) for k in DIMENSIONS})

    @property
    def mean(self) -> float:
        return sum(asdict(self).values()) / len(DIMENSIONS)

    @classmethod
    def highest(cls) -> "Scores":
        return cls(5, 5, 5, 5, 5)

    def normalized(self) -> dict[str, float]:
        return {k: normalize(v) for k, v in asdict(self).items()}

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def empty_prediction_scores(reference: str) -> Scores:
    """An empty prediction (whitespace only) against the real observation: right where that is empty too, 5 on
    every dimension (100); wrong where it is not, 1 on every dimension (0): it shows none of the output. Every
    judge is held to this rule (`evaluation.judge.judge_prediction`), so an LLM judge's view of an empty answer
    cannot differ from the embedded judge's."""
    return Scores.highest() if not reference.strip() else Scores.lowest()
