"""Which judge a command uses, as a small picklable value: Beam workers and the RL loop build their own."""

from dataclasses import dataclass

from evaluation.judge import Judge

KINDS = ("embedded", "endpoint")


@dataclass(frozen=True)
class JudgeSpec:
    kind: str = "embedded"
    url: str | None = None
    model: str | None = None
    rubrics: str | None = None
    key_env: str | None = None
    timeout: float = 120.0
    retries: int = 3

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown judge {self.kind!r}: choose embedded or endpoint")
        if self.kind == "endpoint" and not (self.url and self.model):
            raise ValueError("--judge endpoint needs --judge-url and --judge-model")

    def build(self) -> Judge:
        if self.kind == "embedded":
            from evaluation.embedded import EmbeddedJudge

            return EmbeddedJudge()
        from evaluation.endpoint import KEY_ENV, EndpointJudge

        return EndpointJudge(
            self.url, self.model, self.rubrics, self.key_env or KEY_ENV, timeout=self.timeout, retries=self.retries
        )

    def __call__(self) -> Judge:
        return self.build()

    def describe(self) -> str:
        """The judge's name as reports print it, without building it."""
        from evaluation.judge import NOT_COMPARABLE

        return f"endpoint:{self.model}" if self.kind == "endpoint" else f"embedded ({NOT_COMPARABLE})"

    def as_config(self) -> dict:
        return {"judge": self.kind, "judge_model": self.model, "rubrics": self.rubrics}
