"""One episode's token stream as the model read and wrote it: per turn the prompt-delta ids (what the context gained
before the model answered: the first prompt, then the end of the previous answer's turn, the observation and the
opening of the next answer), and the action ids exactly as generation returned them. Earlier turns are never
tokenized again: decoded and re-tokenized, a generated answer may come back as other ids, and the ratio GSPO
computes must be over the ids that were sampled.

The delta is what the chat format adds after the last answer's content: the conversation is rendered with the
observation appended, and only its text after that content is tokenized (the template's own text with special
tokens matched, the observation as plain text, as training/labels.py tokenizes every document). When the answer
ended on the end-of-turn token, that token is the answer's and the delta starts after it."""

from dataclasses import dataclass, field

import torch

from trajforge.agents.layout import observation_message
from trajforge.training.chat_format import ChatFormat, Message, RenderedDocument
from trajforge.training.labels import label_document


@dataclass
class TurnTokens:
    prompt_ids: list[int]  # the context's delta before this turn's answer (observation tokens among them)
    action_ids: list[int] = field(default_factory=list)  # generated, stop token included when it stopped


class Transcript:
    def __init__(self, messages: list[dict], tokenizer, chat: ChatFormat):
        self.tokenizer, self.chat = tokenizer, chat
        self.messages = list(messages)
        first = label_document(chat.prompt(Message.all_of(self.messages)), tokenizer).input_ids.tolist()
        self.turns = [TurnTokens(first)]
        self._stopped = False  # whether the last answer ended on a stop token

    @property
    def ids(self) -> list[int]:
        """The context the next answer continues."""
        return [i for turn in self.turns for i in (*turn.prompt_ids, *turn.action_ids)]

    def add_action(self, action_ids: list[int], text: str, stopped: bool) -> None:
        """The answer as generated (ids) and as decoded (text, the assistant message's content)."""
        self.turns[-1].action_ids = list(action_ids)
        self.messages.append({"role": "assistant", "content": text})
        self._stopped = stopped

    def add_observation(self, observation: str) -> list[int]:
        """The environment's answer to the last action; returns the ids the context gained."""
        answered = self.chat.document(Message.all_of(self.messages))
        content_end = answered.template_spans[-1][0]  # the template always writes a turn's end after an answer
        self.messages.append(observation_message(observation))
        full = self.chat.prompt(Message.all_of(self.messages))
        if full.text[:content_end] != answered.text[:content_end]:
            raise ValueError(f"{self.chat.name}: the template renders earlier turns differently as the chat grows")
        start = content_end
        if self._stopped and full.text.startswith(self.chat.end_of_turn, start):
            start += len(self.chat.end_of_turn)
        delta = label_document(tail(full, start), self.tokenizer).input_ids.tolist()
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


def tail(document: RenderedDocument, start: int) -> RenderedDocument:
    """The document from character `start` on, its loss flags and template spans cut to match."""
    spans = tuple((max(s, start) - start, e - start) for s, e in document.template_spans if e > start)
    return RenderedDocument(document.text[start:], document.loss_flags[start:], spans)
