"""An OpenAI-compatible chat-completions endpoint: where it is (`Endpoint`, a small picklable value) and how it is
asked (`ChatClient`): a bearer key read from the environment variable the endpoint names, a timeout, bounded retries
with exponential backoff on the answers a retry can fix, tool calling, `n` and a seed. Whatever still fails is one
`EndpointError` whose message names the endpoint."""

import os
import time
from dataclasses import dataclass

import httpx

RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx: the server may answer the same request later
FIRST_DELAY, MAX_DELAY = 0.5, 8.0  # seconds before the second try, doubling up to MAX_DELAY


@dataclass(frozen=True)
class Endpoint:
    """Where an endpoint is and how to reach it; it holds the name of the key's variable, never the key, so it can
    travel to Beam workers and into configs (each process reads the key from its own environment)."""

    url: str  # the API's base URL, e.g. http://127.0.0.1:8000/v1
    model: str
    key_env: str | None = None  # the environment variable holding the API key; unset or None: no key is sent
    timeout: float = 120.0  # seconds per request
    attempts: int = 3  # tries of one request, the first included

    def __post_init__(self):
        if not self.url or not self.model:
            raise ValueError("an endpoint needs a URL and a model name")
        if self.attempts < 1:
            raise ValueError("an endpoint needs at least one attempt")

    def key(self) -> str | None:
        if not self.key_env:
            return None
        return os.environ.get(self.key_env) or None

    def __str__(self) -> str:
        return f"{self.url.rstrip('/')} (model {self.model})"


REFUSES_ALL = frozenset({401, 403, 404})  # a missing or wrong key, no such model or path: nothing will get through


class EndpointError(Exception):
    """The endpoint gave no usable answer: refused the request (`status`), or failed every try (`timed_out` when
    the last try got no answer in time)."""

    def __init__(self, endpoint: Endpoint, reason: str, timed_out: bool = False, status: int | None = None):
        super().__init__(f"the endpoint {endpoint} {reason}")
        self.endpoint, self.timed_out, self.status = endpoint, timed_out, status

    @property
    def refuses_all(self) -> bool:
        """Whether every request to this endpoint would be refused alike, not just this one."""
        return self.status in REFUSES_ALL


class _Retryable(Exception):
    def __init__(self, reason: str, timed_out: bool = False):
        super().__init__(reason)
        self.timed_out = timed_out


class ChatClient:
    def __init__(self, endpoint: Endpoint, transport: httpx.BaseTransport | None = None):
        self.endpoint = endpoint
        self.url = endpoint.url.rstrip("/") + "/chat/completions"
        key = endpoint.key()
        self.key_sent = key is not None
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(timeout=endpoint.timeout, headers=headers, transport=transport)

    def chat(
        self,
        messages: list[dict],
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        n: int = 1,
        tools: list[dict] | None = None,
    ) -> list[dict]:
        """The reply's messages, one per choice (`content`, and `tool_calls` when the model called a tool)."""
        model = self.endpoint.model
        body = {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": temperature}
        optional = {"n": n if n != 1 else None, "seed": seed, "tools": tools or None}
        return self._post(body | {name: value for name, value in optional.items() if value is not None})

    def texts(
        self, messages: list[dict], max_tokens: int, temperature: float, seed: int | None = None, n: int = 1
    ) -> list[str]:
        """The text of each choice ("" for a choice without content)."""
        return [m.get("content") or "" for m in self.chat(messages, max_tokens, temperature, seed, n)]

    def _post(self, body: dict) -> list[dict]:
        attempts = self.endpoint.attempts
        for attempt in range(attempts):
            try:
                return self._try(body)
            except _Retryable as failure:
                last = failure
            if attempt + 1 < attempts:
                time.sleep(min(MAX_DELAY, FIRST_DELAY * 2**attempt))
        tries = f"{attempts} tries" if attempts > 1 else "1 try"
        raise EndpointError(self.endpoint, f"failed after {tries}: {last}", last.timed_out)

    def _try(self, body: dict) -> list[dict]:
        try:
            response = self.http.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"no answer within {self.endpoint.timeout:g}s", timed_out=True) from exc
        except httpx.UnsupportedProtocol as exc:
            raise EndpointError(self.endpoint, f"cannot be reached: {exc}") from exc
        except httpx.TransportError as exc:  # connection refused or reset, DNS, a broken reply
            raise _Retryable(f"{type(exc).__name__}: {_first_line(exc)}") from exc
        if response.status_code in RETRYABLE_STATUS or response.status_code >= 500:
            raise _Retryable(_status(response))
        if response.is_error:  # a request that trying again cannot fix
            reason = f"refused the request: {_status(response)}{self._key_hint(response)}"
            raise EndpointError(self.endpoint, reason, status=response.status_code)
        return self._messages(response)

    def _messages(self, response: httpx.Response) -> list[dict]:
        try:
            choices = response.json()["choices"]
            messages = [choice["message"] for choice in choices]
        except (ValueError, KeyError, TypeError) as exc:
            raise _Retryable(f"a reply that is not a chat completion ({_first_line(exc)})") from exc
        if not messages or not all(isinstance(m, dict) for m in messages):
            raise _Retryable("a reply without choices")
        return messages

    def _key_hint(self, response: httpx.Response) -> str:
        if response.status_code not in (401, 403):
            return ""
        if self.key_sent:
            return f" (the key in ${self.endpoint.key_env} was sent)"
        if self.endpoint.key_env:
            return f"; no key was sent: ${self.endpoint.key_env} is not set"
        return "; no key was sent"


def _status(response: httpx.Response) -> str:
    """`HTTP 401: missing or wrong API key`: the message of an OpenAI-style error body, else the body's first line."""
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = response.text
    return f"HTTP {response.status_code}: {_first_line(message)}"


def _first_line(text) -> str:
    lines = str(text).strip().splitlines()
    return lines[0][:200] if lines else ""
