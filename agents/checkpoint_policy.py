"""`--agent DIR` (the checkpoint policy): a model acting as the agent, sampled locally. DIR is a trajforge
checkpoint, a local Hugging Face model folder, or `smollm2`.

The episode is a chat in the agent role (training/agent_render.py, the layout agent SFT trains on) in the model's
own chat format (the tiny default's markers, a real model's template); each answer is read with the action codec
(collectors' `answer_action`): an action is taken, an answer without one ends the episode (the task's check
decides), one that cannot be read ends it as `agent_error` with the reason. The episodes that run at the same time
share one loaded model and one batched generate call (agents/batching.py); each keeps its tokens as generated
(agents/transcript.py), its first prompt fitted to the window when it is too long."""

import threading
from pathlib import Path

from trajforge.agents.batching import Ask, GenerationBroker
from trajforge.collectors.policies.base import POLICIES, Policy
from trajforge.collectors.policies.llm import answer_action
from trajforge.sandboxes.base import EpisodeEnded
from trajforge.schemas.records import Action, Observation

TURN_SEEDS = 1009  # an answer's sampling seed: the episode's seed * TURN_SEEDS + its turn
MIN_ANSWER_TOKENS = 8  # an answer with less room than this cannot hold an action: the context is full


class ContextFull(EpisodeEnded):
    """The conversation left the model no room to answer: the episode ran out of context, as it runs out of turns."""

    status = "timeout"


def acting_folder(checkpoint: str) -> str:
    """The checkpoint as a local folder whose model can act; ValueError before any episode when it cannot: no such
    folder, or a tokenizer with neither a chat template nor trajforge's markers (the model
    would read prompts in a format it never saw)."""
    from transformers import AutoTokenizer

    from trajforge.training.agent_render import AgentFormatError
    from trajforge.training.chat_format import CHAT_MARKERS
    from trajforge.training.model import resolve_init

    try:
        folder = resolve_init(checkpoint)
    except FileNotFoundError as exc:  # smollm2 without its package
        raise ValueError(str(exc)) from exc
    if not (Path(folder) / "config.json").exists():
        raise ValueError(f"--agent {checkpoint}: no model folder (config.json) there")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--agent {checkpoint}: no tokenizer in the folder ({exc})") from exc
    if not tokenizer.chat_template and not set(CHAT_MARKERS) <= set(tokenizer.get_vocab()):
        raise AgentFormatError(
            f"--agent {checkpoint} cannot act: its tokenizer has no chat template and no trajforge chat markers, "
            "so it has never seen a conversation. Train it with trajforge first, or use an instruct model."
        )
    return folder


class Actor:
    """A model that answers agent prompts: its tokenizer and chat format, its context window, and the broker that
    batches the answers of concurrent episodes into one generate call on its device."""

    def __init__(
        self, model, tokenizer, window: int, temperature: float = 0.7, gather_s: float = 1.0, reuse: bool = True
    ):
        from trajforge.agents.prefix_cache import PrefixCache
        from trajforge.training.agent_render import agent_chat
        from trajforge.training.sampling import stop_ids

        self.model, self.tokenizer, self.window, self.temperature = model, tokenizer, window, temperature
        self.chat = agent_chat(tokenizer)
        self.stops = stop_ids(tokenizer, self.chat)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.stops[0]
        self.prefix_cache = PrefixCache() if reuse else None  # None: every prompt read whole, every time
        self.broker = GenerationBroker(self.generate_batch, gather_s)
        self.generated_tokens = 0

    @classmethod
    def load(cls, folder: str, trained: bool = False, **settings) -> "Actor":
        """The model in `folder` acting: the process's shared copy, or its own when it is `trained` (agent RL)."""
        from trajforge.training import loaded_model

        loaded = loaded_model.load(folder) if trained else loaded_model.shared(folder)
        return cls(loaded.model, loaded.tokenizer, loaded.window, **settings)

    def generate_batch(self, asks: list[Ask]) -> list[list[int]]:
        """Every ask's continuation, sampled in one batch (prompts left-padded), each with its own seed (an ask's
        answer does not depend on what else shares its batch, but for the rounding padding may change), each cut
        after its first stop id. With the prefix cache, each prompt is first read on from the longest context kept
        for it (agents/prefix_cache.py), so that generate reads one token a row; what it wrote is kept."""
        import torch

        from trajforge.agents.prefix_cache import batch_cache, row_layers
        from trajforge.training.sampling import sample

        prompts = [a.prompt_ids for a in asks]
        rows = [(None, 0)] * len(asks)
        if self.prefix_cache is not None:
            self.prefix_cache.check_weights(self.model)
            self.read_ahead([p for p in prompts if len(p) > 1])
            rows = [self.prefix_cache.longest(p) for p in prompts]
            self.prefix_cache.prompt_tokens += sum(len(p) for p in prompts)
        ids, mask, width = self.left_padded(prompts)
        cache = batch_cache(rows, [len(p) for p in prompts], width) if self.prefix_cache is not None else None
        with torch.no_grad():
            out = sample(
                self.model, ids, self.stops, self.pad_id, max(a.max_new_tokens for a in asks), self.temperature,
                attention_mask=mask, row_seeds=[a.seed for a in asks], cache=cache,
            )  # fmt: skip
        rows_out = zip(out, asks, strict=True)
        answers = [cut_at_stop(row[width:].tolist()[: a.max_new_tokens], self.stops) for row, a in rows_out]
        if self.prefix_cache is not None:
            self.prefix_cache.read_tokens += sum(len(p) - used for p, (_, used) in zip(prompts, rows, strict=True))
            for row, (prompt, answer) in enumerate(zip(prompts, answers, strict=True)):
                written = prompt + answer[:-1]  # generate read every token it wrote but the last
                self.prefix_cache.keep(written, row_layers(cache, row, width - len(prompt), width + len(answer) - 1))
        self.generated_tokens += sum(len(a) for a in answers)
        return answers

    def read_ahead(self, prompts: list[list[int]]) -> None:
        """Read each distinct prompt but its last token on from its longest kept context, and keep the result: the
        G first prompts of a task are read once. Prompts that gained alike are read together (a row that gained
        less than the batch's most reads again what it had kept: agents/prefix_cache.py)."""
        import torch

        from trajforge.agents.prefix_cache import batch_cache, gain_groups, row_layers

        unread = {}
        for prompt in prompts:
            kept, used = self.prefix_cache.longest(prompt)
            if len(prompt) - 1 > used:
                unread[tuple(prompt)] = (kept, used)
        for group in gain_groups(unread):
            heads = [list(p[:-1]) for p in group]
            rows = [unread[p] for p in group]
            ids, mask, width = self.left_padded(heads)
            cache = batch_cache(rows, [len(h) for h in heads], width)
            filled = cache.get_seq_length()
            positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
            with torch.no_grad():
                self.model(input_ids=ids[:, filled:], attention_mask=mask, position_ids=positions[:, filled:],
                           cache=cache, use_cache=True, logits_to_keep=1)  # fmt: skip
            self.prefix_cache.read_tokens += sum(len(h) - used for h, (_, used) in zip(heads, rows, strict=True))
            for row, head in enumerate(heads):
                self.prefix_cache.keep(head, row_layers(cache, row, width - len(head), width))

    def left_padded(self, prompts: list[list[int]]):
        """The prompts as one left-padded batch on the model's device: ids, attention mask, width."""
        import torch

        width = max(len(p) for p in prompts)
        ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        device = next(self.model.parameters()).device
        return ids.to(device), mask.to(device), width


