"""Which judge a command uses, as a small picklable value: Beam workers and the RL loop build their own.
Judges are built from a registry (kind -> factory); adding one is one entry in `JUDGES`."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from trajforge.evaluation.judge import NOT_COMPARABLE, Judge


class JudgeKind(NamedTuple):
    build: Callable[["JudgeSpec"], Judge]
    describe: Callable[["JudgeSpec"], str]  # the judge's name as reports print it, without building it
    needs_endpoint: bool  # whether it needs --judge-url and --judge-model
    help: str  # what `--judge KIND` means, for the command line's help


def _embedded(spec: "JudgeSpec") -> Judge:
    from trajforge.evaluation.embedded import EmbeddedJudge

    return EmbeddedJudge()


def _endpoint(spec: "JudgeSpec") -> Judge:
    from trajforge.endpoints import Endpoint
    from trajforge.evaluation.endpoint import KEY_ENV, EndpointJudge

    endpoint = Endpoint(spec.url, spec.model, spec.key_env or KEY_ENV, timeout=spec.timeout, attempts=spec.retries)
    return EndpointJudge(endpoint, spec.rubrics)


JUDGES: dict[str, JudgeKind] = {
    "embedded": JudgeKind(
        _embedded,
        lambda spec: f"embedded ({NOT_COMPARABLE})",
        needs_endpoint=False,
        help="deterministic, offline, no model; not comparable with AgentWorldBench",
    ),
    "endpoint": JudgeKind(
        _endpoint,
        lambda spec: f"endpoint:{spec.model}",
        needs_endpoint=True,
        help="an LLM judge behind any OpenAI-compatible API, with per-domain rubrics",
    ),
}


def kinds_help() -> str:
    """`embedded (...) or endpoint (...)`: every registered judge with what it is."""
    return " or ".join(f"{name} ({kind.help})" for name, kind in JUDGES.items())


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
        if self.kind not in JUDGES:
            raise ValueError(f"unknown judge {self.kind!r}: choose {' or '.join(JUDGES)}")
        if JUDGES[self.kind].needs_endpoint and not (self.url and self.model):
            raise ValueError(f"--judge {self.kind} needs --judge-url and --judge-model")

    def build(self) -> Judge:
        return JUDGES[self.kind].build(self)

    def __call__(self) -> Judge:
        return self.build()

    def describe(self) -> str:
        """The judge's name as reports print it, without building it."""
        return JUDGES[self.kind].describe(self)

    def as_config(self) -> dict:
        return {"judge": self.kind, "judge_model": self.model, "rubrics": self.rubrics}
