"""The prefix cache: a turn reads only what its context gained, a group's shared first prompt is read once, and
what is generated is what the model would write reading every prompt whole."""

import random

import pytest
import torch

from trajforge.agents.batching import Ask
from trajforge.agents.checkpoint_policy import Actor
from trajforge.agents.prefix_cache import PrefixCache, shared_length


def _naive_shared(a, b, most):
    n = 0
    while n < min(len(a), len(b), most) and a[n] == b[n]:
        n += 1
    return n


def test_shared_length_is_the_common_beginning_up_to_the_limit():
    rng = random.Random(0)
    for _ in range(500):
        a = [rng.randint(0, 2) for _ in range(rng.randint(0, 12))]
        b = a[: rng.randint(0, len(a))] + [rng.randint(0, 2) for _ in range(rng.randint(0, 6))]
        most = rng.randint(0, 14)
        assert shared_length(a, b, most) == _naive_shared(a, b, most), (a, b, most)


def _layers(tokens: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(torch.zeros(1, tokens, 4), torch.zeros(1, tokens, 4))]  # 32 bytes a token, keys and values


def test_the_longest_shared_context_serves_all_but_the_prompts_last_token():
    cache = PrefixCache()
    cache.keep([1, 2, 3], _layers(3))
    cache.keep([1, 2, 9, 9, 9], _layers(5))
    kept, used = cache.longest([1, 2, 9, 9, 4, 4])
    assert (kept.ids, used) == ([1, 2, 9, 9, 9], 4)
    kept, used = cache.longest([1, 2, 3])  # the whole prompt is kept: the model still reads its last token
    assert (kept.ids, used) == ([1, 2, 3], 2)
    assert cache.longest([5, 1, 2]) == (None, 0)


def test_a_context_that_another_extends_goes_and_the_oldest_go_beyond_the_budget():
    cache = PrefixCache(budget_bytes=32 * 10)
    cache.keep([1, 2], _layers(2))
    cache.keep([1, 2, 3, 4], _layers(4))  # extends [1, 2]: it alone serves every prompt [1, 2] served
    assert list(cache.kept) == [(1, 2, 3, 4)]
    cache.keep([7, 8, 9], _layers(3))
    cache.longest([1, 2, 3, 4, 5])  # used: now the most recent
    cache.keep([5, 5, 5, 5], _layers(4))  # 11 tokens > 10: the least recently used goes
    assert list(cache.kept) == [(1, 2, 3, 4), (5, 5, 5, 5)]


def test_changed_weights_forget_every_kept_context(tiny_agent):
    actor = Actor.load(str(tiny_agent), temperature=0.0)
    actor.generate_batch([Ask(list(range(10, 40)), 0, 8)])
    assert actor.prefix_cache.kept
    actor.prefix_cache.check_weights(actor.model)
    assert actor.prefix_cache.kept  # the same weights: kept
    with torch.no_grad():
        next(actor.model.parameters()).add_(0.01)  # as an optimizer step does, in place
    actor.prefix_cache.check_weights(actor.model)
    assert not actor.prefix_cache.kept


def _episodes(actor: Actor, firsts: list[list[int]], observations: list[list[int]], turns: int, seeds: list[int]):
    """Each episode's answers over `turns` turns, every turn's prompts in one batch: a prompt is the last one, the
    answer as generated, then the episode's observation ids (as a transcript grows)."""
    prompts, answers = [list(f) for f in firsts], [[] for _ in firsts]
    for turn in range(turns):
        batch = actor.generate_batch([Ask(p, s * 1009 + turn, 12) for p, s in zip(prompts, seeds, strict=True)])
        for i, answer in enumerate(batch):
            answers[i].append(answer)
            prompts[i] = prompts[i] + answer + observations[i]
    return answers


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_reading_on_from_kept_contexts_writes_what_reading_whole_prompts_writes(tiny_agent, temperature):
    rng = random.Random(1)
    shared = [rng.randint(5, 200) for _ in range(60)]
    firsts = [shared, shared, shared, [rng.randint(5, 200) for _ in range(25)]]  # a group of 3 and another task
    observations = [[rng.randint(5, 200) for _ in range(n)] for n in (3, 40, 17, 8)]
    reuse = Actor.load(str(tiny_agent), temperature=temperature)
    whole = Actor(reuse.model, reuse.tokenizer, reuse.window, temperature, reuse=False)
    seeds = [1, 2, 3, 4]
    answers = _episodes(reuse, firsts, observations, 3, seeds)
    assert answers == _episodes(whole, firsts, observations, 3, seeds)
    cache = reuse.prefix_cache
    asked = 0  # every turn's prompt: the first, then the last one with its answer and the observation
    for first, observation, said in zip(firsts, observations, answers, strict=True):
        lengths = [len(first)]
        for answer in said[:-1]:
            lengths.append(lengths[-1] + len(answer) + len(observation))
        asked += sum(lengths)
    assert cache.prompt_tokens == asked
    # read: each distinct first prompt but its last token once, each episode's last token of it, then per turn the
    # last answer token and the observation
    assert cache.read_tokens == (60 - 1) + (25 - 1) + 4 + 2 * sum(1 + len(o) for o in observations)
    assert cache.reused == pytest.approx(1 - cache.read_tokens / asked) and cache.reused > 0.7