def cut_at_stop(ids: list[int], stops: list[int]) -> list[int]:
    """The ids up to and with the first stop id (what generate writes after a row has stopped is padding)."""
    for position, token in enumerate(ids):
        if token in stops:
            return ids[: position + 1]
    return ids


_ACTORS: dict[tuple[str, float], Actor] = {}
_LOADING = threading.Lock()


def shared_actor(folder: str, temperature: float = 0.7) -> Actor:
    """One loaded model per folder and temperature for the whole process: every episode of a run asks the same
    one."""
    with _LOADING:
        if (folder, temperature) not in _ACTORS:
            _ACTORS[folder, temperature] = Actor.load(folder, temperature=temperature)
        return _ACTORS[folder, temperature]


@POLICIES.register(help="a trajforge or Hugging Face checkpoint acting itself (--agent DIR or smollm2)")
class CheckpointPolicy(Policy):
    name = "checkpoint"

    @classmethod
    def arguments(cls, config) -> dict:
        weights = config.agent.weights if config.agent is not None else None
        if weights is None:
            raise ValueError("--policy checkpoint needs --agent: a checkpoint folder, a model folder or smollm2")
        return {"checkpoint": acting_folder(weights), "temperature": config.temperature}

    def __init__(
        self, checkpoint: str, actor: Actor | None = None, max_new_tokens: int = 256, temperature: float = 0.7
    ):
        from trajforge.training.chat_models import checkpoint_name

        self.actor = actor if actor is not None else shared_actor(checkpoint, temperature)
        self.model = checkpoint_name(Path(checkpoint))
        self.max_new_tokens = max_new_tokens
        self.transcript = None
        self.taken: Action | None = None  # the last action returned
        self._joined = False

    def start(self, task, action_space, initial, seed) -> None:
        from trajforge.agents.transcript import Transcript

        super().start(task, action_space, initial, seed)
        self.transcript = Transcript(self.actor.tokenizer, task.instruction, action_space, initial.content,
                                     window=self.actor.window, reserve=self.max_new_tokens)  # fmt: skip
        self.actor.broker.join()
        self._joined = True

    def act(self, last: Observation | None) -> Action | None:
        if last is not None:
            self.transcript.add_observation(self.taken, last.content)
        context = self.transcript.ids
        room = min(self.max_new_tokens, self.actor.window - len(context))
        if room < MIN_ANSWER_TOKENS:
            raise ContextFull(f"the context window ({self.actor.window} tokens) is full")
        turn = len(self.transcript.turns) - 1
        generated = self.actor.broker.generate(context, seed=self.seed * TURN_SEEDS + turn, max_new_tokens=room)
        self.taken = answer_action(self.transcript.add_answer(generated), self.action_space)
        return self.taken

    def finish(self) -> None:
        if self._joined:
            self._joined = False
            self.actor.broker.leave()
