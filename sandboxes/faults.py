"""Controllable fault injection around any environment: seeded, reproducible, described in words.

Faults (each off unless configured): intermittent errors in the environment's own error format (the action is
not applied), pagination of long JSON lists with follow-up calls, incomplete intermediate results, partial
failures in batch results, latency, truncated output. Each affected turn carries its fault label; the trajectory's
`simulation_instruction` says what was injected where, in the words a world model is later instructed with
(sandboxes/control.py), and its metadata records the same as a control spec: the data that teaches a world model to
simulate an environment as instructed (paper §6.2).
"""

import json
import random
import time

from pydantic import BaseModel, ConfigDict, Field

from trajforge.sandboxes.base import Sandbox, Task, WrappedSandbox
from trajforge.sandboxes.control import ControlSpec, Injection
from trajforge.sandboxes.fault_kinds import TRUNCATION_MARK, kind_of_label
from trajforge.schemas.control_record import CONTROL_KEY
from trajforge.schemas.records import Action, Observation

PAGE_TOKEN = "page_token"


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Pagination(_Config):
    page_size: int = Field(3, ge=1)


class Latency(_Config):
    rate: float = Field(0.1, ge=0, le=1)
    seconds: float = Field(0.2, ge=0, le=30)


class Truncation(_Config):
    rate: float = Field(0.1, ge=0, le=1)
    max_chars: int = Field(200, ge=1)


class FaultConfig(_Config):
    intermittent_error: float = Field(0.0, ge=0, le=1, description="share of actions answered by a temporary error")
    pagination: Pagination | None = None
    incomplete: float = Field(0.0, ge=0, le=1, description="share of list results that come back incomplete")
    partial_failure: float = Field(0.0, ge=0, le=1, description="share of batch results with failed items")
    latency: Latency | None = None
    truncation: Truncation | None = None


