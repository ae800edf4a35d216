"""An LLM agent for any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, OpenAI, `trajforge serve`).

The environment's tools are offered as functions; a tool call becomes the action and the observation goes back
as the tool's result. For models without tool calling, a reply with no tool call is read with the action codec
(schemas/actions.py): a ```bash block, a ```keys block or a <tool_call> in the text is the action; a reply with
none ends the episode; one that cannot be read ends it as the agent's error.
"""

import json

from trajforge.collectors.policies.base import POLICIES, Policy, UnparseableAnswer
from trajforge.endpoints import ChatClient, Endpoint, EndpointError
from trajforge.sandboxes.base import EpisodeEnded
from trajforge.schemas.actions import Done, Unparseable, parse_action
from trajforge.schemas.records import Action, Observation

SYSTEM = (
    "You are an agent solving a task in a computer environment. Use the tools to act; each result is what the "
    "environment answered. When the task is done, reply with a short summary and no tool call.\n\nTask: {task}"
)


class ModelUnreachable(EpisodeEnded):
    """The model endpoint failed after retries: the agent could not act."""


@POLICIES.register(help="an OpenAI-compatible model")
class LLMAgentPolicy(Policy):
    name = "llm"

    @classmethod
    def arguments(cls, config) -> dict:
        endpoint = config.agent.endpoint if config.agent is not None else None
        if endpoint is None:
            raise ValueError("--policy llm needs --agent URL=MODEL: an OpenAI-compatible endpoint")
        return {
            "base_url": endpoint.url, "model": endpoint.model, "key_env": endpoint.key_env,
            "temperature": config.temperature,
        }  # fmt: skip

    def __init__(
        self,
        base_url: str,
        model: str,
        key_env: str | None = None,
        temperature: float = 0.7,
        max_tokens: int = 1024,
        timeout: float = 120.0,
        attempts: int = 3,
        transport=None,
    ):
        if not base_url or not model:
            raise ValueError("the llm policy needs an endpoint URL and a model name")
        self.model = model
        self.temperature, self.max_tokens = temperature, max_tokens
        self.client = ChatClient(Endpoint(base_url, model, key_env, timeout, attempts), transport)

    def start(self, task, action_space, initial, seed) -> None:
        super().start(task, action_space, initial, seed)
        self.tools = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "parameters": t.get("input_schema", {"type": "object"}),
                },
            }
            for t in action_space
        ]
        self.messages: list[dict] = [
            {"role": "system", "content": SYSTEM.format(task=task.instruction)},
            {"role": "user", "content": f"Initial state:\n{initial.content}"},
        ]
        self._pending_call: str | None = None

    def act(self, last: Observation | None) -> Action | None:
        if last is not None and self._pending_call is not None:
            self.messages.append({"role": "tool", "tool_call_id": self._pending_call, "content": last.content})
        elif last is not None:
            self.messages.append({"role": "user", "content": f"Output:\n{last.content}"})
        message = self._complete()
        self.messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        calls = message.get("tool_calls") or []
        if calls:
            call = calls[0]  # one action per turn; the others are answered as not run
            for extra in calls[1:]:
                self.messages.append(
                    {"role": "tool", "tool_call_id": extra.get("id"), "content": "not run: one action per turn"}
                )
            self._pending_call = call.get("id")
            return tool_action(call.get("function", {}))
        self._pending_call = None
        return answer_action(message.get("content") or "", self.action_space)

    def _complete(self) -> dict:
        try:
            message = self.client.chat(self.messages, self.max_tokens, self.temperature, self.seed, tools=self.tools)[0]
        except EndpointError as exc:
            raise ModelUnreachable(str(exc)) from exc
        return message


def answer_action(text: str, action_space: list[dict]) -> Action | None:
    """The action written in an agent's answer (schemas/actions.py), None for a final answer; an answer that cannot
    be read ends the episode as the agent's error. The llm policy's text fallback and the checkpoint policy read
    answers through it."""
    from trajforge.sandboxes.browser import browser_actions_in  # it imports the web apps' server

    answer = parse_action(text, browser_actions=browser_actions_in(action_space))
    if isinstance(answer, Unparseable):
        raise UnparseableAnswer(answer.reason)
    if isinstance(answer, Done):
        return None
    if answer.action.kind == "tool_call":  # a shell or keystrokes tool is read as the native call would be
        return tool_action({"name": answer.action.name, "arguments": answer.action.content})
    return answer.action


def tool_action(function: dict) -> Action:
    """A called function ({name, arguments}) as the action it stands for: the shell and keystrokes tools become
    their own kinds, any other name a tool call."""
    name = function.get("name") or ""
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = {"raw": raw}
    if name == "shell" and isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        return Action(kind="shell", content=arguments["command"])
    if name == "keystrokes":
        return Action(kind="keystrokes", content=json.dumps(arguments))
    return Action(kind="tool_call", name=name, content=json.dumps(arguments, ensure_ascii=False))
