"""`--simulate CHECKPOINT`: a world model loaded in this process (a trajforge checkpoint, a Hugging Face folder, or
`smollm2`), answering the simulated environments of concurrent episodes in shared batches (agents/batching.py's
broker, through the checkpoint policy's `Actor`: one loaded model per folder, prompts left-padded, a seed per ask).

A conversation becomes a prompt as `trajforge serve` makes it (training/sampling.py): the chat in the model's own
format up to the answer, fitted to its context window as generation fits it (the system prompt's head and the most
recent turns, `fit_window`). Registered among collectors' CHECKPOINT_WORLD_MODELS, which imports this module when
"checkpoint" is read there."""

import threading
from pathlib import Path

from trajforge.agents.checkpoint_policy import Actor
from trajforge.collectors.environments.simulated import CHECKPOINT_WORLD_MODELS
from trajforge.sandboxes.base import InfraError
from trajforge.sandboxes.simulated import WorldModel

MIN_ANSWER_TOKENS = 8


class CheckpointWorldModel(WorldModel):
    def __init__(self, actor: Actor, name: str, max_new_tokens: int = 512, prompt: str = "template"):
        self.actor, self.name, self.max_new_tokens, self.prompt = actor, name, max_new_tokens, prompt

    def answer(self, messages: list[dict], seed: int) -> str:
        from trajforge.training.sampling import fit_window, prompt_ids

        actor = self.actor
        reserve = min(self.max_new_tokens, actor.window // 2)
        ids = fit_window(prompt_ids(messages, actor.tokenizer, actor.chat), actor.window, reserve)
        room = min(self.max_new_tokens, actor.window - len(ids))
        if room < MIN_ANSWER_TOKENS:
            raise InfraError(f"the world model's context window ({actor.window} tokens) leaves no room to answer")
        generated = actor.broker.generate(ids, seed=seed, max_new_tokens=room)
        return actor.tokenizer.decode(generated, skip_special_tokens=True)

    def join(self) -> None:
        self.actor.broker.join()

    def leave(self) -> None:
        self.actor.broker.leave()


_LOADED: dict[tuple[str, float], Actor] = {}
_LOADING = threading.Lock()


def world_model_actor(folder: str, temperature: float) -> Actor:
    """One loaded world model per folder and temperature for the whole process: every episode asks the same one."""
    with _LOADING:
        if (folder, temperature) not in _LOADED:
            _LOADED[folder, temperature] = Actor.load(folder, temperature=temperature, gather_s=0.05)
        return _LOADED[folder, temperature]


def prompt_of(folder: str, prompt: str) -> str:
    """`auto`: plain for a checkpoint CPT trained (it never saw a template), a template for any other."""
    from trajforge.training.chat_models import stage_of

    if prompt != "auto":
        return prompt
    stage = stage_of(Path(folder))
    return "plain" if stage is not None and stage.startswith("cpt") else "template"


@CHECKPOINT_WORLD_MODELS.register("checkpoint")
def load_checkpoint_world_model(checkpoint: str, max_tokens: int, temperature: float, prompt: str) -> WorldModel:
    """The world model of `--simulate CHECKPOINT`; ValueError when the folder holds no usable model."""
    from trajforge.training.chat_models import checkpoint_name
    from trajforge.training.model import resolve_init

    try:
        folder = resolve_init(checkpoint)
    except FileNotFoundError as exc:
        raise ValueError(str(exc)) from exc
    if not (Path(folder) / "config.json").exists():
        raise ValueError(f"no model folder (config.json) at {checkpoint}")
    actor = world_model_actor(folder, temperature)
    return CheckpointWorldModel(actor, checkpoint_name(Path(folder)), max_tokens, prompt_of(folder, prompt))
