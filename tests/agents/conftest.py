"""A tiny random-init model that can act: the markers' chat format, a tokenizer that has seen actions and
observations, no training (its answers are mostly not actions, which is what the tests of bad answers need)."""

from pathlib import Path

import pytest

TEXTS = [
    "```bash\nls -la\n```",
    "```bash\ncat notes.txt | wc -l\n```",
    '<tool_call>\n{"name": "get", "arguments": {"key": "a"}}\n</tool_call>',
    "total 4\n-rw-r--r-- 1 agent agent 12 notes.txt\n",
    "Task: count the lines of notes.txt and write the number to answer.txt",
] * 20


@pytest.fixture(scope="session")
def tiny_agent(tmp_path_factory) -> Path:
    """A model folder (config, safetensors, tokenizer) with a 1024-token window."""
    from trajforge.training.configs import TinyModelConfig
    from trajforge.training.model import build_tiny_model
    from trajforge.training.tokenizer import train_tokenizer

    folder = tmp_path_factory.mktemp("tiny-agent")
    tokenizer = train_tokenizer(TEXTS, vocab_size=400)
    config = TinyModelConfig(hidden_size=32, intermediate_size=64, layers=2, heads=2, max_positions=1024)
    build_tiny_model(config, tokenizer, seed=0).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def answer_ids(tokenizer, text: str) -> list[int]:
    """The ids a model writes for `text`, ending its turn."""
    return tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.convert_tokens_to_ids("<|end|>")]


@pytest.fixture
def scripted_actor(tiny_agent):
    """The tiny model's Actor whose batches answer from a script (script[turn], its last line once it runs out),
    so a test decides what the agent says; every batch's answers are kept in `actor.returned`."""
    from trajforge.agents.checkpoint_policy import TURN_SEEDS, Actor

    def make(script: list[str], gather_s: float = 0.05):
        actor = Actor.load(str(tiny_agent), gather_s=gather_s)
        actor.returned = []

        def generate_batch(asks):
            turns = [ask.seed % TURN_SEEDS for ask in asks]  # the policy seeds each ask with its turn
            answers = [answer_ids(actor.tokenizer, script[min(turn, len(script) - 1)]) for turn in turns]
            actor.returned.append(answers)
            return answers

        actor.broker.generate_batch = generate_batch
        return actor

    return make
