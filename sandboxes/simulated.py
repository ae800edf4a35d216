"""A world model as an environment (the paper's Sim RL): any OpenAI-compatible endpoint serving a world model
(`trajforge serve CHECKPOINT`, vLLM, ...) answers each action with a predicted observation, steered by a
natural-language simulation instruction (inject errors, paginate, fail partially). Episodes run through the
same collectors and come out as normal raw trajectories, marked as simulated."""

import json

from trajforge.endpoints import ChatClient, Endpoint, EndpointError
from trajforge.evaluation.extraction import extract_prediction
from trajforge.sandboxes.base import InfraError, Sandbox, Task
from trajforge.schemas.records import Action, Observation
from trajforge.schemas.system_prompt import render_system_prompt


class SimulatedEnvironment(Sandbox):
    source_kind = "simulated"

    def __init__(
        self,
        endpoint: Endpoint,
        instruction: str = "",
        action_space: list[dict] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ):
        self.client = ChatClient(endpoint)
        self.name = f"simulated:{endpoint.model}"
        self.instruction = instruction
        self.tools = action_space or []
        self.max_tokens, self.temperature = max_tokens, temperature
        self.messages: list[dict] = []

    def reset(self, task: Task) -> Observation:
        instruction = " ".join(x for x in (task.config.get("simulation_instruction", ""), self.instruction) if x)
        system = render_system_prompt(
            {
                "task_description": task.instruction,
                "action_space": json.dumps(self.tools),
                "initial_state": task.config.get("initial_state", ""),
                "simulation_instruction": instruction,
            }
        )
        self.messages = [{"role": "system", "content": system}]
        self._instruction = instruction
        return Observation(content=task.config.get("initial_state", ""), metadata=json.dumps({"simulated": True}))

    def step(self, action: Action) -> Observation:
        content = f"{action.name} {action.content}" if action.name else action.content
        self.messages.append({"role": "user", "content": content})
        try:
            answer = self.client.texts(self.messages, self.max_tokens, self.temperature, seed=len(self.messages))[0]
        except EndpointError as exc:
            raise InfraError(f"the world model gave no observation: {exc}") from exc
        predicted = extract_prediction(answer).text
        self.messages.append({"role": "assistant", "content": predicted})
        fmt = "json" if _is_json(predicted) else "aria" if predicted.startswith("URL: ") else "text"
        return Observation(content=predicted, format=fmt, metadata=json.dumps({"simulated": True}))

    def simulation_instruction(self) -> str:
        return getattr(self, "_instruction", self.instruction)

    def action_space(self) -> list[dict]:
        return self.tools

    def describe(self) -> dict:
        return {"name": self.name, "backend": "world-model"}

    def close(self) -> None:
        self.messages = []


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return text.lstrip().startswith(("{", "["))
