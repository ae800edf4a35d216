"""Which judge a command uses, as a small picklable value: Beam workers and the RL loop build their own.
Judges are built from a registry (kind -> factory); adding one is one `JUDGES.add` here."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from trajforge.evaluation.judge import NOT_COMPARABLE, Judge
from trajforge.schemas.registry import Registry


class JudgeKind(NamedTuple):
    build: Callable[["JudgeSpec"], Judge]
    describe: Callable[["JudgeSpec"], str]  # the judge's name as reports print it, without building it
    needs_endpoint: bool  # whether it needs --judge-url and --judge-model


def _embedded(spec: "JudgeSpec") -> Judge:
    from trajforge.evaluation.embedded import EmbeddedJudge

    return EmbeddedJudge()


def _endpoint(spec: "JudgeSpec") -> Judge:
    from trajforge.endpoints import Endpoint
    from trajforge.evaluation.endpoint import KEY_ENV, EndpointJudge

    endpoint = Endpoint(spec.url, spec.model, spec.key_env or KEY_ENV, timeout=spec.timeout, attempts=spec.retries)
    return EndpointJudge(endpoint, spec.rubrics)


# Each judge with what `--judge KIND` means, for the command line's help.
JUDGES: Registry[JudgeKind] = Registry("judge")
JUDGES.add(
    "embedded",
    JudgeKind(_embedded, lambda spec: f"embedded ({NOT_COMPARABLE})", needs_endpoint=False),
    help="deterministic, offline, no model; not comparable with AgentWorldBench",
)
JUDGES.add(
    "endpoint",
    JudgeKind(_endpoint, lambda spec: f"endpoint:{spec.model}", needs_endpoint=True),
    help="an LLM judge behind any OpenAI-compatible API, with per-domain rubrics",
)


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
        if JUDGES.get(self.kind).needs_endpoint and not (self.url and self.model):
            raise ValueError(f"--judge {self.kind} needs --judge-url and --judge-model")

    def build(self) -> Judge:
        return JUDGES.get(self.kind).build(self)

    def __call__(self) -> Judge:
        return self.build()

    def describe(self) -> str:
        """The judge's name as reports print it, without building it."""
        return JUDGES.get(self.kind).describe(self)

    def as_config(self) -> dict:
        return {"judge": self.kind, "judge_model": self.model, "rubrics": self.rubrics}
