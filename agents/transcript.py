"""One episode's token stream as the model read and wrote it: per turn the prompt-delta ids (what the context gained
before the model answered: the first prompt, then the observation of the previous action in its message and the
opening of the next answer), and the action ids exactly as generation returned them. Earlier turns are never
tokenized again: decoded and re-tokenized, a generated answer may come back as other ids, and the ratio GSPO
computes must be over the ids that were sampled.

The layout and the ids of each piece are training/agent_render.py's (the layout agent SFT trains on):
`agent_prompt_ids` for the first prompt, `agent_observation_ids` for what follows an action's end of turn. An answer
cut by the token limit has no end of turn of its own: the delta then starts with it (context, not the agent's).

A first prompt too long for the model's window (an MCP task whose setup calls fill the starting state) is fitted
once, as generation fits a long prompt (training/sampling.py's `fit_window`): its head (the agent's instructions)
and its most recent rest (the end of the starting state, the task), leaving `reserve` tokens for the episode. That
is the view agent SFT trains such a prompt on (training/labels.py's `trim_history`), and the stream stays the ids
the model read, so GSPO's ratio is over the context each action was sampled in."""

import threading
from dataclasses import dataclass, field

import torch

from trajforge.schemas.records import Action
from trajforge.training.agent_render import agent_messages, agent_observation_ids, agent_prompt_ids, agent_stop_id
from trajforge.training.sampling import fit_window

# Episodes run in threads and share a tokenizer, whose fast backend keeps a switch (special-token matching) that
# each tokenization sets (training/labels.py), and which refuses concurrent calls ("Already borrowed"): one at a time.
_TOKENIZING = threading.Lock()


@dataclass
class TurnTokens:
    prompt_ids: list[int]  # the context's delta before this turn's answer (observation tokens among them)
    action_ids: list[int] = field(default_factory=list)  # generated, stop token included when it stopped


class Transcript:
    def __init__(
        self,
        tokenizer,
        instruction: str,
        action_space: list[dict],
        initial_state: str,
        window: int | None = None,
        reserve: int = 0,
    ):
        self.tokenizer = tokenizer
        self.instruction, self.action_space, self.initial_state = instruction, action_space, initial_state
        self.history: list[tuple[Action, str]] = []  # (action, observation) per turn, as agent_messages takes it
        with _TOKENIZING:
            first = agent_prompt_ids(tokenizer, self.messages())
        self.turns = [TurnTokens(first if window is None else fit_window(first, window, reserve))]
        self.stop_id = agent_stop_id(tokenizer)

    def messages(self) -> list[dict]:
        return agent_messages(self.instruction, self.action_space, self.history, self.initial_state)

    @property
    def ids(self) -> list[int]:
        """The context the next answer continues."""
        return [i for turn in self.turns for i in (*turn.prompt_ids, *turn.action_ids)]

    def add_answer(self, action_ids: list[int]) -> str:
        """The answer as generated; its text."""
        self.turns[-1].action_ids = list(action_ids)
        with _TOKENIZING:
            return self.tokenizer.decode(action_ids, skip_special_tokens=True)

    def add_observation(self, action: Action, observation: str) -> list[int]:
        """The environment's answer to the action read from the last answer; returns the ids the context gained."""
        self.history.append((action, observation))
        with _TOKENIZING:
            delta = agent_observation_ids(self.tokenizer, self.messages())
        if not self.turns[-1].action_ids or self.turns[-1].action_ids[-1] != self.stop_id:
            delta = [self.stop_id, *delta]
        self.turns.append(TurnTokens(delta))
        return delta

    def stream(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The whole episode as one sequence, and a mask that is 1 on the agent's own (generated) tokens only."""
        ids, mask = [], []
        for turn in self.turns:
            ids += turn.prompt_ids + turn.action_ids
            mask += [0] * len(turn.prompt_ids) + [1] * len(turn.action_ids)
        return torch.tensor(ids), torch.tensor(mask, dtype=torch.float32)

    @property
    def generated(self) -> int:
        return sum(len(turn.action_ids) for turn in self.turns)
