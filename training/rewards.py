"""The hybrid reward of paper §3.4.1: judge reward = the mean of the five 1-5 scores x 5 (0 when the judge's
answer does not parse), verifier reward 0 or 25, combined 9:1 where a verifier exists. Only the text inside
<predicted_observation> reaches the judge and the verifiers: self-praise in the reasoning earns nothing."""

from dataclasses import dataclass

from training.judge import Scores, extract_prediction, judge_reference
from training.verifiers import verify

VERIFIER_REWARD = 25.0
JUDGE_WEIGHT, VERIFIER_WEIGHT = 0.9, 0.1


@dataclass(frozen=True)
class Reward:
    judge: float  # 0-25
    verifier: float | None  # 0 or 25; None without a verifier
    total: float


def hybrid_reward(scores: Scores | None, verifier_spec: dict | None, prediction: str | None) -> Reward:
    judge = 0.0 if scores is None or prediction is None else scores.mean * 5
    if verifier_spec is None:
        return Reward(judge, None, judge)
    verified = VERIFIER_REWARD if verify(verifier_spec, prediction) else 0.0
    return Reward(judge, verified, JUDGE_WEIGHT * judge + VERIFIER_WEIGHT * verified)


def reference_reward(candidate: str, reference: str, verifier_spec: dict | None, history: str = "") -> Reward:
    """The hybrid reward with the embedded reference-based judge."""
    prediction = extract_prediction(candidate)
    scores = judge_reference(prediction, reference, history) if prediction is not None else None
    return hybrid_reward(scores, verifier_spec, prediction)
