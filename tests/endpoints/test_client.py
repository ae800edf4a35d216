"""The one endpoint client against a real HTTP server on loopback that fails on purpose: what is retried (408, 409,
429, 5xx, connection errors, timeouts, replies that are not chat completions), how often and how long it waits,
what is not retried, the key, and what a request carries."""

import json
import socket
import threading
import time

import pytest

from tests.chat_server import chat_server
from trajforge.endpoints import ChatClient, Endpoint, EndpointError

MESSAGES = [{"role": "user", "content": "ls"}]
REPLY = {"choices": [{"message": {"role": "assistant", "content": "a.txt"}}]}
REFUSED = json.dumps({"error": {"message": "missing or wrong API key", "type": "auth"}}).encode()  # as serve says


def flaky_server(failures: list, reply: dict = REPLY):
    """(base URL, the requests it received): each request takes the next of `failures` (an HTTP status, with an
    OpenAI-style error body for 401 and "overloaded" for others; "sleep" for an answer 2 s late, or "garbage" for a
    200 that is not JSON); once they are used up it answers `reply`."""
    taken: list = []

    def answer(request: dict) -> tuple[int, bytes]:
        failure = failures[len(taken)] if len(taken) < len(failures) else None
        taken.append(failure)
        if failure == "sleep":
            threading.Event().wait(2)  # not time.sleep, which the tests replace to record the backoff
        if isinstance(failure, int):
            return failure, REFUSED if failure == 401 else b"overloaded"
        return 200, b"<html>not json" if failure == "garbage" else json.dumps(reply).encode()

    return chat_server(answer)


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The backoff delays the client slept, without sleeping them."""
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    return slept


@pytest.mark.parametrize("failure", [408, 409, 429, 500, 502, 503, 504, "garbage"])
def test_what_a_retry_can_fix_is_retried_with_exponential_backoff(failure, waits):
    with flaky_server([failure, failure]) as (url, requests):
        texts = ChatClient(Endpoint(url, "m", attempts=3)).texts(MESSAGES, max_tokens=8, temperature=0.0)
    assert texts == ["a.txt"] and len(requests) == 3 and waits == [0.5, 1.0]
    assert requests[-1]["path"] == "/v1/chat/completions"


def test_retries_are_bounded_and_the_error_names_the_endpoint(waits):
    with flaky_server([503] * 9) as (url, requests):
        with pytest.raises(EndpointError, match=r"failed after 5 tries: HTTP 503: overloaded") as caught:
            ChatClient(Endpoint(url, "m", attempts=5)).texts(MESSAGES, max_tokens=8, temperature=0.0)
    assert len(requests) == 5 and waits == [0.5, 1.0, 2.0, 4.0]
    assert f"the endpoint {url} (model m)" in str(caught.value) and not caught.value.timed_out


@pytest.mark.parametrize("status", [400, 404, 422])
def test_a_request_a_retry_cannot_fix_is_tried_once(status, waits):
    with flaky_server([status]) as (url, requests):
        with pytest.raises(EndpointError, match=f"{url} \\(model m\\) refused the request: HTTP {status}") as caught:
            ChatClient(Endpoint(url, "m")).texts(MESSAGES, max_tokens=8, temperature=0.0)
    assert len(requests) == 1 and waits == []
    assert caught.value.status == status and caught.value.refuses_all is (status == 404)  # no such model or path


def test_the_key_comes_from_the_variable_the_endpoint_names(monkeypatch, waits):
    monkeypatch.setenv("MY_KEY", "sekrit")
    monkeypatch.delenv("UNSET_KEY", raising=False)
    with flaky_server([]) as (url, requests):
        ChatClient(Endpoint(url, "m", key_env="MY_KEY")).texts(MESSAGES, max_tokens=8, temperature=0.0)
        ChatClient(Endpoint(url, "m", key_env="UNSET_KEY")).texts(MESSAGES, max_tokens=8, temperature=0.0)
        ChatClient(Endpoint(url, "m")).texts(MESSAGES, max_tokens=8, temperature=0.0)
    assert [r["authorization"] for r in requests] == ["Bearer sekrit", None, None]
    with flaky_server([401, 401]) as (url, requests):
        with pytest.raises(EndpointError, match=r"HTTP 401: missing or wrong API key; no key was sent: \$UNSET_KEY is"):
            ChatClient(Endpoint(url, "m", key_env="UNSET_KEY")).texts(MESSAGES, max_tokens=8, temperature=0.0)
        sent = r"HTTP 401: missing or wrong API key \(the key in \$MY_KEY was sent\)"
        with pytest.raises(EndpointError, match=sent) as caught:
            ChatClient(Endpoint(url, "m", key_env="MY_KEY")).texts(MESSAGES, max_tokens=8, temperature=0.0)
    assert caught.value.refuses_all  # every later request would be refused too
    assert len(requests) == 2  # an unauthorized request is not retried


def test_a_refused_connection_and_a_timeout_are_retried(waits):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the probe closes
    with pytest.raises(EndpointError, match=f"127.0.0.1:{port}/v1 \\(model m\\) failed after 2 tries: ConnectError"):
        ChatClient(Endpoint(f"http://127.0.0.1:{port}/v1", "m", attempts=2)).texts(MESSAGES, 8, 0.0)
    assert waits == [0.5]
    with flaky_server(["sleep", "sleep"]) as (url, requests):
        with pytest.raises(EndpointError, match="failed after 2 tries: no answer within 0.5s") as caught:
            ChatClient(Endpoint(url, "m", timeout=0.5, attempts=2)).texts(MESSAGES, 8, 0.0)
        assert caught.value.timed_out and len(requests) == 2
        assert ChatClient(Endpoint(url, "m", timeout=0.5, attempts=2)).texts(MESSAGES, 8, 0.0) == ["a.txt"]


def test_a_request_carries_tools_n_and_the_seed_and_tool_calls_come_back(waits):
    call = {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": '{"command": "ls"}'}}
    reply = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}] * 2}
    tools = [{"type": "function", "function": {"name": "shell", "parameters": {"type": "object"}}}]
    with flaky_server([], reply) as (url, requests):
        client = ChatClient(Endpoint(url, "m"))
        messages = client.chat(MESSAGES, max_tokens=16, temperature=0.7, seed=3, n=2, tools=tools)
        assert client.texts(MESSAGES, max_tokens=16, temperature=0.7) == ["", ""]
    assert [m["tool_calls"][0]["id"] for m in messages] == ["c1", "c1"]
    body = requests[0]["body"]
    assert body == {"model": "m", "messages": MESSAGES, "max_tokens": 16, "temperature": 0.7, "n": 2, "seed": 3,
                    "tools": tools}  # fmt: skip
    assert set(requests[1]["body"]) == {"model", "messages", "max_tokens", "temperature"}


def test_an_endpoint_is_a_url_and_a_model():
    with pytest.raises(ValueError, match="a URL and a model"):
        Endpoint("", "m")
    with pytest.raises(ValueError, match="at least one attempt"):
        Endpoint("http://x/v1", "m", attempts=0)
    assert str(Endpoint("http://x/v1/", "m")) == "http://x/v1 (model m)"


def test_the_client_imports_nothing_of_ours_but_schemas():
    import ast
    from pathlib import Path

    import trajforge.endpoints

    imported = set()
    for module in Path(trajforge.endpoints.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    ours = {name for name in imported if name.startswith("trajforge")}
    assert ours and all(name.startswith(("trajforge.endpoints", "trajforge.schemas")) for name in ours), ours
