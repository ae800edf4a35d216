"""Serving a checkpoint as an OpenAI-compatible endpoint (`/v1/chat/completions`, `/v1/models`), so the LLM-agent
policy, the judge, the simulated environment and any external OpenAI client can use a trained world model."""

import hmac
import ipaddress
import json
import threading
import time
import uuid
from pathlib import Path

import torch
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from trajforge.training.chat_format import ROLES
from trajforge.training.loaded_model import shared
from trajforge.training.sampling import fit_window, prompt_ids, sample, stop_ids

MAX_NEW_TOKENS = 4096


class LocalModel:
    """A checkpoint folder (weights, config and tokenizer) ready to answer chats."""

    def __init__(self, folder: str | Path):
        loaded = shared(folder)  # one copy per process, whatever else asks it (training/loaded_model.py)
        self.folder, self.tokenizer, self.model = Path(folder), loaded.tokenizer, loaded.model
        self.chat_format, self.window = loaded.chat, loaded.window
        self.stop_ids = stop_ids(self.tokenizer, self.chat_format)
        self.lock = threading.Lock()

    @torch.no_grad()
    def chat(
        self,
        messages: list[dict],
        max_new_tokens: int = 256,
        temperature: float = 0.8,
        seed: int = 0,
        top_p: float = 1.0,
    ) -> tuple[str, str, int, int]:
        """(text, finish reason, prompt tokens, completion tokens)."""
        ids = fit_window(prompt_ids(messages, self.tokenizer, self.chat_format), self.window, max_new_tokens)
        input_ids = torch.tensor([ids], device=next(self.model.parameters()).device)
        limit = self.window - len(ids)
        with self.lock:
            output = sample(
                self.model,
                input_ids,
                self.stop_ids,
                self.tokenizer.pad_token_id,
                min(max_new_tokens, limit),
                temperature,
                top_p,
                seed,
            )
        completion = output[0, len(ids) :].tolist()
        finished = bool(completion) and completion[-1] in self.stop_ids
        text = self.tokenizer.decode(completion, skip_special_tokens=True)
        return text, "stop" if finished else "length", len(ids), len(completion)


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=status)


def is_loopback(host: str) -> bool:
    """Whether a bind address only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerAuth:
    """Every request needs `Authorization: Bearer <key>`; anything else is a 401, before the model is touched."""

    def __init__(self, app, api_key: str):
        self.app = app
        self.expected = f"Bearer {api_key}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = JSONResponse(
                    {"error": {"message": "missing or wrong API key (Authorization: Bearer ...)", "type": "auth"}},
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _streamed(completion: dict, include_usage: bool) -> StreamingResponse:
    """A completion as the server-sent events OpenAI's streaming clients read (verifiers' client only streams): per
    choice a chunk whose delta is the whole answer and one with its finish reason, the usage last when asked, then
    `[DONE]`. The answer is generated whole first: the stream is not token by token."""
    head = {"id": completion["id"], "object": "chat.completion.chunk", "created": completion["created"],
            "model": completion["model"]}  # fmt: skip
    chunks = []
    for choice in completion["choices"]:
        delta = {"role": "assistant", "content": choice["message"]["content"]}
        chunks.append(head | {"choices": [{"index": choice["index"], "delta": delta, "finish_reason": None}]})
        chunks.append(
            head | {"choices": [{"index": choice["index"], "delta": {}, "finish_reason": choice["finish_reason"]}]}
        )
    if include_usage:
        chunks.append(head | {"choices": [], "usage": completion["usage"]})
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return StreamingResponse(iter(events), media_type="text/event-stream")


def build_app(model: LocalModel, model_name: str, api_key: str | None = None) -> Starlette:
    """The endpoint; with `api_key`, every request must carry it as a bearer token."""

    async def models(request: Request):
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": model_name, "object": "model", "owned_by": "trajforge", "created": int(time.time())}],
            }
        )

    async def completions(request: Request):
        try:
            body = await request.json()
        except ValueError:
            return _error("the body must be JSON")
        messages = body.get("messages") if isinstance(body, dict) else None
        if (
            not isinstance(messages, list)
            or not messages
            or not all(
                isinstance(m, dict) and m.get("role") in ROLES and isinstance(m.get("content"), str) for m in messages
            )
        ):
            return _error("messages: a non-empty list of {role: system|user|assistant, content: string}")
        if body.get("model", model_name) != model_name:
            return _error(f"unknown model {body.get('model')!r}; this server has {model_name!r}", 404)
        n = body.get("n", 1)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 256
        temperature = body.get("temperature", 0.8)
        if not (
            isinstance(n, int)
            and 1 <= n <= 16
            and isinstance(max_tokens, int)
            and 1 <= max_tokens <= MAX_NEW_TOKENS
            and isinstance(temperature, (int, float))
            and 0 <= temperature <= 2
        ):
            return _error(f"n must be 1-16, max_tokens 1-{MAX_NEW_TOKENS}, temperature 0-2")
        seed = body.get("seed") if isinstance(body.get("seed"), int) else 0
        choices, prompt_tokens, completion_tokens = [], 0, 0
        for i in range(n):
            try:
                text, finish, prompt_tokens, used = model.chat(
                    messages, max_tokens, float(temperature), seed + i, float(body.get("top_p", 1.0))
                )
            except ValueError as exc:
                return _error(str(exc))
            completion_tokens += used
            choices.append({"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": finish})
        completion = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if body.get("stream"):
            return _streamed(completion, bool((body.get("stream_options") or {}).get("include_usage")))
        return JSONResponse(completion)

    routes = [Route("/v1/models", models), Route("/v1/chat/completions", completions, methods=["POST"])]
    return Starlette(routes=routes, middleware=[Middleware(BearerAuth, api_key=api_key)] if api_key else [])
