"""Candidate generators for SFT curation: any OpenAI-compatible endpoint or a local checkpoint (model rollouts:
rejection sampling proper), or the embedded model-free rationalization generator (reasoning written toward the
known observation). Every candidate carries its origin, so curation can say what it kept."""

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from trajforge.endpoints import ChatClient, Endpoint
from trajforge.evaluation.turns import PredictionTurn
from trajforge.schemas.registry import Registry
from trajforge.training.prompts import candidate, chat_messages

ROLLOUT, RATIONALIZATION = "rollout", "rationalization"
VERBATIM = f"{RATIONALIZATION}:verbatim_reference"  # the real observation itself, with written reasoning


class Candidate(NamedTuple):
    text: str
    origin: str  # "rollout" (a model sampled it unaided), or "rationalization[:variant]" (it saw the answer)


def sample_kind(origin: str) -> str:
    """rollout or rationalization: what a kept sample counts as."""
    return origin.split(":", 1)[0]


class Generator(ABC):
    name: str

    @abstractmethod
    def generate(self, turn: PredictionTurn, n: int, seed: int, hint: bool = False) -> list[str]:
        """n candidates for the turn; with `hint`, the real observation is shown (rationalisation)."""

    def labelled(self, turn: PredictionTurn, n: int, seed: int, hint: bool = False) -> list[Candidate]:
        """The candidates with their origin: a model shown the real observation (`hint`) rationalizes."""
        origin = RATIONALIZATION if hint else ROLLOUT
        return [Candidate(text, origin) for text in self.generate(turn, n, seed, hint)]


class EndpointGenerator(Generator):
    """Any OpenAI-compatible /chat/completions endpoint (vLLM, SGLang, OpenAI, `trajforge serve`)."""

    def __init__(self, endpoint: Endpoint, temperature: float = 0.8, max_tokens: int = 1024):
        self.client = ChatClient(endpoint)
        self.name = f"endpoint:{endpoint.model}"
        self.temperature, self.max_tokens = temperature, max_tokens

    def generate(self, turn: PredictionTurn, n: int, seed: int, hint: bool = False) -> list[str]:
        """n candidates in one request; a failed one raises EndpointError (the curation job stops, saying why)."""
        return self.client.texts(chat_messages(turn, hint), self.max_tokens, self.temperature, seed, n)


class CheckpointGenerator(Generator):
    """A local checkpoint (a trajforge run, or any Hugging Face causal-LM folder), sampled with transformers."""

    def __init__(self, folder: str, max_new_tokens: int = 256, temperature: float = 0.8):
        from trajforge.training.serving import LocalModel

        self.model = LocalModel(folder)
        self.name = f"checkpoint:{folder}"
        self.max_new_tokens, self.temperature = max_new_tokens, temperature

    def generate(self, turn: PredictionTurn, n: int, seed: int, hint: bool = False) -> list[str]:
        return [
            self.model.chat(chat_messages(turn, hint), self.max_new_tokens, self.temperature, seed + i)[0]
            for i in range(n)
        ]


class RationalizationGenerator(Generator):
    """Model-free rationalization, for machines without a model: no rejection sampling happens. The first
    candidate is the real observation verbatim, with reasoning written toward it (labelled
    `rationalization:verbatim_reference`); the others are degraded copies (cut short, facts altered, format
    lost), so the judge and best-of-N still have choices to make. Its samples are counted as rationalized."""

    name = "rationalization (model-free: reasoning written toward the known observation)"
    VARIANTS = ("verbatim_reference", "truncated", "altered_facts", "format_lost")

    def generate(self, turn: PredictionTurn, n: int, seed: int, hint: bool = True) -> list[str]:
        return [c.text for c in self.labelled(turn, n, seed, hint)]

    def labelled(self, turn: PredictionTurn, n: int, seed: int, hint: bool = True) -> list[Candidate]:
        reference = turn.reference
        # Short and free of copied text: a small model trained on it learns to close its reasoning and write the
        # prediction (measured on the demo's RL prompts after 300 SFT steps: 46% format compliance quoting the action,
        # 58-96% without; 100% after 500 steps). No word that observations use as a label ("text:" in a web page's
        # accessibility tree): the demo's SFT model went on with page text after "answers with text" and never
        # closed its reasoning on 6 of 8 held-out web turns.
        kind = "a JSON object" if reference.lstrip().startswith("{") else "plain"
        reasoning = (
            f"Turn {len(turn.messages) // 2 + 1} of the episode; the environment's reply should be {kind}, "
            f"about {len(reference)} characters long."
        )
        variants = [
            reference,
            reference[: max(1, len(reference) // 2)],
            _alter_facts(reference),
            json.dumps({"output": reference[:200]})
            if not reference.lstrip().startswith("{")
            else reference.replace("{", "", 1),
        ]
        return [
            Candidate(candidate(reasoning, variants[i % len(variants)]), f"{RATIONALIZATION}:{self.VARIANTS[i % 4]}")
            for i in range(n)
        ]


def _alter_facts(text: str) -> str:
    return re.sub(r"\d", lambda m: str((int(m.group(0)) + 7) % 10), text)


class GeneratorKind(NamedTuple):
    build: Callable[["GeneratorSpec"], Generator]
    check: Callable[["GeneratorSpec"], str | None]  # what is missing for this kind, as the option to give


def _checkpoint_missing(spec: "GeneratorSpec") -> str | None:
    if spec.checkpoint is None or not (Path(spec.checkpoint) / "config.json").exists():
        return "--generator checkpoint needs --checkpoint FOLDER (with config.json)"
    return None


GENERATORS: Registry[GeneratorKind] = Registry("generator")
GENERATORS.add(
    "endpoint",
    GeneratorKind(
        lambda s: EndpointGenerator(Endpoint(s.url, s.model, s.key_env, timeout=300.0), 0.8, s.max_new_tokens),
        lambda s: None if s.url and s.model else "--generator endpoint needs --generator-url and --generator-model",
    ),
    help="any OpenAI-compatible API: model rollouts, rejection sampling proper",
)
GENERATORS.add(
    "checkpoint",
    GeneratorKind(lambda s: CheckpointGenerator(s.checkpoint, s.max_new_tokens), _checkpoint_missing),
    help="a local model: model rollouts, rejection sampling proper",
)
GENERATORS.add(
    "rationalization",
    GeneratorKind(lambda s: RationalizationGenerator(), lambda s: None),
    help="no model: the real observation with reasoning written toward it, counted apart",
)


@dataclass(frozen=True)
class GeneratorSpec:
    """Which candidate generator curate-sft uses, as a small picklable value: each Beam worker builds its own
    (calling the spec builds the generator). Adding a generator is one `GENERATORS.add`."""

    kind: str = "rationalization"
    url: str | None = None
    model: str | None = None
    checkpoint: str | None = None
    max_new_tokens: int = 512
    key_env: str = "TRAJFORGE_GENERATOR_API_KEY"  # the variable holding an endpoint generator's API key

    def __post_init__(self):
        missing = GENERATORS.get(self.kind).check(self)
        if missing:
            raise ValueError(missing)

    def __call__(self) -> Generator:
        return GENERATORS.get(self.kind).build(self)
