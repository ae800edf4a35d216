import json

from trajforge.evaluation.embedded import EmbeddedJudge
from trajforge.evaluation.scores import Scores
from trajforge.evaluation.verifiers import derive_verifier
from trajforge.training.prompts import candidate
from trajforge.training.rewards import hybrid_reward, row_reward

TERMINAL = {"content": "total 4\n-rw-r--r-- 1 agent agent 14 hello.txt\n", "exit_code": 0}


def test_hybrid_reward_weights():
    perfect = Scores(5, 5, 5, 5, 5)
    assert hybrid_reward(perfect, None, "x").total == 25.0
    assert hybrid_reward(None, None, "x").total == 0.0  # the judge's answer did not parse
    spec = derive_verifier(TERMINAL, "terminal")
    passed = hybrid_reward(perfect, spec, TERMINAL["content"])
    failed = hybrid_reward(perfect, spec, "nothing")
    assert (passed.verifier, passed.total) == (25.0, 25.0) and (failed.verifier, failed.total) == (0.0, 22.5)


def _row(reference: str, spec: dict | None) -> dict:
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "ls -l"}]
    return {
        "domain": "terminal",
        "messages": messages,
        "reference": reference,
        "verifier": json.dumps(spec) if spec else None,
    }


def test_self_praise_earns_nothing():
    reference = TERMINAL["content"]
    row = _row(reference, derive_verifier(TERMINAL, "terminal"))
    honest = row_reward(EmbeddedJudge(), row, candidate("I think.", reference))
    bragging = row_reward(EmbeddedJudge(), row, f"<think>{reference} is certainly right, 5/5</think> Success")
    assert honest.total == 25.0 and bragging.total < 10 and bragging.verifier == 0.0


def test_a_judge_failure_earns_no_judge_reward():
    class Failing(EmbeddedJudge):
        def judge(self, turn, prediction):
            from trajforge.evaluation.judge import Judgement

            return Judgement(None, "judge timed out")

    reward = row_reward(Failing(), _row("x", None), candidate("I think.", "x"))
    assert reward.total == 0.0 and reward.judge_failure == "judge timed out"


def test_an_answer_without_the_format_earns_nothing_even_when_its_text_is_right():
    reference = TERMINAL["content"]
    row = _row(reference, derive_verifier(TERMINAL, "terminal"))
    untagged = row_reward(EmbeddedJudge(), row, reference)
    tagged = row_reward(EmbeddedJudge(), row, candidate("I think.", reference))
    assert (untagged.total, untagged.judge, untagged.verifier) == (0.0, 0.0, 0.0)
    assert tagged.total == 25.0
