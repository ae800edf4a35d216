"""The policy interface: start an episode, then one action at a time until the policy says it is done."""

from abc import ABC, abstractmethod

from sandboxes.base import Task
from schemas.records import Action, Observation


class Policy(ABC):
    name: str = "policy"
    model: str | None = None

    def start(self, task: Task, action_space: list[dict], initial: Observation, seed: int) -> None:
        """A new episode: the task, the tools the environment offers, its initial state, a seed."""
        self.task = task
        self.action_space = action_space
        self.initial = initial
        self.seed = seed

    @abstractmethod
    def act(self, last: Observation | None) -> Action | None:
        """The next action given the last observation (None before the first); None ends the episode."""
