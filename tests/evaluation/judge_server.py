"""A small LLM-judge stand-in behind a real OpenAI-compatible HTTP server, for the code around endpoint judges.

It answers as the rubrics ask (a `<final_evaluation>` JSON block), with scores by domain (read from the rubric in
the system message: terminal 2, mcp 4, others 3), and misbehaves on purpose where the ground truth says so:
JUDGE-SAYS-NOTHING gets a reply that is not JSON, JUDGE-SLEEPS a reply after `slow_seconds`."""

import json
import time
from contextlib import contextmanager

from tests.chat_server import chat_server

SCORE_BY_RUBRIC = {"terminal world model": 2, "MCP server world model": 4}


def answer_for(system: str, user: str) -> str:
    if "JUDGE-SAYS-NOTHING" in user:
        return "I would rather not score this one."
    score = next((s for marker, s in SCORE_BY_RUBRIC.items() if marker in system), 3)
    scores = dict.fromkeys(("format", "factuality", "consistency", "realism", "quality"), score)
    return (
        f"Looks fine.\n<final_evaluation>\n{json.dumps({'scores': scores, 'total_score': score})}\n</final_evaluation>"
    )


@contextmanager
def judge_server(slow_seconds: float = 3.0):
    """(base URL, the list of requests it received)."""

    def answer(request: dict) -> tuple[int, bytes]:
        messages = request["body"]["messages"]
        system, user = messages[0]["content"], messages[-1]["content"]
        if "JUDGE-SLEEPS" in user:
            time.sleep(slow_seconds)
        reply = {"choices": [{"message": {"role": "assistant", "content": answer_for(system, user)}}]}
        return 200, json.dumps(reply).encode()

    with chat_server(answer) as served:
        yield served
