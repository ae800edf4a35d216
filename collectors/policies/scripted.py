"""Replays the task's scripted actions, in order."""

from trajforge.collectors.policies.base import POLICIES, Policy
from trajforge.schemas.records import Action, Observation


@POLICIES.register(help="replay the task's actions")
class ScriptedPolicy(Policy):
    name = "scripted"

    def start(self, task, action_space, initial, seed) -> None:
        super().start(task, action_space, initial, seed)
        self._remaining = list(task.actions)

    def act(self, last: Observation | None) -> Action | None:
        return self._remaining.pop(0) if self._remaining else None
