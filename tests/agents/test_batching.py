"""The broker: concurrent episodes' asks go to the device as one batch, each gets its own answer back."""

import threading
import time

import pytest

from trajforge.agents.batching import GenerationBroker


def _echo(asks):
    return [[a.seed, len(a.prompt_ids)] for a in asks]


def _ask_together(broker, n):
    answers = [None] * n

    def one(i):
        broker.join()
        try:
            answers[i] = broker.generate([7] * (i + 1), seed=i, max_new_tokens=4)
        finally:
            broker.leave()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return answers


def test_the_asks_of_every_member_run_as_one_batch_and_each_gets_its_own_answer():
    broker = GenerationBroker(_echo, gather_s=5.0)  # the batch runs as soon as all four asked, not after 5 s
    broker.expect(4)
    started = time.monotonic()
    answers = _ask_together(broker, 4)
    assert answers == [[0, 1], [1, 2], [2, 3], [3, 4]]
    assert broker.batch_sizes == [4] and time.monotonic() - started < 4


def test_a_member_busy_elsewhere_is_waited_for_only_the_gather_window():
    broker = GenerationBroker(_echo, gather_s=0.05)
    broker.join()  # a member that never asks (its environment is slow)
    assert _ask_together(broker, 1) == [[0, 1]]
    assert broker.batch_sizes == [1]


def test_expected_members_that_never_join_are_forgotten():
    broker = GenerationBroker(_echo, gather_s=5.0)
    broker.expect(3)
    broker.join()
    broker.unexpect()  # two environments never started
    started = time.monotonic()
    assert broker.generate([1], seed=0, max_new_tokens=2) == [0, 1]
    assert time.monotonic() - started < 4


def test_a_failed_batch_raises_in_every_episode_of_it():
    def broken(asks):
        raise RuntimeError("CUDA out of memory")

    broker = GenerationBroker(broken, gather_s=0.05)
    broker.join()
    with pytest.raises(RuntimeError, match="out of memory"):
        broker.generate([1], seed=0, max_new_tokens=2)