class FaultInjector(WrappedSandbox):
    def __init__(self, env: Sandbox, config: dict | FaultConfig, seed: int = 0):
        super().__init__(env)
        self.config = config if isinstance(config, FaultConfig) else FaultConfig.model_validate(config)
        self.seed = seed
        self._pages: dict[str, list] = {}
        self._turn, self._injected = 0, []

    def reset(self, task: Task) -> Observation:
        self.rng = random.Random(f"{self.seed}:{task.id}")
        self._pages, self._turn, self._injected = {}, 0, []
        return self.env.reset(task)

    def injected(self) -> ControlSpec:
        """What this episode injected so far, where: the control spec a world model would be given for it."""
        return ControlSpec(injections=tuple(self._injected))

    def simulation_instruction(self) -> str:
        return " ".join(x for x in (self.env.simulation_instruction(), self.injected().render()) if x)

    def episode_metadata(self) -> dict:
        return {**self.env.episode_metadata(), CONTROL_KEY: self.injected().record()}

    def step(self, action: Action) -> Observation:
        observation = self._faulty_step(action)
        meta = json.loads(observation.metadata) if observation.metadata else {}
        for label in (meta.get("fault") or "").split("+") if isinstance(meta, dict) else ():
            if label:
                self._injected.append(self._injection(kind_of_label(label), action))
        self._turn += 1
        return observation

    def _injection(self, kind: str, action: Action) -> Injection:
        c = self.config
        params = {
            "pagination": {"page_size": c.pagination.page_size} if c.pagination else {},
            "latency": {"seconds": c.latency.seconds} if c.latency else {},
            "truncation": {"max_chars": c.truncation.max_chars} if c.truncation else {},
        }.get(kind, {})
        tools = (action.name,) if action.kind == "tool_call" and action.name else ()
        return Injection(kind=kind, turn=self._turn, tools=tools, params=params)

    def _faulty_step(self, action: Action) -> Observation:
        follow_up = self._next_page(action)
        if follow_up is not None:
            return follow_up
        c = self.config
        draws = [self.rng.random() for _ in range(6)]  # one draw per fault, every step: reproducible sequences
        if draws[0] < c.intermittent_error:
            return _label(self._error(action), "intermittent_error")
        observation = self.env.step(action)
        if c.latency and draws[1] < c.latency.rate:
            time.sleep(c.latency.seconds)
            observation = _label(observation, "latency")
        if observation.format == "json" and not observation.is_error:
            observation = self._reshape(action, observation, draws)
        if c.truncation and draws[5] < c.truncation.rate and len(observation.content) > c.truncation.max_chars:
            cut = f"{observation.content[: c.truncation.max_chars]}\n{TRUNCATION_MARK}"
            observation = _label(observation.model_copy(update={"content": cut, "truncated": True}), "truncated")
        return observation

    # -- faults ------------------------------------------------------------------------------------------
    def _error(self, action: Action) -> Observation:
        if action.kind == "tool_call":
            text = f"Error executing tool {action.name}: 503 Service Unavailable: temporarily overloaded, retry later"
            payload = {"content": [{"type": "text", "text": text}], "isError": True}
            return Observation(content=json.dumps(payload), format="json", is_error=True)
        if action.kind == "browser":
            return Observation(
                content='- heading "503 Service Unavailable" [level=1]\n- paragraph: Please retry.',
                format="aria",
                is_error=True,
            )
        first = action.content.split()[0] if action.content.split() else "bash"
        return Observation(
            content=f"{first}: temporary failure: Resource temporarily unavailable\n", exit_code=75, is_error=True
        )

    def _reshape(self, action: Action, observation: Observation, draws: list[float]) -> Observation:
        """Faults that change a JSON result's list: pagination, incomplete results, partial failures."""
        payload, data, key = _list_in(observation.content)
        if key is None:
            return observation
        items = data[key]
        c = self.config
        label = None
        if c.incomplete and draws[3] < c.incomplete and len(items) > 1:
            keep = sorted(self.rng.sample(range(len(items)), k=max(1, len(items) // 2)))
            data[key] = [items[i] for i in keep]
            data["incomplete"] = True
            label = "incomplete"
        elif c.partial_failure and draws[4] < c.partial_failure and any(isinstance(i, dict) for i in items):
            failed = self.rng.randrange(len(items))
            item = items[failed]
            ident = next(
                (item[k] for k in ("id", "url", "number", "key") if isinstance(item, dict) and k in item), failed
            )
            data[key][failed] = {"id": ident, "status": "failed", "error": "internal error while processing this item"}
            label = "partial_failure"
        if c.pagination and len(data[key]) > c.pagination.page_size:
            size = c.pagination.page_size
            token = f"fp{self.rng.randrange(10**6):06d}"
            self._pages[token] = [key, data[key][size:], {k: v for k, v in data.items() if k != key}, action.name]
            data[key] = data[key][:size]
            data["next_page_token"] = token
            label = label or "pagination"
        if label is None:
            return observation
        payload["content"][0]["text"] = json.dumps(data, indent=2, ensure_ascii=False)
        return _label(observation.model_copy(update={"content": json.dumps(payload, ensure_ascii=False)}), label)

    def _next_page(self, action: Action) -> Observation | None:
        if action.kind != "tool_call":
            return None
        try:
            arguments = json.loads(action.content)
        except ValueError:
            return None
        token = arguments.get(PAGE_TOKEN) if isinstance(arguments, dict) else None
        if token is None or token not in self._pages:
            return None
        key, rest, extra, tool = self._pages.pop(token)
        if tool != action.name:
            self._pages[token] = [key, rest, extra, tool]
            return None
        size = self.config.pagination.page_size
        data = {**extra, key: rest[:size]}
        if len(rest) > size:
            new = f"fp{self.rng.randrange(10**6):06d}"
            self._pages[new] = [key, rest[size:], extra, tool]
            data["next_page_token"] = new
        payload = {
            "content": [{"type": "text", "text": json.dumps(data, indent=2, ensure_ascii=False)}],
            "isError": False,
        }
        return _label(Observation(content=json.dumps(payload, ensure_ascii=False), format="json"), "pagination")


def _list_in(content: str) -> tuple[dict, dict, str | None]:
    """The MCP payload, the JSON object inside its first text part, and the key of its first list."""
    try:
        payload = json.loads(content)
        data = json.loads(payload["content"][0]["text"])
    except (ValueError, KeyError, IndexError, TypeError):
        return {}, {}, None
    if not isinstance(data, dict):
        return payload, data, None
    key = next((k for k, v in data.items() if isinstance(v, list) and v), None)
    return payload, data, key


def _label(observation: Observation, fault: str) -> Observation:
    meta = json.loads(observation.metadata) if observation.metadata else {}
    meta["fault"] = f"{meta['fault']}+{fault}" if meta.get("fault") else fault
    return observation.model_copy(update={"metadata": json.dumps(meta)})
