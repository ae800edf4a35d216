"""Sampling from a world model (prompts, stop tokens, sampling), one way for serving, evaluation and RL rollouts
(not to be confused with training/generators.py, the SFT candidate sources): the prompt is the conversation
in the model's chat format up to where the assistant's answer starts, tokenized as in training, and sampling stops
at the chat format's end of turn (and at the eos token, where that is another one)."""

import torch

from trajforge.training.chat_format import ChatFormat, Message
from trajforge.training.labels import head_length, label_document


def prompt_ids(messages: list[dict], tokenizer, chat: ChatFormat) -> list[int]:
    """Messages ({role, content}) in the model's chat format, up to where the assistant's answer starts."""
    return label_document(chat.prompt(Message.all_of(messages)), tokenizer).input_ids.tolist()


def fit_window(ids: list[int], window: int, reserve: int) -> list[int]:
    """A prompt that leaves `reserve` tokens of the window for the answer: unchanged when it fits, else its first
    `head_length(window)` tokens (the start of the system prompt) and its most recent rest, the view SFT trains on
    (training/labels.py, `trim_history`). `reserve` is at most half the window."""
    room = window - min(reserve, window // 2)
    if len(ids) <= room:
        return ids
    head = head_length(window)
    return ids[:head] + ids[len(ids) - (room - head) :]


def stop_ids(tokenizer, chat: ChatFormat) -> list[int]:
    """The token ids at which generation stops: the end of turn, and the eos token where that is another one."""
    ids = [tokenizer.convert_tokens_to_ids(chat.end_of_turn), tokenizer.eos_token_id]
    return list(dict.fromkeys(i for i in ids if i is not None))


def sample(
    model,
    input_ids: torch.Tensor,
    stops: list[int],
    pad_id: int | None,
    max_new_tokens: int,
    temperature: float,
    top_p: float = 1.0,
    seed: int = 0,
    attention_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Each row of `input_ids` continued until a stop id or `max_new_tokens`, seeded; temperature 0 is greedy.
    Prompts and continuations together, as `model.generate` returns them. Prompts of different lengths come
    left-padded, with an `attention_mask` that is 0 on the padding."""
    torch.manual_seed(seed)
    return model.generate(
        input_ids=input_ids,
        attention_mask=torch.ones_like(input_ids) if attention_mask is None else attention_mask,
        max_new_tokens=max_new_tokens,
        do_sample=temperature > 0,
        temperature=temperature if temperature > 0 else None,
        top_p=top_p if temperature > 0 else None,
        eos_token_id=stops,
        pad_token_id=pad_id,
    )
