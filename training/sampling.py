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
    row_seeds: list[int] | None = None,
    cache=None,
) -> torch.Tensor:
    """Each row of `input_ids` continued until a stop id or `max_new_tokens`, seeded; temperature 0 is greedy.
    Prompts and continuations together, as `model.generate` returns them. Prompts of different lengths come
    left-padded, with an `attention_mask` that is 0 on the padding. With `row_seeds`, each row samples from its own
    generator: a row's tokens then depend on its seed, not on which other rows shared the batch. A `cache` holds
    the keys and values of the prompts' first columns (generate reads on from its end) and is filled in place."""
    torch.manual_seed(seed)
    seeded = row_seeds is not None and temperature > 0
    return model.generate(
        input_ids=input_ids,
        attention_mask=torch.ones_like(input_ids) if attention_mask is None else attention_mask,
        max_new_tokens=max_new_tokens,
        do_sample=temperature > 0 and not seeded,
        temperature=temperature if temperature > 0 and not seeded else None,
        top_p=top_p if temperature > 0 and not seeded else None,
        logits_processor=[RowSeededSampling(row_seeds, temperature, top_p)] if seeded else None,
        eos_token_id=stops,
        pad_token_id=pad_id,
        cache=cache,
    )


class RowSeededSampling:
    """A logits processor that samples each row's next token with that row's generator (temperature, then top-p)
    and leaves it as the row's only finite score, so generate's greedy step takes it."""

    def __init__(self, seeds: list[int], temperature: float, top_p: float = 1.0):
        self.seeds, self.temperature, self.top_p = seeds, temperature, top_p
        self.generators: list[torch.Generator] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if not self.generators:
            self.generators = [torch.Generator(scores.device).manual_seed(s) for s in self.seeds]
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        if self.top_p < 1.0:
            ordered, order = probs.sort(dim=-1, descending=True)
            outside = ordered.cumsum(dim=-1) - ordered > self.top_p  # past the nucleus (its first token always in)
            probs = probs.scatter(-1, order, ordered.masked_fill(outside, 0.0))
        chosen = torch.stack(
            [torch.multinomial(p, 1, generator=g) for p, g in zip(probs, self.generators, strict=True)]
        )
        return torch.full_like(scores, float("-inf")).scatter(-1, chosen, 0.0)
