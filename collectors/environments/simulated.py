"""`kind: simulated`: a world model at an OpenAI-compatible endpoint answers every action (sandboxes/simulated.py).
`collect --simulate URL=MODEL` puts every suite in this kind, keeping the action space of the kind it stands for."""

from typing import Literal

from trajforge.collectors.environments.base import KINDS, KindSpec, Settings
from trajforge.sandboxes.base import PageCheck, Sandbox, ShellCheck, ToolCheck
from trajforge.schemas.records import Action


@KINDS.register()
class SimulatedSpec(KindSpec):
    kind: Literal["simulated"] = "simulated"
    url: str
    model: str  # the world model's name at `url`
    key_env: str | None = None  # the variable holding its API key
    instruction: str = ""  # how the world model should behave
    action_space: list[dict] = []
    stands_for: str | None = None  # the kind of environment it simulates
    # A world model has no state to set up or check: what a suite holds for its real kind is accepted and unused.
    setup_types = (str, Action)
    check_types = (ShellCheck, ToolCheck, PageCheck)

    def build(self, settings: Settings) -> Sandbox:
        from trajforge.endpoints import Endpoint
        from trajforge.sandboxes.simulated import SimulatedEnvironment

        return SimulatedEnvironment(Endpoint(self.url, self.model, self.key_env), self.instruction, self.action_space)
