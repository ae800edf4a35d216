"""`kind: simulated`: a world model answers every action (sandboxes/simulated.py): one served at an OpenAI-compatible
endpoint (`url` and `model`), or a checkpoint loaded in this process (`checkpoint`: a trajforge or Hugging Face
folder, or `smollm2`), whose answers for concurrent episodes are batched. `collect --simulate URL=MODEL` or
`--simulate CHECKPOINT` puts every suite in this kind, keeping the action space of the kind it stands for and the
real environment's spec (`real`), from which each task's starting state is recorded (collectors/grounding.py).

A checkpoint world model needs training code, which this layer may not import: its loader is in
`trajforge.agents.world_model`, declared here by name in `CHECKPOINT_WORLD_MODELS` and imported when it is read."""

from collections.abc import Callable
from typing import Literal

from pydantic import model_validator

from trajforge.collectors.environments.base import KINDS, KindSpec, Settings
from trajforge.sandboxes.base import PageCheck, Sandbox, ShellCheck, ToolCheck
from trajforge.schemas.records import Action
from trajforge.schemas.registry import Registry

# name -> (checkpoint, max_tokens, temperature, prompt) -> a sandboxes.simulated.WorldModel; "checkpoint" is agents'.
CHECKPOINT_WORLD_MODELS: Registry[Callable] = Registry("checkpoint world model loader")
CHECKPOINT_WORLD_MODELS.provided_by("checkpoint", "trajforge.agents.world_model")


@KINDS.register()
class SimulatedSpec(KindSpec):
    kind: Literal["simulated"] = "simulated"
    url: str | None = None
    model: str | None = None  # the world model's name at `url`
    key_env: str | None = None  # the variable holding its API key
    checkpoint: str | None = None  # or: a checkpoint folder (or smollm2) run in this process
    instruction: str = ""  # how the world model should behave
    action_space: list[dict] = []
    stands_for: str | None = None  # the kind of environment it simulates
    real: dict = {}  # that environment's spec: where each task's starting state is recorded
    max_tokens: int = 512
    temperature: float = 0.0
    # how the world model was trained to be asked: a world-model template (SFT, RL), or the plain system prompt
    # (CPT); `auto`: plain for a CPT checkpoint, a template otherwise
    prompt: Literal["auto", "plain", "template"] = "auto"
    # an endpoint judge of completion, for the tasks with no check of their own
    judge_url: str | None = None
    judge_model: str | None = None
    judge_key_env: str | None = None
    # A world model has no state to set up: what a suite holds for its real kind is accepted, and its setup is
    # recorded once from the real environment; its check runs in the world model.
    setup_types = (str, Action)
    check_types = (ShellCheck, ToolCheck, PageCheck)

    @model_validator(mode="after")
    def _one_world_model(self):
        if (self.checkpoint is None) == (self.url is None) or (self.url is not None and not self.model):
            raise ValueError("a simulated environment needs `url` and `model` (an endpoint) or `checkpoint`")
        return self

    @classmethod
    def standing_in(cls, real: KindSpec, simulation) -> "SimulatedSpec":
        """The world model of `simulation` (collectors/simulation.py) standing in for `real`, offering the action
        space of real's kind and keeping real's spec, from which each task's starting state is recorded."""
        ref, judge = simulation.world_model, simulation.completion_judge
        if ref.endpoint is not None:
            world_model = {"url": ref.endpoint.url, "model": ref.endpoint.model, "key_env": ref.endpoint.key_env}
        else:
            world_model = {"checkpoint": ref.weights}
        if judge is not None:
            world_model |= {"judge_url": judge.endpoint.url, "judge_model": judge.endpoint.model,
                            "judge_key_env": judge.endpoint.key_env}  # fmt: skip
        return cls(
            **world_model,
            instruction=simulation.instruction,
            prompt=simulation.prompt,
            max_tokens=simulation.max_tokens,
            action_space=real.simulated_action_space(),
            stands_for=real.kind,
            real=real.model_dump(mode="json", exclude_defaults=True) | {"kind": real.kind},
        )

    def world_model(self):
        """The sandboxes.simulated.WorldModel this spec names."""
        if self.checkpoint is not None:
            return CHECKPOINT_WORLD_MODELS.get("checkpoint")(
                self.checkpoint, self.max_tokens, self.temperature, self.prompt
            )
        from trajforge.endpoints import Endpoint
        from trajforge.sandboxes.simulated import EndpointWorldModel

        prompt = "template" if self.prompt == "auto" else self.prompt
        return EndpointWorldModel(
            Endpoint(self.url, self.model, self.key_env), self.max_tokens, self.temperature, prompt
        )

    def build(self, settings: Settings) -> Sandbox:
        from trajforge.endpoints import Endpoint
        from trajforge.sandboxes.completion_judge import CompletionJudge
        from trajforge.sandboxes.simulated import SimulatedEnvironment

        judge = None
        if self.judge_url and self.judge_model:
            judge = CompletionJudge(Endpoint(self.judge_url, self.judge_model, self.judge_key_env))
        return SimulatedEnvironment(self.world_model(), self.instruction, self.action_space, judge)
