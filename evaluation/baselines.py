"""The model-free baselines every world-model table carries, answering the same turns as the models (they implement
`evaluation.models.ChatModel`, so any run scores them as it scores a model):

- copy previous: the observation before the action (the first action's: the initial state of the system prompt);
- retrieval: the observation that followed the most similar action in the training split (TF-IDF cosine over the
  action's words and symbols; the first such action on a tie).

A world model worth simulating in beats both on facts. Their names say they are model-free wherever a figure of
theirs is printed."""

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from trajforge.evaluation.models import Sampling
from trajforge.evaluation.turns import TEMPLATES
from trajforge.schemas.system_prompt import HEADERS
from trajforge.schemas.turn_text import action_text

COPY_PREVIOUS = "copy previous (model-free)"
RETRIEVAL = "retrieval (model-free)"
BASELINES = (COPY_PREVIOUS, RETRIEVAL)
_TOKEN = re.compile(r"\w+|[^\w\s]")
_INITIAL_STATE = re.compile(
    re.escape(HEADERS["initial_state"]) + r"\n(.*?)(?=\n\n# (?:Demonstrations|Simulation instruction)\n|\Z)", re.S
)


def unwrapped(system: str) -> str:
    """A system prompt without the world-model template around it (evaluation/turns.py), if it has one."""
    for template in TEMPLATES:
        before, _, after = template.partition("{system}")
        if system.startswith(before) and system.endswith(after) and len(system) >= len(before) + len(after):
            return system[len(before) : len(system) - len(after)]
    return system


def initial_state_of(system: str | None) -> str:
    """The initial state part of a rendered system prompt (inside a template too); '' when it has none."""
    match = _INITIAL_STATE.search(unwrapped(system or ""))
    return match.group(1) if match else ""


class _Baseline:
    stage = None
    folder = None

    def heldout_loss(self, rows: Sequence[dict]) -> float | None:
        return None


class CopyPrevious(_Baseline):
    """Predicts that nothing changes: the last observation shown, or the initial state before the first action."""

    name = COPY_PREVIOUS

    def answer(self, messages: list[dict], sampling: Sampling | None = None) -> str | None:
        earlier = [m["content"] for m in messages[:-1] if m["role"] == "assistant"]
        if earlier:
            return earlier[-1]
        system = next((m["content"] for m in messages if m["role"] == "system"), None)
        return initial_state_of(system) or None


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Retrieval(_Baseline):
    """The observation after the training split's most similar action."""

    name = RETRIEVAL

    def __init__(self, pairs: Iterable[tuple[str, str]]):
        self.actions, self.observations = [], []
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for index, (action, observation) in enumerate(pairs):
            self.actions.append(action)
            self.observations.append(observation)
            for token, count in Counter(_tokens(action)).items():
                postings[token].append((index, count))
        n = max(1, len(self.actions))
        self.idf = {t: math.log((1 + n) / (1 + len(p))) + 1 for t, p in postings.items()}
        self.postings = postings
        norms = [0.0] * len(self.actions)
        for token, entries in postings.items():
            for index, count in entries:
                norms[index] += (count * self.idf[token]) ** 2
        self.norms = [math.sqrt(v) or 1.0 for v in norms]

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping]) -> "Retrieval":
        """Every (action, observation) of trajectory rows (the training split's)."""
        return cls(
            (action_text(t["action"]), t["observation"]["content"]) for row in rows for t in row.get("turns") or ()
        )

    def nearest(self, action: str) -> int | None:
        scores: dict[int, float] = defaultdict(float)
        for token, count in Counter(_tokens(action)).items():
            weight = count * self.idf.get(token, 0.0)
            for index, other in self.postings.get(token, ()):
                scores[index] += weight * other * self.idf[token]
        if not scores:
            return None
        return max(scores, key=lambda i: (scores[i] / self.norms[i], -i))

    def answer(self, messages: list[dict], sampling: Sampling | None = None) -> str | None:
        index = self.nearest(messages[-1]["content"])
        return self.observations[index] if index is not None else None
