"""One batched generate call for the episodes that run at the same time.

Each episode runs in its own thread (the collectors' runner), with its own environment, and its policy asks for
one answer at a time. The broker gathers those asks into one batch on the device: an episode joins when it
starts and leaves when it ends; a batch runs once every member has asked (the G episodes of a task move in step),
or when the oldest ask has waited `gather_s` (a member still busy in its environment is not waited for longer).
Episodes start at different times (an environment takes its time to reset), so a runner that knows how many will
run says so first (`expect`): the first to ask then waits for the others rather than running alone.
While a batch runs, new asks queue for the next one. The first asker of a batch runs it, in its own thread."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Ask:
    prompt_ids: list[int]
    seed: int
    max_new_tokens: int
    answer: list[int] | None = None
    error: BaseException | None = None


# the batch's answers, in order: the generated ids of each ask
GenerateBatch = Callable[[list[Ask]], list[list[int]]]


class GenerationBroker:
    def __init__(self, generate_batch: GenerateBatch, gather_s: float = 1.0):
        self.generate_batch, self.gather_s = generate_batch, gather_s
        self._ready = threading.Condition()
        self._members = 0
        self._expected = 0  # members counted before they joined
        self._queue: list[tuple[float, Ask]] = []
        self._running = False
        self.batch_sizes: list[int] = []  # every batch run, for reports and tests

    def expect(self, episodes: int) -> None:
        """`episodes` members are about to join: count them now."""
        with self._ready:
            self._members += episodes
            self._expected += episodes

    def unexpect(self) -> None:
        """Forget the expected members that never joined (an environment that never started)."""
        with self._ready:
            self._members -= self._expected
            self._expected = 0
            self._ready.notify_all()

    def join(self) -> None:
        with self._ready:
            if self._expected:
                self._expected -= 1
            else:
                self._members += 1

    def leave(self) -> None:
        with self._ready:
            self._members -= 1
            self._ready.notify_all()  # the others may be all there now

    def generate(self, prompt_ids: list[int], seed: int, max_new_tokens: int) -> list[int]:
        """The generated ids for one prompt, run in a batch with the other members' asks."""
        ask = Ask(list(prompt_ids), seed, max_new_tokens)
        with self._ready:
            self._queue.append((time.monotonic(), ask))
            self._ready.notify_all()
            batch = self._wait(ask)
        if batch is not None:
            self._run(batch)
        if ask.error is not None:
            raise ask.error
        return ask.answer

    def _wait(self, ask: Ask) -> list[Ask] | None:
        """Until `ask` is answered (None) or this thread is to run a batch holding it (the batch)."""
        while ask.answer is None and ask.error is None:
            if not self._running and self._queue:
                waited = time.monotonic() - self._queue[0][0]
                if len(self._queue) >= self._members or waited >= self.gather_s:
                    batch = [a for _, a in self._queue]
                    self._queue, self._running = [], True
                    return batch
                self._ready.wait(self.gather_s - waited)
            else:
                self._ready.wait()
        return None

    def _run(self, batch: list[Ask]) -> None:
        try:
            answers = self.generate_batch(batch)
            for ask, answer in zip(batch, answers, strict=True):
                ask.answer = answer
        except BaseException as exc:  # noqa: BLE001 - every ask of the batch gets the failure, each raises it
            for ask in batch:
                ask.error = exc
        with self._ready:
            self.batch_sizes.append(len(batch))
            self._running = False
            self._ready.notify_all()
