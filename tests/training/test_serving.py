"""`serve`: a real checkpoint behind a real HTTP server, used by real clients (the LLM agent, the generator)."""

import httpx
import pytest

from trajforge.collectors.policies.llm import LLMAgentPolicy
from trajforge.endpoints import Endpoint
from trajforge.evaluation.turns import PredictionTurn
from trajforge.sandboxes.base import Task
from trajforge.schemas.records import Observation
from trajforge.training.generators import EndpointGenerator


@pytest.fixture
def server(served_model):
    return served_model[0]


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


def test_a_streaming_client_reads_the_same_answers(server):
    """OpenAI's own client with stream=True (what verifiers' eval client sends) reads each choice's answer, finish
    reason and the usage from the events: the same as the whole answer (the stream is not token by token)."""
    openai = pytest.importorskip("openai", reason="the openai client (installed with the dev extra's mini-swe-agent)")
    client = openai.OpenAI(base_url=server, api_key="none")
    asked = {"model": "tiny-world-model", "messages": [{"role": "user", "content": "ls"}], "max_tokens": 8, "n": 2,
             "seed": 5, "temperature": 0.7}  # fmt: skip
    whole = client.chat.completions.create(**asked)
    stream = client.chat.completions.create(**asked, stream=True, stream_options={"include_usage": True})
    texts, finishes, usage = {0: "", 1: ""}, {}, None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
            finishes[choice.index] = choice.finish_reason or finishes.get(choice.index)
    assert texts == {c.index: c.message.content for c in whole.choices}
    assert finishes == {c.index: c.finish_reason for c in whole.choices}
    assert usage.completion_tokens == whole.usage.completion_tokens > 0


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
    generator = EndpointGenerator(Endpoint(server, "tiny-world-model"), max_tokens=8)
    query = PredictionTurn("t:0", "terminal", "S", (), "ls", "a.txt")
    assert len(generator.generate(query, 2, seed=1)) == 2


def test_an_api_key_is_checked_on_every_request(tiny_checkpoint):
    from starlette.testclient import TestClient

    from trajforge.training.serving import LocalModel, build_app

    client = TestClient(build_app(LocalModel(tiny_checkpoint), "m", api_key="s3cret"))
    assert client.get("/v1/models").status_code == 401
    assert client.get("/v1/models", headers={"Authorization": "Bearer wrong"}).status_code == 401
    chat = {"messages": [{"role": "user", "content": "x"}], "max_tokens": 2}
    assert client.post("/v1/chat/completions", json=chat).status_code == 401
    ok = client.get("/v1/models", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and ok.json()["data"][0]["id"] == "m"


@pytest.mark.parametrize(
    "host,loopback",
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("example.org", False),
    ],
)
def test_loopback_addresses(host, loopback):
    from trajforge.training.serving import is_loopback

    assert is_loopback(host) is loopback
