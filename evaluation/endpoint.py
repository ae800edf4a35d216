"""The endpoint judge: any OpenAI-compatible chat endpoint, asked as AgentWorldBench's evaluator asks its judge
(the domain's rubric as the system message; the history, the action, the model's output and the real output as
the user message), with retries and a timeout. Its answer is read from a `<final_evaluation>` JSON block."""

import json
import re

from trajforge.endpoints import ChatClient, Endpoint, EndpointError
from trajforge.evaluation.judge import Judge, Judgement
from trajforge.evaluation.rubrics import load_rubrics
from trajforge.evaluation.scores import DIMENSIONS, Scores
from trajforge.evaluation.turns import PredictionTurn

KEY_ENV = "TRAJFORGE_JUDGE_API_KEY"
USER_PROMPT = """{context}# Current Turn:

{action}

**World Model Output (Simulated):**
```
{prediction}
```

**Ground Truth (Real Output):**
```
{reference}
```"""
_BLOCK = re.compile(r"<final_evaluation>(.*?)(?:</final_evaluation>|\Z)", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class JudgeAnswerError(ValueError):
    pass


def _number(value) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def parse_judge_answer(text: str) -> Scores:
    """The five scores of a judge's answer: the JSON in its last `<final_evaluation>` block (else its last JSON
    object), as {"scores": {...}} or top-level keys. Keys `format`... are on the 1-5 scale; keys `format_score`...
    (the published DeFi rubric's answer format) on 0-100, mapped to 1-5. All are clamped to integers 1-5."""
    blocks = _BLOCK.findall(text)
    candidate = blocks[-1] if blocks else text
    match = _OBJECT.search(candidate)
    if match is None:
        raise JudgeAnswerError("no JSON object in the judge's answer")
    try:
        data = json.loads(match.group(0))
    except ValueError as exc:
        raise JudgeAnswerError(f"the judge's answer is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise JudgeAnswerError("the judge's JSON is not an object")
    scores = data.get("scores") if isinstance(data.get("scores"), dict) else data
    percent = all(f"{dim}_score" in scores for dim in DIMENSIONS)  # the published 0-100 answer format
    values = {}
    for dim in DIMENSIONS:
        value = _number(scores.get(f"{dim}_score") if percent else scores.get(dim))
        if value is None:
            raise JudgeAnswerError(f"the judge's answer has no numeric {dim!r} score")
        values[dim] = 1 + 4 * min(100.0, max(0.0, value)) / 100 if percent else value
    return Scores.clamped(values)


def judge_messages(turn: PredictionTurn, prediction: str, rubric: str) -> list[dict]:
    context = turn.history_text()
    if context:
        context = f"# Context (Historical Interactions):\n\n{context}"
    user = USER_PROMPT.format(context=context, action=turn.action, prediction=prediction, reference=turn.reference)
    return [{"role": "system", "content": rubric}, {"role": "user", "content": user.strip()}]


class EndpointJudge(Judge):
    """Asks `endpoint` (its attempts are the tries of a request); an answer that cannot be read is asked again, as
    many times. An endpoint that refuses every request (a missing or wrong key, an unknown model) raises its
    EndpointError: a run it judges stops there, saying so, instead of excluding every line."""

    comparable = True

    def __init__(self, endpoint: Endpoint, rubrics: str | None = None, temperature: float = 0.0, max_tokens=4096):
        self.client = ChatClient(endpoint)
        self.model, self.name = endpoint.model, f"endpoint:{endpoint.model}"
        self.rubrics = load_rubrics(rubrics)
        self.attempts, self.temperature, self.max_tokens = endpoint.attempts, temperature, max_tokens

    def judge(self, turn: PredictionTurn, prediction: str | None) -> Judgement:
        if prediction is None:
            return Judgement(None, "no answer")
        messages = judge_messages(turn, prediction, self.rubrics.get(turn.domain, self.rubrics["other"]))
        failure = "judge failed"
        for _ in range(self.attempts):
            try:
                answer = self.client.texts(messages, self.max_tokens, self.temperature)[0]
            except EndpointError as exc:
                if exc.refuses_all:
                    raise
                return Judgement(None, f"{'judge timed out' if exc.timed_out else 'judge request failed'}: {exc}")
            try:
                return Judgement(parse_judge_answer(answer), answer=answer)
            except JudgeAnswerError as exc:
                failure = f"judge answer not parseable: {str(exc)[:200]}"
        return Judgement(None, failure)
