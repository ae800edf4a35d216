"""One judge interface for curation, the RL reward and evaluation: a `Case` (domain, history, action, the
model's prediction, the real observation) in, a `Judgement` (the five scores, or why there are none) out."""

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

from trajforge.evaluation.scores import Scores

NOT_COMPARABLE = "embedded judge, not comparable with AgentWorldBench"


@dataclass(frozen=True)
class Case:
    domain: str
    history: tuple[tuple[str, str], ...]  # (action, observation) of every earlier turn, oldest first
    action: str
    reference: str  # the real observation
    prediction: str | None  # None: the model gave no answer

    def history_text(self) -> str:
        """The history as the benchmark's judge reads it: each action and its observation, a blank line apart."""
        return "".join(f"{action}\n{observation}\n\n" for action, observation in self.history)


@dataclass(frozen=True)
class Judgement:
    scores: Scores | None
    failure: str | None = None  # why there are no scores: no answer, an unparseable judge answer, a timeout
    answer: str | None = None  # an LLM judge's raw answer, for inspection

    @property
    def ok(self) -> bool:
        return self.scores is not None


class Judge(ABC):
    name: str
    comparable: bool  # whether its numbers may sit next to AgentWorldBench's (an LLM judge with rubrics)

    @abstractmethod
    def judge(self, case: Case) -> Judgement: ...

    def judge_all(self, cases: Iterable[Case]) -> list[Judgement]:
        return [self.judge(case) for case in cases]

    @property
    def label(self) -> str:
        """The judge's name as every report prints it."""
        return self.name if self.comparable else f"{self.name} ({NOT_COMPARABLE})"
