"""`kind: terminal`: a Docker sandbox with a persistent shell and a tmux pane (sandboxes/terminal.py)."""

import os
from typing import Literal

from trajforge.collectors.environments.base import KINDS, KindSpec, Settings
from trajforge.sandboxes.base import Sandbox, ShellCheck


@KINDS.register()
class TerminalSpec(KindSpec):
    kind: Literal["terminal"] = "terminal"
    tools: tuple[Literal["shell", "keystrokes"], ...] = ("shell", "keystrokes")  # what the agent is offered
    setup_types = (str,)
    check_types = (ShellCheck,)

    def build(self, settings: Settings) -> Sandbox:
        from trajforge.sandboxes.terminal import DockerTerminal

        return DockerTerminal(
            image=settings.image,
            run_id=settings.run_id,
            owner=os.getpid(),
            command_timeout=settings.command_timeout,
            client=settings.docker_client,
            tools=self.tools,
        )

    def needs_docker(self) -> bool:
        return True

    def simulated_action_space(self) -> list[dict]:
        """The real terminal's own: the world model's prompt names the tools a real trajectory records."""
        from trajforge.sandboxes.terminal import action_space

        return action_space(self.tools)
