"""A simulation as one value: which world model answers every action, how it is asked, how many tokens one observation
may take, the judge of completion for tasks without a check, and the distribution of control specs its episodes
sample. `collect`, `train agent-rl`, `sim-check` and the text environment take it whole; `--world-model` and the
flags beside it (pipelines/commands/flags.py) fill it.

Light to import: a config holds it before anything runs."""

from dataclasses import dataclass, replace
from typing import Literal, get_args

from trajforge.endpoints.model_ref import ModelRef, ModelRefError, parse_model

Prompt = Literal["auto", "plain", "template"]
PROMPTS: tuple[str, ...] = get_args(Prompt)
WORLD_MODEL_KEY_ENV = "TRAJFORGE_WORLD_MODEL_API_KEY"  # the default variable holding an endpoint world model's key
JUDGE_KEY_ENV = "TRAJFORGE_SIMULATE_JUDGE_API_KEY"
MAX_TOKENS = 512
# the command-line flag of each setting, for messages (pipelines/commands/flags.py declares them)
SETTING_FLAGS = {"prompt": "--simulate-prompt", "max_tokens": "--simulate-max-tokens", "control": "--control",
                 "instruction": "--simulation-instruction"}  # fmt: skip


@dataclass(frozen=True)
class Simulation:
    world_model: ModelRef
    # how the world model was trained to be asked: plain (the system prompt as CPT renders it), template (a
    # world-model template asking for <predicted_observation>: SFT, RL), auto (plain for a CPT checkpoint)
    prompt: Prompt = "auto"
    max_tokens: int = MAX_TOKENS  # the most tokens the world model writes for one observation
    completion_judge: ModelRef | None = None  # an endpoint judging completion of tasks without a check of their own
    control: str | None = None  # a control preset or YAML distribution: each episode samples a spec from it
    instruction: str = ""  # how the world model should behave, said to it in every episode

    def __post_init__(self):
        if self.prompt not in PROMPTS:
            raise ValueError(f"--simulate-prompt {self.prompt!r}: choose {', '.join(PROMPTS)}")
        if self.max_tokens < 1:
            raise ValueError(f"--simulate-max-tokens {self.max_tokens}: give at least 1")
        if self.completion_judge is not None and self.completion_judge.endpoint is None:
            judge = self.completion_judge
            raise ModelRefError(f"--simulate-judge {judge}: give URL=MODEL (an OpenAI-compatible endpoint)")

    def recorded(self) -> dict:
        """What a run's manifest records of it (and its default id hashes): a setting at its default is left out, so
        runs made before a setting existed keep their ids."""
        defaults = Simulation(self.world_model)
        recorded = {"simulate": self.world_model.text}
        for name, key in (("prompt", "simulate_prompt"), ("max_tokens", "simulate_max_tokens")):
            if getattr(self, name) != getattr(defaults, name):
                recorded[key] = getattr(self, name)
        if self.completion_judge is not None:
            recorded["simulate_judge"] = self.completion_judge.text
        return recorded

    def with_control(self, control: str | None) -> "Simulation":
        return replace(self, control=control)


def simulation(
    world_model: str | ModelRef | None,
    key_env: str = WORLD_MODEL_KEY_ENV,
    judge: str | None = None,
    judge_key_env: str = JUDGE_KEY_ENV,
    **settings,
) -> Simulation | None:
    """The simulation the flags describe (None without a world model: the real environment). ValueError for
    settings of a simulation given without one (`--control` without `--world-model`)."""
    if world_model is None:
        given = {name: value for name, value in settings.items() if value not in (None, "", ())}
        if judge or given:
            names = [SETTING_FLAGS[name] for name in sorted(given)] + (["--simulate-judge"] if judge else [])
            raise ValueError(f"{', '.join(names)}: steers a world model; give --world-model too")
        return None
    ref = parse_model(world_model, "--world-model", key_env)
    judge_ref = parse_model(judge, "--simulate-judge", judge_key_env) if judge else None
    return Simulation(ref, completion_judge=judge_ref, **{k: v for k, v in settings.items() if v is not None})
