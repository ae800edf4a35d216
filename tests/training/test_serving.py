"""`serve`: a real checkpoint behind a real HTTP server, used by real clients (the LLM agent, the generator)."""

import socket
import threading
import time

import httpx
import pytest
import uvicorn

from collectors.policies.llm import LLMAgentPolicy
from sandboxes.base import Task
from schemas.records import Observation
from training.distributed import World
from training.generators import EndpointGenerator
from training.loop import LoopConfig, train
from training.model import TinyModelConfig, build_tiny_model
from training.prompts import Query
from training.sequences import packed_sequences
from training.serving import LocalModel, build_app, render_chat


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, corpus, tokenizer):
    run = tmp_path_factory.mktemp("serve-run")
    model = build_tiny_model(
        TinyModelConfig(hidden_size=32, intermediate_size=64, layers=2, heads=2, max_positions=512), tokenizer
    )
    train(
        model,
        packed_sequences(corpus, tokenizer, 128),
        None,
        LoopConfig(batch_size=2, max_steps=2, save_every=2),
        run,
        World(),
        {},
        tokenizer,
    )
    return run / "checkpoint-2"


@pytest.fixture(scope="module")
def server(checkpoint):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = build_app(LocalModel(checkpoint), "tiny-world-model")
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(timeout=5)


def test_render_chat_matches_the_training_template():
    text = render_chat([{"role": "system", "content": "S"}, {"role": "user", "content": "ls"}])
    assert text == "<|begin|><|system|>S<|end|>\n<|user|>ls<|end|>\n<|assistant|>"


def test_models_and_chat_completions(server):
    models = httpx.get(f"{server}/models").json()
    assert models["data"][0]["id"] == "tiny-world-model"
    body = {
        "model": "tiny-world-model",
        "messages": [{"role": "user", "content": "ls -la"}],
        "max_tokens": 8,
        "n": 2,
        "temperature": 0.7,
        "seed": 3,
    }
    answer = httpx.post(f"{server}/chat/completions", json=body, timeout=60).json()
    assert [c["index"] for c in answer["choices"]] == [0, 1]
    assert all(c["finish_reason"] in ("stop", "length") for c in answer["choices"])
    assert 0 < answer["usage"]["completion_tokens"] <= 16 and answer["usage"]["prompt_tokens"] > 3
    again = httpx.post(f"{server}/chat/completions", json=body, timeout=60).json()
    assert [c["message"] for c in again["choices"]] == [c["message"] for c in answer["choices"]]  # seeded


def test_bad_requests(server):
    assert httpx.post(f"{server}/chat/completions", json={"messages": []}).status_code == 400
    wrong = httpx.post(
        f"{server}/chat/completions", json={"model": "other", "messages": [{"role": "user", "content": "x"}]}
    )
    assert wrong.status_code == 404 and "unknown model" in wrong.json()["error"]["message"]
    assert httpx.post(f"{server}/chat/completions", content=b"not json").status_code == 400


def test_clients_use_it(server):
    policy = LLMAgentPolicy(server, "tiny-world-model", max_tokens=8)
    policy.start(Task(id="t", instruction="list files"), [], Observation(content="ready"), seed=0)
    policy.act(None)  # an untrained model rarely calls a tool; what matters is a well-formed round trip
    assert policy.messages[-1]["role"] == "assistant"
    generator = EndpointGenerator(server, "tiny-world-model", max_tokens=8)
    query = Query("t" * 32, 0, "terminal", 0, (("system", "S"), ("user", "ls")), "a.txt")
    assert len(generator.generate(query, 2, seed=1)) == 2
