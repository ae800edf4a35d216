"""The endpoint judge: any OpenAI-compatible chat endpoint, asked as AgentWorldBench's evaluator asks its judge
(the domain's rubric as the system message; the history, the action, the model's output and the real output as
the user message), with retries and a timeout. Its answer is read from a `<final_evaluation>` JSON block."""

import json
import os
import re
import time

import httpx

from trajforge.evaluation.judge import Judge, Judgement
from trajforge.evaluation.rubrics import load_rubrics
from trajforge.evaluation.scores import DIMENSIONS, Scores
from trajforge.evaluation.turns import Turn

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


def judge_messages(turn: Turn, prediction: str, rubric: str) -> list[dict]:
    context = turn.history_text()
    if context:
        context = f"# Context (Historical Interactions):\n\n{context}"
    user = USER_PROMPT.format(context=context, action=turn.action, prediction=prediction, reference=turn.reference)
    return [{"role": "system", "content": rubric}, {"role": "user", "content": user.strip()}]


class EndpointJudge(Judge):
    comparable = True

    def __init__(
        self,
        base_url: str,
        model: str,
        rubrics: str | None = None,
        key_env: str = KEY_ENV,
        timeout: float = 120.0,
        retries: int = 3,
        temperature: float = 0.0,
        max_tokens: int = 4096,
        transport: httpx.BaseTransport | None = None,
    ):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.name = model, f"endpoint:{model}"
        self.rubrics = load_rubrics(rubrics)
        self.retries, self.temperature, self.max_tokens = retries, temperature, max_tokens
        key = os.environ.get(key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def _ask(self, messages: list[dict]) -> str:
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        body["max_tokens"] = self.max_tokens
        response = self.http.post(self.url, json=body)
        response.raise_for_status()
        return response.json()["choices"][0]["message"]["content"] or ""

    def judge(self, turn: Turn, prediction: str | None) -> Judgement:
        if prediction is None:
            return Judgement(None, "no answer")
        messages = judge_messages(turn, prediction, self.rubrics.get(turn.domain, self.rubrics["other"]))
        failure, answer = "judge failed", None
        for attempt in range(self.retries):
            try:
                answer = self._ask(messages)
                return Judgement(parse_judge_answer(answer), answer=answer)
            except httpx.TimeoutException:
                failure = f"judge timed out: no answer from {self.url} within {self.http.timeout.read}s"
            except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
                kind = "judge answer not parseable" if answer is not None else "judge request failed"
                failure = f"{kind}: {str(exc).splitlines()[0][:200]}"
            answer = None
            if attempt + 1 < self.retries:
                time.sleep(min(2.0, 0.25 * 2**attempt))
        return Judgement(None, failure)
