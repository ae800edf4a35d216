"""An endpoint judge of task completion, for a simulated episode whose task has no check of its own: a model at an
OpenAI-compatible endpoint reads the task, its reference solution (the task's scripted actions, when it has them)
and the episode's turns as the world model answered them, and says whether the task was done. Its verdict is the
last YES or NO it writes; an answer with neither is no success, and says so. An episode in which the agent took no
action at all did not complete its task: the judge is not asked."""

import re

from trajforge.endpoints import ChatClient, Endpoint, EndpointError
from trajforge.sandboxes.base import InfraError, Task
from trajforge.schemas.turn_text import action_text

SYSTEM = (
    "You judge whether an agent completed its task in a simulated environment. You are given the task, a reference "
    "solution (actions that complete it, when known) and the episode: each action and what the environment returned. "
    "Reason briefly, then end with one line: YES if the episode completed the task, NO otherwise."
)
VERDICT = re.compile(r"\b(YES|NO)\b")


class CompletionJudge:
    def __init__(self, endpoint: Endpoint, max_tokens: int = 256):
        self.client, self.model, self.max_tokens = ChatClient(endpoint), endpoint.model, max_tokens

    def judge(self, task: Task, turns: list[tuple[str, str]]) -> tuple[bool, dict]:
        """(done, how it was decided) for an episode of `task` whose turns were (action, observation)."""
        if not turns:
            return False, {"decided_by": "no action: the agent took none (the completion judge was not asked)"}
        try:
            answer = self.client.texts(_messages(task, turns), self.max_tokens, 0.0, seed=0)[0]
        except EndpointError as exc:
            raise InfraError(f"the completion judge gave no verdict: {exc}") from exc
        verdicts = VERDICT.findall(answer.upper())
        verdict = verdicts[-1] if verdicts else None
        details = {
            "decided_by": f"an endpoint judge of task completion ({self.model})",
            "verdict": verdict or "none: the answer said neither YES nor NO",
            "answer": answer[-1000:],
        }
        return verdict == "YES", details


def _messages(task: Task, turns: list[tuple[str, str]]) -> list[dict]:
    reference = "\n".join(action_text(a.model_dump()) for a in task.actions) or "(none given)"
    episode = "\n\n".join(f"Action:\n{action}\nObservation:\n{observation}" for action, observation in turns)
    user = f"# Task\n{task.instruction}\n\n# Reference solution\n{reference}\n\n# Episode\n{episode or '(no actions)'}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
