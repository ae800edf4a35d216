"""A scripted in-memory environment for unit tests of the code around real sandboxes."""

from trajforge.sandboxes.base import InfraError, ResourceLimitExceeded, Sandbox, Task, TaskSetupError
from trajforge.schemas.records import Action, Observation


class FakeEnvironment(Sandbox):
    name = "fake"

    def __init__(
        self, fail_resets: int = 0, limit_on: str | None = None, crash_on: str | None = None, broken_setup=False
    ):
        self.fail_resets, self.broken_setup = fail_resets, broken_setup
        self.limit_on, self.crash_on = limit_on, crash_on
        self.files: set[str] = set()
        self.closed = False

    def reset(self, task: Task) -> Observation:
        if self.fail_resets > 0:
            self.fail_resets -= 1
            raise InfraError("daemon hiccup")
        if self.broken_setup:
            raise TaskSetupError("setup command failed (1): make fixtures")
        self.files = set(task.files)
        return Observation(content=" ".join(sorted(self.files)))

    def step(self, action: Action) -> Observation:
        if action.content == self.limit_on:
            raise ResourceLimitExceeded("resource limit: memory (test)", Observation(content="Killed", exit_code=137))
        if action.content == self.crash_on:
            raise InfraError("container died")
        if action.content.startswith("touch "):
            self.files.add(action.content.split()[1])
        return Observation(content=f"ran {action.content}", exit_code=0)

    def check(self, task: Task) -> bool | None:
        return None if task.check is None else task.check.command in self.files

    def action_space(self) -> list[dict]:
        return [{"name": "shell"}]

    def close(self) -> None:
        self.closed = True
