"""The policy interface: start an episode, then one action at a time until the policy says it is done. A policy
registers itself in `POLICIES` (`@POLICIES.register()`, under its `name`), which imports every module of the
package, so adding one is one module (plus its test). A policy that loads a model lives in `trajforge.agents`, above
this layer: its name is declared here with the module that registers it, imported when the name is read."""

from abc import ABC, abstractmethod

from trajforge.sandboxes.base import EpisodeEnded, Task
from trajforge.schemas.records import Action, Observation, Outcome
from trajforge.schemas.registry import Registry

# What `collect --policy` takes: each policy under its `name`.
POLICIES: Registry[type["Policy"]] = Registry(
    "policy", name_of=lambda cls: cls.name, package="trajforge.collectors.policies"
)
POLICIES.provided_by("checkpoint", "trajforge.agents.checkpoint_policy")


UNPARSEABLE = "unparseable answer"  # how an outcome's error starts when the agent's answer could not be read


class UnparseableAnswer(EpisodeEnded):
    """A model's answer that the action codec could not read (schemas.actions.Unparseable): the episode ends as
    the agent's error, with the codec's reason; never a crash."""

    def __init__(self, reason: str):
        super().__init__(f"{UNPARSEABLE}: {reason}")


def is_unparseable(outcome: Outcome) -> bool:
    """Whether an episode ended because the agent's answer could not be read."""
    return outcome.status == "agent_error" and (outcome.error or "").startswith(f"{UNPARSEABLE}:")


class Policy(ABC):
    name: str = "policy"
    model: str | None = None

    @classmethod
    def arguments(cls, config) -> dict:
        """Its constructor's arguments from a run's CollectConfig (recorded in the manifest); ValueError when the
        config lacks what it needs."""
        return {}

    def start(self, task: Task, action_space: list[dict], initial: Observation, seed: int) -> None:
        """A new episode: the task, the tools the environment offers, its initial state, a seed."""
        self.task = task
        self.action_space = action_space
        self.initial = initial
        self.seed = seed

    @abstractmethod
    def act(self, last: Observation | None) -> Action | None:
        """The next action given the last observation (None before the first); None ends the episode."""

    def finish(self) -> None:  # noqa: B027 - most policies hold nothing to let go of
        """The episode is over, however it ended (the policy done, the environment ended it, the turn limit): let
        go of what it shared with other episodes. Called once per started episode."""
