"""The hybrid reward of paper §3.4.1, through the same `Judge` as curation and evaluation: judge reward = the
mean of the five 1-5 scores x 5 (0 when the judge gives no scores), verifier reward 0 or 25, combined 9:1 where a
verifier exists. The answer goes through the one prediction extractor: reasoning never reaches the judge.

An answer without a `<predicted_observation>` block earns nothing: the format is the contract the policy is trained
to keep (evaluation counts such answers as format failures), and credit for free text would teach the policy to drop
the format, as measured (format compliance fell from 19% to 0% over a demo RL run that paid untagged answers)."""

import json
from dataclasses import dataclass

from trajforge.evaluation.extraction import extract_prediction
from trajforge.evaluation.judge import Judge
from trajforge.evaluation.scores import Scores
from trajforge.evaluation.turns import turn_of_messages
from trajforge.evaluation.verifiers import verify

VERIFIER_REWARD = 25.0
JUDGE_WEIGHT, VERIFIER_WEIGHT = 0.9, 0.1


@dataclass(frozen=True)
class Reward:
    judge: float  # 0-25
    verifier: float | None  # 0 or 25; None without a verifier
    total: float
    judge_failure: str | None = None


def hybrid_reward(scores: Scores | None, verifier_spec: dict | None, prediction: str | None) -> Reward:
    judge = 0.0 if scores is None or prediction is None else scores.mean * 5
    if verifier_spec is None:
        return Reward(judge, None, judge)
    verified = VERIFIER_REWARD if verify(verifier_spec, prediction) else 0.0
    return Reward(judge, verified, JUDGE_WEIGHT * judge + VERIFIER_WEIGHT * verified)


def row_reward(judge: Judge, row: dict, answer: str) -> Reward:
    """The reward of one sampled answer to an RL row (its messages, reference, domain and verifier spec)."""
    extracted = extract_prediction(answer)
    spec = json.loads(row["verifier"]) if row.get("verifier") else None
    if not extracted.tagged:
        return Reward(0.0, None if spec is None else 0.0, 0.0, None)
    prediction = extracted.text
    judgement = judge.judge(turn_of_messages(row["domain"], row["messages"], row["reference"]), prediction)
    reward = hybrid_reward(judgement.scores, spec, prediction)
    return Reward(reward.judge, reward.verifier, reward.total, judgement.failure)
