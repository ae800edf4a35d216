"""One judge interface for curation, the RL reward and evaluation: a turn (domain, history, action, the real
observation) and the model's prediction in, a `Judgement` (the five scores, or why there are none) out."""

from abc import ABC, abstractmethod
from dataclasses import dataclass

from trajforge.evaluation.scores import Scores, empty_prediction_scores
from trajforge.evaluation.turns import PredictionTurn

NOT_COMPARABLE = "embedded judge, not comparable with AgentWorldBench"


@dataclass(frozen=True)
class Judgement:
    scores: Scores | None
    failure: str | None = None  # why there are no scores: no answer, an unparseable judge answer, a timeout
    answer: str | None = None  # an LLM judge's raw answer, for inspection
    rule: str | None = None  # set where a fixed rule gave the scores, not the judge (judge_prediction)

    @property
    def ok(self) -> bool:
        return self.scores is not None


class Judge(ABC):
    name: str
    comparable: bool  # whether its numbers may sit next to AgentWorldBench's (an LLM judge with rubrics)

    @abstractmethod
    def judge(self, turn: PredictionTurn, prediction: str | None) -> Judgement:
        """The prediction for the turn, scored against its real observation; None: the model gave no answer."""

    @property
    def label(self) -> str:
        """The judge's name as every report prints it."""
        return self.name if self.comparable else f"{self.name} ({NOT_COMPARABLE})"


NO_ANSWER = "no answer: scored as a miss"
EMPTY_PREDICTION = "empty prediction"


def judge_prediction(judge: Judge, turn: PredictionTurn, prediction: str | None) -> Judgement:
    """How eval scores a turn, so that every row of a table is scored on the same turns. No answer (None: a failed
    request) is a miss, 1 on every dimension; an empty prediction (whitespace only: the model says the action
    prints nothing) is scored by `empty_prediction_scores`, whatever the judge, without asking it; anything else
    is the judge's to score (a judge failure leaves the turn without scores)."""
    if prediction is None:
        return Judgement(Scores.lowest(), rule=NO_ANSWER)
    if not prediction.strip():
        return Judgement(empty_prediction_scores(turn.reference), rule=EMPTY_PREDICTION)
    return judge.judge(turn, prediction)
